"""The small planted decision list the decision-list tests learn."""

import numpy as np


def planted(n=3000, d=12, noise=0.0, seed=0):
    """Rows of d random bits labelled by 'if x0 then 1 elif x3 then 0 elif x5 then 1 else 0'."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.3).astype(np.int8)
    y = np.where(X[:, 0] == 1, 1, np.where(X[:, 3] == 1, 0, np.where(X[:, 5] == 1, 1, 0)))
    flip = rng.random(n) < noise
    return X, np.where(flip, 1 - y, y)
