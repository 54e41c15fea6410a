"""Stream generators, adaptive adversaries and the run_online harness."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skdp.hypotheses.littlestone import (
    PointVersionSpace,
    ThresholdVersionSpace,
    littlestone_dimension,
    point_class,
    threshold_class,
)
from skdp.online import (
    AdaptiveFiniteAdversary,
    AdaptivePointAdversary,
    AdaptiveThresholdAdversary,
    ObliviousAdversary,
    SOAClassifier,
    SOALearner,
    random_finite_class,
    run_online,
)


class _AlwaysPositive:
    """A (bad) deterministic base learner implementing the protocol: predicts +1."""

    n_domain, mistake_bound = 50, 50

    def predict_one(self, x):
        return 1

    def predict(self, x):
        return np.ones(np.shape(x), dtype=np.int8)

    def update(self, x, y):
        return False

    def copy(self):
        return self

    def hypothesis_key(self):
        return "all+"


def _play(adversary, learner, n, seed):
    """Rounds of an adaptive game, for realizability checks."""
    adversary.reset(np.random.default_rng(seed))
    rounds = []
    for _ in range(n):
        x, y = adversary.next_round(learner.predict_one)
        y_hat = learner.predict_one(x)
        learner.update(x, y)
        adversary.observe(x, y, y_hat)
        rounds.append((x, y))
    return np.array(rounds)


@given(st.integers(1, 300), st.integers(0, 2**32 - 1), st.booleans())
def test_adaptive_thresholds_realizable_and_force_ldim(n, seed, sees):
    adv = AdaptiveThresholdAdversary(n, sees_current=sees)
    rounds = _play(adv, SOALearner(ThresholdVersionSpace(n)), 3 * n.bit_length() + 5, seed)
    x, y = rounds[:, 0], rounds[:, 1]
    assert x.min() >= 0 and x.max() < n
    consistent = [t for t in range(n + 1) if np.all(np.where(x >= t, 1, -1) == y)]
    assert consistent  # realizable by some threshold
    if sees:
        curve = run_online(SOALearner(ThresholdVersionSpace(n)), adv, 3 * n.bit_length() + 5,
                           random_state=seed)
        assert curve[-1] == ThresholdVersionSpace(n).ldim()  # the lower bound is met


@pytest.mark.parametrize("n", [2**8, 2**16])
def test_adaptive_thresholds_against_soa(n):
    for sees in (False, True):
        adv = AdaptiveThresholdAdversary(n, sees_current=sees)
        curve = run_online(SOAClassifier(ThresholdVersionSpace(n)), adv, 300, random_state=0)
        assert curve.shape == (300,) and np.all(np.diff(curve) >= 0)
        assert curve[-1] <= ThresholdVersionSpace(n).ldim()


def test_adaptive_points_queries_predicted_positives():
    adv = AdaptivePointAdversary(50, target=7, reveal=0.0)
    curve = run_online(_AlwaysPositive(), adv, 200, random_state=1)
    assert curve[-1] == 200  # a learner that keeps predicting positives errs every round
    soa = run_online(SOAClassifier(PointVersionSpace(50)),
                     AdaptivePointAdversary(50, sees_current=True), 500, random_state=2)
    assert soa[-1] <= 1
    rounds = _play(AdaptivePointAdversary(20, target=3), SOALearner(point_class(20)), 300, 4)
    assert np.all((rounds[:, 1] == 1) == (rounds[:, 0] == 3))  # labelled by the target


@pytest.mark.parametrize("cls", [threshold_class(30), point_class(30),
                                 ThresholdVersionSpace(1000), PointVersionSpace(1000)])
@pytest.mark.parametrize("order", ["random", "worst"])
def test_oblivious_streams(cls, order):
    adv = ObliviousAdversary(cls, order=order)
    adv.reset(np.random.default_rng(3))
    x, y = adv.stream(400)
    assert x.shape == y.shape == (400,)
    np.testing.assert_array_equal(y, adv.labels_[x])
    adv.reset(np.random.default_rng(3))
    x2, _ = adv.stream(400)
    np.testing.assert_array_equal(x, x2)
    # the SOA: block fast path == round-by-round base learner, and ≤ Ldim mistakes
    fast = run_online(SOAClassifier(cls), adv, 400, random_state=5)
    slow = run_online(SOALearner(cls), adv, 400, random_state=5)
    np.testing.assert_array_equal(fast, slow)
    assert fast[-1] <= SOALearner(cls).mistake_bound
    if order == "worst":  # the prefix makes the SOA err on every round of it
        k = fast[-1]
        np.testing.assert_array_equal(fast[:k], np.arange(1, k + 1))


def test_worst_order_is_hard_for_soa():
    worst = max(run_online(SOALearner(ThresholdVersionSpace(1023)),
                           ObliviousAdversary(ThresholdVersionSpace(1023), order="worst",
                                              target=t), 50)[-1]
                for t in (0, 1, 511, 700, 1023))
    assert worst >= 8


def test_bad_parameters():
    with pytest.raises(ValueError, match="order"):
        ObliviousAdversary(point_class(3), order="sorted")
    with pytest.raises(ValueError, match="target"):
        ObliviousAdversary(ThresholdVersionSpace(3), target=9)
    with pytest.raises(ValueError, match="n_rounds"):
        run_online(SOALearner(point_class(3)), ObliviousAdversary(point_class(3)), 0)
    with pytest.raises(ValueError, match="reveal"):
        AdaptivePointAdversary(5, reveal=2.0)
    with pytest.raises(ValueError, match="n_domain"):
        AdaptiveThresholdAdversary(0)


@given(st.integers(1, 12), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_mistake_tree_adversary_forces_exactly_ldim_on_soa(n_hyp, n_domain, seed):
    L = np.random.default_rng(seed).choice([-1, 1], size=(n_hyp, n_domain))
    d = littlestone_dimension(L)
    adv = AdaptiveFiniteAdversary(L)
    rounds = _play(adv, SOALearner(L), 20, seed)
    x, y = rounds[:, 0], rounds[:, 1]
    assert np.any(np.all(L[:, x] == y[None, :], axis=1))  # realizable
    assert run_online(SOALearner(L), adv, 20, random_state=seed)[-1] == d
    assert run_online(SOAClassifier(L), adv, 20, random_state=seed)[-1] == d
    # a learner that never updates errs at least d times too
    assert run_online(_AlwaysPositive(), adv, 20, random_state=seed)[-1] >= d


@pytest.mark.parametrize("sees", [False, True])
def test_fast_round_path_matches_partial_fit(sees):
    n = 1000
    adv = AdaptiveThresholdAdversary(n, sees_current=sees)
    clf = SOAClassifier(ThresholdVersionSpace(n))
    curve = run_online(clf, adv, 200, random_state=7)
    rounds = _play(adv, SOALearner(ThresholdVersionSpace(n)), 200, 7)  # same deterministic game
    ref = SOAClassifier(ThresholdVersionSpace(n)).partial_fit(rounds[:, :1], rounds[:, 1],
                                                              classes=[-1, 1])
    assert clf.n_rounds_seen_ == ref.n_rounds_seen_ == 200
    assert clf.n_mistakes_ == ref.n_mistakes_ == curve[-1]
    assert clf.learner_.hypothesis_key() == ref.learner_.hypothesis_key()


class _FixedThreshold:
    """A base learner that never moves off threshold s (deterministic, protocol-compliant)."""

    mistake_bound = 0

    def __init__(self, n, s):
        self.n_domain, self.s = n, s

    def predict_one(self, x):
        return 1 if x >= self.s else -1

    def predict(self, x):
        return np.where(np.asarray(x) >= self.s, 1, -1).astype(np.int8)

    def update(self, x, y):
        return False

    def copy(self):
        return self

    def hypothesis_key(self):
        return ("threshold", self.s)


@given(st.integers(2, 200), st.integers(0, 200), st.integers(0, 2**32 - 1))
def test_seeking_threshold_adversary_charges_every_wrong_round(n, s, seed):
    s = min(s, n)
    adv = AdaptiveThresholdAdversary(n, sees_current=True, pinned="seek")
    rounds = _play(adv, _FixedThreshold(n, s), 40 + 2 * n.bit_length(), seed)
    x, y = rounds[:, 0], rounds[:, 1]
    consistent = [t for t in range(n + 1) if np.all(np.where(x >= t, 1, -1) == y)]
    assert len(consistent) >= 1  # realizable
    # a learner stuck on a threshold errs on every round (binary search, then the boundary)
    # unless it holds the one threshold the adversary pins
    curve = run_online(_FixedThreshold(n, s), adv, 40 + 2 * n.bit_length(), random_state=seed)
    if consistent != [s]:
        np.testing.assert_array_equal(curve, np.arange(1, curve.size + 1))


def test_seeking_is_opt_in_and_soa_still_meets_ldim():
    n = 2**16
    for pinned in ("random", "seek"):
        curve = run_online(SOALearner(ThresholdVersionSpace(n)),
                           AdaptiveThresholdAdversary(n, sees_current=True, pinned=pinned),
                           200, random_state=3)
        assert curve[-1] == ThresholdVersionSpace(n).ldim()
    # without a probe "seek" cannot see the hypothesis: the random boundary choice is kept
    a = _play(AdaptiveThresholdAdversary(50, pinned="seek"), SOALearner(threshold_class(50)),
              60, 11)
    b = _play(AdaptiveThresholdAdversary(50), SOALearner(threshold_class(50)), 60, 11)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="pinned"):
        AdaptiveThresholdAdversary(5, pinned="nearest")


@pytest.mark.parametrize("n_hyp, n_domain", [(32, 64), (8, 3), (1, 1), (5, 40)])
def test_random_finite_class(n_hyp, n_domain):
    cls = random_finite_class(n_hyp, n_domain, random_state=4)
    L = cls.label_matrix
    assert L.shape == (n_hyp, n_domain) and set(np.unique(L)) <= {-1, 1}
    assert np.unique(L, axis=0).shape[0] == n_hyp  # distinct hypotheses
    np.testing.assert_array_equal(L, random_finite_class(n_hyp, n_domain,
                                                         random_state=4).label_matrix)
    assert littlestone_dimension(cls) <= max(0, int(np.log2(n_hyp)))
    # streams over it are realizable, and the SOA stays within its Ldim
    for order in ("random", "worst"):
        adv = ObliviousAdversary(cls, order=order)
        assert run_online(SOAClassifier(cls), adv, 300, random_state=1)[-1] <= \
            littlestone_dimension(cls)
    adv = AdaptiveFiniteAdversary(cls)
    assert run_online(SOALearner(cls), adv, 50, random_state=2)[-1] == littlestone_dimension(cls)


def test_random_finite_class_bad_parameters():
    with pytest.raises(ValueError, match="distinct"):
        random_finite_class(9, 3)
    with pytest.raises(ValueError, match="n_hypotheses"):
        random_finite_class(0, 3)
    with pytest.raises(ValueError, match="n_domain"):
        random_finite_class(2, 0)
