"""What the private online learners over a finite domain share as scikit-learn estimators.

DPSOAClassifier and AdaptivePrivateOnlineClassifier, parametrized: estimator checks
(direct and on a public binning pipeline), Pipeline / GridSearchCV / cross_val_score,
budget semantics under clone, deepcopy, pickle and grid search, forked streams, and bad
input refused before any privacy is spent. Estimator-specific parameters are tested in
test_dp_soa_sklearn.py and test_adaptive_estimator.py.
"""

import copy
import pickle
import warnings

import numpy as np
import pytest
from _domain_checks import FUZZED_X, FUZZED_Y, domain_check_cases, fuzzed_block
from hypothesis import given
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skdp import PrivacyBudget, TestingSeed
from skdp.exceptions import BudgetExhaustedError, PrivacyWarning, StaleStateError
from skdp.hypotheses import FiniteClass, Thresholds
from skdp.hypotheses.littlestone import threshold_class
from skdp.online import AdaptivePrivateOnlineClassifier, DPSOAClassifier

ESTIMATORS = {
    "dpsoa": (DPSOAClassifier,
              dict(epsilon=2.0, delta=1e-6, n_trees=40, random_state=TestingSeed(0))),
    "adaptive": (AdaptivePrivateOnlineClassifier,
                 dict(epsilon=2.0, delta=1e-6, n_sequences=256, random_state=TestingSeed(0))),
}
NAMES = list(ESTIMATORS)


def _make(name, **kw):
    cls, params = ESTIMATORS[name]
    return cls(**{**params, **kw})


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        warnings.simplefilter("ignore", UserWarning)
        yield


def _data(rng, n=400, n_domain=32, target=11):
    x = rng.integers(0, n_domain, size=n)
    return x[:, None], (x >= target).astype(int)


# ----------------------------------------------------------------- sklearn checks
def _cases():
    return domain_check_cases({
        name: (_make(name, hypothesis_class=FiniteClass(threshold_class(8).label_matrix)), 8)
        for name in NAMES})


@pytest.mark.parametrize(("estimator", "check"), list(_cases()))
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("name", NAMES)
def test_domain_index_versions_of_the_skipped_checks(name, rng):
    """What the skipped checks test, on domain-index data the estimator accepts."""
    L = threshold_class(32)
    X, y = _data(rng)
    y = np.where(y > 0, "pos", "neg")
    clf = _make(name, hypothesis_class=L)
    assert clf.fit(X, y) is clf and clf.n_features_in_ == 1
    pred = clf.predict(X)
    assert set(pred) <= {"pos", "neg"}
    again = _make(name, hypothesis_class=L).fit(X, y)
    np.testing.assert_array_equal(again.predict(X), pred)  # idempotent with a seed
    order = rng.permutation(len(X))
    np.testing.assert_array_equal(clf.predict(X[order]), pred[order])
    np.testing.assert_array_equal(clf.predict(X[:10]), pred[:10])
    np.testing.assert_array_equal(clf.predict(X.astype(np.float32)), pred)
    np.testing.assert_array_equal(clf.predict(np.asfortranarray(X.astype(float))), pred)
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(restored.predict(X), pred)
    assert clf.get_params()["hypothesis_class"] is L


# ----------------------------------------------------------------- pipelines and search
def _rescale(X):
    return np.floor(np.asarray(X, dtype=float) / 4.0)  # public map 0..127 -> 0..31


@pytest.mark.parametrize("name", NAMES)
def test_pipeline_grid_search_and_cross_val(name, rng):
    x = rng.integers(0, 128, size=600)
    X, y = x[:, None], (x >= 44).astype(int)
    pipe = make_pipeline(FunctionTransformer(_rescale),
                         _make(name, hypothesis_class=threshold_class(32)))
    scores = cross_val_score(pipe, X, y, cv=3)
    assert scores.shape == (3,) and np.all((scores >= 0) & (scores <= 1))
    key = f"{pipe.steps[-1][0]}__epsilon"
    search = GridSearchCV(pipe, {key: [1.0, 4.0]}, cv=2).fit(X, y)
    assert search.best_params_[key] in (1.0, 4.0)
    assert search.predict(X).shape == (600,)


# ----------------------------------------------------------------- budget semantics
@pytest.mark.parametrize("name", NAMES)
def test_clone_shares_the_ledger(name, rng):
    X, y = _data(rng)
    budget = PrivacyBudget(5.0, 1e-5)
    clf = _make(name, hypothesis_class=threshold_class(32), budget=budget)
    twin = clone(clf)
    assert twin.budget.shares_ledger_with(budget)
    clf.fit(X, y)
    twin.fit(X, y)
    assert budget.spent.epsilon == pytest.approx(4.0)
    with pytest.raises(BudgetExhaustedError):
        clone(clf).fit(X, y)
    assert budget.spent.epsilon == pytest.approx(4.0)


@pytest.mark.parametrize("name", NAMES)
def test_deepcopy_and_pickle_keep_spent_privacy(name, rng):
    X, y = _data(rng)
    budget = PrivacyBudget(4.0, 1e-5)
    clf = _make(name, hypothesis_class=threshold_class(32), budget=budget).fit(X, y)
    for copy_ in (copy.deepcopy(clf), pickle.loads(pickle.dumps(clf))):
        assert copy_.privacy_spent_ == clf.privacy_spent_
        assert copy_.budget.spent.epsilon == pytest.approx(2.0)
        np.testing.assert_array_equal(copy_.predict(X), clf.predict(X))
    restored = pickle.loads(pickle.dumps(clf))
    restored.fit(X, y)  # a new stream charges the same (shared) ledger
    assert budget.spent.epsilon == pytest.approx(4.0)


@pytest.mark.parametrize("name", NAMES)
def test_forked_stream_cannot_be_continued_twice(name, rng):
    X, y = _data(rng, n=300)
    clf = _make(name, hypothesis_class=threshold_class(32))
    clf.partial_fit(X[:100], y[:100], classes=[0, 1])
    fork, pickled = copy.deepcopy(clf), pickle.loads(pickle.dumps(clf))
    clf.partial_fit(X[100:200], y[100:200])
    for other in (fork, pickled):
        with pytest.raises(StaleStateError, match="stale copy"):
            other.partial_fit(X[200:], y[200:])
    clf.partial_fit(X[200:], y[200:])  # the original is not blocked
    fork.fit(X, y)  # a fresh (charged) stream is always allowed


@pytest.mark.parametrize("name", NAMES)
def test_grid_search_charges_every_fit(name, rng):
    X, y = _data(rng, n=300)
    budget = PrivacyBudget(20.0, 1e-4)
    est = _make(name, hypothesis_class=threshold_class(32), budget=budget, epsilon=1.0)
    search = GridSearchCV(est, {"epsilon": [0.5, 1.0]}, cv=3).fit(X, y)
    best = search.best_params_["epsilon"]
    assert budget.spent.epsilon == pytest.approx(4.5 + best)  # 3 folds × 1.5 + refit
    spent = budget.spent.epsilon
    cross_val_score(est, X, y, cv=2)
    assert budget.spent.epsilon == pytest.approx(spent + 2.0)
    with pytest.raises(BudgetExhaustedError):
        GridSearchCV(est, {"epsilon": [8.0]}, cv=3, error_score="raise").fit(X, y)


# ----------------------------------------------------------------- bad input
def _fresh(name, budget, **kw):
    return _make(name, **{"hypothesis_class": threshold_class(10), "budget": budget, **kw})


@given(FUZZED_X, FUZZED_Y)
def test_fuzzed_input_fails_before_any_privacy_is_spent(xs, ys):
    for name in NAMES:
        _check_fuzzed_input(name, xs, ys)


def _check_fuzzed_input(name, xs, ys):
    X, y, valid = fuzzed_block(xs, ys)
    n = len(y)
    budget = PrivacyBudget(10.0, 1e-4)
    clf = _fresh(name, budget)
    try:
        clf.partial_fit(X, y, classes=[0, 1])
    except ValueError:
        assert not valid
        assert budget.spent.epsilon == 0.0 and not hasattr(clf, "classes_")
        return
    assert valid
    assert budget.spent.epsilon == 2.0 and clf.n_rounds_seen_ == n


@given(eps=st.one_of(st.floats(max_value=0.0), st.just(np.inf), st.just(np.nan)),
       delta=st.one_of(st.just(0.0), st.just(1.0), st.floats(min_value=1.0001, max_value=10)))
def test_invalid_privacy_parameters(eps, delta):
    budget = PrivacyBudget(10.0, 1e-4)
    X, y = np.array([[0], [5]]), [0, 1]
    for name in NAMES:
        for kwargs in (dict(epsilon=eps), dict(delta=delta)):
            with pytest.raises(ValueError):
                _fresh(name, budget, **kwargs).fit(X, y)
    assert budget.spent.epsilon == 0.0



@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    ("kwargs", "X", "y", "match"),
    [
        (dict(hypothesis_class=Thresholds()), [[0], [1]], [0, 1], "infinite"),
        (dict(hypothesis_class=np.ones((100, 3))), [[0], [1]], [0, 1], "max_hypotheses"),
        (dict(), [[0], [1], [10]], [0, 1, 2], "domain indices"),  # 3 labels: one-vs-rest
        (dict(), [[0, 1], [2, 3]], [0, 1], r"shape \(n, 1\)"),
        (dict(), [[0], [10]], [0, 1], r"domain indices in \[0, 10\)"),
        (dict(), [[0.5], [1]], [0, 1], "domain indices"),
        (dict(), [[-1], [1]], [0, 1], "domain indices"),
        (dict(), [[np.nan], [1]], [0, 1], "NaN"),
        (dict(), [[0], [1]], [1, 1], "only one class"),
    ],
)
def test_bad_input_is_refused_before_the_charge(name, kwargs, X, y, match):
    budget = PrivacyBudget(10.0, 1e-4)
    with pytest.raises(ValueError, match=match):
        _fresh(name, budget, **kwargs).fit(X, y)
    assert budget.spent.epsilon == 0.0
