"""SubsampleAggregatePredictor: per-query ε by optimal composition, T enforced."""

import copy
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression

from skdp import BudgetExhaustedError, PrivacyBudget, TestingSeed
from skdp.accounting import calibrate, compose
from skdp.hypotheses import Thresholds
from skdp.prediction import QueryBudgetExhaustedError, SubsampleAggregatePredictor


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 1))
    return X, (X[:, 0] >= 0.4).astype(int)


def _make(**kw):
    params = dict(epsilon=1.0, delta=1e-6, n_queries=50, random_state=TestingSeed(0))
    params.update(kw)
    return SubsampleAggregatePredictor(Thresholds(), **params)


def test_per_query_epsilon_and_ledger_follow_optimal_composition():
    X, y = _data(5000)
    clf = _make().fit(X, y)
    assert clf.epsilon_query_ == calibrate(1.0, 1e-6, 50, method="optimal").epsilon
    clf.predict(X[:20])
    expected = compose(clf.epsilon_query_, 0.0, 20, 1e-6, method="optimal").epsilon
    assert clf.privacy_spent_.epsilon == pytest.approx(expected)
    clf.predict(X[20:50])
    assert clf.n_queries_used_ == 50
    assert clf.privacy_spent_.epsilon == pytest.approx(1.0)
    assert clf.privacy_spent_.epsilon <= 1.0 * (1 + 1e-12)


def test_refuses_beyond_plan_before_answering_anything():
    X, y = _data(5000)
    clf = _make().fit(X, y)
    clf.predict(X[:45])
    spent = clf.budget_.spent
    rng_state = copy.deepcopy(clf._state.rng.bit_generator.state)
    with pytest.raises(QueryBudgetExhaustedError) as info:
        clf.predict(X[45:55])
    assert info.value.n_answered == 0
    assert isinstance(info.value, BudgetExhaustedError)
    assert clf.budget_.spent == spent
    assert clf._state.rng.bit_generator.state == rng_state
    assert clf.predict(X[45:50]).shape == (5,)
    np.testing.assert_array_equal(clf.predict(X[:50]), clf.predict(X[:50]))  # free repeats


def test_copies_share_the_planned_queries():
    X, y = _data(5000)
    clf = _make().fit(X, y)
    clf.predict(X[:20])
    twin = copy.deepcopy(clf)
    twin.predict(X[:40])  # the first 20 are released answers, repeated for free
    assert clf.n_queries_used_ == 40
    restored = pickle.loads(pickle.dumps(clf))
    assert restored.n_queries_used_ == 40
    with pytest.raises(QueryBudgetExhaustedError):
        restored.predict(X[40:51])
    restored.predict(X[40:50])
    with pytest.raises(QueryBudgetExhaustedError):
        clf.predict(X[50:51])
    with pytest.raises(NotFittedError):
        clone(clf).predict(X[:1])


def test_user_budget_is_charged():
    X, y = _data(5000)
    shared = PrivacyBudget(1.5, 1e-6)
    _make(budget=shared).fit(X, y).predict(X[:50])
    assert shared.spent.epsilon == pytest.approx(1.0)
    with pytest.raises(BudgetExhaustedError):
        _make(budget=shared).fit(X, y).predict(X[:50])


def test_accuracy_with_large_budget_and_estimator_teachers():
    X, y = _data(4000)
    clf = _make(epsilon=20.0, n_queries=200).fit(X, y)
    Xq, yq = _data(200, seed=1)
    assert np.mean(clf.predict(Xq) == yq) > 0.9
    rng = np.random.default_rng(0)
    Xl = rng.normal(size=(600, 2))
    yl = (Xl[:, 0] > 0).astype(int)
    lr = SubsampleAggregatePredictor(estimator=LogisticRegression(), epsilon=50.0,
                                     n_queries=100, n_teachers=20, random_state=0).fit(Xl, yl)
    assert lr.n_teachers_ == 20
    assert np.mean(lr.predict(Xl[:100]) == yl[:100]) > 0.85


def test_auto_teachers_and_bad_input():
    X, y = _data(5000)
    clf = _make().fit(X, y)
    assert 1 <= clf.n_teachers_ <= 500
    with pytest.raises(ValueError):
        clf.predict([[np.nan]])
    with pytest.raises(ValueError, match="Only binary"):
        _make().fit(X, np.arange(5000) % 3)
    for bad in (dict(epsilon=0.0), dict(n_queries=0), dict(delta=1.0)):
        with pytest.raises(ValueError):
            _make(**bad).fit(X, y)
    assert clf.n_queries_used_ == 0
