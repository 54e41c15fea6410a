"""Scheduled DP-Winnow (the default): the public schedule, block equivalence, K sized
to the horizon, the hard cap, the guard and its private constant, learning."""

import warnings

import numpy as np
import pytest

from skdp import PrivacyBudget, TestingSeed
from skdp.accounting import account
from skdp.exceptions import PrivacyWarning
from skdp.linear import DPWinnowClassifier
from skdp.linear._schedule import LEARN_FACTOR, solve_schedule

DELTA = 1e-6


def _literal_stream(rng, n, d):
    X = rng.choice([-1.0, 1.0], size=(n, d))
    return X, (X[:, 0] > 0).astype(int)


def _fit_quiet(clf, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return clf.fit(X, y)


@pytest.mark.parametrize("epsilon", [1.0, 4.0, 16.0])
@pytest.mark.parametrize("margin", [1 / 11, 1 / 3, 1.0])
@pytest.mark.parametrize("horizon", [10**3, 10**5, 10**6])
def test_schedule_is_sized_to_the_horizon_and_accounted(epsilon, margin, horizon):
    p = solve_schedule(epsilon, DELTA, margin, horizon, 202)
    if p.max_updates:
        assert p.max_updates == -(-horizon // p.window)  # K = ⌈T/B⌉
        assert p.n_samples % 2 == 1 and p.max_batch >= 1
    assert p.epsilon_spent <= epsilon * (1 + 1e-9)
    assert account(p.privacy_events).epsilon(DELTA) <= epsilon * (1 + 1e-6)
    assert p.learns == (p.rows_to_learn <= LEARN_FACTOR * horizon)


def test_defaults_learn_a_large_margin_stream(rng):
    X, y = _literal_stream(rng, 20000, 10)
    clf = _fit_quiet(DPWinnowClassifier(epsilon=4.0, margin=1.0, random_state=0), X, y)
    p = clf.parameters_
    assert p.setting == "scheduled" and p.learns and not clf.constant_fallback_
    # K = ⌈T/B⌉ releases: the last, partial window is released at row T
    assert clf.n_updates_ == p.max_updates == -(-len(y) // p.window)
    assert len(y) % p.window and clf.updates_exhausted_
    assert clf._scores[0] > 3 * np.abs(clf._scores[1:-1]).max()
    assert clf._n_mistakes < 0.1 * len(y) and clf.score(X, y) == 1.0


def test_block_equivalence_and_public_window_boundaries(rng):
    X, y = _literal_stream(rng, 3000, 6)
    # guard=None: block-cut equivalence is the learner's own property (the guard checks
    # each partial_fit call; fit is not guarded)
    params = dict(epsilon=2.0, margin=1.0, window=64, n_rounds=3000, random_state=3,
                  guard=None)
    one = _fit_quiet(DPWinnowClassifier(**params), X, y)
    blocks = DPWinnowClassifier(**params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for start, stop in [(0, 1), (1, 63), (63, 64), (64, 1000), (1000, 3000)]:
            blocks.partial_fit(X[start:stop], y[start:stop], classes=[0, 1])
            # one release per 64 rows, no more, and one at the horizon T = 3000
            assert blocks.n_updates_ == stop // 64 + (stop == 3000)
    np.testing.assert_array_equal(one.weights_, blocks.weights_)
    assert (one.n_updates_, one._n_mistakes) == (blocks.n_updates_, blocks._n_mistakes)


def test_hard_cap_stops_and_warns_once_on_any_stream(rng):
    X = rng.choice([-1.0, 1.0], size=(1000, 5))
    y = rng.integers(0, 2, 1000)  # no margin at all
    clf = DPWinnowClassifier(epsilon=2.0, margin=1.0, max_updates=4, n_rounds=400,
                             random_state=0, classes=[0, 1])
    with pytest.warns(PrivacyWarning, match="4 scheduled updates"):
        clf.fit(X, y)
    assert clf.n_updates_ == 4 and clf.updates_exhausted_
    frozen = clf.weights_.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        clf.partial_fit(X, y)
    np.testing.assert_array_equal(clf.weights_, frozen)


def test_guard_warns_and_predicts_the_private_constant(rng):
    X = (rng.random((3000, 50)) < 0.05).astype(float)
    y = (X[:, :5].sum(axis=1) > 0).astype(int)  # ≈ 23 % positive
    budget = PrivacyBudget(2.0, 1e-5)
    clf = DPWinnowClassifier(epsilon=1.0, margin=1 / 11, budget=budget, random_state=TestingSeed(0))
    with pytest.warns(UserWarning, match="cannot learn within n_rounds=3000"):
        clf.fit(X, y)
    p = clf.parameters_
    assert not p.learns and p.max_updates == 0 and clf.constant_fallback_
    assert p.count_epsilon == pytest.approx(1.0) and budget.spent.epsilon == pytest.approx(1.0)
    assert clf.n_updates_ == 0 and np.all(clf.predict(X) == 0)
    # rows before the count is released are predicted with the uniform start (class 0)
    assert clf._n_mistakes == y.sum()


def test_sparse_vector_options_are_refused_for_the_schedule_before_spending(rng):
    X, y = _literal_stream(rng, 100, 3)
    budget = PrivacyBudget(5.0, 1e-5)
    with pytest.raises(ValueError, match="threshold"):
        DPWinnowClassifier(threshold=2.0, budget=budget).fit(X, y)
    with pytest.raises(ValueError, match="window applies"):
        DPWinnowClassifier(window=10, setting="practical", budget=budget).fit(X, y)
    assert budget.spent.epsilon == 0.0


def test_privacy_charged_once_per_stream(rng):
    X, y = _literal_stream(rng, 600, 4)
    budget = PrivacyBudget(5.0, 1e-5)
    clf = DPWinnowClassifier(epsilon=2.0, margin=1.0, budget=budget, random_state=TestingSeed(0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for start in range(0, 600, 200):
            clf.partial_fit(X[start:start + 200], y[start:start + 200], classes=[0, 1])
    assert budget.spent.epsilon == pytest.approx(2.0)
    assert clf.privacy_spent_ == (2.0, DELTA)


def test_sparse_vector_k_beyond_the_horizon_warns(rng):
    X, y = _literal_stream(rng, 500, 4)
    with pytest.warns(UserWarning, match="exceed the horizon n_rounds=500"):
        _fit_warn(DPWinnowClassifier(epsilon=1.0, margin=0.5, setting="practical",
                                     random_state=0), X, y)


def _fit_warn(clf, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        return clf.fit(X, y)
