"""Audit of DP-SOA's practical forest: flat trees (k₁ = 1) of anchored copies, with the
broken twin whose rows reach every tree instead of one.

The practical preset's deviation from Alg. 1 is its forest: each tree is one copy of the
anchored learner (the hypothesis of its version space nearest to the public A(∅)) on its
own rows, with no tournament. The privacy argument is the paper's: one row changes the
sequence of one tree, each tree's output is a deterministic function of its sequence and
public data, so the list L_t changes in at most one position. The structural test checks
that on random neighbouring streams round by round; the audit runs the shipped estimator
(``fit``, competitor query, planted threshold) on thresholds over 4 points, with k₂ = 16
trees and the leaf plan fixed (a stronger test of the same claim, which holds for every
π). D: the first row (0, +1) moves its tree from A(∅) (threshold 2) to threshold 0; D′:
that row is (3, +1), which moves nothing; a tail of such rows follows. Event: the sparse
vector fires at round 0. The shipped forest moves the query by 2 trees' worth (within the
noise's calibration); the twin's row moves all 16 trees and is caught.
"""

import dataclasses
import warnings

import numpy as np
import pytest

from skdp.audit import audit_mechanism
from skdp.exceptions import PrivacyWarning
from skdp.hypotheses.littlestone import ThresholdVersionSpace
from skdp.online import DPSOAClassifier
from skdp.online._dp_soa_forest import Forest

ALPHA, EPS, K, N, THRESHOLD = 1e-6, 3.0, 16, 4, 16.0
PARAMS = dict(epsilon=EPS, delta=1e-6, n_trees=K, max_switches=1, classes=[0, 1])


class _EveryTreeForest(Forest):
    """Broken twin: a row updates the copy of every tree (no partition of the stream)."""

    def update(self, leaf, x, y):
        changed = False
        for tree in range(self.k2):
            changed |= super().update(tree * self.k1, x, y)
        return changed


class Planned(DPSOAClassifier):
    """π fixed to ``leaf_plan``; the competitor threshold planted at ``THRESHOLD``."""

    leaf_plan = None

    def _leaves(self, t0, n):
        return self.leaf_plan[t0:t0 + n]

    def _resolve(self, learner):
        p = super()._resolve(learner)
        return dataclasses.replace(p, threshold_count=THRESHOLD,
                                   threshold=THRESHOLD / p.n_trees)


class PlannedEveryTree(Planned):
    _forest_class = _EveryTreeForest


def _streams(n_tail=2):
    plan = np.arange(n_tail + 1) % K
    tail = [3] * n_tail
    x0, x1 = np.array([0, *tail]), np.array([3, *tail])
    return (x0[:, None], np.ones(x0.size, dtype=int), plan), (x1[:, None],
                                                              np.ones(x1.size, dtype=int), plan)


def _fit(cls, data, seed):
    X, y, plan = data
    est = cls(hypothesis_class=ThresholdVersionSpace(N), random_state=int(seed), **PARAMS)
    est.leaf_plan = plan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        est.fit(X, y)
    return est


def _first_fire_sampler(cls):
    def sample(data, n, rng):
        out = np.full(n, -1)
        for i, seed in enumerate(rng.integers(2**32, size=n)):
            rounds = _fit(cls, data, seed)._hist_sparse.switch_rounds
            out[i] = rounds[0] if rounds else -1
        return out

    return sample


def test_defaults_are_flat_anchored_trees():
    est = _fit(Planned, _streams()[0], 0)
    assert (est.parameters_.n_leaves, est.parameters_.base_learner) == (1, "anchored")
    assert est._forest.out_hid[0] != est._forest.out_hid[1]  # the first row moved tree 0
    twin = _fit(PlannedEveryTree, _streams()[0], 0)
    assert len(set(twin._forest.out_hid.tolist())) == 1 and (
        twin._forest.out_hid[0] == est._forest.out_hid[0])  # … and every tree in the twin


def test_one_row_changes_one_position_of_the_list(rng):
    """Neighbouring random streams (one row replaced): the lists differ in ≤ 1 position
    after every round, for the shipped forest (the twin's differ in many)."""
    worst, n_domain = {Planned: 0, PlannedEveryTree: 0}, 64
    for trial in range(12):
        n = 40
        x, plan = rng.integers(0, n_domain, size=n), rng.integers(0, K, size=n)
        target = int(rng.integers(0, n_domain + 1))
        y = (x >= target).astype(int)
        i = int(rng.integers(4))  # early, so that the twin's copies still move on it
        x1, y1 = x.copy(), y.copy()
        x1[i] = rng.integers(0, n_domain)  # realizable, or (odd trials) not
        y1[i] = x1[i] >= target if trial % 2 == 0 else rng.integers(0, 2)
        for cls in worst:
            ests = [cls(hypothesis_class=ThresholdVersionSpace(n_domain), random_state=0,
                        **dict(PARAMS, max_switches=50)) for _ in range(2)]
            for est in ests:
                est.leaf_plan = plan
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrivacyWarning)
                for t in range(n):
                    for est, xs, ys in ((ests[0], x, y), (ests[1], x1, y1)):
                        est.partial_fit(xs[t:t + 1, None], ys[t:t + 1], classes=[0, 1])
                    keys = [[est._forest._hid_key[h] for h in est._forest.out_hid.tolist()]
                            for est in ests]
                    diff = sum(a != b for a, b in zip(*keys, strict=True))
                    worst[cls] = max(worst[cls], diff)
    assert worst[Planned] == 1 and worst[PlannedEveryTree] > 1


@pytest.mark.parametrize("cls, caught", [(Planned, False), (PlannedEveryTree, True)])
def test_flat_forest_audit(cls, caught):
    d0, d1 = _streams()
    result = audit_mechanism(_first_fire_sampler(cls), d0, d1, n_samples=1500,
                             events=[lambda out: out == 0], alpha=ALPHA, delta=1e-6,
                             random_state=11)
    assert (result.epsilon_lower_bound > EPS) is caught, str(result)
