"""Bad input fails with a clear error before any privacy is spent (hypothesis)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from skdp import PrivacyBudget, TestingSeed
from skdp.linear import (
    ConfidentWinnowClassifier,
    DPWinnowClassifier,
    OnlineDecisionListClassifier,
    WinnowClassifier,
)

ESTIMATORS = [WinnowClassifier, ConfidentWinnowClassifier, DPWinnowClassifier]


def _budget_and_clf(cls):
    budget = PrivacyBudget(5.0, 1e-4)
    if cls is DPWinnowClassifier:
        return budget, cls(budget=budget, random_state=TestingSeed(0))
    return budget, cls()


@pytest.mark.parametrize("cls", ESTIMATORS)
@given(X=arrays(np.float64, (6, 3), elements=st.floats(-1, 1)),
       bad=st.sampled_from([np.nan, np.inf, -np.inf]),
       where=st.tuples(st.integers(0, 5), st.integers(0, 2)))
def test_non_finite_features(cls, X, bad, where):
    X = X.copy()
    X[where] = bad
    y = np.array([0, 1, 0, 1, 0, 1])
    budget, clf = _budget_and_clf(cls)
    with pytest.raises(ValueError, match=r"NaN|infinity"):
        clf.fit(X, y)
    assert budget.spent.epsilon == 0.0 and not hasattr(clf, "classes_")


@pytest.mark.parametrize("cls", [WinnowClassifier, ConfidentWinnowClassifier])
@given(X=arrays(np.float64, (6, 3), elements=st.floats(-1, 1)),
       bad=st.sampled_from([1.5, -7.0, 1e300, -1e300]),
       where=st.tuples(st.integers(0, 5), st.integers(0, 2)))
def test_out_of_range_features_are_clipped_to_the_bounds(cls, X, bad, where):
    # Clipping is data-independent: a value beyond the bounds acts as the bound itself.
    y = np.array([0, 1, 0, 1, 0, 1])
    wild, clipped = X.copy(), X.copy()
    wild[where], clipped[where] = bad, np.sign(bad)
    with pytest.warns(UserWarning, match="no public bounds"):
        a = cls().fit(wild, y)
    b = cls(bounds=(-1, 1)).fit(clipped, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("bounds", [(1, 1), (0, np.nan), (0,), ([0, 0], 1)])
def test_bad_bounds_fail_before_any_privacy_is_spent(cls, bounds):
    budget, clf = _budget_and_clf(cls)
    with pytest.raises(ValueError, match="bounds"):
        clf.set_params(bounds=bounds).fit(np.zeros((4, 3)), [0, 1, 0, 1])
    assert budget.spent.epsilon == 0.0


@pytest.mark.parametrize("cls", ESTIMATORS)
@given(n_classes=st.integers(3, 5))
def test_multiclass_bad_input_is_refused_before_the_charge(cls, n_classes):
    # C > 2 labels are learnt one-vs-rest (tests/test_multiclass.py); the copies' input
    # checks run before the C-class learner pays.
    X = np.zeros((10, 2))
    y = np.arange(10) % n_classes
    budget, clf = _budget_and_clf(cls)
    with pytest.raises(ValueError, match="bounds"):
        clf.set_params(bounds=(np.zeros(3), np.ones(3))).fit(X, y)
    assert budget.spent.epsilon == 0.0


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_partial_fit_needs_classes_and_refuses_unseen_labels(cls):
    X = np.zeros((4, 2))
    budget, clf = _budget_and_clf(cls)
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit(X, [0, 1, 0, 1])
    assert budget.spent.epsilon == 0.0
    clf.partial_fit(X, [0, 1, 0, 1], classes=[0, 1])
    spent = budget.spent.epsilon
    with pytest.raises(ValueError, match="not in classes"):
        clf.partial_fit(X, [0, 2, 0, 1])
    with pytest.raises(ValueError, match="features"):
        clf.partial_fit(np.zeros((4, 3)), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="differs"):
        clf.partial_fit(X, [0, 1, 0, 1], classes=[0, 5])
    assert budget.spent.epsilon == spent


@given(eps=st.one_of(st.floats(max_value=0.0), st.just(np.inf), st.just(np.nan)),
       delta=st.one_of(st.just(0.0), st.just(1.0), st.floats(min_value=1.0001, max_value=10)))
def test_invalid_privacy_parameters(eps, delta):
    budget = PrivacyBudget(5.0, 1e-4)
    X, y = np.zeros((4, 2)), [0, 1, 0, 1]
    for kwargs in (dict(epsilon=eps), dict(delta=delta)):
        with pytest.raises(ValueError):
            DPWinnowClassifier(budget=budget, **kwargs).fit(X, y)
    assert budget.spent.epsilon == 0.0


@given(X=arrays(np.float64, (5, 3), elements=st.floats(-3, 3)))
def test_decision_list_needs_binary(X):
    X[0, 0] = 0.5
    budget = PrivacyBudget(5.0, 1e-4)
    with pytest.raises(ValueError, match="binary"):
        OnlineDecisionListClassifier(binarize=None, budget=budget).fit(X, [0, 1, 0, 1, 1])
    assert budget.spent.epsilon == 0.0


def test_wrong_shapes():
    for cls in ESTIMATORS:
        with pytest.raises(ValueError):
            cls().fit(np.zeros(5), [0, 1, 0, 1, 0])
        with pytest.raises(ValueError):
            cls().fit(np.zeros((5, 2)), [0, 1, 0])
        clf = cls().fit(np.zeros((4, 2)), [0, 1, 0, 1])
        with pytest.raises(ValueError):
            clf.predict(np.zeros((3, 5)))
