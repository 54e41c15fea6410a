"""Private online prediction from experts (OPE) over a finite class.

The experts are the hypotheses of a finite class over a finite domain {0, …, N−1}. Their
cumulative losses are a *linear* function of the running counts of the 2N cells (x, y):

    loss_t(h) = Σ_x  C_t(x, +1)·[h(x) = −1] + C_t(x, −1)·[h(x) = +1],

so it suffices to release the running cell counts privately — with the binary mechanism
for continual counting (Dwork, Naor, Pitassi & Rothblum 2010; Chan, Shi & Song 2011),
vectorised over the cells — and every expert's noisy cumulative loss is post-processing,
whatever the number of experts. On top, Hedge (follow the regularised leader with the
entropy regulariser) draws each round's expert from exp(−η·noisy loss): the
tree-aggregation + FTRL route of Jain & Thakurta (2014) and Asi et al. (2023) for private
OPE, the learner Li, Wang & Ye's Theorem 4.4 plugs their constructed experts into.
"""

import math
import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval, StrOptions

from .._streams import as_stream_noise, release_generator
from .._validation import RANDOM_STATE_CONSTRAINT
from ..accounting import PrivacyBudget
from ..hypotheses.finite import FiniteClass
from ..hypotheses.littlestone import littlestone_dimension
from ..mechanisms.binary_tree import BinaryTreeCounter
from ..mechanisms.laplace import discrete_laplace
from ._agnostic import _AgnosticOnlineClassifier, sample_rows, softmax_rows
from ._budget_split import ACCOUNTING, tree_counter_split
from ._sanitizers import allocate_rows
from ._soa import SOALearner

__all__ = ["CellTreeCounter", "PrivateExpertsClassifier", "constructed_expert_count"]

# Noise and Hedge uniforms are drawn in pages of rounds keyed by the page index, so the
# draws do not depend on how the stream is cut into blocks.
_PAGE = 1024
# Rows per vectorised segment (memory: rows × (cells + experts) floats).
_SEGMENT = 1024


class CellTreeCounter:
    """The binary mechanism over K counters at once, for one-hot steps (one cell per row).

    Released after s steps: R_s = C_s + Σ_{j : bit j of s} Z(e_j(s)), where C_s are the
    exact cell counts, e_j(s) = ⌊s/2^j⌋·2^j is the end of the level-j node (p-sum) in the
    dyadic decomposition of [1, s], and Z(e) ~ discrete Laplace of scale L/ε_cell on
    each of the K cells, drawn once when step e completes its node — exactly
    :class:`~skdp.mechanisms.binary_tree.BinaryTreeCounter` (``discrete=True``) run on
    every cell's bit stream, with L = ⌊log₂ T⌋ + 1 levels taken from it.

    Parameters
    ----------
    n_cells : int
        K.
    n_steps : int
        T, the length of the stream (the counter refuses more).
    cell_epsilon : float
        ε of each cell's counter.
    entropy : StreamNoise or int
        The stream's noise keys (an int seeds reproducible ones, for tests).
    key : int
        The noise of steps page·P + 1 … (page + 1)·P, P = min(1024, T), is event
        key + 2·page of ``entropy`` (so cutting the stream into blocks does not change
        the draws). A page's rows are zeroed once their steps ran, so the counter never
        keeps the noise of a released step.

    Privacy
    -------
    Each cell's released running counts are BinaryTreeCounter's ε_cell-DP release of its
    bit stream (Chan, Shi & Song 2011, Thm 3.5; discrete Laplace: Canonne, Kamath &
    Steinke 2020). One row lies in one cell; replacing it changes two cells' streams at
    one step, so the K streams together are 2·ε_cell-DP (independent noise per cell).
    Pure DP holds against adaptively chosen streams.
    """

    def __init__(self, n_cells, n_steps, cell_epsilon, entropy, key):
        # Only its shape and noise scale are used (the noise comes from the keyed pages).
        self._tree = BinaryTreeCounter(n_steps, cell_epsilon, discrete=True,
                                       random_state=release_generator())
        self.n_cells = int(n_cells)
        self.n_steps = self._tree.n_steps
        self.n_levels = self._tree.n_levels
        self.page = min(_PAGE, self.n_steps)
        self.entropy = as_stream_noise(entropy)
        self.key = int(key)
        self.n_seen = 0
        self._exact = np.zeros(self.n_cells, dtype=np.int64)
        self._last_noisy = np.zeros((self.n_levels, self.n_cells), dtype=np.int64)
        self._page = (-1, None)
        self.released_ = np.zeros(self.n_cells, dtype=np.int64)

    @property
    def _node_noise_scale(self):
        return self._tree._node_noise_scale

    def _noise(self, steps):
        """Z of the given (consecutive, 1-based) steps, shape (len, K)."""
        out = np.empty((steps.size, self.n_cells), dtype=np.int64)
        pages = (steps - 1) // self.page
        for page in np.unique(pages):
            if self._page[0] != page:
                scale = self._node_noise_scale
                z = (np.zeros((self.page, self.n_cells), dtype=np.int64) if scale == 0 else
                     discrete_laplace(scale, size=(self.page, self.n_cells),
                                      random_state=self.entropy.generator(
                                          self.key + 2 * int(page))))
                self._page = (int(page), z)
            sel = pages == page
            out[sel] = self._page[1][(steps[sel] - 1) % self.page]
        return out

    def _forget(self):
        """Zero the cached noise of the steps already run: what they still need lives in
        ``_last_noisy``, and a copy of the counter must not hold a released step's noise."""
        page, z = self._page
        if z is not None:
            z[:max(0, min(self.page, self.n_seen - page * self.page))] = 0

    def update(self, cells):
        """Consume one step per entry of ``cells``; return R after each step, (m, K)."""
        m = cells.size
        if self.n_seen + m > self.n_steps:
            raise ValueError(f"{m} steps would exceed n_steps={self.n_steps}.")
        if m == 1:
            return self._one_step(int(cells[0]))
        t0 = self.n_seen
        steps = np.arange(t0 + 1, t0 + m + 1, dtype=np.int64)
        onehot = np.zeros((m, self.n_cells), dtype=np.int64)
        onehot[np.arange(m), cells] = 1
        out = self._exact + np.cumsum(onehot, axis=0)
        self._exact = out[-1].copy()
        z = self._noise(steps)
        for j in range(self.n_levels):
            ends = (steps >> j) << j
            bit = ((steps >> j) & 1).astype(bool)
            inside = ends > t0
            node = np.where(inside[:, None], z[np.maximum(ends - t0 - 1, 0)],
                            self._last_noisy[j])
            out += np.where(bit[:, None], node, 0)
            done = np.flatnonzero(bit & (steps == ends))
            if done.size:
                self._last_noisy[j] = z[done[-1]]
        self.n_seen += m
        self._forget()
        self.released_ = out[-1]
        return out

    def _one_step(self, cell):
        # Round-by-round play (adaptive adversaries): the same release as the block path,
        # with scalar bookkeeping. Step s completes its level-lowbit(s) node; the other
        # set bits of s read the latest node completed at their level.
        s = self.n_seen + 1
        self._last_noisy[(s & -s).bit_length() - 1] = self._noise(np.array([s]))[0]
        self._exact[cell] += 1
        bits = [j for j in range(self.n_levels) if (s >> j) & 1]
        self.n_seen = s
        self._forget()
        self.released_ = self._exact + self._last_noisy[bits].sum(axis=0)
        return self.released_[None, :]


def constructed_expert_count(n_rounds, max_switches):
    """Number of experts of Li, Wang & Ye's Alg 7 with at most M switches over T rounds.

    Experts are indexed by 0 = i₀ < j₁ ≤ i₁ < j₂ ≤ i₂ < … < j_m ≤ i_m ≤ T, m ≤ M; for a
    given m there are C(T + m, 2m) such sequences (shift the k-th pair by k − 1 to make
    the sequence strictly increasing in [1, T + m]).
    """
    return sum(math.comb(n_rounds + m, 2 * m) for m in range(max_switches + 1))


def _loss_vectors(labels):
    """(2N, G) loss of each ±1 labelling on each cell (2x: (x, −1); 2x + 1: (x, +1))."""
    loss = np.empty((2 * labels.shape[1], labels.shape[0]))
    loss[0::2] = (labels > 0).T
    loss[1::2] = (labels < 0).T
    return loss


class _ConstructedExperts:
    """Li, Wang & Ye's Alg 5–7 for one bucket of T rounds over a finite domain.

    * Alg 5 (sanitization for intervals): the binary mechanism over the N x-cells
      (:class:`CellTreeCounter`, ε_cell each) releases noisy running x-counts; the
      synthetic sequence of an interval (l, r] is r − l points allocated in proportion
      to the clipped noisy counts R_r − R_l (:func:`allocate_rows`, in cell order).
    * Alg 6 (experts): expert (i₁, …, i_m, j₁, …, j_m) runs the SOA and, right after
      round i_k, forces it to err on the (j_k − i_{k−1})-th synthetic point of
      (i_{k−1}, i_k] (label: the opposite of its prediction there).
    * Alg 7 + OPE: every expert's noisy cumulative loss is linear in the running
      (x, y)-cell counts released by a second :class:`CellTreeCounter` (ε_cell per
      cell), piecewise over the expert's ≤ M + 1 hypotheses; Hedge draws the expert.

    All experts are post-processing of the two counters: one row moves two cells of
    each, so the release is 4L discrete Laplace node noises of scale L/ε_cell.
    """

    def __init__(self, labels, horizon, max_switches, cell_epsilon, entropy, keys,
                 counter_class):
        self.n_domain = labels.shape[1]
        self.horizon = horizon
        self.san = counter_class(self.n_domain, horizon, cell_epsilon, entropy, keys[0])
        self.ope = counter_class(2 * self.n_domain, horizon, cell_epsilon, entropy, keys[1])
        self._san_hist = [self.san.released_.copy()]
        self._ope_hist = [self.ope.released_.copy()]
        switches = self._enumerate(horizon, max_switches)
        self.n_experts = len(switches)
        # at[t] = [(expert, k)] whose k-th switch happens right after round t
        self._at = {}
        for e, pairs in enumerate(switches):
            for k, (j, i) in enumerate(pairs):
                self._at.setdefault(i, []).append((e, k, j, pairs[k - 1][1] if k else 0))
        soa = SOALearner(FiniteClass(labels), max_hypotheses=max(64, labels.shape[0]))
        self._learners = [soa] * self.n_experts  # SOA states are immutable: shared
        self._keys = {}
        self._labels = []  # hypothesis table G (rows: ±1 labels on the domain)
        g0 = self._hypothesis_id(soa)
        self.g = np.full(self.n_experts, g0, dtype=np.intp)
        self.loss_at_switch = np.zeros(self.n_experts)
        self.base = np.zeros(self.n_experts)
        self._synthetic = {}

    @staticmethod
    def _enumerate(horizon, max_switches):
        out = []

        def extend(prefix, last):
            out.append(tuple(prefix))
            if len(prefix) == max_switches:
                return
            for i in range(last + 1, horizon + 1):
                for j in range(last + 1, i + 1):
                    prefix.append((j, i))
                    extend(prefix, i)
                    prefix.pop()

        extend([], 0)
        return out

    def _hypothesis_id(self, learner):
        key = learner.predict(np.arange(self.n_domain)).tobytes()
        if key not in self._keys:
            self._keys[key] = len(self._labels)
            self._labels.append(learner.predict(np.arange(self.n_domain)))
            self._loss = _loss_vectors(np.asarray(self._labels))
            self.labels = np.asarray(self._labels)
        return self._keys[key]

    def noisy_losses(self):
        """Every expert's noisy cumulative loss after the rounds seen so far."""
        current = self._ope_hist[-1] @ self._loss
        return self.loss_at_switch + current[self.g] - self.base

    def _synthetic_point(self, left, right, position):
        seq = self._synthetic.get((left, right))
        if seq is None:
            noisy = self._san_hist[right] - self._san_hist[left]
            counts = allocate_rows(np.maximum(noisy, 0), right - left)
            seq = (np.empty(0, dtype=np.intp) if counts is None
                   else np.repeat(np.arange(self.n_domain), counts))
            self._synthetic[(left, right)] = seq
        return int(seq[position]) if position < seq.size else None

    def step(self, x, y):
        """Absorb round t = (x, y); then switch the experts whose i_k = t."""
        self._san_hist.append(self.san.update(np.array([x]))[0].copy())
        self._ope_hist.append(self.ope.update(np.array([2 * x + (y > 0)]))[0].copy())
        t = self.ope.n_seen
        todo = self._at.pop(t, ())
        if not todo:
            return
        losses = self.noisy_losses()
        for e, _k, j, left in todo:
            point = self._synthetic_point(left, t, j - left - 1)
            if point is None:  # the sanitizer gave nothing to feed: keep the hypothesis
                continue
            learner = self._learners[e].copy()
            learner.update(point, -learner.predict_one(point))
            self._learners[e] = learner
            self.loss_at_switch[e] = losses[e]
            self.g[e] = self._hypothesis_id(learner)
        current = self._ope_hist[-1] @ self._loss
        switched = np.array([e for e, *_ in todo], dtype=np.intp)
        self.base[switched] = current[self.g[switched]]


class PrivateExpertsClassifier(_AgnosticOnlineClassifier):
    """Private online prediction from experts: binary-mechanism losses + Hedge.

    The experts are the hypotheses of a finite class over the domain {0, …, N−1} (X holds
    real features read through the class's public discretisation, default
    :class:`~skdp.hypotheses.MeanThresholds`, or domain indices, shape (n, 1), for a
    class without one). Round t draws an expert from
    p_t(h) ∝ exp(−η·L̃_{t−1}(h)) and predicts its label, where L̃ are the experts'
    cumulative losses computed from the privately released running counts of the 2N
    cells (x, y) (:class:`CellTreeCounter`, ε/2 per cell, or what ``accounting``
    allows). The noise in every L̃(h) is a sum of O(N·log T) discrete Laplace terms of
    scale O(log T/ε), however many experts there are, so the expected regret against
    the best expert in hindsight is Hedge's √(T·ln H / 2) plus O(√N·log^{1.5}T/ε) —
    Õ(√T) in T, the rate of Li, Wang & Ye's Theorem 4.4 with the class itself as the set
    of experts (possible for finite classes on finite domains; their constructed
    experts, Alg 6–7, are for classes with large or infinite domains).

    Parameters
    ----------
    epsilon : float, default=1.0
        ε of the whole stream (every prediction).
    delta : float, default=1e-6
        With ``accounting="tight"`` and δ > 0, the δ the numerical accountant may use to
        lower the counters' noise (then charged); with ``accounting="paper"`` or δ = 0
        the learner is pure ε-DP and charges δ = 0.
    experts : FiniteClass, ±1 label matrix, ThresholdVersionSpace, PointVersionSpace or None
        The experts. At most 2²⁴ (expert, point) entries.
        ``None`` (default): :class:`~skdp.hypotheses.MeanThresholds` () — two-sided
        thresholds on the mean of the features clipped to public bounds ([−1, 1] with a
        warning; pass ``MeanThresholds(bounds=…)``), 16 bins, Ldim 5. A class with a
        public discretisation (``MeanThresholds``, ``RealThresholds``) reads real
        features; any other reads domain indices, X of shape (n, 1).
    n_rounds : int, optional
        Horizon T of the binary mechanism and of η. ``None``: len(X) for ``fit``;
        buckets of 1, 2, 4, … rounds for a ``partial_fit`` stream (each a fresh instance).
        Past T the stream continues in fresh buckets of 2T, 4T, … rounds.
    learning_rate : float or "auto", default="auto"
        Hedge's η; ``"auto"``: √(8 ln E / T) for E experts. Any value keeps privacy.
    construction : {"class", "constructed"}, default="class"
        ``"class"``: the hypotheses of ``experts`` are the experts (the practical case).
        ``"constructed"``: Li, Wang & Ye's Alg 5–7 for *tiny* classes and horizons —
        experts (i₁…i_m, j₁…j_m), m ≤ M = Ldim, each running the SOA and forcing it to
        err, right after round i_k, on the (j_k − i_{k−1})-th point of the privately
        sanitized x-sequence of rounds (i_{k−1}, i_k] (``_ConstructedExperts``).
        Needs ``n_rounds``; the learner stops updating after T rounds (the experts are
        built for a fixed horizon). The SOA stands in for Hanneke et al.'s learner and
        the histogram sanitization of x-cells for the generic realizable sanitizer (the
        domain is finite). Σ_{m≤M} C(T + m, 2m) = T^{O(d)} experts.
    max_experts : int, default=20000
        ``"constructed"`` refuses (ValueError, nothing spent) when the expert count
        would exceed it (memory and Python time grow linearly in it).
    accounting : {"tight", "paper"}, default="tight"
        How each cell counter's ε_cell is set. A row moves m cell streams (m = 2; 4 with
        ``"constructed"``), each in L = ⌊log₂ T⌋ + 1 nodes of its bucket's binary
        mechanism, so a bucket releases m·L discrete Laplace node noises of scale
        L/ε_cell that a row shifts by ≤ 1. ``"paper"``: ε_cell = ε/m (basic
        composition, pure ε-DP). ``"tight"``: the largest ε_cell for which
        :func:`skdp.accounting.calibrate_plan` puts those m·L noises within (ε, δ) —
        used in a bucket only when it beats ε/m; needs δ > 0 (δ = 0 gives the paper's).
    classes : array-like of shape (n_classes,), default=None
        Two labels, or C > 2 learnt one-vs-rest (``skdp._multiclass``: C copies
        at the optimal-composition share of (ε, δ), the budget charged once).
        The label set, a **public** parameter: ``classes_`` is exactly
        ``np.unique(classes)`` (``classes_[1]`` is the +1 label) whatever ``y``
        holds, and labels of ``y`` outside it raise ``ValueError``. ``None``: read
        from ``y`` as scikit-learn does (``partial_fit`` then needs its own
        ``classes`` on the first call), with a
        :class:`~skdp.exceptions.PrivacyLeakWarning` — the label set is then a
        statistic of the private data that the guarantee does not cover.
    budget : PrivacyBudget, optional
        Charged once per stream.
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
    labels_ : ndarray of int8, shape (H, N)
        The experts.
    learning_rate_ : float
    n_experts_ : int
        Number of experts (H, or the constructed count).
    n_buckets_, bucket_horizon_ : int
    n_rounds_seen_ : int
    privacy_spent_ : PrivacyCost

    Notes
    -----
    Which defaults are whose: the binary mechanism and follow-the-regularised-leader
    structure are Jain & Thakurta's (2014); the cell-count parametrisation (noise
    independent of the number of experts), Hedge's η and the doubling policy (Li, Wang &
    Ye §5) are practical choices.

    Internal, non-private state: the current bucket's binary mechanism (``_counter``,
    with its exact cell counts and noise seed), for ``"constructed"`` the experts'
    state (``_engine``), and the exact online mistakes (``_n_mistakes``, computed from
    the private labels) are private attributes that must not be released; only the
    predictions (post-processing of the counters' released sums) are private.

    Privacy
    -------
    (ε, δ)-DP — with ``accounting="paper"`` or δ = 0, ε-DP (δ = 0) — for the whole
    sequence of predictions (and every ``predict``), for every stream — oblivious or
    adaptive, of any length — against neighbouring streams that differ in one row:
    within a bucket, the released running cell counts are post-processing of the node
    noises of the binary mechanism (Chan, Shi & Song 2011, Thm 3.5); a row moves two
    cells, each in at most L nodes, each node sum by at most 1, so the bucket is the
    adaptive composition of 2L discrete Laplace mechanisms of scale L/ε_cell: ε-DP for
    ε_cell = ε/2 (basic composition, ``"paper"``), (ε, δ)-DP for the ε_cell calibrated by
    the accountant (``"tight"``; PLD of discrete Laplace, Canonne, Kamath & Steinke
    2020). Predictions are post-processing of the counts and of independent randomness;
    buckets hold disjoint rounds (parallel composition). The horizon of each
    counter is enforced (a new bucket starts), so no assumption on the stream is needed.
    With ``construction="constructed"``: the binary-mechanism sanitization of the x's
    (Alg 5; two x-cells move) and the (x, y)-cell counts of the OPE layer (two cells
    move) share the budget equally — ``"paper"``: ε/2 each, ε/4 per cell; ``"tight"``:
    4L node noises calibrated together; the experts and their losses are
    post-processing of both (Li, Wang & Ye, Thm 4.4 composes the two the same way:
    (2ε, 2δ) from two (ε, δ) parts). Charged
    once per stream; copies of a fitted stream share a fork ledger. ``predict_proba``
    (P(+1) under the released distribution) and ``decision_function`` (2·P(+1) − 1) are
    post-processing of the same releases: no further cost.

    References
    ----------
    P. Jain, A. Thakurta. (Near) dimension independent risk bounds for differentially
    private learning / private online learning, ICML 2014.
    H. Asi, V. Feldman, T. Koren, K. Talwar. Private online prediction from experts:
    separations and faster rates, COLT 2023.
    T.-H. H. Chan, E. Shi, D. Song. Private and continual release of statistics, 2011.
    Y. Li, Y. Wang, Y. Ye. Private online learning against an adaptive adversary, 2024,
    §4.2, Thm 4.4.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.hypotheses import threshold_class
    >>> from skdp.online import PrivateExpertsClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 8, size=(2000, 1))
    >>> y = np.where(rng.random(2000) < 0.1, 1 - (X[:, 0] >= 5), X[:, 0] >= 5).astype(int)
    >>> clf = PrivateExpertsClassifier(1.0, experts=threshold_class(8),
    ...                                random_state=0).fit(X, y)
    >>> clf.predict([[1], [7]]), clf.privacy_spent_.epsilon
    (array([0, 1]), 1.0)
    """

    _parameter_constraints: dict = {
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "delta": [Interval(numbers.Real, 0, 1, closed="left")],
        "experts": "no_validation",
        "n_rounds": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither"),
                          StrOptions({"auto"})],
        "construction": [StrOptions({"class", "constructed"})],
        "max_experts": [Interval(numbers.Integral, 1, None, closed="left")],
        "accounting": [StrOptions(set(ACCOUNTING))],
        "budget": [PrivacyBudget, None],
        "random_state": [*RANDOM_STATE_CONSTRAINT],
        "verbose": ["verbose"],
        "classes": ["array-like", None],
    }

    _counter_class = CellTreeCounter
    _class_param = "experts"

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-6, experts: Any = None,
                 n_rounds: int | None = None, *, learning_rate: float | str = "auto",
                 construction: str = "class", max_experts: int = 20_000,
                 accounting: str = "tight", budget: PrivacyBudget | None = None,
                 random_state: int | np.random.Generator | np.random.RandomState | None = None,
                 verbose: int = 0,
                 classes: ArrayLike | None = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.experts = experts
        self.n_rounds = n_rounds
        self.learning_rate = learning_rate
        self.construction = construction
        self.max_experts = max_experts
        self.accounting = accounting
        self.budget = budget
        self.random_state = random_state
        self.verbose = verbose
        self.classes = classes

    def _prepare_stream(self, from_fit):
        n_domain, plan = super()._prepare_stream(from_fit)
        if self.construction == "constructed":
            name = type(self).__name__
            if self.n_rounds is None:
                raise ValueError(f"{name}: construction='constructed' needs n_rounds (the "
                                 "expert set is built for a fixed horizon T).")
            plan["max_switches"] = littlestone_dimension(
                plan["labels"], max_hypotheses=max(64, plan["labels"].shape[0]))
            count = constructed_expert_count(self.n_rounds, plan["max_switches"])
            if count > self.max_experts:
                raise ValueError(
                    f"{name}: the constructed experts of Alg 7 number {count} for "
                    f"T={self.n_rounds} and Ldim {plan['max_switches']} (T^O(d)), more than "
                    f"max_experts={self.max_experts}. Use construction='class' (the class "
                    "itself as experts), a shorter horizon or a larger max_experts.")
        return n_domain, plan

    def _stream_cost(self, plan):
        epsilon, delta = self._check_privacy_params()
        # "tight" may spend δ in any bucket (those whose accounting beats the paper's) —
        # unless the ledger has no room for it (e.g. PrivacyBudget(ε), δ = 0 by default):
        # then the stream stays pure ε-DP rather than being refused. Decided once, here,
        # so every bucket's counters use the split this charge paid for.
        tight = self.accounting == "tight" and self._budget_has_room_for_delta(delta)
        self._stream_delta = delta if tight else 0.0
        return epsilon, self._stream_delta

    def _cell_epsilon(self, horizon):
        """ε_cell of the counters of a bucket of ``horizon`` rounds (see ``accounting``)."""
        epsilon, delta = self._check_privacy_params()[0], self._stream_delta
        changed = 4 if self.construction == "constructed" else 2
        n_levels = int(horizon).bit_length()  # BinaryTreeCounter's L
        return tree_counter_split(epsilon, delta, n_levels, changed, self.accounting).values[0]

    def _init_stream(self, plan):
        self._loss_matrix = _loss_vectors(plan["labels"])
        self._max_switches = plan.get("max_switches")
        super()._init_stream(plan)

    def _new_bucket(self, horizon):
        self._uniform_page = (-1, None)
        self._mixture = None
        cell_epsilon = self._cell_epsilon(horizon)
        if self.construction == "constructed":
            # equal shares for the sanitization of the x's (Alg 5) and the OPE counts
            self._engine = _ConstructedExperts(
                self.labels_, horizon, self._max_switches, cell_epsilon, self._noise,
                (self._key(2**39), self._key(0)), self._counter_class)
            self._counter = self._engine.ope
            n_experts = self._engine.n_experts
        else:
            self._counter = self._counter_class(self._loss_matrix.shape[0], horizon,
                                                cell_epsilon, self._noise, self._key(0))
            n_experts = self.labels_.shape[0]
        self.n_experts_ = n_experts
        self.learning_rate_ = (math.sqrt(8.0 * math.log(max(n_experts, 2)) / horizon)
                               if self.learning_rate == "auto" else float(self.learning_rate))

    def _next_bucket(self):
        if self.construction == "constructed":
            self._stop_updating(f"reached n_rounds={self.n_rounds} (the constructed experts "
                                "are built for a fixed horizon)")
        else:
            super()._next_bucket()

    def _uniforms(self, steps):
        out = np.empty(steps.size)
        size = self._counter.page
        pages = (steps - 1) // size
        for page in np.unique(pages):
            if self._uniform_page[0] != page:
                self._uniform_page = (
                    int(page), self._event_rng(self._key(2 * int(page) + 1)).random(size))
            sel = pages == page
            out[sel] = self._uniform_page[1][(steps[sel] - 1) % size]
        return out

    def _segment(self, limit):
        return min(limit, 1 if self.construction == "constructed" else _SEGMENT)

    def _probs(self, released):
        return softmax_rows(-self.learning_rate_ * (released @ self._loss_matrix))

    def _play(self, x, y):
        if self.construction == "constructed":
            return self._play_constructed(int(x[0]), int(y[0]))
        counter = self._counter
        steps = np.arange(counter.n_seen + 1, counter.n_seen + x.size + 1)
        before = counter.released_.copy()
        after = counter.update(2 * x + (y > 0))
        released = np.vstack([before[None, :], after[:-1]])  # R_{t−1} predicts round t
        h = sample_rows(self._probs(released.astype(float)), self._uniforms(steps))
        self._mixture = None
        return self.labels_[h, x]

    def _play_constructed(self, x, y):
        engine = self._engine
        p = softmax_rows(-self.learning_rate_ * engine.noisy_losses()[None, :])
        step = np.array([engine.ope.n_seen + 1])
        e = sample_rows(p, self._uniforms(step))[0]
        y_hat = engine.labels[engine.g[e], x]
        engine.step(x, y)
        self._mixture = None
        return np.array([y_hat], dtype=np.int8)

    def _positive_rate(self, x):
        if self._mixture is None and self.construction == "constructed":
            engine = self._engine
            p = softmax_rows(-self.learning_rate_ * engine.noisy_losses()[None, :])[0]
            weight = np.bincount(engine.g, weights=p, minlength=engine.labels.shape[0])
            self._mixture = weight @ (engine.labels > 0)
        if self._mixture is None:
            p = self._probs(self._counter.released_[None, :].astype(float))[0]
            self._mixture = p @ (self.labels_ > 0)
        return self._mixture[x]
