"""HistSparse (Golowich & Livni 2021, Alg. 2): publish a frequent element of a stream of lists.

Each round brings a list L_t of k elements (k public) that changes in at most one position
between neighbouring datasets. The mechanism keeps a released element h and, every round,
asks the sparse-vector query Q_t = 1 − freq_{L_t}(h) ("has h become rare?"). Only when the
noisy answer crosses θ = 1 − 3η/32 does it pay for a stable histogram of L_t and release its
most frequent element as the new h; after c such switches it aborts.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._streams import child_generator
from .._validation import (
    RandomStateLike,
    check_delta,
    check_epsilon,
    check_generator,
    check_positive_int,
)
from ..exceptions import MechanismHaltedError
from .histogram import HistogramRelease, StableHistogram
from .sparse_vector import AboveThreshold

__all__ = ["HistSparse"]


class HistSparse:
    """Sparse vector over 1-sensitive lists, with a stable histogram at each switch.

    Golowich & Livni's Alg. 2. Round t answers the query Q_t = 1 − freq_{L_t}(h_{t−1})
    (sensitivity 1/k: neighbouring lists differ in one of k positions) with an
    :class:`~skdp.mechanisms.AboveThreshold` of cutoff c and threshold θ = 1 − 3η/32.
    On ⊤ it releases h_t = the element with the largest noisy count in
    :class:`~skdp.mechanisms.StableHistogram` ``(ε_hist, δ/c, eta=η)`` of L_t (ties
    broken uniformly at random; elements equal to ``ignore`` are never released; when
    nothing is released h stays — post-processing either way). After the c-th switch
    the mechanism halts ("abort").

    The sparse-vector part reuses :class:`~skdp.mechanisms.AboveThreshold` (Lyu, Su & Li
    2017, Alg. 1): the same query noise as the paper's Lap(2σ) = Lap(4c/(kε_svt)), but the
    threshold noise is drawn once at a smaller scale instead of re-drawn at Lap(σ) after
    every ⊤ — a sharper analysis of the same mechanism, with the same ε_svt.

    Parameters
    ----------
    epsilon : float
        Total ε of every answer and release.
    delta : float in (0, 1)
        Total δ (all of it goes to the c histograms, δ/c each).
    n_items : int
        k, the public length of every list.
    eta : float in (0, 1]
        η: the frequency the analysis guarantees for some element of every list. Sets
        θ = 1 − 3η/32 and the histogram threshold ⌈ηk/2⌉.
    max_switches : int
        c, the cutoff: number of histogram releases after which the mechanism halts.
    initial : hashable
        h_0, a public (data-independent) starting element.
    ignore : hashable, optional
        An element never to release (e.g. DP-SOA's ⊥).
    svt_share : float in (0, 1), default=2/3
        Fraction of ε for the sparse vector; the rest is split evenly over the c
        histograms. 2/3 is the paper's ratio (ε for the sparse vector, ε/(2c) per
        histogram), rescaled so that the total is ε.
    split : (float, float, float), optional
        An explicit (ε_svt, ε_hist, δ_hist) that the caller has accounted for within
        (``epsilon``, ``delta``) with a tighter composition than basic (e.g.
        :func:`skdp.accounting.calibrate_plan`); overrides ``svt_share``. The
        mechanism's guarantee is then the caller's accounting of one ε_svt-DP sparse
        vector and c (ε_hist, δ_hist)-DP histograms.
    random_state : None, int or numpy.random.Generator
        Source of randomness.

    Attributes
    ----------
    current : hashable
        The released element h_t.
    n_switches : int
        Histogram releases so far (≤ c).
    n_rounds : int
        Rounds (queries) answered so far.
    switch_rounds : list of int
        The (0-based) rounds whose query was answered ⊤, i.e. that ran a histogram.
    threshold : float
        θ = 1 − 3η/32.
    svt_epsilon, hist_epsilon, hist_delta : float
        The budget split: ε_svt + c·ε_hist = ε, c·δ_hist = δ (or ``split``).
    halted : bool
        True after the c-th switch.

    Privacy
    -------
    (ε, δ)-DP for the whole transcript — the sequence h_1, h_2, … and the rounds at
    which a histogram ran (``switch_rounds``) — against neighbouring inputs whose lists
    differ in at most one position each (the lists may depend on the past outputs):
    adaptive basic composition of the sparse vector (ε_svt-DP for any number of queries
    and c positives, Lyu, Su & Li 2017, Thm 2) with c stable histograms,
    (ε_hist, δ/c)-DP each (:class:`~skdp.mechanisms.StableHistogram`). Golowich & Livni
    2021, Lemma 5.3 (whose proof composes ε for the sparse vector with c histograms at
    ε/(2c): (3ε/2, δ) as written; here the split is rescaled to total ε). The cutoff c is
    enforced: a halted mechanism raises :class:`~skdp.exceptions.MechanismHaltedError`.

    *Which composition theorem.* The sparse vector is one interactive mechanism that
    lives across the whole stream — its threshold noise is drawn once and its state
    persists — while the histograms run in between its answers, on lists chosen after
    seeing earlier outputs. That is a *concurrent* composition, not a sequential one of
    finished mechanisms, and it is covered as follows. Fix neighbouring inputs as a
    private bit b with the lists as adaptively chosen queries. By Vadhan & Zhang 2023
    (every interactive f-DP mechanism is an interactive post-processing of a
    non-interactive f-DP one), the ε_svt-DP sparse vector is a post-processing of
    ε_svt randomised response on b; the transcript is then a post-processing of the
    sequential adaptive composition of that one non-interactive ε_svt-DP mechanism and
    the c non-interactive (ε_hist, δ_hist)-DP histograms, a fixed sequence of
    parameters — exactly the plan ``(PureDP(ε_svt), 1), (ApproxDP(ε_hist, δ_hist), c)``
    that :func:`skdp.online._budget_split.hist_sparse_split` accounts, by basic
    composition (``"paper"``) or by :func:`skdp.accounting.calibrate_plan` (``"tight"``:
    PLD, Rényi, KOV — each a theorem about sequential composition, hence valid here).
    Lyu 2022 proves the same concurrent composition directly for (ε, δ)-DP and Rényi
    DP. DP-SOA (:class:`~skdp.online.DPSOAClassifier`) charges exactly this plan.

    Utility (Lemma 5.3): if every list has an element of frequency ≥ η and
    k ≥ Θ₍₄₎ = Õ(c·ln(T/βδ)/(ηε)), then with probability 1 − 2β, until the abort, every
    h_t has frequency ≥ η/16 in L_t, and at a switch freq(h_{t−1}) ≤ η/8 and
    freq(h_t) ≥ η/4.

    References
    ----------
    N. Golowich, R. Livni. Littlestone classes are privately online learnable.
    NeurIPS 2021, Alg. 2, Lemma 5.3, Thm 5.1.
    M. Lyu, D. Su, N. Li. Understanding the sparse vector technique for differential
    privacy. PVLDB 10(6), 2017.
    X. Lyu. Composition theorems for interactive differential privacy. NeurIPS 2022.
    S. Vadhan, W. Zhang. Concurrent composition theorems for differential privacy.
    STOC 2023.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms import HistSparse
    >>> hs = HistSparse(4.0, 1e-3, n_items=200, eta=0.5, max_switches=2, initial=0,
    ...                 random_state=0)
    >>> hs.process(np.zeros(200, dtype=int), n_rounds=50)  # h = 0 stays frequent
    (50, False)
    >>> hs.process(np.ones(200, dtype=int), n_rounds=50)  # 0 vanished: switch to 1
    (1, True)
    >>> hs.current, hs.n_switches
    (1, 1)
    """

    def __init__(self, epsilon: float, delta: float, n_items: int, eta: float, max_switches: int, *,
                 initial: Hashable, ignore: Hashable | None = None, svt_share: float = 2 / 3,
                 split: tuple[float, float, float] | None = None,
                 random_state: RandomStateLike = None) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        if self.delta <= 0.0:
            raise ValueError("HistSparse needs delta > 0 (the stable histogram is (ε, δ)-DP).")
        self.n_items = check_positive_int(n_items, "n_items")
        eta_f = math.nan if isinstance(eta, bool) else float(eta)
        if not 0.0 < eta_f <= 1.0:
            raise ValueError(f"eta must lie in (0, 1], got {eta!r}.")
        self.eta = eta_f
        self.max_switches = check_positive_int(max_switches, "max_switches")
        share = float(svt_share)
        if not 0.0 < share < 1.0:
            raise ValueError(f"svt_share must lie in (0, 1), got {svt_share!r}.")
        self.svt_share = share
        if split is None:
            split = self.budget_split(self.epsilon, self.delta, self.max_switches, share)
        else:
            svt_eps, hist_eps, hist_delta = split
            split = (check_epsilon(svt_eps, name="split[0]"),
                     check_epsilon(hist_eps, name="split[1]"),
                     check_delta(hist_delta, name="split[2]"))
            if split[2] <= 0.0:
                raise ValueError("HistSparse needs a histogram delta > 0.")
        self.svt_epsilon, self.hist_epsilon, self.hist_delta = split
        self.threshold = 1.0 - 3.0 * self.eta / 32.0
        self.current = initial
        self.ignore = ignore
        # Separate streams: the sparse vector buffers noise ahead, so sharing one
        # generator would make the histogram's draws depend on how rounds are batched.
        parent = check_generator(random_state)
        svt_rng, hist_rng, tie_rng = (  # ephemeral children of an ephemeral parent
            child_generator(parent, seed) for seed in parent.integers(2**63, size=3))
        self._svt = self._make_svt(svt_rng)
        self._hist = self._make_hist(hist_rng)
        self._tie_rng = tie_rng
        self.n_switches = 0
        self.n_rounds = 0
        self.switch_rounds: list[int] = []

    @staticmethod
    def budget_split(epsilon: float, delta: float, max_switches: int,
                     svt_share: float = 2 / 3) -> tuple[float, float, float]:
        """(ε_svt, ε_hist, δ_hist) with ε_svt + c·ε_hist = ε and c·δ_hist = δ."""
        return (svt_share * epsilon, (1.0 - svt_share) * epsilon / max_switches,
                delta / max_switches)

    def _make_svt(self, rng: np.random.Generator) -> AboveThreshold:
        return AboveThreshold(self.threshold, self.svt_epsilon,
                              sensitivity=1.0 / self.n_items,
                              max_positives=self.max_switches, random_state=rng)

    def _make_hist(self, rng: np.random.Generator) -> StableHistogram:
        return StableHistogram(self.hist_epsilon, self.hist_delta, eta=self.eta,
                               random_state=rng)

    @property
    def halted(self) -> bool:
        return self._svt.halted

    def _frequency(self, data: NDArray[Any] | Sequence[Hashable]) -> float:
        if isinstance(data, np.ndarray):
            return np.count_nonzero(data == self.current) / self.n_items
        return sum(1 for item in data if item == self.current) / self.n_items

    def _query(self, data: NDArray[Any] | Sequence[Hashable]) -> float:
        """Q_t = 1 − freq_{L_t}(h) (sensitivity 1/k); variants override it with their own
        sensitivity in :meth:`_make_svt`."""
        return 1.0 - self._frequency(data)

    def _check_list(self, data: Any) -> Any:
        size = data.shape[0] if isinstance(data, np.ndarray) and data.ndim == 1 else None
        if size is None and not isinstance(data, np.ndarray):
            data = list(data)
            size = len(data)
        if size != self.n_items:
            raise ValueError(f"HistSparse: every list must be 1-D with n_items={self.n_items} "
                             f"elements (its length is public), got {np.shape(data)}.")
        return data

    def _mode(self, release: HistogramRelease) -> Hashable:
        items, counts = release.items, release.counts
        if self.ignore is not None:
            keep = np.array([item != self.ignore for item in items.tolist()], dtype=bool)
            items, counts = items[keep], counts[keep]
        if items.size == 0:
            return self.current
        best = np.flatnonzero(counts == counts.max())
        pick = best[0] if best.size == 1 else best[self._tie_rng.integers(best.size)]
        item = items[pick]
        return item.item() if isinstance(item, np.generic) else item

    def process(self, data: NDArray[Any] | Sequence[Hashable],
                n_rounds: int = 1) -> tuple[int, bool]:
        """Run ``n_rounds`` rounds whose list is ``data``; stop after a switch.

        Parameters
        ----------
        data : 1-D ndarray or sequence of hashable, length ``n_items``
            The list L_t, the same for these rounds.
        n_rounds : int, default=1
            Number of consecutive rounds with this list (0 is allowed).

        Returns
        -------
        (n_answered, switched) : (int, bool)
            Rounds answered; ``switched`` is True iff the last of them released a new
            ``current`` (then ``n_answered`` may be less than ``n_rounds``).

        Raises
        ------
        MechanismHaltedError
            If the mechanism already made its c switches.
        """
        if self.halted:
            raise MechanismHaltedError(
                f"HistSparse aborted after its cutoff of {self.max_switches} switches; "
                "answering more would exceed its privacy guarantee."
            )
        data = self._check_list(data)
        n_rounds = check_positive_int(n_rounds, "n_rounds", minimum=0)
        if n_rounds == 0:
            return 0, False
        query = self._query(data)
        answers = self._svt.process(np.full(n_rounds, query), stop_after_positive=True)
        self.n_rounds += answers.size
        if answers.size and answers[-1]:
            self.current = self._mode(self._hist.release(data))
            self.n_switches += 1
            self.switch_rounds.append(self.n_rounds - 1)
            return int(answers.size), True
        return int(answers.size), False

    def __repr__(self) -> str:
        return (f"HistSparse(epsilon={self.epsilon:g}, delta={self.delta:g}, "
                f"n_items={self.n_items}, eta={self.eta:g}, "
                f"max_switches={self.max_switches}, switches={self.n_switches}, "
                f"halted={self.halted})")
