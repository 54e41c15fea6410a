"""Whole-estimator privacy audit of DPSOAClassifier on neighbouring streams (one row differs),
with broken variants the same audits must catch.

To make one row matter as much as possible, the audits fix the leaf assignment π (a
round-robin plan instead of random leaves) and use a two-state base learner: ``A`` (labels
(−1, −1)) becomes ``B`` ((+1, −1)) after a mistake at 0 and ⊥ after a mistake at 1. The
privacy proof (Lemma A.1) holds for *every* fixed π and tournament labels — it only uses
that one row changes one tree — so auditing at a chosen π is a stronger test of the same
claim. Everything else (the forest, HistSparse, the estimator loop) is the shipped code,
run through ``fit`` with Alg. 2's frequency query (``query="frequency"``; the practical
preset's competitor query is audited in ``test_dp_soa_competitor_audit.py``). Trees have
k₁ = 4 leaves: a tree outputs B once both halves saw a row (0, +1), and ⊥ once both
halves saw a row (1, +1); rows (1, −1) change nothing.

* Design S (sparse vector, ε = 1, c = 1, 8 trees, η = 1/4 so θ ≈ 0.977): all trees become
  B one by one; in D′ the last tree's completing row is replaced by a no-op, so the query
  1 − freq(A) reaches 1 in D but stays at 7/8 in D′. Event: "first switch exactly at the
  differing row". Caught variant: no sparse-vector query noise (the earlier ⊥ answers pin
  the threshold, so the event is impossible under D′).
* Design H (histogram, ε = 2, δ = 0.05, c = 1, 16 trees): τ trees become B and the rest ⊥; in D′ the
  first B tree is made ⊥ by its completing row instead, so the list holds τ or τ − 1 B's
  when the histogram runs (the query path is identical). Event: "B is released". Caught
  variant: a histogram without noise.

The fast audits sample batched (``_batched_sampler``: the HistSparse lists read once from a
real fit, each trial's HistSparse built by the estimator and run on them; checked against
real fits by ``test_batched_trial_is_the_fit``); ``_first_switch_sampler`` and
``_released_sampler`` run whole fits (the slow test, ``test_dp_soa_histogram_exact.py``).
"""

import copy
import dataclasses
import warnings

import numpy as np
import pytest
from _batched_histogram import cached_truncation

from skdp._streams import StreamNoise
from skdp.audit import audit_mechanism
from skdp.exceptions import PrivacyWarning
from skdp.mechanisms import AboveThreshold, HistSparse, StableHistogram
from skdp.online import DPSOAClassifier, MistakeBoundedLearner

ALPHA = 1e-6
K_S, K_H, K1 = 8, 16, 4
_LABELS = {"A": np.array([-1, -1], dtype=np.int8), "B": np.array([1, -1], dtype=np.int8)}


class _FlipLearner:
    n_domain, mistake_bound, conservative = 2, 1, True

    def __init__(self, state="A", failed=False):
        self.state, self.failed = state, failed

    def predict(self, x):
        return _LABELS[self.state][np.asarray(x)]

    def predict_one(self, x):
        return int(_LABELS[self.state][x])

    def update(self, x, y):
        if self.failed or self.predict_one(x) == y:
            return False
        if x == 1:
            self.failed = True
        else:
            self.state = "B"
        return True

    def copy(self):
        return _FlipLearner(self.state, self.failed)

    def hypothesis_key(self):
        return None if self.failed else self.state


class Planned(DPSOAClassifier):
    """π fixed to ``leaf_plan`` (one leaf per round)."""

    leaf_plan = None

    def _leaves(self, t0, n):
        return self.leaf_plan[t0:t0 + n]


class _NoQueryNoiseSVT(AboveThreshold):
    @property
    def _query_noise_scale(self):
        return 0.0


class _NoiselessHistogram(StableHistogram):
    def _noisy(self, counts, tau, size, rng):
        noisy = np.broadcast_to(counts, size).copy()
        return noisy, (noisy > 0) & (noisy >= tau)


class _BrokenSparse(HistSparse):
    svt_class, hist_class = AboveThreshold, StableHistogram

    def _make_svt(self, rng):
        return self.svt_class(self.threshold, self.svt_epsilon, sensitivity=1 / self.n_items,
                              max_positives=self.max_switches, random_state=rng)

    def _make_hist(self, rng):
        return self.hist_class(self.hist_epsilon, self.hist_delta, eta=self.eta,
                               random_state=rng)


class _SparseNoQueryNoise(_BrokenSparse):
    svt_class = _NoQueryNoiseSVT


class _SparseNoiselessHistogram(_BrokenSparse):
    hist_class = _NoiselessHistogram


def _with(sparse_class):
    return type(f"Planned{sparse_class.__name__}", (Planned,),
                {"_hist_sparse_class": sparse_class})


def _leaf(tree, j):
    return tree * K1 + j


def _stream(rows):
    """rows: (leaf, x, label ±1) → X, y (0/1) and the leaf plan."""
    leaves, x, y = (np.array(col) for col in zip(*rows, strict=True))
    return x[:, None], (y > 0).astype(int), leaves


# ----------------------------------------------------------------- batched sampling
# Up to its first switch a planned fit is deterministic (fixed π, deterministic learners):
# the lists its HistSparse is asked about are read once from a real fit whose HistSparse
# answers ⊥ (``_capture``, checked the same under another seed). Each trial then builds
# its HistSparse by the estimator's own ``_make_hist_sparse`` (its noise keyed by the
# trial's seed) and runs the real ``process`` on those lists (consecutive equal lists in
# one call: HistSparse answers the same however rounds are batched,
# tests/mechanisms/test_hist_sparse.py), histogram and tie-break included; the released
# hid's hypothesis is read from the forest as it was at that round.
# test_batched_trial_is_the_fit replays real fits' HistSparse noise through it.
def _capture(cls, params, data, seed=0):
    X, y, plan = data
    est = cls(hypothesis_class=_FlipLearner(), random_state=seed, **params)
    est.leaf_plan = plan
    segments = []

    def make(p):
        hs = type(est)._make_hist_sparse(est, p)

        def process(lst, n=1):
            if segments and np.array_equal(segments[-1][0], lst):
                segments[-1][1] += n
            elif n:
                keys = {h: est._forest.rep[h].hypothesis_key()
                        for h in np.unique(lst).tolist() if h != hs.ignore}
                segments.append([np.array(lst), n, keys])
            return n, False

        hs.process = process
        return hs

    est._make_hist_sparse = make
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        est.fit(X, y)
    del est._make_hist_sparse
    return est, segments


def _trial(hs, segments):
    """(first switch round or −1, whether B is released) of one HistSparse run."""
    for lst, n, keys in segments:
        if hs.process(lst, n)[1]:
            return hs.switch_rounds[0], keys.get(hs.current) == "B"
    return -1, False


def _batched_sampler(cls, params, output):
    def sample(data, n, rng):
        est, segments = _capture(cls, params, data)
        other = _capture(cls, params, data, seed=1)[1]
        assert len(other) == len(segments) and all(  # the lists do not depend on the seed
            np.array_equal(a[0], b[0]) and a[1:] == b[1:]
            for a, b in zip(segments, other, strict=True))
        out = np.empty(n, dtype=int)
        with cached_truncation():
            for i, seed in enumerate(rng.integers(2**62, size=n)):
                est._noise = StreamNoise.from_seed(int(seed))
                out[i] = _trial(est._make_hist_sparse(est.parameters_), segments)[output]
        return out

    return sample


def _real_and_batched(cls, params, data, seed, segments, est):
    """A real fit's (switch round, B released), and the batched trial on its noise."""
    X, y, plan = data
    real = cls(hypothesis_class=_FlipLearner(), random_state=seed, **params)
    real.leaf_plan = plan
    saved = []

    def make(p):
        saved.append(copy.deepcopy(real._noise))  # seeded: a copy keeps the keys
        return type(real)._make_hist_sparse(real, p)

    real._make_hist_sparse = make
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        real.fit(X, y)
    rounds = real._hist_sparse.switch_rounds
    got = (rounds[0] if rounds else -1, real._hypothesis.hypothesis_key() == "B")
    est._noise = saved[0]
    return got, _trial(est._make_hist_sparse(est.parameters_), segments)


def _check_cases():  # (class, params, datasets) of every batched audit below
    s_data, h_data = _design_s()[:2], _design_h()
    return {"S": (Planned, S_PARAMS, s_data),
            "S-competitor": (PlannedCompetitor, C_PARAMS, s_data),
            "S-no-query-noise": (_with(_SparseNoQueryNoise), S_PARAMS, s_data),
            "H": (Planned, H_PARAMS, h_data),
            "H-noiseless": (_with(_SparseNoiselessHistogram), H_PARAMS, h_data)}


@pytest.mark.parametrize("case", ["S", "S-competitor", "S-no-query-noise", "H", "H-noiseless"])
def test_batched_trial_is_the_fit(case):
    cls, params, datasets = _check_cases()[case]
    seen = set()
    for data in datasets:
        est, segments = _capture(cls, params, data)
        for seed in range(25):
            got, batched = _real_and_batched(cls, params, data, seed, segments, est)
            assert got == batched, (seed, got, batched)
            seen.add(got)
    assert len(seen) > 1  # the replayed fits differ in output


# ----------------------------------------------------------------- design S
S_PARAMS = dict(epsilon=1.0, delta=1e-6, n_trees=K_S, n_leaves=K1, max_switches=1, eta=0.25,
                query="frequency")


def _design_s():
    first = [(_leaf(i, 0), 0, 1) for i in range(K_S)]
    complete = [(_leaf(i, 2), 0, 1) for i in range(K_S)]
    tail = [(_leaf(0, 1), 1, -1)] * 10
    d0 = first + complete + tail
    d1 = [*first, *complete[:-1], (_leaf(K_S - 1, 2), 1, -1), *tail]
    return _stream(d0), _stream(d1), 2 * K_S - 1


class PlannedCompetitor(Planned):
    """The practical preset's competitor query with a threshold planted for 8 trees (the
    preset's own threshold needs hundreds): while h = A(∅) the query is 2·cnt(B), so a
    threshold of 15 fires once more than 7.5 trees hold B."""

    def _resolve(self, learner):
        p = super()._resolve(learner)
        return dataclasses.replace(p, threshold_count=15.0, threshold=15.0 / p.n_trees)


C_PARAMS = dict(S_PARAMS, query="competitor")


def _first_switch_sampler(cls, params):
    def sample(data, n, rng):
        X, y, plan = data
        out = np.full(n, -1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)
            for i, seed in enumerate(rng.integers(2**32, size=n)):
                est = cls(hypothesis_class=_FlipLearner(), random_state=int(seed), **params)
                est.leaf_plan = plan
                est.fit(X, y)
                rounds = est._hist_sparse.switch_rounds
                out[i] = rounds[0] if rounds else -1
        return out

    return sample


def test_design_s_moves_the_list_as_intended():
    (X, y, plan), (X1, y1, plan1), r = _design_s()
    est = Planned(hypothesis_class=_FlipLearner(), random_state=0, **dict(S_PARAMS,
                                                                           max_switches=50))
    est.leaf_plan = plan
    est.partial_fit(X[: r + 1], y[: r + 1], classes=[0, 1])
    assert (est._forest.out_hid == est._forest._keys["B"]).all()
    other = Planned(hypothesis_class=_FlipLearner(), random_state=0,
                    **dict(S_PARAMS, max_switches=50))
    other.leaf_plan = plan1
    other.partial_fit(X1[: r + 1], y1[: r + 1], classes=[0, 1])
    assert np.count_nonzero(other._forest.out_hid == other._forest._keys["A"]) == 1
    assert isinstance(_FlipLearner(), MistakeBoundedLearner)


@pytest.mark.parametrize("query", ["frequency", "competitor"])
def test_dp_soa_sparse_vector_audit_passes(query):
    # the competitor query (practical preset) on the same streams: 8 vs 7 trees on B at
    # the differing row, with a threshold planted for 8 trees (PlannedCompetitor)
    cls, params = (Planned, S_PARAMS) if query == "frequency" else (PlannedCompetitor,
                                                                    C_PARAMS)
    d0, d1, r = _design_s()
    result = audit_mechanism(_batched_sampler(cls, params, 0), d0, d1, n_samples=800,
                             events=[lambda out: out == r], alpha=ALPHA, delta=1e-6,
                             random_state=1 if query == "frequency" else 7)
    assert result.epsilon_lower_bound <= params["epsilon"], str(result)


def test_dp_soa_without_query_noise_is_caught():
    d0, d1, r = _design_s()
    sample = _batched_sampler(_with(_SparseNoQueryNoise), S_PARAMS, 0)
    result = audit_mechanism(sample, d0, d1, n_samples=800, events=[lambda out: out == r],
                             alpha=ALPHA, delta=1e-6, random_state=2)
    assert result.epsilon_lower_bound > S_PARAMS["epsilon"], str(result)


# ----------------------------------------------------------------- design H
H_PARAMS = dict(epsilon=2.0, delta=0.05, n_trees=K_H, n_leaves=K1, max_switches=1, eta=0.25,
                query="frequency")


def _tau():
    # the histogram the estimator runs (its split comes from its accounting)
    p = Planned(hypothesis_class=_FlipLearner(), **H_PARAMS)._resolve(_FlipLearner())
    hs = HistSparse(H_PARAMS["epsilon"], H_PARAMS["delta"], K_H, H_PARAMS["eta"], 1,
                    initial=0, split=(p.svt_epsilon, p.hist_epsilon, p.hist_delta),
                    random_state=0)
    return hs._hist._threshold(K_H)


def _design_h():
    tau = _tau()
    b_trees, bottom_trees = range(tau), range(tau, K_H)
    first = ([(_leaf(i, 0), 0, 1) for i in b_trees]
             + [(_leaf(i, 0), 1, 1) for i in bottom_trees])
    rest = ([(_leaf(i, 2), 0, 1) for i in b_trees[1:]]
            + [(_leaf(i, 2), 1, 1) for i in bottom_trees])
    tail = [(_leaf(0, 1), 1, -1)] * 20
    d0 = [*first, (_leaf(0, 2), 0, 1), *rest, *tail]
    d1 = [*first, (_leaf(0, 2), 1, 1), *rest, *tail]
    return _stream(d0), _stream(d1)


def _released_sampler(cls):
    def sample(data, n, rng):
        X, y, plan = data
        out = np.zeros(n, dtype=int)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)
            for i, seed in enumerate(rng.integers(2**32, size=n)):
                est = cls(hypothesis_class=_FlipLearner(), random_state=int(seed), **H_PARAMS)
                est.leaf_plan = plan
                est.fit(X, y)
                out[i] = est._hypothesis.hypothesis_key() == "B"
        return out

    return sample


def test_design_h_is_tight():
    tau = _tau()
    assert 2 <= tau <= K_H - 4  # B can be released; the B rows keep the query ≤ τ/k₂
    (X, y, plan), (X1, y1, plan1) = _design_h()
    for data, n_b in [((X, y, plan), tau), ((X1, y1, plan1), tau - 1)]:
        est = Planned(hypothesis_class=_FlipLearner(), random_state=0,
                      **dict(H_PARAMS, max_switches=50))
        est.leaf_plan = data[2]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)
            est.fit(data[0], data[1])
        keys = est._forest._keys
        assert np.count_nonzero(est._forest.out_hid == keys.get("B", -1)) == n_b
        assert np.count_nonzero(est._forest.out_hid == 0) == K_H - n_b


def test_dp_soa_histogram_audit_passes():
    d0, d1 = _design_h()
    result = audit_mechanism(_batched_sampler(Planned, H_PARAMS, 1), d0, d1, n_samples=800,
                             events=[lambda out: out == 1], alpha=ALPHA,
                             delta=H_PARAMS["delta"], random_state=3)
    assert result.epsilon_lower_bound <= H_PARAMS["epsilon"], str(result)


def test_dp_soa_with_noiseless_histogram_is_caught():
    d0, d1 = _design_h()
    result = audit_mechanism(_batched_sampler(_with(_SparseNoiselessHistogram), H_PARAMS, 1),
                             d0, d1,
                             n_samples=800, events=[lambda out: out == 1], alpha=ALPHA,
                             delta=H_PARAMS["delta"], random_state=4)
    assert result.epsilon_lower_bound > H_PARAMS["epsilon"], str(result)


@pytest.mark.slow
def test_dp_soa_audits_more_samples():
    d0, d1, r = _design_s()
    result = audit_mechanism(_first_switch_sampler(Planned, S_PARAMS), d0, d1,
                             n_samples=20000, events=[lambda out: out == r], alpha=ALPHA,
                             delta=1e-6, random_state=5)
    assert result.epsilon_lower_bound <= S_PARAMS["epsilon"], str(result)
    d0, d1 = _design_h()
    result = audit_mechanism(_released_sampler(Planned), d0, d1, n_samples=20000,
                             events=[lambda out: out == 1], alpha=ALPHA,
                             delta=H_PARAMS["delta"], random_state=6)
    assert result.epsilon_lower_bound <= H_PARAMS["epsilon"], str(result)
