"""``skdp demo`` row for the Winnow family (see :mod:`skdp._demo`)."""

import warnings

from .._validation import TestingSeed
from ._dp_winnow import DPWinnowClassifier
from ._winnow import WinnowClassifier

__all__ = ["demo_row"]

_N, _D, _LAST, _EPSILON = 20000, 20, 5000, 1.0


def _late_error_rate(clf, X, y):
    """Online mistakes on the last rows: predict each row, then learn from it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.partial_fit(X[:-_LAST], y[:-_LAST], classes=[0, 1])
        before = clf._n_mistakes  # exact, on synthetic data: an evaluation only
        clf.partial_fit(X[-_LAST:], y[-_LAST:])
    return (clf._n_mistakes - before) / _LAST


def demo_row(rng, budget):
    """DP-Winnow vs Winnow on a stream whose label is one of 20 ±1 features.

    A large-margin stream (ρ = 1), where DP-Winnow learns at ε = 1 within the
    horizon (its guard agrees); spends ε = 1 (δ = 1e-6) from ``budget`` in well
    under a second.
    """
    X = rng.choice([-1.0, 1.0], size=(_N, _D))
    y = (X[:, 3] > 0).astype(int)
    y ^= rng.random(_N) < 0.02  # 2 % label noise
    # The features are ±1 by construction: public bounds (−1, 1).
    private = DPWinnowClassifier(epsilon=_EPSILON, delta=1e-6, margin=1.0, n_rounds=_N,
                                 bounds=(-1, 1), budget=budget, random_state=TestingSeed(rng))
    private_rate = _late_error_rate(private, X, y)
    exact_rate = _late_error_rate(WinnowClassifier(learning_rate=0.5, bounds=(-1, 1)), X, y)
    return {
        "what": f"online halfspace: label = 1 of {_D} features, 2 % noise, {_N} rows "
                "(DP-Winnow)",
        "privacy": f"ε={_EPSILON:g}, δ=1e-6",
        "private result": f"{'learned it' if private_rate < 0.25 else 'did not learn'}: "
                          f"{private_rate:.1%} wrong on the last {_LAST} rows",
        "non-private": f"{exact_rate:.1%} wrong (Winnow)",
    }
