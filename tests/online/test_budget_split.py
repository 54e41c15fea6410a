"""The online learners' budget splits: "paper" reproduces the old closed forms, "tight"
composes within (ε, δ) by the accountant and is never worse than "paper"."""

import dataclasses
import math
import warnings

import numpy as np
import pytest

from skdp import TestingSeed
from skdp.accounting import PrivacyBudget, account
from skdp.exceptions import PrivacyWarning
from skdp.hypotheses import threshold_class
from skdp.hypotheses.littlestone import PointVersionSpace
from skdp.mechanisms import StableHistogram
from skdp.online import (
    AdaptivePrivateOnlineClassifier,
    DPSOAClassifier,
    PrivateExpertsClassifier,
)
from skdp.online._budget_split import (
    adaptive_split,
    consistent_split,
    hist_sparse_split,
    per_round_histogram_split,
    tree_counter_split,
)

EPSILONS = (0.5, 1.0, 4.0)
DELTA = 1e-6


def _noise_bound(epsilon, delta):
    return StableHistogram(epsilon, delta, random_state=0).noise_bound


def _within(split, epsilon, delta):
    """The split's events compose within (ε, δ) by its certifying accountant method
    ("basic" / "advanced" for the paper's closed forms, else "tight" or "pld")."""
    assert split.method in ("basic", "advanced", "tight", "pld")
    assert account(split.events, split.method).epsilon(delta) <= epsilon
    if split.method == "tight":  # calibrated, not merely valid: 1 % more would not fit
        more = [(dataclasses.replace(e, epsilon=1.01 * e.epsilon), n) for e, n in split.events]
        assert account(more).epsilon(delta) > epsilon


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("c", [1, 8, 64])
def test_hist_sparse_split(epsilon, c):
    paper = hist_sparse_split(epsilon, DELTA, c, "paper")
    # the old HistSparse.budget_split: 2ε/3 to the sparse vector, (ε/(3c), δ/c) each
    share = 2 / 3
    assert paper.values == (share * epsilon, (1.0 - share) * epsilon / c, DELTA / c)
    tight = hist_sparse_split(epsilon, DELTA, c, "tight")
    for split in (paper, tight):
        _within(split, epsilon, DELTA)
        assert dict(split.events)  # one sparse vector and c histograms
        assert [n for _, n in split.events] == [1, c]
    svt, hist, hist_delta = tight.values
    assert svt >= paper.values[0] and hist >= paper.values[1]
    assert svt / hist == pytest.approx(2 * c)  # the paper's relative weights
    assert _noise_bound(hist, hist_delta) <= _noise_bound(*paper.values[1:])
    if c == 64:  # many histograms: the accountant gains
        assert tight.accounting == "tight" and svt > 1.1 * paper.values[0]


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("T", [10, 1000, 10**5])
def test_per_round_histogram_split(epsilon, T):
    paper = per_round_histogram_split(epsilon, DELTA, T, "paper")
    old = epsilon / (2.0 * math.sqrt(2.0 * T * math.log(1.0 / DELTA)))
    assert paper.values == (old, DELTA / (2.0 * T))
    tight = per_round_histogram_split(epsilon, DELTA, T, "tight")
    for split in (paper, tight):
        _within(split, epsilon, DELTA)
    assert tight.values[0] > 2.0 * paper.values[0]
    assert _noise_bound(*tight.values) < _noise_bound(*paper.values)


def test_per_round_paper_refuses_what_lemma_5_4_cannot_compose():
    with pytest.raises(ValueError, match="compose"):
        per_round_histogram_split(500.0, DELTA, 10, "paper")
    tight = per_round_histogram_split(500.0, DELTA, 10, "tight")
    _within(tight, 500.0, DELTA)


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("D", [1, 2, 5])
def test_adaptive_split(epsilon, D):
    paper = adaptive_split(epsilon, DELTA, D, "paper")
    assert paper.values == (epsilon / 2, epsilon / 2 / D, DELTA / D)
    tight = adaptive_split(epsilon, DELTA, D, "tight")
    for split in (paper, tight):
        _within(split, epsilon, DELTA)
    assert tight.values[0] >= paper.values[0] and tight.values[1] >= paper.values[1]
    assert _noise_bound(*tight.values[1:]) <= _noise_bound(*paper.values[1:])


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("levels", [1, 3, 10, 20])
@pytest.mark.parametrize("changed", [2, 4])
def test_tree_counter_split(epsilon, levels, changed):
    paper = tree_counter_split(epsilon, DELTA, levels, changed, "paper")
    assert paper.values == (epsilon / changed, 0.0)
    tight = tree_counter_split(epsilon, DELTA, levels, changed, "tight")
    for split in (paper, tight):
        _within(split, epsilon, DELTA)
    # node noise scale L/ε_cell: the events are the node noises
    event, count = tight.events[0]
    assert count == changed * levels
    assert event.epsilon == pytest.approx(tight.values[0] / levels)
    assert tight.values[0] >= paper.values[0]
    if levels >= 10:
        assert tight.values == (pytest.approx(tight.values[0]), DELTA)
        assert tight.values[0] > 1.03 * paper.values[0]
    # pure DP stays pure: δ = 0 gives the paper's split
    assert tree_counter_split(epsilon, 0.0, levels, changed, "tight") == paper


def test_tiny_and_huge_per_event_epsilons_are_calibrated_and_compose():
    # 10⁶ histograms at ε ≈ 5·10⁻⁷ (where Rényi divergences need care against cancellation)
    many = hist_sparse_split(1.0, DELTA, 10**6, "tight")
    assert many.method == "tight" and many.accounting == "tight"
    _within(many, 1.0, DELTA)
    assert many.values[0] > 1.3 * hist_sparse_split(1.0, DELTA, 10**6, "paper").values[0]
    # per-round ε′ ≈ 50 (randomized response with e^{−ε} below double precision)
    big = per_round_histogram_split(500.0, DELTA, 10, "tight")
    _within(big, 500.0, DELTA)
    assert big.values[0] > 10.0
    # beyond 10⁹ histograms (the theory preset's c) nothing is attempted
    assert hist_sparse_split(1.0, DELTA, 2**142, "tight").accounting == "paper"


def test_unknown_accounting_is_refused():
    with pytest.raises(ValueError, match="accounting"):
        hist_sparse_split(1.0, DELTA, 8, "optimal")


# ----------------------------------------------------------------- the estimators use them
@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        yield


@pytest.mark.parametrize("accounting", ["paper", "tight"])
def test_dp_soa_runs_its_split(accounting):
    x = np.random.default_rng(0).integers(0, 4, size=500)
    clf = DPSOAClassifier(1.0, 1e-3, PointVersionSpace(4), n_trees=64, max_switches=64,
                          accounting=accounting, random_state=0)
    clf.fit(x[:, None], (x == 2).astype(int))
    p = clf.parameters_
    split = hist_sparse_split(1.0, 1e-3, 64, accounting)
    assert (p.svt_epsilon, p.hist_epsilon, p.hist_delta) == split.values
    hs = clf._hist_sparse
    assert (hs.svt_epsilon, hs.hist_epsilon, hs.hist_delta) == split.values
    assert hs._svt.epsilon == p.svt_epsilon and hs._hist.epsilon == p.hist_epsilon
    assert clf.privacy_spent_ == (1.0, 1e-3) and p.accounting == accounting
    adaptive = DPSOAClassifier(1.0, 1e-6, PointVersionSpace(4), n_trees=50, adaptive=True,
                               n_rounds=100, accounting=accounting, random_state=0)
    adaptive.fit(x[:100, None], (x[:100] == 2).astype(int))
    q = adaptive.parameters_
    assert (q.release_epsilon, q.release_delta) == per_round_histogram_split(
        1.0, 1e-6, 100, accounting).values


@pytest.mark.parametrize("accounting", ["paper", "tight"])
def test_li_wang_ye_runs_its_split(accounting):
    x = np.random.default_rng(0).integers(0, 64, size=2000)
    clf = AdaptivePrivateOnlineClassifier(4.0, hypothesis_class=PointVersionSpace(64),
                                          n_layers=2, accounting=accounting, random_state=0,
                                          release="histogram")
    clf.fit(x[:, None], (x == 7).astype(int))
    p = clf.parameters_
    assert (p.epsilon_svt, p.hist_epsilon, p.hist_delta) == adaptive_split(
        4.0, 1e-6, 2, accounting).values
    assert clf._core._svt.epsilon == p.epsilon_svt
    assert clf.privacy_spent_ == (4.0, 1e-6)


@pytest.mark.parametrize("accounting", ["paper", "tight"])
def test_consistent_release_runs_its_split(accounting):
    x = np.random.default_rng(0).integers(0, 64, size=2000)
    clf = AdaptivePrivateOnlineClassifier(4.0, hypothesis_class=PointVersionSpace(64),
                                          accounting=accounting, random_state=0)
    clf.fit(x[:, None], (x == 7).astype(int))
    p = clf.parameters_
    assert p.release == "consistent"
    assert (p.epsilon_svt, p.hist_epsilon) == consistent_split(
        4.0, 1e-6, p.max_switches, accounting).values
    assert clf._core._svt.epsilon == p.epsilon_svt
    assert clf.privacy_spent_ == (4.0, 1e-6)


@pytest.mark.parametrize("accounting", ["paper", "tight"])
@pytest.mark.parametrize("construction", ["class", "constructed"])
def test_experts_run_their_split(accounting, construction):
    T = 6 if construction == "constructed" else 2048
    x = np.random.default_rng(0).integers(0, 4, size=T)
    clf = PrivateExpertsClassifier(1.0, experts=threshold_class(4), n_rounds=T,
                                   construction=construction, accounting=accounting,
                                   random_state=0)
    clf.fit(x[:, None], (x >= 2).astype(int))
    changed = 4 if construction == "constructed" else 2
    split = tree_counter_split(1.0, 1e-6, T.bit_length(), changed, accounting)
    counters = ([clf._engine.san, clf._engine.ope] if construction == "constructed"
                else [clf._counter])
    for counter in counters:
        assert counter._tree.epsilon == split.values[0]
        # the node noise the accountant was told about (rounded up when sampled)
        assert counter._node_noise_scale >= 1.0 / split.events[0][0].epsilon * (1 - 1e-15)
    assert clf.privacy_spent_ == (1.0, 1e-6 if accounting == "tight" else 0.0)
    if accounting == "paper":
        assert split.values[0] == 1.0 / changed


def test_experts_stay_pure_on_a_ledger_without_delta():
    # PrivacyBudget(ε) has δ = 0: "tight" must not make the default learner refuse it;
    # it runs the paper's pure split, charges (ε, 0), and its counters use that split.
    T = 2048
    x = np.random.default_rng(0).integers(0, 4, size=T)
    budget = PrivacyBudget(1.0)
    clf = PrivateExpertsClassifier(1.0, experts=threshold_class(4), n_rounds=T,
                                   budget=budget, random_state=TestingSeed(0))
    clf.fit(x[:, None], (x >= 2).astype(int))
    assert budget.spent == (1.0, 0.0)
    assert clf._counter._tree.epsilon == tree_counter_split(1.0, 0.0, T.bit_length(), 2).values[0]
