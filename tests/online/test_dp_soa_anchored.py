"""AnchoredLearner: DP-SOA's practical base learner (the version-space hypothesis nearest to a
public anchor)."""

import numpy as np
import pytest

from skdp.hypotheses.littlestone import (
    PointVersionSpace,
    ThresholdVersionSpace,
    interval_class,
    threshold_class,
)
from skdp.online import MistakeBoundedLearner, SOALearner
from skdp.online._dp_soa_anchored import AnchoredLearner


def _feed(learner, rows):
    for x, y in rows:
        learner.update(x, y)
    return learner


def test_is_a_deterministic_mistake_bounded_learner():
    a = AnchoredLearner(ThresholdVersionSpace(64))
    assert isinstance(a, MistakeBoundedLearner) and not a.conservative
    assert a.hypothesis_key() == SOALearner(ThresholdVersionSpace(64)).hypothesis_key()
    assert a.mistake_bound == 65  # |C|: 65 thresholds


def test_thresholds_clip_the_anchor_into_the_version_space():
    fresh = AnchoredLearner(ThresholdVersionSpace(64))
    anchor = fresh.hypothesis_key()[1]
    a = _feed(fresh.copy(), [(50, 1), (20, -1)])  # both agree with the anchor: unchanged
    assert a.hypothesis_key() == ("threshold", anchor)
    b = _feed(fresh.copy(), [(50, 1), (20, 1), (25, 1), (3, -1)])  # target ≤ 20
    c = _feed(fresh.copy(), [(20, 1), (60, 1)])
    assert b.hypothesis_key() == c.hypothesis_key() == ("threshold", 20)
    d = _feed(fresh.copy(), [(40, -1), (33, -1), (45, -1)])  # target ≥ 46 > anchor
    assert d.hypothesis_key() == ("threshold", 46)
    np.testing.assert_array_equal(d.predict([45, 46]), [-1, 1])
    assert fresh.hypothesis_key() == ("threshold", anchor)  # copies never share state


def test_finite_class_matches_the_closed_form_and_breaks_ties_by_row():
    closed = AnchoredLearner(ThresholdVersionSpace(8))
    finite = AnchoredLearner(threshold_class(8))
    rows = [(6, 1), (2, -1), (5, 1), (3, -1)]
    _feed(closed, rows), _feed(finite, rows)
    np.testing.assert_array_equal(closed.predict(np.arange(8)), finite.predict(np.arange(8)))
    # intervals [a, b] on 6 points, anchor all −1: after a positive at 2 every interval
    # through 2 is consistent; the nearest to all −1 is the singleton [2, 2]
    iv = _feed(AnchoredLearner(interval_class(6), anchor=-np.ones(6)), [(2, 1)])
    np.testing.assert_array_equal(iv.predict(np.arange(6)), [-1, -1, 1, -1, -1, -1])


def test_points_keep_all_negative_until_a_positive():
    a = AnchoredLearner(PointVersionSpace(16))
    assert a.hypothesis_key() == ("point", None)
    _feed(a, [(3, -1), (5, -1)])
    assert a.hypothesis_key() == ("point", None)
    _feed(a, [(7, 1)])
    assert a.hypothesis_key() == ("point", 7) and a.predict_one(7) == 1


def test_inconsistent_rows_skip_or_bottom():
    skip = _feed(AnchoredLearner(ThresholdVersionSpace(16)), [(4, 1)])
    assert not skip.update(10, -1) and skip.hypothesis_key() == ("threshold", 4)
    bottom = _feed(AnchoredLearner(ThresholdVersionSpace(16), on_inconsistent="bottom"),
                   [(4, 1)])
    assert bottom.update(10, -1) and bottom.hypothesis_key() is None and bottom.failed
    assert not bottom.update(1, -1)


def test_mistakes_stay_within_the_bound_on_realizable_streams(rng):
    for _ in range(20):
        n, target = 32, int(rng.integers(0, 33))
        a = AnchoredLearner(ThresholdVersionSpace(n))
        mistakes = 0
        for x in rng.integers(0, n, size=300).tolist():
            y = 1 if x >= target else -1
            mistakes += a.predict_one(x) != y
            a.update(x, y)
        assert mistakes <= a.mistake_bound
        assert a.hypothesis_key() in {("threshold", t) for t in range(n + 1)}


def test_refuses_anchors_of_the_wrong_shape():
    with pytest.raises(ValueError, match="threshold as its anchor"):
        AnchoredLearner(ThresholdVersionSpace(4), anchor=[1, -1, 1, -1])
    with pytest.raises(ValueError, match="all −1 or a point"):
        AnchoredLearner(PointVersionSpace(4), anchor=[1, 1, -1, -1])
    with pytest.raises(ValueError, match="4 labels"):
        AnchoredLearner(ThresholdVersionSpace(4), anchor=[1, 1])
    with pytest.raises(ValueError, match="on_inconsistent"):
        AnchoredLearner(ThresholdVersionSpace(4), on_inconsistent="restart")
