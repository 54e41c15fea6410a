"""DP-Winnow's guard (``guard=0.1``): a private check of its own answer against a
constant on every ``partial_fit`` call; its share of ε; bad values refused before
anything is spent. The exact privacy audit is tests/privacy/test_winnow_guard_audit.py.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.utils._param_validation import InvalidParameterError

from skdp import PrivacyBudget, TestingSeed
from skdp.accounting import PureDP, account
from skdp.linear import DPWinnowClassifier

PARAMS = dict(bounds=(-1.0, 1.0), classes=[0, 1])


def _quiet(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DPWinnowClassifier(**{**PARAMS, **kw})


def _prequential(clf, X, y, chunk):
    wrong = seen = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for start in range(0, X.shape[0], chunk):
            Xc, yc = X[start:start + chunk], y[start:start + chunk]
            if start:
                wrong += int(np.count_nonzero(clf.predict(Xc) != yc))
                seen += yc.size
            clf.partial_fit(Xc, yc)
    return wrong / seen


def _sorted_stream(n=6000, positives=2000, seed=0):
    """No feature predicts the label; the rows come sorted by it (positives first),
    like fair in file order: the first count says "positive" for ever."""
    rng = np.random.default_rng(seed)
    X = rng.choice([-1.0, 1.0], size=(n, 4))
    y = np.r_[np.ones(positives), np.zeros(n - positives)].astype(int)
    return X, y


@pytest.mark.parametrize("seed", [0, 1])
def test_the_guard_follows_a_stream_sorted_by_its_label(seed):
    """The learner forced to run (window=256) on a stream it cannot learn: its own
    comparison holds one constant (window 1's: positive) and its weights fare no
    better; the guard answers with the constant of the recent calls."""
    X, y = _sorted_stream()
    kw = dict(epsilon=1.0, n_rounds=6000, window=256, random_state=seed)
    unguarded = _prequential(_quiet(guard=None, **kw), X, y, 1000)
    guarded = _prequential(_quiet(**kw), X, y, 1000)
    assert unguarded > 0.5
    # best constant over chunks 2…: 0 (1,000 positives of 5,000 rows) → 0.2; the
    # guard misses chunk 3 (its predecessor was positive): 0.2 as well
    assert guarded <= 0.2 + 0.01


def test_the_fallback_follows_the_calls_of_a_stream_sorted_by_its_label():
    X, y = _sorted_stream()
    clf = _quiet(epsilon=1.0, n_rounds=6000, random_state=0, guard=None)
    assert _prequential(clf, X, y, 1000) <= 0.2 + 0.01
    assert clf.constant_fallback_ and clf.n_recounts_ == 5  # one count per call


def test_checks_every_call_but_the_first_and_answers_with_the_constant():
    X, y = _sorted_stream()
    clf = _quiet(epsilon=1.0, n_rounds=6000, window=256, random_state=0)
    _prequential(clf, X, y, 1000)
    assert clf._guard.n_checks == 5  # 6 calls, the first one unchecked
    assert clf.guard_constant_ == 0
    np.testing.assert_array_equal(clf.predict(X[:5]), np.zeros(5))
    np.testing.assert_array_equal(clf.predict_proba(X[:5]), [[1.0, 0.0]] * 5)
    np.testing.assert_array_equal(clf.decision_function(X[:5]), -np.ones(5))


def test_the_guard_share_is_in_the_plan_and_the_charge_is_epsilon():
    budget = PrivacyBudget(3.0, 1e-5)
    clf = _quiet(epsilon=2.0, n_rounds=5000, guard=0.25, budget=budget,
                 random_state=TestingSeed(1))
    X, y = _sorted_stream(5000, 1000)
    _prequential(clf, X, y, 500)
    p = clf.parameters_
    assert p.guard_epsilon == pytest.approx(0.5)
    assert (PureDP(0.5), 1) in p.privacy_events
    assert p.epsilon_spent <= 2.0 * (1 + 1e-9)
    assert account(p.privacy_events).epsilon(1e-6) <= 2.0 * (1 + 1e-6)
    assert budget.spent.epsilon == pytest.approx(2.0)
    assert clf.privacy_spent_.epsilon == pytest.approx(2.0)


def test_fit_is_one_call_and_runs_unguarded_at_epsilon():
    X, y = _sorted_stream(2000, 500)
    clf = _quiet(epsilon=1.0, random_state=0).fit(X, y)
    assert clf.parameters_.guard_epsilon == 0.0 and clf._guard is None
    assert clf.guard_constant_ is None
    same = _quiet(epsilon=1.0, random_state=0, guard=None).fit(X, y)
    assert clf.parameters_ == same.parameters_
    np.testing.assert_array_equal(clf.weights_, same.weights_)


def test_a_new_stream_forgets_the_guards_choice():
    X, y = _sorted_stream()
    clf = _quiet(epsilon=1.0, n_rounds=6000, window=256, random_state=0)
    _prequential(clf, X, y, 1000)
    assert clf.guard_constant_ == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X[:2000], y[:2000])
    assert clf.guard_constant_ is None


@pytest.mark.parametrize("guard", [0, 1, 1.5, -0.1, "0.1", np.nan])
def test_bad_guard_is_refused_before_anything_is_spent(guard):
    budget = PrivacyBudget(2.0, 1e-5)
    clf = DPWinnowClassifier(guard=guard, budget=budget, random_state=TestingSeed(0),
                             **PARAMS)
    X, y = _sorted_stream(100, 50)
    with pytest.raises(InvalidParameterError, match="guard"):
        clf.partial_fit(X, y)
    assert budget.spent.epsilon == 0.0 and not hasattr(clf, "classes_")


@settings(max_examples=20, deadline=None)
@given(guard=st.floats(0.01, 0.99), epsilon=st.floats(0.2, 8.0))
def test_any_share_keeps_the_stream_within_epsilon(guard, epsilon):
    X, y = _sorted_stream(400, 100)
    clf = _quiet(epsilon=epsilon, n_rounds=400, guard=guard, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.partial_fit(X[:200], y[:200])
        clf.partial_fit(X[200:], y[200:])
    p = clf.parameters_
    assert p.guard_epsilon == pytest.approx(guard * epsilon)
    assert p.epsilon_spent <= epsilon * (1 + 1e-9)
    assert clf.privacy_spent_.epsilon == pytest.approx(epsilon)


def test_the_fallback_pools_small_calls_until_they_outnumber_their_noise():
    """Calls of 5 rows at ε = 1: one count's noise (sd ≈ 1.36) would flip a 5-row
    majority often; pooled over the 19 newest calls (5k ≥ 16·1.36·√k) the constant is
    the stream's (30 % positive: predict 0), and a 1,000-row call stands alone."""
    rng = np.random.default_rng(2)
    X = rng.choice([-1.0, 1.0], size=(1500, 3))
    y = (rng.uniform(size=1500) < 0.3).astype(int)
    clf = _quiet(epsilon=1.0, n_rounds=4000, random_state=0, guard=None)
    err = _prequential(clf, X, y, 5)
    assert clf.constant_fallback_ and clf._constant_rows == 95
    assert err <= y[5:].mean() + 0.02
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.partial_fit(X[:1000], y[:1000])
    assert clf._constant_rows == 1000
