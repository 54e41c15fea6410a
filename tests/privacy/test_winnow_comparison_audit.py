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

The guard's fallback recounts (Lemma S (3)): a ``partial_fit`` stream the guard rules
out is fed 512 rows in four calls — one count per call: rows 1–64, 65–128, 129–256,
257–512 — and
the neighbour flips the label of row 100. The exact law of the four released counts
(product of discrete Laplace laws around the recorded true counts) gives exactly ε;
``CumulativeRecount``, which never empties its count, releases row 100 in three counts
and measures 3ε.
"""
import itertools
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


class CumulativeRecount(DPWinnowClassifier):
    """Broken twin: the fallback's recounts keep every earlier row in their count."""

    def _private_balance(self, rows=None, index=0):
        kept = self._positives
        balance = super()._private_balance(rows, index)
        self._positives = kept
        return balance


def _recorded(monkeypatch, run):
    """Run ``run()`` with every geometric_mechanism call of the scheduled loop recorded
    as (value, ε, sensitivity or None); return (calls, run's result)."""
    calls = []

    def recording(values, epsilon, sensitivity=None, **kw):
        calls.append((int(values), float(epsilon), sensitivity))
        if sensitivity is None:
            return _REAL(values, epsilon, **kw)
        return _REAL(values, epsilon, sensitivity, **kw)

    monkeypatch.setattr(scheduled, "geometric_mechanism", recording)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = run()
    return calls, out


def _first_check(cls, X, y, seed, monkeypatch):
    calls, clf = _recorded(monkeypatch, lambda: cls(random_state=seed, **PARAMS).fit(X, y))
    return next((v, e, float(s)) for v, e, s in calls if s is not None), clf


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


def _recount_epsilon(cls, monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.choice([-1.0, 1.0], size=(512, 2))
    y = rng.integers(0, 2, 512)
    y2 = y.copy()
    y2[100] = 1 - y2[100]

    def stream(labels):
        clf = cls(epsilon=1.0, n_rounds=1000, bounds=(-1.0, 1.0), classes=[0, 1],
                  random_state=0, guard=None)  # the learner's counts alone
        for start, stop in [(0, 64), (64, 128), (128, 256), (256, 512)]:
            clf.partial_fit(X[start:stop], labels[start:stop])
        return clf

    def counts(labels):
        calls, clf = _recorded(monkeypatch, lambda: stream(labels))
        assert clf.constant_fallback_ and clf.parameters_.count_rows == 64
        return [(v, e) for v, e, s in calls if s is None]

    c, c2 = counts(y), counts(y2)
    assert len(c) == len(c2) == 4 and all(e == 1.0 for _, e in c)
    width = 12
    axes = []
    for (a, eps), (b, _) in zip(c, c2, strict=True):
        grid = np.arange(min(a, b) - width, max(a, b) + width + 1)
        axes.append((_law(a, eps, 1.0, grid), _law(b, eps, 1.0, grid)))
    log_p = np.array([sum(cell) for cell in itertools.product(*[ax[0] for ax in axes])])
    log_q = np.array([sum(cell) for cell in itertools.product(*[ax[1] for ax in axes])])
    moved = [a != b for (a, _), (b, _) in zip(c, c2, strict=True)]
    return exact_epsilon(log_p, log_q), moved


def test_fallback_recounts_on_disjoint_windows_keep_epsilon(monkeypatch):
    eps, moved = _recount_epsilon(DPWinnowClassifier, monkeypatch)
    assert moved == [False, True, False, False]
    assert eps == pytest.approx(1.0, rel=1e-6)


def test_broken_twin_recounting_cumulatively_is_caught(monkeypatch):
    eps, moved = _recount_epsilon(CumulativeRecount, monkeypatch)
    assert moved == [False, True, True, True]
    assert eps == pytest.approx(3.0, rel=1e-6) and eps >= 2.0
