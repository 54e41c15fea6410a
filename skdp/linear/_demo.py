"""``skdp demo`` row for the Winnow family (see :mod:`skdp._demo`)."""

import warnings

from ..exceptions import PrivacyWarning
from ._dp_winnow import DPWinnowClassifier
from ._winnow import WinnowClassifier

__all__ = ["demo_row"]


def demo_row(rng, budget):
    """DP-Winnow vs Winnow on a stream whose label is one of 20 ±1 features.

    Spends ε = 0.5 (δ = 1e-6) from ``budget``; runs in well under a second.
    """
    n, d, eps = 20000, 20, 0.5
    X = rng.choice([-1.0, 1.0], size=(n, d))
    y = (X[:, 3] > 0).astype(int)
    y ^= rng.random(n) < 0.02  # 2 % label noise
    private = DPWinnowClassifier(epsilon=eps, delta=1e-6, margin=1.0, budget=budget,
                                 random_state=rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        private.fit(X, y)
    exact = WinnowClassifier(learning_rate=0.5).fit(X, y)
    return {
        "what": f"online halfspace, {n} rows (DP-Winnow)",
        "privacy": f"ε={eps}, δ=1e-6",
        "private result": f"{private._n_mistakes / n:.1%} online mistakes "
                          f"({private.n_updates_} of K={private.parameters_.max_updates} "
                          "updates)",
        "non-private": f"{exact.n_mistakes_ / n:.1%} (Winnow)",
    }
