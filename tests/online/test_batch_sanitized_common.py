"""sklearn compatibility, streaming and budget semantics shared by the two agnostic
learners (BatchSanitizedOnlineClassifier and PrivateExpertsClassifier)."""

import copy
import itertools
import pickle
import warnings

import numpy as np
import pytest
from _domain_checks import PublicBins, domain_check_cases
from hypothesis import given
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skdp import PrivacyBudget, TestingSeed
from skdp.exceptions import BudgetExhaustedError, PrivacyWarning, StaleStateError
from skdp.hypotheses import threshold_class
from skdp.online import (
    AdaptiveThresholdAdversary,
    BatchSanitizedOnlineClassifier,
    NoisyLabels,
    ObliviousAdversary,
    PrivateExpertsClassifier,
    run_online,
)

N = 8
CLASS = threshold_class(N)


def _make(kind, **kw):
    if kind == "batch":
        return BatchSanitizedOnlineClassifier(hypothesis_class=CLASS, **kw)
    return PrivateExpertsClassifier(experts=CLASS, **kw)


KINDS = ["batch", "experts"]


def _binner():
    """PUBLIC binning of the first feature into {0, …, 7} (bounds fixed in advance)."""
    return FunctionTransformer(PublicBins(N), validate=True)


def _noisy_stream(rng, n, rate=0.1, threshold=5):
    x = rng.integers(0, N, size=n)
    y = (x >= threshold).astype(int)
    flip = rng.random(n) < rate
    return x[:, None], np.where(flip, 1 - y, y)


# ----------------------------------------------------------------- sklearn checks
def _cases():
    return domain_check_cases({kind: (_make(kind, random_state=0), N) for kind in KINDS})


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        yield


@pytest.mark.parametrize(("estimator", "check"), list(_cases()))
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


# ----------------------------------------------------------------- streaming
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n_rounds", [None, 700])
def test_blocks_give_the_same_run_as_one_pass(kind, n_rounds, rng):
    X, y = _noisy_stream(rng, 700)
    one = _make(kind, epsilon=2.0, n_rounds=n_rounds, random_state=3)
    wrong_one = one._partial_fit_mistakes(X, y, classes=[0, 1])
    blocks = _make(kind, epsilon=2.0, n_rounds=n_rounds, random_state=3)
    cuts = [0, 1, 2, 50, 51, 300, 640, 700]
    wrong = np.concatenate([blocks._partial_fit_mistakes(X[a:b], y[a:b], classes=[0, 1])
                            for a, b in itertools.pairwise(cuts)])
    np.testing.assert_array_equal(wrong, wrong_one)
    assert blocks._n_mistakes == one._n_mistakes and blocks.n_buckets_ == one.n_buckets_
    grid = np.arange(N)[:, None]
    np.testing.assert_array_equal(blocks.predict(grid), one.predict(grid))
    # round by round through run_online's fast path: the same run again
    single = _make(kind, epsilon=2.0, n_rounds=n_rounds, random_state=3)
    ys = np.where(y == 1, 1, -1)
    steps = [single._online_step(int(x), int(t), np.array([-1, 1]))
             for x, t in zip(X[:, 0], ys, strict=True)]
    np.testing.assert_array_equal(steps, wrong_one)


@pytest.mark.parametrize("kind", KINDS)
def test_doubling_buckets_without_horizon(kind, rng):
    X, y = _noisy_stream(rng, 100)
    clf = _make(kind, random_state=0).partial_fit(X, y, classes=[0, 1])
    # buckets of 1, 2, 4, …, 64 rounds: 1 + 2 + … + 32 = 63 < 100 ≤ 127
    assert clf.n_buckets_ == 7 and clf.bucket_horizon_ == 64
    fitted = _make(kind, random_state=0).fit(X, y)  # fit: the first bucket is len(X)
    assert fitted.n_buckets_ == 1 and fitted.bucket_horizon_ == 100
    fixed = _make(kind, n_rounds=30, random_state=0).fit(X, y)  # 30, 60, then 120
    assert fixed.n_buckets_ == 3 and fixed.bucket_horizon_ == 120


@pytest.mark.parametrize("kind", KINDS)
def test_learns_a_noisy_threshold(kind, rng):
    X, y = _noisy_stream(rng, 20000, rate=0.1)
    clf = _make(kind, epsilon=4.0, random_state=0).fit(X, y)
    np.testing.assert_array_equal(clf.predict(np.arange(N)[:, None]),
                                  (np.arange(N) >= 5).astype(int))
    best = np.sum(y != (X[:, 0] >= 5))
    assert clf._n_mistakes - best < 0.05 * len(y)


@pytest.mark.parametrize("kind", KINDS)
def test_runs_against_noisy_adaptive_and_oblivious_adversaries(kind):
    for adv in (NoisyLabels(AdaptiveThresholdAdversary(N, sees_current=True), 0.1),
                NoisyLabels(ObliviousAdversary(CLASS), 0.1)):
        clf = _make(kind, epsilon=1.0, n_rounds=300, random_state=0)
        curve = run_online(clf, adv, 300, random_state=1)
        assert curve.shape == (300,) and curve[-1] == clf._n_mistakes
        x, _y = adv.history()
        assert x.shape == (300,)


# ----------------------------------------------------------------- pipelines and budgets
@pytest.mark.parametrize("kind", KINDS)
def test_pipeline_grid_search_and_cross_val_charge_every_fit(kind, rng):
    Xd, y = _noisy_stream(rng, 600)
    X = Xd - 4.0 + rng.random((600, 1))  # raw values; the public binning recovers Xd
    budget = PrivacyBudget(12.0, 1e-3)
    step = type(_make(kind)).__name__.lower()
    pipe = make_pipeline(_binner(), _make(kind, budget=budget, random_state=TestingSeed(0)))
    search = GridSearchCV(pipe, {f"{step}__epsilon": [0.5, 1.0]}, cv=3).fit(X, y)
    best = search.best_params_[f"{step}__epsilon"]
    assert budget.spent.epsilon == pytest.approx(4.5 + best)
    spent = budget.spent.epsilon
    scores = cross_val_score(pipe, X, y, cv=2)
    assert scores.shape == (2,)
    assert budget.spent.epsilon == pytest.approx(spent + 2.0)
    with pytest.raises(BudgetExhaustedError):
        GridSearchCV(pipe, {f"{step}__epsilon": [4.0]}, cv=3, error_score="raise").fit(X, y)


@pytest.mark.parametrize("kind", KINDS)
def test_clone_deepcopy_pickle_keep_spent_privacy(kind, rng):
    X, y = _noisy_stream(rng, 300)
    budget = PrivacyBudget(3.0, 1e-5)
    clf = _make(kind, budget=budget, random_state=TestingSeed(0))
    twin = clone(clf)
    assert twin.budget.shares_ledger_with(budget)
    clf.fit(X, y)
    twin.fit(X, y)
    assert budget.spent.epsilon == pytest.approx(2.0)
    for copy_ in (copy.deepcopy(clf), pickle.loads(pickle.dumps(clf))):
        assert copy_.privacy_spent_ == clf.privacy_spent_
        assert copy_.budget.spent.epsilon == pytest.approx(2.0)
        np.testing.assert_array_equal(copy_.predict(X), clf.predict(X))
    with pytest.raises(BudgetExhaustedError):
        clone(clf).set_params(epsilon=1.5).fit(X, y)
    assert budget.spent.epsilon == pytest.approx(2.0)  # the refused fit spent nothing


@pytest.mark.parametrize("kind", KINDS)
def test_forked_stream_cannot_be_continued_twice(kind, rng):
    X, y = _noisy_stream(rng, 300)
    clf = _make(kind, random_state=0).partial_fit(X[:100], y[:100], classes=[0, 1])
    fork = copy.deepcopy(clf)
    pickled = pickle.loads(pickle.dumps(clf))
    clf.partial_fit(X[100:200], y[100:200])
    for other in (fork, pickled):
        with pytest.raises(StaleStateError, match="stale copy"):
            other.partial_fit(X[200:], y[200:])
    clf.partial_fit(X[200:], y[200:])
    fork.fit(X, y)  # a fresh (charged) stream is always allowed


# ----------------------------------------------------------------- bad input
_BAD_X = st.one_of(
    st.just([[np.nan]]), st.just([[np.inf]]), st.just([[0.5]]), st.just([[-1]]),
    st.just([[N]]), st.just([[0, 1]]), st.integers(N, 10**6).map(lambda v: [[v]]),
)


@pytest.mark.parametrize("kind", KINDS)
@given(bad=_BAD_X)
def test_bad_x_refused_before_any_privacy_is_spent(kind, bad):
    budget = PrivacyBudget(1.0, 1e-5)
    clf = _make(kind, budget=budget, random_state=TestingSeed(0))
    with pytest.raises(ValueError):
        clf.partial_fit(bad, [1] * len(bad), classes=[0, 1])
    assert budget.spent.epsilon == 0.0 and not hasattr(clf, "classes_")


@pytest.mark.parametrize("kind", KINDS)
@given(eps=st.one_of(st.floats(max_value=0.0), st.just(np.nan), st.just(np.inf)),
       delta=st.one_of(st.just(1e-6), st.floats(min_value=1.0, max_value=10.0)))
def test_bad_privacy_parameters_refused(kind, eps, delta):
    budget = PrivacyBudget(1.0, 1e-5)
    clf = _make(kind, epsilon=eps, delta=delta, budget=budget)
    with pytest.raises(ValueError):
        clf.fit([[0], [1]], [0, 1])
    assert budget.spent.epsilon == 0.0


@pytest.mark.parametrize("kind", KINDS)
def test_bad_labels_and_classes(kind):
    budget = PrivacyBudget(1.0, 1e-5)
    clf = _make(kind, budget=budget, random_state=TestingSeed(0))
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit([[0]], [0])
    with pytest.raises(ValueError, match="not in classes"):
        clf.partial_fit([[0]], [5], classes=[0, 1])
    with pytest.raises(ValueError, match="domain indices"):  # 3 labels: one-vs-rest
        clf.fit([[0], [1], [N]], [0, 1, 2])
    assert budget.spent.epsilon == 0.0
    clf.partial_fit([[0]], [0], classes=[0, 1])
    with pytest.raises(ValueError, match="not in classes"):
        clf.partial_fit([[1]], [7])
    with pytest.raises(ValueError, match="domain indices"):
        clf.predict([[N]])
    with pytest.raises(ValueError, match="max_table"):
        _make(kind).set_params(**{"hypothesis_class" if kind == "batch" else "experts":
                                  np.ones((2**13, 2**12))}).fit([[0], [1]], [0, 1])
    assert budget.spent.epsilon == pytest.approx(1.0)
