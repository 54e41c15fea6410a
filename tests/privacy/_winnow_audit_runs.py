"""What both DP-Winnow audits run: fit minus the input validation, recording releases,
and the broken twins both must catch."""

import warnings

import numpy as np

from skdp.linear import DPWinnowClassifier
from skdp.linear._base import softmax


def one_feature_streams(n_rows):
    """D, D′: one feature, row 0 is x = +1 in D and x = −1 in D′, every other row x = 0."""
    X0 = np.zeros((n_rows, 1))
    X0[0, 0] = 1.0
    X1 = X0.copy()
    X1[0, 0] = -1.0
    return X0, X1


def run_recording(cls, X, y, seed, params, classes=(0, 1), summary=None):
    """``cls(**params).fit(X, y)`` minus the input validation (identical otherwise: the
    audits check it against fit); returns the estimator and the mean of w̃[0] over
    every release (NaN when nothing was released), or ``summary(list of w̃[0])``."""
    est = cls(**params, random_state=seed)
    released = []
    inner = est._release_weights

    def recording(full_scores):
        w = inner(full_scores)
        released.append(w[0])
        return w

    est._release_weights = recording
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est._start_stream(X, True, True)
        est.classes_ = np.array(classes)
        est._init_state(X.shape[1])
        est._before_block(X.shape[0])
        est._consume(X.astype(float), np.where(y == 1, 1.0, -1.0))
    if summary is not None:
        return est, summary(released)
    return est, (float(np.mean(released)) if released else np.nan)


class Uncapped(DPWinnowClassifier):
    """Broken twin: never reaches its cap K, so it keeps releasing draws."""

    def _cap(self):
        return np.inf


class ExactWeights(DPWinnowClassifier):
    """Broken twin: releases w itself instead of the m-draw empirical distribution."""

    def _release_weights(self, full_scores):
        return softmax(self.parameters_.learning_rate * full_scores)
