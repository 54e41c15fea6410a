"""Privacy audit of the DP decision list's released (rule × class) histogram.

``predict_proba`` reads the noisy counts the release publishes (lemma in
:mod:`skdp.decision_list._frequencies`): given the rules, adding a row moves one cell
by its weight w ∈ [0, 1], and every cell gets discrete Laplace noise of scale 1/ε_h,
ε_h = ε̂/2. The sampler runs the estimator's own release routine (rule step, then the
histogram) and outputs the noisy count of the cell the added row lands in.

The pair: D′ = D plus a row on which no feature fires, labelled 1. With positive
literals only, no rule covers it, so the rule step sees identical scores on D and D′
and the row only reaches the default region's count of label 1; that count is 2 in D
(the rows are symmetric in the two features) and 3 in D′ whatever rule is chosen. The
output's distribution is therefore ε_h-DP by the lemma alone, and the audit holds the
estimator to ε_h (not just to the release's total ε).

Because that cell's exact count does not depend on the rule, the output is the count
plus one draw of the estimator's histogram noise. The sampler (:func:`_sampler`) runs the
estimator's release routine a few times, reads the exact counts it hands to its own
``_release_counts`` (checking the cell is the same whichever rule was drawn), then draws
all n outputs in ONE call of that same ``_release_counts`` — the estimator's (or the
twin's) noise, vectorised. Same output law as n whole fits, ~100× less CPU.

Broken twins the same audits catch: counts released without noise, noise of half the
scale (sensitivity taken as 1/2), and weights not clipped to [0, 1] (a weight-5 row
moves its cell by 5).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from _decision_list_audit_runs import D0, D1, NoiselessCounts, private_run, private_sampler

from skdp.audit import audit_mechanism
from skdp.decision_list import DPDecisionListClassifier
from skdp.decision_list._accounting import HISTOGRAM_WEIGHT
from skdp.mechanisms import geometric_mechanism

# max_rules=1, δ = 0: basic composition, ε̂ = ε/1.5, ε_h = ε̂/2 = ε/3.
EPSILON = 3.0
EPS_H = HISTOGRAM_WEIGHT * EPSILON / (1 + HISTOGRAM_WEIGHT)
EVENTS = [(lambda out, t=t: out[:, 0] >= t) for t in (3, 4, 5)] + [
    (lambda out, t=t: out[:, 0] <= t) for t in (1, 2)]

# Weighted pair: the same rows with fractional weights; D′ adds the row with weight 5,
# which the estimator clips to 1. Default-region weight of label 1: 1.8 → 2 in D, 3 in D′.
W0 = np.array([0.5, 1.0, 0.3, 1.0, 1.0, 0.8])
D0W = (*D0, W0)
D1W = (*D1, np.r_[W0, 5.0])


def _encode(clf):
    """The released noisy count of (default region, label 1)."""
    return np.array([clf.rule_class_counts_[-1, 1]], dtype=np.int64)


def _whole_fit_sampler(clf):
    return private_sampler(clf, _encode, 1)


RELEASES_CHECKED = 30  # whole releases per sample call whose default cell is compared


def _sampler(clf):
    """n outputs: the default cell's exact count (from the estimator's own release),
    plus the estimator's ``_release_counts`` noise, drawn for all n in one call."""

    def sample(data, n, rng):
        X, y = data[:2]
        w = data[2] if len(data) > 2 else None
        seen = []
        noise = clf._release_counts  # bound: the estimator's or the twin's

        def record(counts, unit, step_epsilon, rng_):
            seen.append((counts[-1, 1], unit, step_epsilon))
            return noise(counts, unit, step_epsilon, rng_)

        clf.classes_ = np.array([0, 1])
        clf._release_counts = record
        try:
            for _ in range(RELEASES_CHECKED):  # real releases: rules drawn with real noise
                private_run(clf, sp.csr_matrix(X), y, rng, w)
        finally:
            del clf._release_counts
        # the pair's property, on every rule these releases drew: one exact cell value
        assert len(set(seen)) == 1, seen
        cell, unit, step_epsilon = seen[0]
        return noise(np.full((n, 1), cell, dtype=np.int64), unit, step_epsilon, rng)

    return sample


def _clf(cls=DPDecisionListClassifier):
    return cls(epsilon=EPSILON, delta=0.0, max_rules=1, accounting="basic")


class _HalfScale(DPDecisionListClassifier):
    """Broken: the histogram's noise has half the scale its sensitivity needs."""

    def _release_counts(self, counts, unit, step_epsilon, rng):
        rows = (counts + unit // 2) // unit
        return geometric_mechanism(rows, 2.0 * step_epsilon, sensitivity=1, random_state=rng)


class _Unclipped(DPDecisionListClassifier):
    """Broken: sample weights are not clipped to [0, 1]."""

    @staticmethod
    def _weights(w, *, private):
        unit = 2**20
        return (None, 1) if w is None else (np.floor(w * unit).astype(np.int64), unit)


def test_the_pair_reaches_only_the_default_cell():
    for data, expected in ((D0, 2), (D1, 3), (D0W, 2), (D1W, 3)):
        out = _whole_fit_sampler(NoiselessCounts(epsilon=EPSILON, delta=0.0, max_rules=1))(
            data, 20, np.random.default_rng(0))
        assert np.all(out[:, 0] == expected)


@pytest.mark.parametrize("weighted", [False, True])
def test_histogram_audit(weighted):
    d0, d1 = (D0W, D1W) if weighted else (D0, D1)
    result = audit_mechanism(_sampler(_clf()), d0, d1, n_samples=6_000, events=EVENTS)
    print(result)
    assert result.epsilon_lower_bound <= EPS_H, result


@pytest.mark.parametrize(
    "broken, weighted",
    [(NoiselessCounts, False), (_HalfScale, False), (_Unclipped, True)],
)
def test_negative_controls(broken, weighted):
    d0, d1 = (D0W, D1W) if weighted else (D0, D1)
    result = audit_mechanism(_sampler(_clf(broken)), d0, d1, n_samples=6_000, events=EVENTS)
    print(result)
    assert result.epsilon_lower_bound > EPS_H, result
