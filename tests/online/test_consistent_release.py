"""Li–Wang–Ye with the consistency release: scores, caps, defaults and refusals."""

import pickle
import warnings

import numpy as np
import pytest
from _plugins import ProtocolOnlySOA
from hypothesis import given, settings
from hypothesis import strategies as st

from skdp.exceptions import PrivacyWarning
from skdp.hypotheses.littlestone import (
    PointVersionSpace,
    ThresholdVersionSpace,
    interval_class,
    point_class,
)
from skdp.online import AdaptivePrivateOnlineClassifier, SOALearner
from skdp.online._adaptive_core import LiWangYeCore
from skdp.online._consistent_release import (
    ClassErrors,
    ConsistentReleaseCore,
    class_errors_for,
)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        yield


def _brute_errors(labels, pos, neg):
    return np.array([(pos * (row < 0)).sum() + (neg * (row > 0)).sum() for row in labels])


@pytest.mark.parametrize("make", [
    lambda: (ThresholdVersionSpace(9),
             np.where(np.arange(9)[None, :] >= np.arange(10)[:, None], 1, -1)),
    lambda: (PointVersionSpace(7), np.where(np.eye(7, dtype=bool), 1, -1)),
    lambda: (interval_class(6), interval_class(6).label_matrix),
])
def test_closed_forms_match_brute_force(make):
    cls, labels = make()
    learner = SOALearner(cls)
    scorer = class_errors_for(learner)
    rng = np.random.default_rng(0)
    pos, neg = (rng.integers(0, 5, size=labels.shape[1]) for _ in range(2))
    np.testing.assert_array_equal(scorer.errors(pos, neg), _brute_errors(labels, pos, neg))
    for i in range(labels.shape[0]):
        h = scorer.hypothesis(i)
        np.testing.assert_array_equal(h.predict(np.arange(labels.shape[1])), labels[i])
        assert [h.predict_one(x) for x in range(labels.shape[1])] == labels[i].tolist()
        assert pickle.loads(pickle.dumps(h)).hypothesis_key() == h.hypothesis_key()


def test_initial_threshold_key_is_a_candidate_key():
    soa = SOALearner(ThresholdVersionSpace(16))
    scorer = class_errors_for(soa)
    keys = {scorer.hypothesis(i).hypothesis_key() for i in range(scorer.n_candidates)}
    assert soa.hypothesis_key() in keys  # "released_is_initial_" compares like with like


def test_default_release_per_preset_and_class():
    X = np.zeros((50, 1))
    y = np.ones(50, dtype=int)
    default = AdaptivePrivateOnlineClassifier(hypothesis_class=ThresholdVersionSpace(8),
                                              classes=[0, 1]).fit(X, y)
    assert isinstance(default._core, ConsistentReleaseCore)
    assert default.parameters_.release == "consistent" and default.parameters_.n_layers == 0
    plug = AdaptivePrivateOnlineClassifier(
        hypothesis_class=ProtocolOnlySOA(SOALearner(point_class(4))), classes=[0, 1]).fit(X, y)
    assert type(plug._core) is LiWangYeCore and plug.parameters_.release == "histogram"


@pytest.mark.parametrize("kw", [dict(hypothesis_class=ProtocolOnlySOA(
                                     SOALearner(point_class(4)))),
                                dict(hypothesis_class=point_class(4), preset="paper")])
def test_explicit_consistent_is_refused_before_any_charge(kw):
    from skdp.accounting import PrivacyBudget
    budget = PrivacyBudget(10.0, 1e-3)
    clf = AdaptivePrivateOnlineClassifier(release="consistent", budget=budget,
                                          classes=[0, 1], **kw)
    with pytest.raises(ValueError, match="release='consistent'"):
        clf.fit(np.zeros((10, 1)), np.ones(10, dtype=int))
    assert budget.spent.epsilon == 0.0


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 4))
def test_cap_holds_on_any_stream(seed, cap):
    """Random labels (not realizable): at most c releases, then no more updates."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 10, size=2000)
    y = rng.integers(0, 2, size=2000)
    clf = AdaptivePrivateOnlineClassifier(8.0, hypothesis_class=interval_class(10),
                                          max_switches=cap, n_rounds=2200, random_state=seed,
                                          classes=[0, 1])
    clf.fit(x[:, None], y)
    assert clf.n_switches_ <= cap == clf.parameters_.max_switches
    assert clf.updates_stopped_ == (clf.n_switches_ == cap)
    if clf.updates_stopped_:
        frozen = clf.predict(np.arange(10)[:, None])
        clf.partial_fit(x[:200, None], 1 - y[:200])
        np.testing.assert_array_equal(clf.predict(np.arange(10)[:, None]), frozen)
        assert clf.n_switches_ == cap


def test_learns_an_interval_from_an_oblivious_stream():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 10, size=6000)
    y = ((x >= 3) & (x <= 7)).astype(int)
    clf = AdaptivePrivateOnlineClassifier(1.0, hypothesis_class=interval_class(10),
                                          random_state=0, classes=[0, 1])
    wrong = clf._partial_fit_mistakes(x[:, None], y)
    assert not wrong[-2000:].any()
    assert clf.predict(np.arange(10)[:, None]).tolist() == [int(3 <= i <= 7)
                                                            for i in range(10)]


def test_class_errors_refuses_restricted_and_foreign_learners():
    soa = SOALearner(ThresholdVersionSpace(8))
    soa.update(3, 1)
    assert class_errors_for(soa) is None
    assert class_errors_for(object()) is None
    assert isinstance(class_errors_for(SOALearner(PointVersionSpace(3))), ClassErrors)
