"""SOAClassifier / SOALearner: mistake bound, protocol, streaming, sklearn checks, bad input."""

import pickle

import numpy as np
import pytest
from _domain_checks import FUZZED_X, FUZZED_Y, domain_check_cases, fuzzed_block
from hypothesis import given
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.model_selection import cross_val_score

from skdp.hypotheses import FiniteClass, Thresholds
from skdp.hypotheses.littlestone import (
    PointVersionSpace,
    ThresholdVersionSpace,
    littlestone_dimension,
    point_class,
    threshold_class,
)
from skdp.online import MistakeBoundedLearner, SOAClassifier, SOALearner


def _stream(L, target, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, L.shape[1], size=n)
    return x[:, None], L[target, x]


@given(st.integers(1, 12), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_mistakes_at_most_ldim_on_realizable_streams(n_hyp, n_domain, seed):
    L = np.random.default_rng(seed).choice([-1, 1], size=(n_hyp, n_domain)).astype(np.int8)
    d = littlestone_dimension(L)
    target = seed % n_hyp
    X, y = _stream(L, target, 60, seed)
    clf = SOAClassifier(L).partial_fit(X, y, classes=[-1, 1])
    assert clf.mistake_bound_ == d
    assert clf.n_mistakes_ <= d
    assert clf.n_updates_ == clf.n_mistakes_ and clf.n_restarts_ == 0
    # every hypothesis left in the version space agrees with the stream
    kept = clf.learner_.version_space.hypotheses()
    assert target in kept
    learner = SOALearner(L)
    errs = sum(learner.update(int(x), int(t)) for x, t in zip(X[:, 0], y, strict=True))
    assert errs == clf.n_mistakes_ == learner.n_mistakes


@given(st.integers(0, 256), st.integers(0, 2**32 - 1))
def test_thresholds_mistakes_at_most_log(t, seed):
    n = 256
    x = np.random.default_rng(seed).integers(0, n, size=300)
    y = np.where(x >= t, 1, 0)
    clf = SOAClassifier(ThresholdVersionSpace(n)).partial_fit(x[:, None], y, classes=[0, 1])
    assert clf.n_mistakes_ <= clf.mistake_bound_ == 8
    exact = SOAClassifier(threshold_class(40))
    xs = x % 40
    exact.partial_fit(xs[:, None], np.where(xs >= t % 41, 1, 0), classes=[0, 1])
    assert exact.n_mistakes_ <= 5


def test_blocks_equal_one_pass(rng):
    L = rng.choice([-1, 1], size=(20, 9))
    X, y = _stream(L, 3, 400, 1)
    y = np.where(y > 0, "b", "a")
    one = SOAClassifier(L).fit(X, y)
    parts = SOAClassifier(L)
    for lo, hi in [(0, 1), (1, 50), (50, 51), (51, 400)]:
        parts.partial_fit(X[lo:hi], y[lo:hi], classes=["a", "b"])
    assert one.n_mistakes_ == parts.n_mistakes_ and one.n_rounds_seen_ == 400
    assert one.learner_.hypothesis_key() == parts.learner_.hypothesis_key()
    grid = np.arange(9)[:, None]
    np.testing.assert_array_equal(one.predict(grid), parts.predict(grid))


def test_record_mistakes_matches_counts(rng):
    X, y = _stream(point_class(30).label_matrix, 7, 500, 2)
    clf = SOAClassifier(PointVersionSpace(30))
    wrong = clf._partial_fit_mistakes(X, y, classes=[-1, 1])
    assert wrong.sum() == clf.n_mistakes_ <= 1


def test_protocol_and_copy():
    a = SOALearner(ThresholdVersionSpace(64))
    assert isinstance(a, MistakeBoundedLearner)
    assert a.mistake_bound == 6 and a.n_domain == 64
    b = a.copy()
    key = a.hypothesis_key()
    assert not a.update(50, int(a.predict_one(50)))  # correct: no change
    x = 20
    y = -a.predict_one(x)
    assert a.update(x, y) and a.predict_one(x) == y  # a mistake changes the hypothesis
    assert a.hypothesis_key() != key and b.hypothesis_key() == key and b.n_mistakes == 0
    # an inconsistent example gives ⊥
    c = SOALearner(PointVersionSpace(4))
    c.update(1, 1)
    assert c.hypothesis_key() == ("point", 1)
    c.update(1, -1)
    assert c.failed and c.hypothesis_key() is None and not c.update(2, 1)


def test_on_inconsistent():
    X = np.array([[2], [2], [3]])
    y = np.array([1, 0, 1])
    clf = SOAClassifier(point_class(5)).fit(X, y)
    assert clf.n_restarts_ == 1 and clf.predict([[2]])[0] == 0
    with pytest.warns(UserWarning, match="not realizable"):
        frozen = SOAClassifier(point_class(5), on_inconsistent="freeze").fit(X, y)
    assert frozen.learner_.failed and frozen.n_mistakes_ == 3


def test_clone_pickle_and_cross_val(rng):
    L = threshold_class(30)
    x = rng.integers(0, 30, size=200)
    X, y = x[:, None], (x >= 11).astype(int)
    clf = SOAClassifier(L).fit(X, y)
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.predict(X), clf.predict(X))
    assert not hasattr(clone(clf), "learner_")
    assert cross_val_score(SOAClassifier(L), X, y, cv=3).min() == 1.0


@pytest.mark.parametrize(
    ("X", "y", "match"),
    [
        ([[np.nan], [1]], [0, 1], "NaN"),
        ([[0], [8]], [0, 1], r"domain indices in \[0, 8\)"),
        ([[-1], [2]], [0, 1], "domain indices"),
        ([[0.5], [2]], [0, 1], "domain indices"),
        ([[0, 1], [2, 3]], [0, 1], "shape \\(n, 1\\)"),
        ([[0], [1], [8]], [0, 1, 2], "domain indices"),  # 3 labels: one-vs-rest
        ([[0], [1]], [1, 1], "only one class"),
    ],
)
def test_bad_input_fit(X, y, match):
    with pytest.raises(ValueError, match=match):
        SOAClassifier(threshold_class(8)).fit(X, y)


def test_bad_input_partial_fit_and_predict():
    clf = SOAClassifier(threshold_class(8))
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit([[0]], [0])
    with pytest.raises(ValueError, match=r"not in classes"):
        clf.partial_fit([[0]], [5], classes=[0, 1])
    assert not hasattr(clf, "classes_")  # refused before any state change
    clf.partial_fit([[0]], [0], classes=[0, 1])
    with pytest.raises(ValueError, match="not in classes"):
        clf.partial_fit([[1]], [7])
    with pytest.raises(ValueError, match="differs"):
        clf.partial_fit([[1]], [1], classes=[1, 2])
    with pytest.raises(ValueError, match="domain indices"):
        clf.predict([[9]])
    with pytest.raises(ValueError, match="infinite"):
        SOAClassifier(Thresholds()).fit([[0], [1]], [0, 1])
    with pytest.raises(ValueError, match="max_hypotheses"):
        SOAClassifier(np.ones((100, 3))).fit([[0], [1]], [0, 1])


# ----------------------------------------------------------------- sklearn checks
def _cases():
    est = SOAClassifier(FiniteClass(threshold_class(8).label_matrix))
    return domain_check_cases({"soa": (est, 8)})


@pytest.mark.parametrize(("estimator", "check"), list(_cases()))
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def test_domain_index_versions_of_the_skipped_checks(rng):
    """What the skipped checks test, on domain-index data the estimator accepts."""
    L = threshold_class(16)
    x = rng.integers(0, 16, size=100)
    X, y = x[:, None], np.where(x >= 6, "pos", "neg")
    clf = SOAClassifier(L)
    assert clf.fit(X, y) is clf and clf.n_features_in_ == 1
    pred = clf.predict(X)
    assert clf.score(X, y) == 1.0
    np.testing.assert_array_equal(SOAClassifier(L).fit(X, y).predict(X), pred)  # idempotent
    order = rng.permutation(100)
    np.testing.assert_array_equal(clf.predict(X[order]), pred[order])
    np.testing.assert_array_equal(clf.predict(X[:10]), pred[:10])
    np.testing.assert_array_equal(clf.predict(X.astype(np.float32)), pred)
    np.testing.assert_array_equal(clf.predict(np.asfortranarray(X.astype(float))), pred)
    params = clf.get_params()
    SOAClassifier(**params).fit(X, y)
    assert clf.get_params()["hypothesis_class"] is L


def test_first_disagreement():
    from skdp.online import first_disagreement

    a, b = SOALearner(ThresholdVersionSpace(2**16)), SOALearner(ThresholdVersionSpace(2**16))
    assert first_disagreement(a, b) is None
    b.update(40000, -1)
    x = first_disagreement(a, b)
    assert a.predict_one(x) != b.predict_one(x)
    assert np.all(a.predict(np.arange(x)) == b.predict(np.arange(x)))
    with pytest.raises(ValueError, match="different domains"):
        first_disagreement(a, SOALearner(point_class(3)))


@given(FUZZED_X, FUZZED_Y)
def test_fuzzed_input_fails_cleanly_before_any_state(xs, ys):
    X, y, valid = fuzzed_block(xs, ys)
    n = len(y)
    clf = SOAClassifier(threshold_class(10))
    try:
        clf.partial_fit(X, y, classes=[0, 1])
    except ValueError:
        assert not valid
        assert not hasattr(clf, "classes_") and not hasattr(clf, "learner_")
        return
    assert valid
    assert clf.n_rounds_seen_ == n and clf.n_mistakes_ <= n
