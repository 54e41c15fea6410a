"""Audit of DP-SOA's competitor-aware sparse-vector query (CompetitorHistSparse), with the
broken twins that use Alg. 2's sensitivity 1/k for it, or double the query whatever h is.

The deviation from Golowich & Livni's Alg. 2 is the query Q = (max_{g ∉ {⊥, h, u}} cnt(g)
− cnt(h))/k and its sensitivity 2/k (lemma in the class docstring). The lemma is checked
exhaustively on random lists; the sparse vector the class builds (``_make_svt``) is then
audited on the query sequence that makes a one-position change count twice: in D the
released h holds 4 of k = 8 positions and its competitor 4 for r rounds, then the
competitor leads by 2 positions' worth (one position moved); D′ swaps the two lists.
Event: "first ⊤ exactly at round r". Computed exactly for this design (ε_svt = 4,
threshold 2 trees): ln P_D′/P_D ≈ 3.6 ≤ 4 with sensitivity 2/k, ≈ 6.0 with 1/k. While h is
the undecided A(∅) the query is 2·max cnt(g)/k (the lemma's second case): the same audit
runs on lists where the rival goes from 2 to 3 trees, at the same distances from the
threshold; doubling the query also when h ≠ u (4/k per position) is caught there.
"""

import numpy as np
import pytest

from skdp.audit import audit_mechanism
from skdp.online._competitor_sparse import CompetitorHistSparse, competitor_threshold

ALPHA = 1e-6
EPS_SVT, K, ROUNDS, THRESHOLD = 4.0, 8, 10, 2.0
H, RIVAL, UNDECIDED, BOTTOM = 2, 3, 1, 0
EVEN = np.array([H] * 4 + [RIVAL] * 4)
LEAD = np.array([H] * 3 + [RIVAL] * 5)  # one position moved from h to its rival


class _HalfSensitivity(CompetitorHistSparse):
    """Broken twin: Alg. 2's sensitivity 1/k for a query that moves by 2/k."""

    query_sensitivity = 1.0


def _mechanism(cls, initial=H, threshold=THRESHOLD):
    return cls(EPS_SVT, 1e-6, K, 0.25, 1, initial=initial, undecided=UNDECIDED,
               ignore=BOTTOM, threshold_count=threshold, split=(EPS_SVT, 1.0, 1e-6),
               random_state=0)


def _first_fire_sampler(cls, initial=H, threshold=THRESHOLD):
    mech = _mechanism(cls, initial, threshold)

    def sample(data, n, rng):
        first, then = data
        queries = np.r_[np.full(ROUNDS, mech._query(first)), mech._query(then)]
        out = np.full(n, -1)
        for i, seed in enumerate(rng.integers(2**32, size=n)):
            answers = mech._make_svt(np.random.default_rng(int(seed))).process(
                queries, stop_after_positive=True)
            if answers.size and answers[-1]:
                out[i] = answers.size - 1
        return out

    return sample


def test_query_moves_by_at_most_two_trees(rng):
    mech = _mechanism(CompetitorHistSparse)
    worst = 0.0
    for _ in range(3000):
        data = rng.integers(0, 5, size=K)
        other = data.copy()
        other[rng.integers(K)] = rng.integers(0, 5)
        mech.current = int(rng.integers(0, 5))
        worst = max(worst, abs(mech._query(data) - mech._query(other)) * K)
    assert worst == 2.0  # the lemma's bound, and it is attained
    mech.current = H
    assert mech._query(EVEN) == 0.0 and mech._query(LEAD) * K == 2.0


def test_undecided_trees_count_for_nobody():
    mech = _mechanism(CompetitorHistSparse)
    mech.current = UNDECIDED
    data = np.array([UNDECIDED] * 5 + [RIVAL] * 2 + [BOTTOM])
    # A(∅) trees do not hold h up, ⊥ never competes; while h = A(∅) the query is 2·cnt
    assert mech._query(data) * K == 4.0


def test_query_moves_by_at_most_two_trees_while_h_is_undecided(rng):
    mech = _mechanism(CompetitorHistSparse)
    mech.current = UNDECIDED
    worst = 0.0
    for _ in range(3000):
        data = rng.integers(0, 5, size=K)
        other = data.copy()
        other[rng.integers(K)] = rng.integers(0, 5)
        worst = max(worst, abs(mech._query(data) - mech._query(other)) * K)
    assert worst == 2.0  # 2·max cnt moves by 2 (the lemma's h = u case), and it is attained


def test_threshold_covers_the_histogram_and_the_noise():
    low = competitor_threshold(50, 6.0, 1.0, 1, 10**3)
    assert low > 2 * (50 + 2)  # a firing query of 2R: R trees clear the histogram's A + 2
    assert competitor_threshold(50, 6.0, 1.0, 1, 10**6) > low  # longer horizon, more margin
    assert competitor_threshold(50, 6.0, 1.0, 2, 10**3) > low  # larger cutoff, more noise
    assert competitor_threshold(50, 9.0, 1.0, 1, 10**3) > low  # noisier histogram


# h = u (the first release): the rival holds 2 trees, then 3 (one position moved from u);
# the doubled query goes 4 → 6 trees' worth against a threshold of 6 — the same distances
# to the threshold as the h ≠ u design, so the same exact ln-ratios (3.6 and 6.0).
U_EVEN = np.array([UNDECIDED] * 6 + [RIVAL] * 2)
U_LEAD = np.array([UNDECIDED] * 5 + [RIVAL] * 3)


class _AlwaysDoubled(CompetitorHistSparse):
    """Broken twin: doubles the query whatever h is — (m − cnt(h)) moves by 2/k when
    h ≠ u, so 2(m − cnt(h))/k moves by 4/k under noise calibrated for 2/k."""

    def _query(self, data):
        q = super()._query(data)
        return q if self.current == self.undecided else 2 * q


@pytest.mark.parametrize("design", ["h released", "h = A(∅)"])
@pytest.mark.parametrize("cls, caught", [(CompetitorHistSparse, False),
                                         (_HalfSensitivity, True), (_AlwaysDoubled, None)])
def test_competitor_sparse_vector_audit(cls, caught, design):
    first, then, initial, threshold = ((EVEN, LEAD, H, THRESHOLD) if design == "h released"
                                       else (U_EVEN, U_LEAD, UNDECIDED, 3 * THRESHOLD))
    if caught is None:  # the always-doubled twin differs from the shipped query at h ≠ u only
        caught = design == "h released"
    result = audit_mechanism(_first_fire_sampler(cls, initial, threshold), (first, then),
                             (then, first), n_samples=8000,
                             events=[lambda out: out == ROUNDS], alpha=ALPHA, delta=1e-6,
                             random_state=1)
    assert (result.epsilon_lower_bound > EPS_SVT) is caught, str(result)
