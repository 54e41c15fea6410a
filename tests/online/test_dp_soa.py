"""DPSOAClassifier: streaming, caps, presets, the adaptive variant, the forest, utility sanity."""

import dataclasses
import itertools
import math
import warnings

import numpy as np
import pytest

from skdp import PrivacyBudget, TestingSeed
from skdp.accounting import ApproxDP, account, advanced_composition
from skdp.exceptions import PrivacyWarning
from skdp.hypotheses import FiniteClass
from skdp.hypotheses.littlestone import (
    PointVersionSpace,
    ThresholdVersionSpace,
    threshold_class,
)
from skdp.online import (
    AdaptiveThresholdAdversary,
    DPSOAClassifier,
    ObliviousAdversary,
    SOAClassifier,
    SOALearner,
    run_online,
)
from skdp.online._competitor_sparse import CompetitorHistSparse
from skdp.online._dp_soa_anchored import AnchoredLearner

# A configuration that learns a point of 4 within 20000 rounds (see the docstring example).
LEARNS = dict(epsilon=8.0, delta=1e-6, n_trees=200, max_switches=2, query="frequency")


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        yield


class _LooseAdaptive(DPSOAClassifier):
    """Adaptive variant with a per-round budget large enough to release at test sizes
    (exercises the batching of per-round histograms; not a privacy configuration)."""

    def _resolve(self, learner):
        return dataclasses.replace(super()._resolve(learner), release_epsilon=4.0,
                                   release_delta=1e-3)


def _points(n=20000, n_domain=4, target=2, seed=0):
    x = np.random.default_rng(seed).integers(0, n_domain, size=n)
    return x[:, None], (x == target).astype(int)


def _state(clf):
    svt = () if clf.parameters_.adaptive else tuple(clf._hist_sparse.switch_rounds)
    return (clf._n_mistakes, clf.n_switches_, clf._n_forest_updates, clf.n_rounds_seen_,
            clf._hypothesis.hypothesis_key(), clf.updates_stopped_, svt,
            clf._n_abandoned_trees, tuple(clf._forest.out_hid.tolist()))


@pytest.mark.parametrize("cls", [DPSOAClassifier, _LooseAdaptive])
def test_blocks_equal_one_pass(cls):
    X, y = _points(3000)
    adaptive = cls is _LooseAdaptive
    kw = dict(LEARNS, n_trees=30, adaptive=adaptive, n_rounds=3000 if adaptive else None)
    one = cls(hypothesis_class=PointVersionSpace(4), random_state=3, **kw).fit(X, y)
    parts = cls(hypothesis_class=PointVersionSpace(4), random_state=3, **kw)
    for lo, hi in itertools.pairwise([0, 1, 2, 40, 41, 1000, 1003, 2000, 2001, 3000]):
        parts.partial_fit(X[lo:hi], y[lo:hi], classes=[0, 1])
    assert _state(one) == _state(parts)
    assert one._n_forest_updates > 50 and (one.n_switches_ or _state(one)[6])  # it moves
    # run_online's one-round fast path (labels ±1) reaches the same state
    ys = np.where(y > 0, 1, -1)
    rows = cls(hypothesis_class=PointVersionSpace(4), random_state=3, **kw)
    for t in range(3000):
        rows._online_step(int(X[t, 0]), int(ys[t]), np.array([-1, 1]))
    assert _state(rows) == _state(one)
    grid = np.arange(4)[:, None]
    np.testing.assert_array_equal(one.predict(grid), parts.predict(grid))


def test_learns_a_point_and_predicts_with_the_released_hypothesis():
    X, y = _points()
    clf = DPSOAClassifier(hypothesis_class=PointVersionSpace(4), random_state=0, **LEARNS)
    wrong = clf._partial_fit_mistakes(X, y, classes=[0, 1])
    assert wrong.sum() == clf._n_mistakes
    assert clf.n_switches_ == 1 and clf._hypothesis.hypothesis_key() == ("point", 2)
    grid = np.arange(4)[:, None]
    np.testing.assert_array_equal(clf.predict(grid), [0, 0, 1, 0])
    np.testing.assert_array_equal(clf.predict(grid),
                                  (clf._hypothesis.predict(np.arange(4)) > 0).astype(int))
    last = np.flatnonzero(wrong)[-1]
    assert not wrong[last + 1:].any() and last < 19000  # no mistake once the point is out


def test_switch_cap_stops_updating_and_says_so():
    X, y = _points()
    clf = DPSOAClassifier(hypothesis_class=PointVersionSpace(4), random_state=0,
                          **dict(LEARNS, max_switches=1))
    with pytest.warns(PrivacyWarning, match="maximum of c = 1") as record:
        clf.partial_fit(X[:15000], y[:15000], classes=[0, 1])
        state = _state(clf)
        updates = clf._n_forest_updates
        clf.partial_fit(X[15000:], y[15000:])
    assert sum(w.category is PrivacyWarning and "maximum of c" in str(w.message)
               for w in record) == 1  # (the other PrivacyWarning: the seeded testing mode)
    assert clf.updates_stopped_ and "HistSparse abort" in clf.stop_reason_
    assert clf._hist_sparse.halted and clf._hist_sparse.n_switches == 1
    assert clf._n_forest_updates == updates and _state(clf)[4] == state[4]
    assert clf.n_rounds_seen_ == 20000


def test_privacy_charged_once_per_stream():
    X, y = _points(500)
    budget = PrivacyBudget(20.0, 1e-5)
    clf = DPSOAClassifier(2.0, 1e-6, PointVersionSpace(4), n_trees=20, budget=budget,
                          random_state=TestingSeed(0))
    clf.partial_fit(X[:200], y[:200], classes=[0, 1])
    clf.partial_fit(X[200:], y[200:])
    assert budget.spent.epsilon == pytest.approx(2.0)
    assert clf.privacy_spent_.epsilon == 2.0 and clf.privacy_spent_.delta == 1e-6
    clf.fit(X, y)
    assert budget.spent.epsilon == pytest.approx(4.0)


def test_parameters_and_defaults():
    clf = DPSOAClassifier(1.0, 1e-6, ThresholdVersionSpace(2**16), random_state=0)
    clf.fit([[0], [40000]], [0, 1])
    p = clf.parameters_
    # practical preset: anchored copies in flat trees (k₁ = 1), η leaving the histogram's
    # threshold at A + 2, k₂ = 8 × the trees R = threshold/2 of the first firing
    hist = clf._hist_sparse._hist
    assert (p.base_learner, p.n_leaves, p.max_switches) == ("anchored", 1, 1)
    assert p.eta == pytest.approx(2 * (hist.noise_bound + 2) / p.n_trees)
    assert hist._threshold(p.n_trees) == hist.noise_bound + 2
    assert (p.query, p.on_inconsistent) == ("competitor", "skip")
    assert p.threshold_count > 2 * (hist.noise_bound + 2) and (
        p.threshold == p.threshold_count / p.n_trees)
    assert p.n_trees == max(64, math.ceil(8 * p.threshold_count / 2))
    assert p.svt_epsilon + p.max_switches * p.hist_epsilon == pytest.approx(1.0, rel=1e-3)
    assert isinstance(clf._hist_sparse, CompetitorHistSparse)
    assert isinstance(clf._hypothesis, AnchoredLearner) and clf.mistake_bound_ == 2**16 + 1
    soa = DPSOAClassifier(1.0, 1e-6, ThresholdVersionSpace(2**16), base_learner="soa",
                          random_state=0).fit([[0], [40000]], [0, 1])
    q = soa.parameters_
    assert (q.base_learner, q.n_leaves, q.eta, soa.mistake_bound_) == ("soa", 4, 0.25, 16)
    assert q.n_trees == max(64, math.ceil(3 * q.threshold_count / 2))
    freq = DPSOAClassifier(1.0, 1e-6, ThresholdVersionSpace(2**16), query="frequency",
                           max_switches=8, random_state=0).fit([[0], [40000]], [0, 1])
    q = freq.parameters_
    assert q.threshold == pytest.approx(1 - 3 * 0.25 / 32) and q.threshold_count == 0.0
    from skdp.mechanisms import stable_histogram_min_size
    assert q.n_trees == stable_histogram_min_size(0.25, q.hist_epsilon, q.hist_delta)
    assert freq._hypothesis.on_inconsistent == "skip"
    small = DPSOAClassifier(1.0, 1e-6, ThresholdVersionSpace(16), base_learner="soa",
                            random_state=0)
    assert small.fit([[0], [9]], [0, 1]).parameters_.n_leaves == 32  # d = 4: 2^(d+1)
    theory = DPSOAClassifier(1.0, 1e-6, PointVersionSpace(4), preset="theory", n_trees=64,
                             n_leaves=4, max_switches=2, eta=0.25)
    assert theory.fit([[0], [1]], [0, 1]).parameters_.base_learner == "soa"
    assert (freq.n_switches_, freq.n_svt_firings_, freq.released_is_initial_) == (0, 0, True)


def test_theory_preset_refuses_before_any_charge():
    budget = PrivacyBudget(5.0, 1e-5)
    clf = DPSOAClassifier(1.0, 1e-6, PointVersionSpace(4), preset="theory", budget=budget)
    with pytest.raises(ValueError, match=r"preset='theory'.*k₂ ≈ 2\^\d+ trees"):
        clf.fit([[0], [1]], [0, 1])
    assert budget.spent.epsilon == 0 and not hasattr(clf, "privacy_spent_")


def test_bad_parameters_refused_before_any_charge():
    budget = PrivacyBudget(5.0, 1e-5)
    for kw, match in [(dict(n_leaves=6), "power of two"),
                      (dict(adaptive=True), "needs n_rounds"),
                      (dict(n_trees=2**22, n_leaves=8), "memory limit"),
                      (dict(adaptive=True, n_rounds=10, epsilon=500.0, accounting="paper"),
                       "compose")]:
        params = dict(epsilon=1.0, hypothesis_class=PointVersionSpace(4), budget=budget)
        params.update(kw)
        with pytest.raises(ValueError, match=match):
            DPSOAClassifier(**params).fit([[0], [1]], [0, 1])
    assert budget.spent.epsilon == 0


@pytest.mark.parametrize("accounting", ["paper", "tight"])
def test_adaptive_variant_composition_and_horizon(accounting):
    X, y = _points(3000)
    clf = DPSOAClassifier(1.0, 1e-6, PointVersionSpace(4), n_trees=50, adaptive=True,
                          n_rounds=1000, accounting=accounting, random_state=0)
    with pytest.warns(PrivacyWarning, match="n_rounds=1000"):
        clf.fit(X, y)
    p = clf.parameters_
    paper_eps = 1.0 / (2 * np.sqrt(2 * 1000 * np.log(1e6)))
    if accounting == "paper":
        assert p.release_epsilon == pytest.approx(paper_eps)
        assert p.release_delta == pytest.approx(1e-6 / 2000)
        total = advanced_composition(p.release_epsilon, p.release_delta, 1000, 0.5e-6)
        assert total.epsilon <= 1.0 and total.delta <= 1e-6
    else:  # T histograms at (ε′, δ′) within (ε, δ) by the accountant; ε′ ≥ the paper's
        events = [(ApproxDP(p.release_epsilon, p.release_delta), 1000)]
        assert account(events).epsilon(1e-6) <= 1.0
        assert p.release_epsilon > 2 * paper_eps
    assert clf.updates_stopped_ and clf.n_rounds_seen_ == 3000
    assert clf._forest.n_events <= clf._n_forest_updates  # no update after the horizon
    updates = clf._n_forest_updates
    clf.partial_fit(X, y)
    assert clf._n_forest_updates == updates


def test_any_mistake_bounded_learner_plugs_in():
    L = threshold_class(8).label_matrix
    base = SOALearner(FiniteClass(L))
    x = np.random.default_rng(1).integers(0, 8, size=3000)
    y = (x >= 5).astype(int)
    clf = DPSOAClassifier(4.0, 1e-6, base, n_trees=40, random_state=0).fit(x[:, None], y)
    assert base.n_mistakes == 0 and base.hypothesis_key() == SOALearner(L).hypothesis_key()
    assert clf.mistake_bound_ == 3 and clf._n_forest_updates > 0


def test_forest_memory_follows_the_forest_not_t():
    X, y = _points(20000, n_domain=64, target=9)
    clf = DPSOAClassifier(4.0, 1e-6, PointVersionSpace(64), n_trees=50, random_state=0)
    clf.fit(X, y)
    forest = clf._forest
    live = set(forest.hid[forest.pert].tolist()) | {clf._released_hid, 0}
    assert set(forest._keys.values()) == live
    assert len(forest.rep) <= forest.pert.size + 2
    np.testing.assert_array_equal(
        forest.list_counts[:len(forest.rep)],
        np.bincount(forest.out_hid, minlength=len(forest.rep))[:len(forest.rep)])
    refs = np.bincount(forest.hid[forest.pert], minlength=len(forest.rep))
    for h in live - {0}:
        assert forest._refs[h] == refs[h] + (h == clf._released_hid)


def test_tree_invariants(rng):
    """Pertinent siblings agree; each leaf's ancestor is pertinent; outputs are agreeing pairs."""
    x = rng.integers(0, 16, size=4000)
    clf = DPSOAClassifier(4.0, 1e-6, ThresholdVersionSpace(16), n_trees=30, n_leaves=8,
                          random_state=0).fit(x[:, None], (x >= 7).astype(int))
    f = clf._forest
    assert f.pert[f.anc].all()
    for tree in range(f.k2):
        base = tree * f.width
        pert = np.flatnonzero(f.pert[base:base + f.width])
        for local in pert.tolist():
            if local > 1 and f.pert[base + (local ^ 1)]:
                assert f.hid[base + local] == f.hid[base + (local ^ 1)]
        v = f.out[tree]
        assert f.pert[v] and (v % f.width == 1 or f.hid[v] == f.hid[base + ((v % f.width) ^ 1)])
    assert f.n_dead == clf._n_abandoned_trees


def test_mistakes_vs_soa_on_an_oblivious_threshold_stream():
    """Sanity: the SOA makes ≤ Ldim mistakes; DP-SOA finds the same target, after many
    more mistakes (the price of privacy at practical constants), and then errs no more."""
    N, T = 3, 20000
    adv = ObliviousAdversary(ThresholdVersionSpace(N), target=1)
    soa = run_online(SOAClassifier(ThresholdVersionSpace(N)), adv, T, random_state=0)
    dp = DPSOAClassifier(20.0, 1e-6, ThresholdVersionSpace(N), n_trees=100, max_switches=3,
                         random_state=0)
    curve = run_online(dp, adv, T, random_state=0)
    assert soa[-1] <= 2 and dp.mistake_bound_ == N + 1  # the anchored learner's bound: |C|
    assert dp._hypothesis.hypothesis_key() == ("threshold", 1)
    assert soa[-1] < curve[-1] < T // 4 and curve[-1] == curve[T // 2]


def test_run_online_against_an_adaptive_adversary():
    dp = DPSOAClassifier(4.0, 1e-6, ThresholdVersionSpace(64), n_trees=20, random_state=0)
    curve = run_online(dp, AdaptiveThresholdAdversary(64), 500, random_state=0)
    assert curve.shape == (500,) and curve[-1] == dp._n_mistakes and dp.n_rounds_seen_ == 500
