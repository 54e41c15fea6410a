"""DPSOAClassifier as a scikit-learn estimator: checks, Pipeline, search, budget semantics
under clone/deepcopy/pickle/GridSearchCV, bad input before any charge."""

import copy
import pickle
import warnings

import numpy as np
import pytest
from _domain_checks import domain_check_cases
from hypothesis import given
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skdp import PrivacyBudget
from skdp.exceptions import BudgetExhaustedError, PrivacyError, PrivacyWarning
from skdp.hypotheses import FiniteClass, Thresholds
from skdp.hypotheses.littlestone import PointVersionSpace, threshold_class
from skdp.online import DPSOAClassifier

P = dict(epsilon=2.0, delta=1e-6, n_trees=40, random_state=0)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        yield


def _data(rng, n=400, n_domain=32, target=11):
    x = rng.integers(0, n_domain, size=n)
    return x[:, None], (x >= target).astype(int)


# ----------------------------------------------------------------- sklearn checks
def _cases():
    est = DPSOAClassifier(hypothesis_class=FiniteClass(threshold_class(8).label_matrix), **P)
    return domain_check_cases({"dpsoa": (est, 8)})


@pytest.mark.parametrize(("estimator", "check"), list(_cases()))
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def test_domain_index_versions_of_the_skipped_checks(rng):
    """What the skipped checks test, on domain-index data the estimator accepts."""
    L = threshold_class(32)
    X, y = _data(rng)
    y = np.where(y > 0, "pos", "neg")
    clf = DPSOAClassifier(hypothesis_class=L, **P)
    assert clf.fit(X, y) is clf and clf.n_features_in_ == 1
    pred = clf.predict(X)
    assert set(pred) <= {"pos", "neg"}
    again = DPSOAClassifier(hypothesis_class=L, **P).fit(X, y)
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


def test_pipeline_grid_search_and_cross_val(rng):
    x = rng.integers(0, 128, size=600)
    X, y = x[:, None], (x >= 44).astype(int)
    pipe = make_pipeline(FunctionTransformer(_rescale),
                         DPSOAClassifier(hypothesis_class=threshold_class(32), **P))
    scores = cross_val_score(pipe, X, y, cv=3)
    assert scores.shape == (3,) and np.all((scores >= 0) & (scores <= 1))
    search = GridSearchCV(pipe, {"dpsoaclassifier__epsilon": [1.0, 4.0]}, cv=2).fit(X, y)
    assert search.best_params_["dpsoaclassifier__epsilon"] in (1.0, 4.0)
    assert search.predict(X).shape == (600,)


# ----------------------------------------------------------------- budget semantics
def test_clone_shares_the_ledger(rng):
    X, y = _data(rng)
    budget = PrivacyBudget(5.0, 1e-5)
    clf = DPSOAClassifier(hypothesis_class=threshold_class(32), budget=budget, **P)
    twin = clone(clf)
    assert twin.budget.shares_ledger_with(budget)
    clf.fit(X, y)
    twin.fit(X, y)
    assert budget.spent.epsilon == pytest.approx(4.0)
    with pytest.raises(BudgetExhaustedError):
        clone(clf).fit(X, y)
    assert budget.spent.epsilon == pytest.approx(4.0)


def test_deepcopy_and_pickle_keep_spent_privacy(rng):
    X, y = _data(rng)
    budget = PrivacyBudget(4.0, 1e-5)
    clf = DPSOAClassifier(hypothesis_class=threshold_class(32), budget=budget, **P).fit(X, y)
    for copy_ in (copy.deepcopy(clf), pickle.loads(pickle.dumps(clf))):
        assert copy_.privacy_spent_ == clf.privacy_spent_
        assert copy_.budget.spent.epsilon == pytest.approx(2.0)
        np.testing.assert_array_equal(copy_.predict(X), clf.predict(X))
    restored = pickle.loads(pickle.dumps(clf))
    restored.fit(X, y)  # a new stream charges the same (shared) ledger
    assert budget.spent.epsilon == pytest.approx(4.0)


def test_forked_stream_cannot_be_continued_twice(rng):
    X, y = _data(rng, n=300)
    clf = DPSOAClassifier(hypothesis_class=threshold_class(32), **P)
    clf.partial_fit(X[:100], y[:100], classes=[0, 1])
    fork, pickled = copy.deepcopy(clf), pickle.loads(pickle.dumps(clf))
    clf.partial_fit(X[100:200], y[100:200])
    for other in (fork, pickled):
        with pytest.raises(PrivacyError, match="continued elsewhere"):
            other.partial_fit(X[200:], y[200:])
    clf.partial_fit(X[200:], y[200:])  # the original is not blocked
    fork.fit(X, y)  # a fresh (charged) stream is always allowed


def test_grid_search_charges_every_fit(rng):
    X, y = _data(rng, n=300)
    budget = PrivacyBudget(20.0, 1e-4)
    est = DPSOAClassifier(hypothesis_class=threshold_class(32), budget=budget,
                          **{**P, "epsilon": 1.0})
    search = GridSearchCV(est, {"epsilon": [0.5, 1.0]}, cv=3).fit(X, y)
    best = search.best_params_["epsilon"]
    assert budget.spent.epsilon == pytest.approx(4.5 + best)  # 3 folds × 1.5 + refit
    spent = budget.spent.epsilon
    cross_val_score(est, X, y, cv=2)
    assert budget.spent.epsilon == pytest.approx(spent + 2.0)
    with pytest.raises(BudgetExhaustedError):
        GridSearchCV(est, {"epsilon": [8.0]}, cv=3, error_score="raise").fit(X, y)


# ----------------------------------------------------------------- bad input
def _fresh(budget, **kw):
    return DPSOAClassifier(**{**P, "hypothesis_class": threshold_class(10), "budget": budget,
                              **kw})


@given(st.lists(st.one_of(st.integers(-3, 12), st.floats(allow_nan=True, allow_infinity=True)),
                min_size=1, max_size=8),
       st.lists(st.sampled_from([0, 1, 2]), min_size=1, max_size=8))
def test_fuzzed_input_fails_before_any_privacy_is_spent(xs, ys):
    n = min(len(xs), len(ys))
    X, y = np.asarray(xs[:n], dtype=float)[:, None], np.asarray(ys[:n])
    budget = PrivacyBudget(10.0, 1e-4)
    clf = _fresh(budget)
    valid_x = np.all(np.isfinite(X)) and np.all((np.round(X) == X) & (X >= 0) & (X < 10))
    valid_y = np.all(np.isin(y, [0, 1]))
    try:
        clf.partial_fit(X, y, classes=[0, 1])
    except ValueError:
        assert not (valid_x and valid_y)
        assert budget.spent.epsilon == 0.0 and not hasattr(clf, "classes_")
        return
    assert valid_x and valid_y
    assert budget.spent.epsilon == 2.0 and clf.n_rounds_seen_ == n


@given(eps=st.one_of(st.floats(max_value=0.0), st.just(np.inf), st.just(np.nan)),
       delta=st.one_of(st.just(0.0), st.just(1.0), st.floats(min_value=1.0001, max_value=10)))
def test_invalid_privacy_parameters(eps, delta):
    budget = PrivacyBudget(10.0, 1e-4)
    X, y = np.array([[0], [5]]), [0, 1]
    for kwargs in (dict(epsilon=eps), dict(delta=delta)):
        with pytest.raises(ValueError):
            _fresh(budget, **kwargs).fit(X, y)
    assert budget.spent.epsilon == 0.0


@pytest.mark.parametrize(
    ("kwargs", "X", "y", "match"),
    [
        (dict(hypothesis_class=None), [[0], [1]], [0, 1], "needs a hypothesis_class"),
        (dict(hypothesis_class=Thresholds()), [[0], [1]], [0, 1], "infinite"),
        (dict(hypothesis_class=np.ones((100, 3))), [[0], [1]], [0, 1], "max_hypotheses"),
        (dict(preset="theory", n_trees=None), [[0], [1]], [0, 1], "far beyond memory"),
        (dict(hypothesis_class=PointVersionSpace(8), n_leaves=3), [[0], [1]], [0, 1],
         "power of two"),
        (dict(), [[0], [1], [2]], [0, 1, 2], "Only binary"),
        (dict(), [[0, 1], [2, 3]], [0, 1], r"shape \(n, 1\)"),
        (dict(), [[0], [10]], [0, 1], r"domain indices in \[0, 10\)"),
        (dict(), [[0.5], [1]], [0, 1], "domain indices"),
        (dict(), [[-1], [1]], [0, 1], "domain indices"),
        (dict(), [[np.nan], [1]], [0, 1], "NaN"),
        (dict(), [[0], [1]], [1, 1], "only one class"),
    ],
)
def test_bad_parameters_and_input_are_refused_before_the_charge(kwargs, X, y, match):
    budget = PrivacyBudget(10.0, 1e-4)
    with pytest.raises(ValueError, match=match):
        _fresh(budget, **kwargs).fit(X, y)
    assert budget.spent.epsilon == 0.0


def test_partial_fit_needs_classes_and_refuses_unseen_labels():
    budget = PrivacyBudget(10.0, 1e-4)
    clf = _fresh(budget)
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit([[0]], [0])
    assert budget.spent.epsilon == 0.0
    clf.partial_fit([[0], [3]], [0, 1], classes=[0, 1])
    state = (clf.n_rounds_seen_, clf._forest.hid.tobytes(), clf._hist_sparse.n_rounds)
    with pytest.raises(ValueError, match="not in classes"):
        clf.partial_fit([[1]], [7])
    with pytest.raises(ValueError, match="differs"):
        clf.partial_fit([[1]], [1], classes=[1, 2])
    with pytest.raises(ValueError, match="domain indices"):
        clf.partial_fit([[11]], [1])
    assert budget.spent.epsilon == 2.0
    assert (clf.n_rounds_seen_, clf._forest.hid.tobytes(), clf._hist_sparse.n_rounds) == state
