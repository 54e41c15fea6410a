"""Exact privacy audit of DP-Winnow's private comparison with the constant (Lemma C),
with a broken twin the same audit catches.

The real estimator runs (scheduled setting, an intercept, windows of 20 rows) on two
streams that differ in one row of window 2, the first check window: its label flips,
at a row where the released weights and the released constant disagree, so the
check's exact mistake difference moves by 2 — the sensitivity Lemma C claims. Window
1 (the count) is identical and the seed is shared, so the released prefix is the same
on both sides. The check's arguments are recorded where the real code calls
``geometric_mechanism`` (patched by module attribute, passing through), and the two
discrete-Laplace laws they define are compared by :func:`skdp.audit.exact_epsilon`:
the real check is exactly ε_c (the plan's PureDP item); ``WrongSensitivity``, which
declares sensitivity 1, is 2ε_c.
"""

import warnings

import numpy as np
import pytest

import skdp.linear._scheduled as scheduled
from skdp.accounting import PureDP
from skdp.audit import exact_epsilon
from skdp.linear import DPWinnowClassifier

PARAMS = dict(epsilon=2.0, delta=1e-6, margin=1.0, window=20, n_samples=3, n_rounds=200,
              bounds=(-1.0, 1.0), classes=[0, 1])
WIDTH = 400
_REAL = scheduled.geometric_mechanism


class WrongSensitivity(DPWinnowClassifier):
    """Broken twin: calibrates the check's noise to sensitivity 1."""

    _check_sensitivity = 1


def _streams(flip_row):
    X = np.r_[np.ones(8), -np.ones(12), np.ones(20), np.ones(40)].reshape(-1, 1)
    y = np.r_[np.ones(8), np.zeros(12), np.ones(60)].astype(int)
    y2 = y.copy()
    y2[flip_row] = 1 - y2[flip_row]
    return X, y, y2


def _first_check(cls, X, y, seed, monkeypatch):
    calls = []
    real = _REAL

    def recording(values, epsilon, sensitivity=None, **kw):
        if sensitivity is not None:
            calls.append((int(values), float(epsilon), float(sensitivity)))
            return real(values, epsilon, sensitivity, **kw)
        return real(values, epsilon, **kw)

    monkeypatch.setattr(scheduled, "geometric_mechanism", recording)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = cls(random_state=seed, **PARAMS).fit(X, y)
    return calls[0], clf


def _law(centre, epsilon, sensitivity, grid):
    a = np.exp(-epsilon / sensitivity)
    return np.log((1 - a) / (1 + a)) - epsilon / sensitivity * np.abs(grid - centre)


def _audit(cls, monkeypatch):
    """The first seed whose released weights disagree with the constant on row 20."""
    X, y, y2 = _streams(flip_row=20)
    for seed in range(40):
        (d1, eps, sens), clf = _first_check(cls, X, y, seed, monkeypatch)
        (d2, _, _), _ = _first_check(cls, X, y2, seed, monkeypatch)
        if abs(d1 - d2) == 2:
            grid = np.arange(min(d1, d2) - WIDTH, max(d1, d2) + WIDTH + 1)
            return exact_epsilon(_law(d1, eps, sens, grid), _law(d2, eps, sens, grid)), clf
    pytest.fail("no seed made the released weights and the constant disagree on row 20")


def test_the_check_is_exactly_the_plans_pure_item(monkeypatch):
    eps, clf = _audit(DPWinnowClassifier, monkeypatch)
    p = clf.parameters_
    assert p.count_rows == PARAMS["window"]  # the count covers window 1 only
    assert (PureDP(p.count_epsilon), 1) in p.privacy_events
    assert eps == pytest.approx(p.count_epsilon, rel=1e-6)


def test_broken_twin_with_sensitivity_one_is_caught_at_twice_the_claim(monkeypatch):
    eps, clf = _audit(WrongSensitivity, monkeypatch)
    assert eps == pytest.approx(2 * clf.parameters_.count_epsilon, rel=1e-6)
    assert eps > 1.5 * clf.parameters_.count_epsilon
