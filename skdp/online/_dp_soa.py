"""DP-SOA (Golowich & Livni 2021, Alg. 1): a forest of tournament trees over a mistake-bounded
base learner, whose frequent hypothesis is published by HistSparse (Alg. 2) or, in the
practical preset, by its competitor-aware variant."""

import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval, StrOptions

from .._validation import RANDOM_STATE_CONSTRAINT
from ..accounting import PrivacyBudget
from ..mechanisms import HistSparse
from ._base import PrivateOnlineDomainClassifier
from ._budget_split import ACCOUNTING
from ._competitor_sparse import CompetitorHistSparse
from ._dp_soa_adaptive import PerRoundRelease
from ._dp_soa_anchored import AnchoredLearner
from ._dp_soa_forest import (
    BOTTOM,
    ROLE_HIST_SPARSE,
    ROLE_PI,
    Forest,
    event_key,
)
from ._dp_soa_params import DPSOAParameters, resolve_base_learner, resolve_dp_soa_parameters
from ._soa import MistakeBoundedLearner, estimator_base_learner

__all__ = ["DPSOAClassifier", "DPSOAParameters"]

# Rounds per block of the random leaf assignment π (one generator per block).
_PI_PAGE = 4096


class DPSOAClassifier(PerRoundRelease, PrivateOnlineDomainClassifier):
    """Differentially private online learner for Littlestone classes (DP-SOA).

    Golowich & Livni's Alg. 1. A forest of ``n_trees`` (k₂) full binary trees with
    ``n_leaves`` (k₁) leaves runs copies of a deterministic base learner A on a random
    partition of the stream: round t goes to a random leaf π(t) and from there to its
    pertinent ancestor v, whose sequence S_v it extends. When two pertinent siblings come
    to disagree, a *tournament example* (x̄ where they disagree, a random label ȳ) is
    appended to the one erring on it and handed to their parent; each tree outputs
    A(S_v) for a random pair of agreeing pertinent siblings. The practical preset uses
    flat trees (k₁ = 1: each tree is one copy on its own rows, no tournament) of the
    *anchored* learner (:class:`~skdp.online._dp_soa_anchored.AnchoredLearner`: the
    hypothesis of its version space nearest to the public A(∅)), so that copies fed
    different rows of one stream agree on the target; ``base_learner="soa"`` keeps the
    paper's SOA and tournament trees. The published hypothesis is chosen from the list
    of the k₂ tree outputs by a sparse vector and a stable histogram (Alg. 2, or its
    competitor-aware variant
    :class:`~skdp.online._competitor_sparse.CompetitorHistSparse`); predictions between
    switches are one vectorised call. X holds real features read through the class's
    public discretisation (default :class:`~skdp.hypotheses.MeanThresholds`), or domain
    indices (shape (n, 1)) for a class without one; ``fit`` starts a stream,
    ``partial_fit`` continues it (any split into blocks gives the same model),
    ``predict`` is post-processing of the last release.

    Where it learns (measured at the defaults, ``benchmarks/results/online_littlestone.md``):
    thresholds on 2¹⁶ points at ε = 1 against the binary-search adversary (≈ 200
    mistakes, then flat) and against the mistake-seeking adversary (≈ 1.5–2·10³, then
    flat: the release is the target exactly); uniform streams over thresholds on up to
    2⁸ points (T ≥ 10³ on 4 points, 10⁴ on 16, 10⁵ on 256); intervals and rectangles
    on oblivious streams at T = 10⁴ in some games. It does not learn intervals or
    rectangles against the mistake-seeking adversary (copies agree on an intermediate
    hypothesis of a small class, which the single release then keeps), nor thresholds
    on 2¹² points or more from uniform streams at T ≤ 10⁵ (a copy must see the
    target's boundary point). Use :class:`~skdp.online.AdaptivePrivateOnlineClassifier`
    there (its default consistency release learns these streams) or
    :class:`~skdp.online.PrivateExpertsClassifier` (oblivious streams).

    Parameters
    ----------
    epsilon : float, default=1.0
        ε of the whole stream (every prediction of every round).
    delta : float, default=1e-6
        δ ∈ (0, 1) of the whole stream (the stable histogram needs δ > 0).
    hypothesis_class : FiniteClass, label matrix, version space, MistakeBoundedLearner or None
        The class (its SOA is the base learner), e.g. ``ThresholdVersionSpace(N)``, or a
        fresh :class:`~skdp.online.MistakeBoundedLearner` (copied, never mutated).
        ``None`` (default): :class:`~skdp.hypotheses.MeanThresholds` () — two-sided
        thresholds on the mean of the features clipped to public bounds ([−1, 1] with a
        warning; pass ``MeanThresholds(bounds=…)``), 16 bins, Ldim 5. A class with a
        public discretisation (``MeanThresholds``, ``RealThresholds``) reads real
        features; any other reads domain indices, X of shape (n, 1).
    n_trees : int, optional
        k₂. Practical default: a multiple of the R trees the competitor query's first
        firing needs (half its threshold, at least 64 in all): 8R for the anchored
        learner (a copy needs one informative row, so more and emptier trees reach R
        sooner), 3R for the SOA (fires once two thirds agree); with
        ``query="frequency"`` the size for which the stable histogram releases every
        element of frequency > η (:func:`~skdp.mechanisms.stable_histogram_min_size`).
        Capped at 2¹⁵ with a warning.
    n_leaves : int, optional
        k₁, a power of two (1: flat trees, no tournament). Practical default: 1 for the
        anchored learner; for the SOA the paper's 2^{d+1} for Ldim d ≤ 5, else 4.
    max_switches : int, optional
        c, the cutoff (histogram releases; then the learner stops updating). Practical
        default 1; the paper's c = 4k₁/η with ``preset="theory"``.
    eta : float in (0, 1], optional
        η: θ = 1 − 3η/32 for the frequency query, histogram threshold max(A + 2,
        ⌈ηk₂/2⌉). Default 0.25 (practical), and min(0.25, 2(A + 2)/k₂) with the
        competitor query, so that the histogram's threshold stays A + 2.
    query : {"competitor", "frequency"}, optional
        The sparse-vector query: ``"frequency"`` is Alg. 2's Q = 1 − freq(h);
        ``"competitor"`` asks whether a hypothesis other than ⊥, h and A(∅) has a
        releasable lead over h (sensitivity 2/k₂; lemma and proof in
        :class:`~skdp.online._competitor_sparse.CompetitorHistSparse`). Default:
        ``"competitor"`` (practical), ``"frequency"`` (theory).
    on_inconsistent : {"skip", "bottom"}, optional
        The SOA base learner's reaction to an example contradicting its version space
        (:class:`~skdp.online.SOALearner`); ignored for a given MistakeBoundedLearner.
        Default ``"skip"`` (practical), ``"bottom"`` (theory, the paper's ⊥).
    base_learner : {"anchored", "soa"}, optional
        The copies' learner (ignored for a given MistakeBoundedLearner):
        :class:`~skdp.online._dp_soa_anchored.AnchoredLearner` (default, practical) or
        :class:`~skdp.online.SOALearner` (default with ``preset="theory"``).
    adaptive : bool, default=False
        Thm 4.2's variant for adaptive adversaries: every round's hypothesis is a fresh
        stable histogram at (ε′, δ′) (Lemma 5.4, or the accountant with ``"tight"``) for
        at most T = ``n_rounds`` rounds (hard cap); needs ``n_rounds``. skdp keeps one
        forest instead of re-running DP-SOA every round (same privacy proof).
    n_rounds : int, optional
        T: required with ``adaptive=True``; sizes k₂ with ``preset="theory"`` (default
        10⁶) and the competitor query's noise margin (default 10⁵; utility only).
    preset : {"practical", "theory"}, default="practical"
        ``"theory"``: k₁, η, c, k₂ of Alg. 1 and Lemma A.3 for the Ldim d, for every
        parameter not given — refused (ValueError) when the forest cannot fit in memory.
    accounting : {"tight", "paper"}, default="tight"
        ``"paper"``: basic composition (ε_svt = 2ε/3, c histograms at (ε/(3c), δ/c)) or
        Lemma 5.4 with ``adaptive=True``; ``"tight"``: the same weights scaled by
        :func:`skdp.accounting.calibrate_plan`. See ``parameters_``.
    classes : array-like of shape (n_classes,), default=None
        Two labels, or C > 2 learnt one-vs-rest (``skdp._multiclass``: C copies
        at the optimal-composition share of (ε, δ), the budget charged once).
        The **public** label set (``None``: read from ``y``, with a
        :class:`~skdp.exceptions.PrivacyLeakWarning`).
    budget : PrivacyBudget, optional
        Charged (ε, δ) at the start of each stream.
    random_state : None, int, numpy Generator, RandomState or TestingSeed, default=None
        ``None``: noise from OS entropy; the stream's keys derive only events not yet
        run and a copy holds none (see :mod:`skdp.base`). A learner that can still
        continue its stream is private running state, not a publishable model. A seed
        is a testing mode: the noise is reproducible from ``get_params()``, a
        :class:`~skdp.exceptions.PrivacyWarning` says so, and with a ``budget`` it is
        refused unless wrapped as ``skdp.TestingSeed(seed)``.
    verbose : int, default=0

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    parameters_ : DPSOAParameters
        The resolved k₂, k₁, c, η, query, thresholds and budget split.
    mistake_bound_ : int
        The base learner's mistake bound: Ldim for the SOA, |C| for the anchored learner.
    n_switches_ : int
        Real changes of the released hypothesis.
    n_svt_firings_ : int
        Sparse-vector ⊤ answers (histograms run, ≤ c); firings − switches were wasted.
    switch_rounds_ : list of int
        Rounds (0-based) at which the released hypothesis changed; the first one is the
        length of the forced phase (every round before predicts with A(∅)).
    released_is_initial_ : bool
        True while the released hypothesis is still A(∅).
    updates_stopped_ : bool
        True once a hard cap was hit (c firings, or T rounds with ``adaptive=True``);
        ``stop_reason_`` says which. The learner then predicts with its last release.
    n_rounds_seen_, n_domain_, n_features_in_ : int
    privacy_spent_ : PrivacyCost

    Notes
    -----
    The algorithm (forest, pertinent vertices, tournament examples, sparse vector and
    stable histogram with the abort after c) is the paper's; its constants are not
    usable (Lemma A.3: k₂ ≥ 2^{8k₁+6}, more than 2^{166} trees for d ≤ 3;
    ``preset="theory"`` computes them and refuses). The practical preset changes four
    things, none of which weakens the guarantee (the query has its own lemma; any
    deterministic base learner that reads only its own tree's rows and public data keeps
    "one row changes one tree"):
    (1) the competitor query (Alg. 2's 1 − freq(h) counts ⊥ trees as evidence that h is
    rare, so it fired when nothing was releasable and wasted the cutoff), doubled while
    h = A(∅), which leaves its sensitivity at 2/k₂; (2) the anchored learner in flat
    trees. Against the mistake-seeking adversary (thresholds on 2¹⁶ points, ε = 1) the
    SOA's tournament trees were abandoned (465 of 470 ⊥ after 5·10³ rounds: every
    mistake of a copy climbs a level, and k₁ = 4 holds two), and flat trees of SOA
    copies ended on 295 different hypotheses, the largest held by 56 trees; anchored
    copies that saw the target's boundary point output the target itself, and the
    release came after 1.6–2.1·10³ rounds. Its mistake bound is |C|, not Ldim: the
    utility theorem of the paper no longer applies; (3) contradicting examples are
    skipped instead of making a copy ⊥; (4) c = 1 and k₂ from the competitor threshold
    (the sparse vector's noise grows with c: thresholds of 351, 641, 1,206 trees' worth
    for c = 1, 2, 4 at ε = 1).
    Other departures: the first hypothesis is A(∅) (public); ⊥ and (competitor query)
    A(∅) are never released; a ⊥ child makes its parent ⊥; the sparse vector draws its
    threshold noise once (Lyu et al. 2017).

    Private internal state (never release it): the forest, ``_hypothesis`` (its version
    space holds a tree's rows and tournament examples), ``_n_forest_updates``,
    ``_n_abandoned_trees`` and ``_n_mistakes`` (computed from the private labels). The
    diagnostics above are functions of the released outputs.

    Privacy
    -------
    (ε, δ)-DP for the whole sequence of released hypotheses (hence all predictions), for
    *every* stream — realizable or not — against neighbouring streams fixed in advance that
    differ in one row (Golowich & Livni, Lemma A.1 with Lemma 5.3): one row changes the
    sequence of one tree only, whatever the (deterministic) base learner — the anchored
    learner's anchor is public data, and a flat tree outputs its one copy's hypothesis — so
    every list L_t changes in at most one of k₂ positions; the sparse vector (ε_svt-DP for
    any number of queries, sensitivity 1/k₂ for Alg. 2's query, 2/k₂ for the competitor
    query) and c stable histograms ((ε_hist, δ_hist)-DP each) compose within (ε, δ) by basic
    composition (``"paper"``) or the accountant (``"tight"``). The sparse vector runs
    concurrently with the histograms (its state spans the stream), so the composition
    is concurrent; Vadhan & Zhang 2023 (STOC; f-DP, covering every bound the accountant
    computes) and Lyu 2022 (NeurIPS; (ε, δ) and Rényi DP) extend the sequential bounds
    to it — the argument is in :class:`~skdp.mechanisms.HistSparse`'s Privacy section.
    The cutoff c is enforced.
    ``adaptive=True``: T per-round histograms on a 1-sensitive list compose to (ε, δ) (Lemma
    5.4 or the accountant); at most T rounds are released. ``fit`` and the first
    ``partial_fit`` charge (ε, δ); copies of a fitted stream share a ledger (continuing two
    is refused, :class:`~skdp.exceptions.PrivacyError`).
    ``predict_proba`` (the released label as a smoothed one-hot, γ = ``PROBA_SMOOTHING``
    = 0.1) and ``decision_function`` (its ±1 label) are post-processing of the released
    hypothesis: no further cost.

    References
    ----------
    N. Golowich, R. Livni. Littlestone classes are privately online learnable.
    NeurIPS 2021, Alg. 1–2, Thm 4.1–4.2, Lemmas 5.3, 5.4, A.1, A.3.
    M. Bun, R. Livni, S. Moran. An equivalence between private classification and
    online prediction. FOCS 2020 (tournament examples).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.hypotheses.littlestone import PointVersionSpace
    >>> from skdp.online import DPSOAClassifier
    >>> rng = np.random.default_rng(0)
    >>> x = rng.integers(0, 4, size=20000); y = (x == 2).astype(int)
    >>> clf = DPSOAClassifier(8.0, 1e-6, PointVersionSpace(4), classes=[0, 1],
    ...                       random_state=0).fit(x[:, None], y)
    >>> clf.predict([[0], [1], [2], [3]])
    array([0, 0, 1, 0])
    >>> clf.n_switches_, clf.n_svt_firings_, clf.privacy_spent_.epsilon
    (1, 1, 8.0)
    """

    # the forest and the mechanism publishing its hypotheses (tests substitute broken variants)
    _forest_class = Forest
    _hist_sparse_class = HistSparse
    _competitor_class = CompetitorHistSparse

    _parameter_constraints: dict = {
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "delta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "hypothesis_class": "no_validation",
        "n_trees": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_leaves": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "max_switches": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "eta": [Interval(numbers.Real, 0, 1, closed="right"), None],
        "adaptive": ["boolean"],
        "n_rounds": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "query": [StrOptions({"competitor", "frequency"}), None],
        "on_inconsistent": [StrOptions({"skip", "bottom"}), None],
        "base_learner": [StrOptions({"anchored", "soa"}), None],
        "preset": [StrOptions({"practical", "theory"})],
        "accounting": [StrOptions(set(ACCOUNTING))],
        "budget": [PrivacyBudget, None],
        "random_state": [*RANDOM_STATE_CONSTRAINT],
        "verbose": ["verbose"],
        "classes": ["array-like", None],
    }

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-6, hypothesis_class: Any = None,
                 *, n_trees: int | None = None, n_leaves: int | None = None,
                 max_switches: int | None = None, eta: float | None = None,
                 query: str | None = None, on_inconsistent: str | None = None,
                 base_learner: str | None = None, adaptive: bool = False,
                 n_rounds: int | None = None,
                 preset: str = "practical", accounting: str = "tight",
                 budget: PrivacyBudget | None = None,
                 random_state: int | np.random.Generator | np.random.RandomState | None = None,
                 verbose: int = 0,
                 classes: ArrayLike | None = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.hypothesis_class = hypothesis_class
        self.n_trees = n_trees
        self.n_leaves = n_leaves
        self.max_switches = max_switches
        self.eta = eta
        self.query = query
        self.on_inconsistent = on_inconsistent
        self.base_learner = base_learner
        self.adaptive = adaptive
        self.n_rounds = n_rounds
        self.preset = preset
        self.accounting = accounting
        self.budget = budget
        self.random_state = random_state
        self.verbose = verbose
        self.classes = classes

    # ----------------------------------------------------------------- parameters
    def _base_kind(self):
        given = isinstance(self._hypotheses(), MistakeBoundedLearner)
        return resolve_base_learner(self.base_learner, self.preset, given)

    def _base_learner(self):
        if self._base_kind() == "anchored":
            mode = self.on_inconsistent or ("bottom" if self.preset == "theory" else "skip")
            return AnchoredLearner(self._hypotheses(), on_inconsistent=mode)
        return estimator_base_learner(self, self.preset == "theory")

    def _resolve(self, learner):
        epsilon, delta = self._check_privacy_params()
        kind = self._base_kind()
        # the paper's constants and k₁ are sized by the class's Ldim
        ldim = learner.version_space.ldim() if kind == "anchored" else learner.mistake_bound
        return resolve_dp_soa_parameters(
            type(self).__name__, ldim, epsilon, delta,
            n_trees=self.n_trees, n_leaves=self.n_leaves, max_switches=self.max_switches,
            eta=self.eta, adaptive=self.adaptive, n_rounds=self.n_rounds, preset=self.preset,
            accounting=self.accounting, query=self.query,
            on_inconsistent=getattr(learner, "on_inconsistent", None), base_learner=kind)

    # ----------------------------------------------------------------- stream hooks
    def _prepare_stream(self, from_fit):
        learner = self._base_learner()
        return learner.n_domain, (learner, self._resolve(learner))

    def _init_stream(self, plan):
        learner, params = plan
        self.parameters_ = params
        self.mistake_bound_ = learner.mistake_bound
        self._forest = self._forest_class(learner, params.n_trees, params.n_leaves,
                                          self._noise)
        self._initial_hid = self._released_hid = int(self._forest.out_hid[0])  # A(∅): public
        self._forest.pin(self._released_hid)
        self._hypothesis = learner
        self.n_switches_ = self._n_forest_updates = self._n_abandoned_trees = 0
        self.n_svt_firings_ = 0
        self.switch_rounds_ = []
        self.released_is_initial_ = True
        self._pending = None
        self._pages = {}  # π pages still ahead of the stream (keys erased once drawn)
        if params.adaptive:
            self._init_per_round(params)
        else:
            self._hist_sparse = self._make_hist_sparse(params)

    def _make_hist_sparse(self, params):
        epsilon, delta = self._check_privacy_params()
        common = dict(initial=self._released_hid, ignore=BOTTOM,
                      split=(params.svt_epsilon, params.hist_epsilon, params.hist_delta),
                      random_state=self._noise.generator(event_key(ROLE_HIST_SPARSE, 0)))
        if params.query == "competitor":
            return self._competitor_class(epsilon, delta, params.n_trees, params.eta,
                                          params.max_switches,
                                          threshold_count=params.threshold_count, **common)
        return self._hist_sparse_class(epsilon, delta, params.n_trees, params.eta,
                                       params.max_switches, **common)

    def _released_predict(self, x):
        return self._hypothesis.predict(x)

    def _fresh_predict_one(self, x):
        return self._base_learner().predict_one(x)

    def _leaves(self, t0, n):
        """π(t) for rounds t0 … t0 + n − 1: a uniform leaf of the forest, fixed per round."""
        total = self.parameters_.n_trees * self.parameters_.n_leaves
        out = np.empty(n, dtype=np.int64)
        for old in [p for p in self._pages if p < t0 // _PI_PAGE]:
            del self._pages[old]  # rounds already run: never read again
        pos = 0
        while pos < n:
            page, off = divmod(t0 + pos, _PI_PAGE)
            if page not in self._pages:
                # A page's key is erased once drawn, so the page is kept while a scan
                # may still come back to it (a chunk can run ahead of the next step).
                gen = self._noise.generator(event_key(ROLE_PI, page))
                self._pages[page] = gen.integers(0, total, size=_PI_PAGE)
            m = min(n - pos, _PI_PAGE - off)
            out[pos:pos + m] = self._pages[page][off:off + m]
            pos += m
        return out

    def _switch(self, hid, t):
        """Release hypothesis ``hid`` (already chosen by a private mechanism) at round t."""
        forest = self._forest
        if hid != self._released_hid:
            forest.pin(hid)
            forest.unpin(self._released_hid)
            self._released_hid = hid
            self._hypothesis = forest.rep[hid]
            self.n_switches_ += 1
            self.switch_rounds_.append(int(t))
            self.released_is_initial_ = hid == self._initial_hid
            if self.verbose:
                print(f"[{type(self).__name__}] round {self.n_rounds_seen_}: switch "
                      f"{self.n_switches_} to {forest.rep[hid].hypothesis_key()!r}")

    # ----------------------------------------------------------------- the loop
    def _scan(self, x, y, wrong):
        t0, n = self.n_rounds_seen_, x.shape[0]
        adaptive = self.parameters_.adaptive
        if adaptive:
            n = min(n, self.parameters_.n_rounds - t0)
        leaves = self._leaves(t0, n)
        changes = self._forest.changes(leaves, x[:n], y[:n])
        f = int(np.argmax(changes)) if changes.any() else n
        hit = self._release(t0, f)  # rows before f leave the list as it is
        if hit >= 0:
            return hit
        if f < n:
            self._pending = int(leaves[f])
            return f
        if adaptive and t0 + n >= self.parameters_.n_rounds:
            self._stop_at_horizon()  # later rows: predicted by the last release only
        return -1

    def _step(self, x, y, wrong):
        leaf, self._pending = self._pending, None
        if leaf is not None:
            t = self.n_rounds_seen_ - 1
            self._n_forest_updates += 1
            forest = self._forest
            if forest.update(leaf, x, y) and self.parameters_.adaptive:
                self._run_id, self._run_start = self._run_id + 1, t
            self._n_abandoned_trees = forest.n_dead
            self._release(t, 1)
        if self.parameters_.adaptive and self.n_rounds_seen_ >= self.parameters_.n_rounds:
            self._stop_at_horizon()

    def _stop_at_horizon(self):
        self._stop_updating(f"released its n_rounds={self.parameters_.n_rounds} per-round "
                            "histograms (the horizon of its composition)")

    def _release(self, t0, n):
        """Answer the rounds t0 … t0 + n − 1 whose list is unchanged; return the index
        (from t0) of the first one that switched the hypothesis, or −1."""
        if self.parameters_.adaptive:
            return self._release_per_round(t0, n)
        hs = self._hist_sparse
        answered, switched = hs.process(self._forest.out_hid, n)
        if not switched:
            return -1
        self.n_svt_firings_ = hs.n_switches
        self._switch(int(hs.current), t0 + answered - 1)
        if hs.halted:
            self._stop_updating(f"made its maximum of c = {hs.max_switches} hypothesis "
                                "switches (HistSparse abort)")
        return answered - 1
