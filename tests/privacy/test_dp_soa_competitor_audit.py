"""Audit of DP-SOA's competitor-aware sparse-vector query (CompetitorHistSparse), with the
broken twin that uses Alg. 2's sensitivity 1/k for it.

The deviation from Golowich & Livni's Alg. 2 is the query Q = (max_{g ∉ {⊥, h, u}} cnt(g)
− cnt(h))/k and its sensitivity 2/k (lemma in the class docstring). The lemma is checked
exhaustively on random lists; the sparse vector the class builds (``_make_svt``) is then
audited on the query sequence that makes a one-position change count twice: in D the
released h holds 4 of k = 8 positions and its competitor 4 for r rounds, then the
competitor leads by 2 positions' worth (one position moved); D′ swaps the two lists.
Event: "first ⊤ exactly at round r". Computed exactly for this design (ε_svt = 4,
threshold 2 trees): ln P_D′/P_D ≈ 3.6 ≤ 4 with sensitivity 2/k, ≈ 6.0 with 1/k.
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


def _mechanism(cls):
    return cls(EPS_SVT, 1e-6, K, 0.25, 1, initial=H, undecided=UNDECIDED, ignore=BOTTOM,
               threshold_count=THRESHOLD, split=(EPS_SVT, 1.0, 1e-6), random_state=0)


def _first_fire_sampler(cls):
    mech = _mechanism(cls)

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
    assert mech._query(data) * K == 2.0  # A(∅) trees do not hold h up, ⊥ never competes


def test_threshold_covers_the_histogram_and_the_noise():
    low = competitor_threshold(50, 1.0, 1, 10**3)
    assert low > 2 * 50 + 2
    assert competitor_threshold(50, 1.0, 1, 10**6) > low  # longer horizon, more margin
    assert competitor_threshold(50, 1.0, 2, 10**3) > low  # larger cutoff, more noise


@pytest.mark.parametrize("cls, caught", [(CompetitorHistSparse, False),
                                         (_HalfSensitivity, True)])
def test_competitor_sparse_vector_audit(cls, caught):
    result = audit_mechanism(_first_fire_sampler(cls), (EVEN, LEAD), (LEAD, EVEN),
                             n_samples=8000, events=[lambda out: out == ROUNDS],
                             alpha=ALPHA, delta=1e-6, random_state=1)
    assert (result.epsilon_lower_bound > EPS_SVT) is caught, str(result)
