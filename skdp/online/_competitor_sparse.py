"""HistSparse with a competitor-aware sparse-vector query (skdp's variant of Golowich &
Livni's Alg. 2, used by DP-SOA's practical preset).

Alg. 2 asks Q_t = 1 − freq_{L_t}(h) ("has the released h become rare?"). In DP-SOA's list
most of the k trees can be ⊥ or sit on hypotheses held by one or two trees each, so that
query fires although no hypothesis is releasable; the histogram then releases nothing, the
hypothesis stays, and the switch still counts toward the cutoff c (measured: every run at
the old defaults halted on A(∅)). This variant asks instead

    Q_t = (max_{g ∉ {⊥, h}} cnt_{L_t}(g) − cnt_{L_t}(h)) / k,

"is there a competitor g that the histogram would release instead of h?" (trees still on
the public A(∅) count for nobody; while h is A(∅) itself the query is 2·max cnt(g)/k, the
same sensitivity), and compares it with a threshold in count units chosen so that a firing
test is followed by a real switch (see :func:`competitor_threshold`).
"""

import math
from dataclasses import replace

import numpy as np

from ..mechanisms import AboveThreshold, HistSparse

__all__ = ["CompetitorHistSparse", "competitor_threshold", "lyu_threshold_share"]


def lyu_threshold_share(max_switches):
    """Lyu, Su & Li's utility-optimal share ε₁/ε = 1/(1 + (2c)^{2/3}) of the sparse vector's
    budget spent on its threshold (any share gives the same ε)."""
    return 1.0 / (1.0 + (2.0 * max_switches) ** (2.0 / 3.0))


def competitor_threshold(hist_noise_bound, hist_noise_scale, svt_epsilon, max_switches,
                         horizon, beta=0.05):
    """Threshold of the competitor query, in count units (public parameters only).

    The target is a query value of 2R with R = A + 2 + b_h·ln(1/β): while h is A(∅) the
    query is 2·cnt(g), so g has R trees, and a count of R clears the stable histogram's
    release threshold A + 2 despite its noise (scale b_h, one-sided tail e^{−z/b_h})
    except with probability β; once h is a released hypothesis the query is the lead
    cnt(g) − cnt(h) ≥ 2R > 2A, so g is released and beats h's noisy count (|Z| ≤ A).
    The sparse vector's noise on the query has scale b = 2c·2/((1 − s)ε_svt) counts
    (sensitivity 2, share s of :func:`lyu_threshold_share`); the margin b·ln(T/β) keeps
    the T noisy queries of a horizon from firing below 2R except with probability about
    β, and the threshold noise (scale 2/(sε_svt)) gets ln(1/β) of its own. Utility only:
    the privacy proof holds for any threshold.
    """
    share = lyu_threshold_share(max_switches)
    query_scale = 4.0 * max_switches / ((1.0 - share) * svt_epsilon)
    threshold_scale = 2.0 / (share * svt_epsilon)
    release = hist_noise_bound + 2 + hist_noise_scale * math.log(1.0 / beta)
    return (2 * release + query_scale * math.log(horizon / beta)
            + threshold_scale * math.log(1.0 / beta))


class CompetitorHistSparse(HistSparse):
    """HistSparse whose sparse vector asks "is a competitor of h releasable?".

    Same parameters as :class:`~skdp.mechanisms.HistSparse` (η only sets the histogram's
    threshold max(A + 2, ⌈ηk/2⌉)), plus ``threshold_count`` and ``undecided`` (a public
    element, default ``initial`` — DP-SOA's A(∅), the output of trees that have not
    learned yet): with m = max_{g ∉ {⊥, h, u}} cnt(g), the query is

        Q_t = (m − cnt(h))/k  if h ≠ u,        Q_t = 2m/k  if h = u,

    answered ⊤ when Q_t + ν ≥ ``threshold_count``/k + ρ, and the histogram's mode is
    taken among the released elements other than ⊥ and u. So trees still on A(∅) count
    neither for h nor against it, and A(∅) is never re-released. While h = u the query
    has sensitivity 1/k, and doubling it spends the sparse vector's noise (calibrated to
    2/k) on half the count — the first release, the only one at c = 1, needs half the
    trees it would otherwise. The sparse vector is :class:`~skdp.mechanisms.AboveThreshold`
    with sensitivity 2/k, cutoff c and Lyu et al.'s threshold share; on ⊤ a stable
    histogram of L_t releases its mode as in Alg. 2.

    Privacy
    -------
    Lemma. If neighbouring inputs give lists L_t, L′_t that differ in at most one position
    for every t (the lists may depend on past outputs), then |Q_t − Q′_t| ≤ 2/k.
    Proof. The case (h = u or not) is the same for both inputs: h is the released element,
    a function of past outputs, and u is a constant. Changing one position moves one
    element from item a to item b: cnt(a) drops by one and cnt(b) rises by one, every
    other count is unchanged. Hence cnt(h) moves by at most 1, and m moves by at most 1
    (a maximum of functions each moving by ≤ 1 moves by ≤ 1; an empty maximum is read as
    0, and a newly non-empty one is a count ≤ 1, i.e. within 1 of 0). If h ≠ u,
    Q_t = (m − cnt(h))/k moves by ≤ 2/k; if h = u, Q_t = 2m/k moves by ≤ 2/k. ∎ Choosing
    the mode among released elements other than ⊥ and u is post-processing of the
    histogram.
    With that sensitivity, :class:`~skdp.mechanisms.AboveThreshold` is ε_svt-DP for any
    number of adaptively chosen queries and c positives (Lyu, Su & Li 2017, Thm 2; any
    threshold share), each of the c histograms is (ε_hist, δ_hist)-DP, and the transcript
    composes to the same (ε, δ) as :class:`~skdp.mechanisms.HistSparse` (the caller's
    ``split``). The threshold is a function of public parameters. Using sensitivity 1/k
    here (Alg. 2's), or doubling the query while h = u without this lemma's case split
    (4m/k, or 2m/k with the 1/k noise), would break the guarantee: ``tests/privacy``
    audits this class in both cases and catches those broken twins.

    References
    ----------
    N. Golowich, R. Livni. Littlestone classes are privately online learnable. NeurIPS
    2021, Alg. 2, Lemma 5.3. M. Lyu, D. Su, N. Li. Understanding the sparse vector
    technique for differential privacy. PVLDB 10(6), 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.online._competitor_sparse import CompetitorHistSparse
    >>> hs = CompetitorHistSparse(8.0, 1e-3, n_items=200, eta=0.25, max_switches=1,
    ...                           initial=0, ignore=-1, threshold_count=120, random_state=0)
    >>> hs.process(np.r_[np.zeros(150), np.ones(50)].astype(int), 20)  # 2·50 < 120: no
    (20, False)
    >>> hs.process(np.r_[np.zeros(20), np.ones(180)].astype(int), 20)  # 1 leads: switch
    (1, True)
    >>> hs.current
    1
    """

    #: Sensitivity of the query, in units of 1/k (Lemma above).
    query_sensitivity = 2.0

    def __init__(self, epsilon, delta, n_items, eta, max_switches, *, initial,
                 threshold_count, undecided=None, ignore=None, split=None,
                 random_state=None):
        self.undecided = initial if undecided is None else undecided
        self.threshold_count = float(threshold_count)
        if not math.isfinite(self.threshold_count):
            raise ValueError("threshold_count must be finite.")
        super().__init__(epsilon, delta, n_items, eta, max_switches, initial=initial,
                         ignore=ignore, split=split, random_state=random_state)
        self.threshold = self.threshold_count / self.n_items

    def _make_svt(self, rng):
        return AboveThreshold(self.threshold_count / self.n_items, self.svt_epsilon,
                              sensitivity=self.query_sensitivity / self.n_items,
                              max_positives=self.max_switches,
                              threshold_share=lyu_threshold_share(self.max_switches),
                              random_state=rng)

    def _query(self, data):
        items, counts = np.unique(np.asarray(data), return_counts=True)
        rivals = (items != self.current) & (items != self.undecided)
        if self.ignore is not None:
            rivals &= items != self.ignore
        best = int(counts[rivals].max()) if rivals.any() else 0
        if self.current == self.undecided:
            return 2 * best / self.n_items  # sensitivity 1/k, doubled (lemma above)
        mine = counts[items == self.current]
        return (best - (int(mine[0]) if mine.size else 0)) / self.n_items

    def _mode(self, release):
        keep = np.array([item != self.undecided for item in release.items.tolist()],
                        dtype=bool)
        return super()._mode(replace(release, items=release.items[keep],
                                     counts=release.counts[keep]))
