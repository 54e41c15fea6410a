"""The label set is a public parameter of every private estimator (``classes=``).

Without it, one row's label 0 → 7 changes ``classes_`` (or makes ``fit`` raise): the
label set is then a statistic of the private data. With ``classes`` given, ``classes_``
and every error about y's labels are the same whatever y holds; without it, the label
set is read from y and :class:`~skdp.exceptions.PrivacyLeakWarning` says so.
"""

import inspect
import warnings

import numpy as np
import pytest

from skdp import (
    AdaptivePrivateOnlineClassifier,
    BatchSanitizedOnlineClassifier,
    ContinualReleaseClassifier,
    DecisionStumpPERPClassifier,
    DPDecisionListClassifier,
    DPSOAClassifier,
    DPWinnowClassifier,
    OnlineDecisionListClassifier,
    PrivacyBudget,
    PrivacyLeakWarning,
    PrivateExpertsClassifier,
    PrivatePredictor,
    RectanglesPERPClassifier,
    SubsampleAggregatePredictor,
    TestingSeed,
)
from skdp._multiclass import multiclass_support
from skdp.base import PrivateEstimatorMixin
from skdp.hypotheses import Thresholds, threshold_class

N_DOMAIN = 8
L = threshold_class(N_DOMAIN)


def _domain(rng, n):
    x = rng.integers(0, N_DOMAIN, size=n)
    return x[:, None].astype(float), (x >= 4).astype(int)


def _unit(rng, n):
    X = rng.random((n, 1))
    return X, (X[:, 0] >= 0.5).astype(int)


def _signs(rng, n):
    X = rng.choice([-1.0, 1.0], size=(n, 3))
    return X, (X[:, 0] > 0).astype(int)


def _bits(rng, n):
    X = rng.integers(0, 2, size=(n, 3))
    return X, X[:, 0].astype(int)


SEED = TestingSeed(0)  # the factories pass a budget too (testing mode, opted in)

#: name -> (factory(**kw), data(rng, n), binary learner, has partial_fit); a binary
#: learner refuses C > 2 labels unless it learns them one-vs-rest (skdp/_multiclass.py)
CASES = {
    "PrivatePredictor": (lambda **kw: PrivatePredictor(Thresholds(), random_state=SEED, **kw),
                         _unit, True, True),
    "SubsampleAggregatePredictor": (
        lambda **kw: SubsampleAggregatePredictor(Thresholds(), n_queries=10, random_state=SEED,
                                                 **kw), _unit, True, False),
    "RectanglesPERPClassifier": (lambda **kw: RectanglesPERPClassifier(random_state=SEED, **kw),
                                 _unit, True, True),
    "DecisionStumpPERPClassifier": (
        lambda **kw: DecisionStumpPERPClassifier(random_state=SEED, **kw), _unit, True, True),
    "DPWinnowClassifier": (lambda **kw: DPWinnowClassifier(epsilon=2.0, random_state=SEED, **kw),
                           _signs, True, True),
    "OnlineDecisionListClassifier": (
        lambda **kw: OnlineDecisionListClassifier(epsilon=2.0, random_state=SEED, **kw),
        _bits, True, True),
    "DPSOAClassifier": (lambda **kw: DPSOAClassifier(2.0, hypothesis_class=L, n_trees=20,
                                                     random_state=SEED, **kw), _domain, True, True),
    "AdaptivePrivateOnlineClassifier": (
        lambda **kw: AdaptivePrivateOnlineClassifier(2.0, hypothesis_class=L, n_sequences=64,
                                                     random_state=SEED, **kw),
        _domain, True, True),
    "BatchSanitizedOnlineClassifier": (
        lambda **kw: BatchSanitizedOnlineClassifier(hypothesis_class=L, random_state=SEED, **kw),
        _domain, True, True),
    "PrivateExpertsClassifier": (
        lambda **kw: PrivateExpertsClassifier(experts=L, random_state=SEED, **kw),
        _domain, True, True),
    "DPDecisionListClassifier": (
        lambda **kw: DPDecisionListClassifier(epsilon=2.0, max_rules=2, random_state=0, **kw),
        _bits, False, True),
    "ContinualReleaseClassifier": (
        lambda **kw: ContinualReleaseClassifier(DPDecisionListClassifier(max_rules=2),
                                                epsilon=2.0, random_state=SEED, **kw),
        _bits, False, True),
}
NAMES = list(CASES)
PARTIAL = [name for name in NAMES if CASES[name][3]]
BINARY = [name for name in NAMES if CASES[name][2]]
BINARY_ONLY = [name for name in BINARY
               if multiclass_support(type(CASES[name][0]())) == "binary only"]
N_ROWS = 60


@pytest.fixture(autouse=True)
def _only_leak_warnings_matter():
    # Other PrivacyWarnings (too few rows for a predictor, caps) are not what is tested.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.simplefilter("always", PrivacyLeakWarning)
        yield


def _setup(name, **kw):
    make, data, _, _ = CASES[name]
    X, y = data(np.random.default_rng(0), N_ROWS)
    return make(**kw), X, y


def _leaks(record):
    return [w for w in record if issubclass(w.category, PrivacyLeakWarning)]


def test_every_private_estimator_is_covered():
    import skdp

    private = {name for name in skdp.__all__
               if inspect.isclass(getattr(skdp, name))
               and issubclass(getattr(skdp, name), PrivateEstimatorMixin)}
    assert private == set(NAMES)
    for name in NAMES:
        assert "classes" in inspect.signature(getattr(skdp, name)).parameters
        assert "classes" in getattr(skdp, name)._parameter_constraints


# ------------------------------------------------------------------- (a) classes given
@pytest.mark.parametrize("name", NAMES)
def test_public_classes_do_not_depend_on_y(name):
    clf, X, y = _setup(name, classes=[1, 0])
    assert set(np.unique(y)) == {0, 1}
    changed = y.copy()
    changed[np.flatnonzero(changed == 0)[0]] = 1  # one row's label 0 -> 1
    one_class = np.ones_like(y)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always", PrivacyLeakWarning)
        for labels in (y, changed, one_class, np.zeros_like(y)):
            clf.fit(X, labels)
            np.testing.assert_array_equal(clf.classes_, [0, 1])
    assert not _leaks(record)


@pytest.mark.parametrize("name", PARTIAL)
def test_public_classes_in_partial_fit(name):
    clf, X, _ = _setup(name)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always", PrivacyLeakWarning)
        clf.partial_fit(X[:20], np.zeros(20, dtype=int), classes=[0, 1])
        np.testing.assert_array_equal(clf.classes_, [0, 1])
        # the constructor parameter also serves the first partial_fit call
        clf2, _, _ = _setup(name, classes=[0, 1])
        clf2.partial_fit(X[:20], np.ones(20, dtype=int))
        np.testing.assert_array_equal(clf2.classes_, [0, 1])
    assert not _leaks(record)


# ------------------------------------------------------------------- (b) classes inferred
@pytest.mark.parametrize("name", NAMES)
def test_inferred_classes_warn(name):
    clf, X, y = _setup(name)
    with pytest.warns(PrivacyLeakWarning, match="classes="):
        clf.fit(X, y)
    np.testing.assert_array_equal(clf.classes_, [0, 1])


# ------------------------------------------------------------------- (c) y outside classes
SECRET = 987654321


def _assert_no_data_value(exc):
    msg = str(exc.value)
    assert "y contains labels not in classes" in msg
    assert str(SECRET) not in msg and "7" not in msg


@pytest.mark.parametrize("name", NAMES)
def test_label_outside_classes_raises_without_the_value(name):
    clf, X, y = _setup(name, classes=[0, 1])
    bad = y.copy()
    bad[3] = SECRET
    with pytest.raises(ValueError) as exc:
        clf.fit(X, bad)
    _assert_no_data_value(exc)
    bad[3] = 7
    with pytest.raises(ValueError) as exc:
        clf.fit(X, bad)
    _assert_no_data_value(exc)


@pytest.mark.parametrize("name", PARTIAL)
def test_label_outside_classes_in_later_partial_fit(name):
    clf, X, y = _setup(name)
    clf.partial_fit(X[:10], y[:10], classes=[0, 1])
    bad = y[10:20].copy()
    bad[0] = SECRET
    with pytest.raises(ValueError) as exc:
        clf.partial_fit(X[10:20], bad)
    _assert_no_data_value(exc)


# ------------------------------------------------------------------- binary-only learners
@pytest.mark.parametrize(("name", "classes"), [(name, [0]) for name in BINARY]
                         + [(name, [0, 1, 2]) for name in BINARY_ONLY])
def test_binary_learner_refuses_other_label_sets_before_spending(name, classes):
    budget = PrivacyBudget(100.0, 0.5)
    clf, X, y = _setup(name, classes=classes, budget=budget)
    with pytest.raises(ValueError, match="exactly 2 labels"):
        clf.fit(X, y)
    assert budget.spent.epsilon == 0.0
    assert not hasattr(clf, "classes_")


@pytest.mark.parametrize("later, ok", [([0, 1], True), (np.array([0, 1]), True),
                                       ([1, 0], True), ([0.0, 1.0], True),
                                       ([0, 2], False), ([0, 1, 2], False), ([0], False)])
def test_later_classes_argument_fast_path(later, ok):
    """A later call's classes= is compared as given when it repeats classes_ exactly
    (the fast path), else through the full check: same answers either way."""
    from skdp._labels import resolve_classes

    clf = PrivateExpertsClassifier()  # any estimator: only classes_ is read
    clf.classes_ = np.array([0, 1])
    y = np.array([0, 1, 1])
    if ok:
        np.testing.assert_array_equal(
            resolve_classes(clf, y, later, first_call=False), [0, 1])
    else:
        with pytest.raises(ValueError, match="differs from the classes_"):
            resolve_classes(clf, y, later, first_call=False)
