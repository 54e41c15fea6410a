"""Agnostic private online learning by batch sanitization (Li, Wang & Ye 2024, Alg 3)."""

import math
import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval, StrOptions

from .._validation import RANDOM_STATE_CONSTRAINT
from ..accounting import PrivacyBudget
from ._agnostic import _AgnosticOnlineClassifier, sample_rows
from ._hedge import HedgeCopies
from ._sanitizers import HistogramSanitizer, Sanitizer

__all__ = ["BatchSanitizedOnlineClassifier"]

#: B = "auto" is this many rows per cell per unit of 1/ε (see the class Notes).
AUTO_ROWS_PER_CELL = 2.0


class BatchSanitizedOnlineClassifier(_AgnosticOnlineClassifier):
    """Private agnostic online learner by batch sanitization (Li, Wang & Ye, Alg 3).

    X holds real features read through the class's public discretisation (default
    :class:`~skdp.hypotheses.MeanThresholds`), or domain indices (shape (n, 1), integers
    in [0, N)) for a class without one; the class is finite,
    given by its label matrix. The stream is cut into batches of B rows. During a batch,
    each round draws one of B *copies* of a non-private proper online learner uniformly
    and predicts with a hypothesis drawn from that copy (so every prediction is the label
    of a hypothesis of the class: the learner is proper). At the end of a batch a
    private sanitizer turns its B rows into B synthetic labelled rows; they are randomly
    permuted and copy i is fed the i-th — so copy i sees one synthetic row per batch
    (the paper's disjoint subsequences S_i). If the sanitizer fails, the batch is
    skipped or the learner stops updating (the paper's "exit if fail"; ``on_failure``).
    An incomplete last batch is kept (private state) until it completes; it has not
    influenced anything released.

    The copies are Hedge learners over the class (exponential weights; proper). By
    default each copy runs AdaHedge (its own step size from its own past, no horizon
    needed), whose regret is O(ln H) on streams where following the leader does well and
    O(√(n ln H)) on any sequence of n rows. By default (``copies="shared"``) the B copies
    are one learner fed every synthetic row of a batch (its mean loss, one step per
    batch); ``copies="independent"`` is the paper's B learners, one synthetic row each.

    Parameters
    ----------
    epsilon : float, default=1.0
        ε of the whole stream (every prediction of every round).
    delta : float, default=1e-6
        δ ∈ [0, 1) passed to the sanitizer; the default sanitizer is pure ε-DP and
        charges δ = 0.
    hypothesis_class : FiniteClass, ±1 label matrix, version space or None, default=None
        ThresholdVersionSpace / PointVersionSpace are turned into label matrices. At
        most ``MAX_TABLE`` = 2²⁴ (hypothesis, point) entries.
        ``None`` (default): :class:`~skdp.hypotheses.MeanThresholds` () — two-sided
        thresholds on the mean of the features clipped to public bounds ([−1, 1] with a
        warning; pass ``MeanThresholds(bounds=…)``), 16 bins, Ldim 5. A class with a
        public discretisation (``MeanThresholds``, ``RealThresholds``) reads real
        features; any other reads domain indices, X of shape (n, 1).
    batch_size : int or "auto", default="auto"
        B. ``"auto"``: B = ⌈AUTO_ROWS_PER_CELL · 2N / ε⌉ (about 2 rows per unit of
        noise per cell), at most ⌈√T⌉ and at least 2, from public quantities only
        (see Notes).
    n_rounds : int, optional
        Horizon T of the first bucket (utility only: it sizes B and η). ``None``: len(X)
        for ``fit``; buckets of 1, 2, 4, … rounds for a ``partial_fit`` stream. Past the
        horizon the stream continues in fresh buckets of 2T, 4T, … rounds.
    copies : {"shared", "independent"}, default="shared"
        ``"independent"``: the paper's B copies, copy i fed the i-th permuted synthetic
        row of each batch. ``"shared"``: one learner fed the mean loss of all B synthetic
        rows of each batch (equivalently, B identical copies that all see every
        synthetic row). Post-processing of the sanitizer's output either way (privacy
        unchanged); see Notes for the regret.
    learning_rate : float, "adaptive" or "auto", default="adaptive"
        Step size of the Hedge copies. ``"adaptive"``: AdaHedge in every copy.
        ``"auto"``: the fixed worst-case η = √(8 ln H / (T/B)) for the T/B rows a copy
        sees (the earlier default). A float: that fixed η. Any value keeps privacy.
    sanitizer : Sanitizer, optional
        Default :class:`~skdp.online.HistogramSanitizer` (pure ε-DP noisy cell
        histogram, projected onto the counts of B rows).
        Any object with ``sanitize`` and ``cost`` (see :class:`~skdp.online.Sanitizer`).
    on_failure : {"skip", "stop"}, default="skip"
        When a sanitizer call fails (e.g. every noisy count of a small batch is ≤ 0):
        ``"stop"`` is the paper's "exit" — the learner stops updating for good and
        keeps predicting its last distribution (``updates_stopped_``, a
        :class:`~skdp.exceptions.PrivacyWarning`); ``"skip"`` (a practical choice)
        feeds the copies nothing for that batch and goes on. Either way the decision
        is post-processing of the sanitizer's output: privacy is the same.
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
        Charged once per stream (by ``fit`` and by the first ``partial_fit``).
    random_state : None, int, numpy Generator, RandomState or TestingSeed, default=None
        ``None``: noise from OS entropy; the stream's keys derive only events not yet
        run and a copy holds none (see :mod:`skdp.base`). A learner that can still
        continue its stream is private running state, not a publishable model. A seed
        is a testing mode: the noise is reproducible from ``get_params()``, a
        :class:`~skdp.exceptions.PrivacyWarning` says so, and with a ``budget`` it is
        refused unless wrapped as ``skdp.TestingSeed(seed)``.
    verbose : int, default=0
        Print when buckets start or the learner stops.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    labels_ : ndarray of int8, shape (H, N)
        The class.
    batch_size_ : int
        B of the current bucket.
    learning_rate_ : float or None
        The fixed η of the copies in the current bucket (None for AdaHedge).
    n_batches_ : int
        Batches sanitized so far (all buckets).
    n_failed_batches_ : int
        Sanitizer calls that failed (public: a function of the sanitizer outputs).
    n_buckets_, bucket_horizon_ : int
        Buckets started and the current bucket's horizon.
    n_rounds_seen_ : int
    privacy_spent_ : PrivacyCost
        What the stream was charged.
    updates_stopped_ : bool
        True once a sanitizer call failed with ``on_failure="stop"``.

    Notes
    -----
    Which defaults are whose: the algorithm (batches, B copies, uniform copy, random
    permutation, one synthetic row per copy and batch) is the paper's; the Hedge /
    AdaHedge copies, the histogram sanitizer with its projection, B = "auto" and the
    doubling policy are practical choices for finite classes on small domains. None of
    them touches privacy (below): they act on sanitizer outputs only.

    Why this B. Regret splits into the copies' regret on the synthetic rows and the
    sanitizer's distortion. Each AdaHedge copy pays about ln H / Δ' where Δ' is the gap
    between the best and the next hypotheses on *synthetic* rows, so the B copies pay
    about B·ln H / Δ'. The noise of scale 2/ε on 2N cells waters a batch's signal
    down to Δ' ≈ Δ·B/(B + c·2N/ε): below B ≈ 2N/ε the copies pay for noise, above it for
    their number. Hence B ∝ 2N/ε, independent of T. Measured (thresholds, N = 16, ε = 1,
    T = 10⁵, noiseless oblivious stream, one seed) over B = 16, 32, 64, 128, 331: regret
    461, 338, 325, 475, 998; at ε = 4, T = 10⁴, B = 8 and 16 were best (42–46). The cap
    ⌈√T⌉ keeps at least √T batches on short horizons. The earlier default,
    B ∝ (2N/ε)^{2/3}·T^{1/3} with a fixed worst-case η and a clipped histogram, balanced
    worst-case bounds and had 9–13 × the private experts' regret at T = 10⁵, ε = 1 (4,198
    vs 464 noiseless); the defaults have 0.7–1.8 × (305 vs 464;
    ``benchmarks/online_agnostic.py``). On worst-case sequences the bound B·R(T/B) +
    (sanitizer error)·T of Thm 4.1 still holds, with AdaHedge's R. Smaller B means more
    batches: a run costs O(T/B) Python steps. Larger domains cost more: at N = 64
    (T = 10⁵, ε = 1, one seed) the defaults (B = 256) have regret 1,778 / 2,219 (label
    noise 0 / 20 %) against the private experts' 621 / 609, 2.9–3.6 × (B = 64 and 128
    were worse: the gap between neighbouring thresholds is 1/N). On domains beyond a
    few dozen points prefer :class:`~skdp.online.PrivateExpertsClassifier`.

    Why shared copies. Each round draws its hypothesis from a distribution q_j fixed
    before batch j starts (the uniform mixture of the copies), with fresh randomness, so
    against any adaptive adversary the expected loss of batch j is ⟨q_j, L_j⟩, L_j the
    batch's loss vector. With one shared Hedge on the batches' mean synthetic losses,
    q_j is Hedge after j − 1 steps of losses in [0, 1]: regret ≤ B·√((T/B)·ln H / 2) +
    (sanitizer distortion), the same worst-case order √(B·T·ln H) as B independent
    copies, but on stochastic streams one learner reads B times as many rows per step
    as each copy and its regret stops growing once the best hypothesis leads.
    Measured (``benchmarks/results/online_agnostic_domains.md``: thresholds, T = 10⁵,
    ε = 1, oblivious uniform stream, 2 seeds, label noise 0 / 20 %): N = 64, regret
    141 / 154 shared, 1,856 / 2,268 independent, private experts 562 / 866; N = 16,
    53 / 47, 374 / 514 and 335 / 298.

    Internal, non-private state (the current batch's rows, the generators, the exact
    online mistakes ``_n_mistakes`` computed from the private labels) is kept in
    private attributes that must not be released.

    Privacy
    -------
    (ε, δ)-DP for the whole sequence of predictions (and every ``predict``), for *every*
    stream, oblivious or adaptive, of any length, against neighbouring streams that
    differ in one row: each row is in exactly one batch of one bucket, and everything
    released is post-processing of the sanitizer outputs of the *completed* batches and
    of independent randomness, so parallel composition over the disjoint batches gives
    the sanitizer's (ε, δ) (Li, Wang & Ye 2024, Thm 4.1 and App C.1). No cap is needed:
    the guarantee does not depend on T, the batch size or the data. The charge happens
    once per stream, after validation; later ``partial_fit`` calls continue the same
    release. The fitted object holds private state (the incomplete batch): publish
    predictions, not the pickled estimator. Copies of a fitted stream share a ledger:
    continuing two copies of one stream is refused
    (:class:`~skdp.exceptions.PrivacyError`). ``predict_proba`` (P(+1) under the
    released distribution) and ``decision_function`` (2·P(+1) − 1) are post-processing
    of the same releases: no further cost.

    References
    ----------
    Y. Li, Y. Wang, Y. Ye. Private online learning against an adaptive adversary:
    realizable and agnostic settings, 2024, §4.1, Alg 3, Thm 4.1, §5.
    N. Cesa-Bianchi, G. Lugosi. Prediction, Learning, and Games, 2006 (Hedge).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.hypotheses import threshold_class
    >>> from skdp.online import BatchSanitizedOnlineClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 8, size=(4000, 1))
    >>> y = np.where(rng.random(4000) < 0.1, 1 - (X[:, 0] >= 5), X[:, 0] >= 5).astype(int)
    >>> clf = BatchSanitizedOnlineClassifier(4.0, hypothesis_class=threshold_class(8),
    ...                                      random_state=0).fit(X, y)
    >>> clf.predict([[1], [7]]), clf.privacy_spent_.epsilon
    (array([0, 1]), 4.0)
    """

    _parameter_constraints: dict = {
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "delta": [Interval(numbers.Real, 0, 1, closed="left")],
        "hypothesis_class": "no_validation",
        "copies": [StrOptions({"shared", "independent"})],
        "batch_size": [Interval(numbers.Integral, 1, None, closed="left"),
                       StrOptions({"auto"})],
        "n_rounds": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither"),
                          StrOptions({"adaptive", "auto"})],
        "sanitizer": [Sanitizer, None],
        "on_failure": [StrOptions({"skip", "stop"})],
        "budget": [PrivacyBudget, None],
        "random_state": [*RANDOM_STATE_CONSTRAINT],
        "verbose": ["verbose"],
        "classes": ["array-like", None],
    }

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-6, hypothesis_class: Any = None,
                 batch_size: int | str = "auto", n_rounds: int | None = None, *,
                 learning_rate: float | str = "adaptive", sanitizer: Sanitizer | None = None,
                 on_failure: str = "skip", budget: PrivacyBudget | None = None,
                 random_state: int | np.random.Generator | np.random.RandomState | None = None,
                 verbose: int = 0,
                 classes: ArrayLike | None = None, copies: str = "shared") -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.hypothesis_class = hypothesis_class
        self.batch_size = batch_size
        self.n_rounds = n_rounds
        self.learning_rate = learning_rate
        self.sanitizer = sanitizer
        self.on_failure = on_failure
        self.budget = budget
        self.random_state = random_state
        self.verbose = verbose
        self.classes = classes
        self.copies = copies

    # ----------------------------------------------------------------- parameters
    def _sanitizer(self):
        return HistogramSanitizer() if self.sanitizer is None else self.sanitizer

    def _stream_cost(self, plan):
        epsilon, delta = self._check_privacy_params()
        return self._sanitizer().cost(epsilon, delta)

    def _auto_batch_size(self, horizon):
        n_cells = 2 * self.labels_.shape[1]
        b = math.ceil(AUTO_ROWS_PER_CELL * n_cells / self.epsilon)
        return int(min(max(min(b, math.isqrt(horizon - 1) + 1), 2), horizon))

    # ----------------------------------------------------------------- buckets
    def _init_stream(self, plan):
        self.n_batches_ = self.n_failed_batches_ = 0
        super()._init_stream(plan)

    def _new_bucket(self, horizon):
        b = (self._auto_batch_size(horizon) if self.batch_size == "auto"
             else int(min(self.batch_size, horizon)))
        self.batch_size_ = b
        per_copy = max(1, math.ceil(horizon / b))
        if self.learning_rate == "adaptive":
            self.learning_rate_ = None
        elif self.learning_rate == "auto":
            self.learning_rate_ = math.sqrt(8.0 * math.log(max(self.n_hypotheses_, 2))
                                            / per_copy)
        else:
            self.learning_rate_ = float(self.learning_rate)
        n_copies = 1 if self.copies == "shared" else b
        self._copies = HedgeCopies(n_copies, self.n_hypotheses_, self.learning_rate_)
        self._batch_index = 0  # within the bucket
        self._pending_x = np.empty(b, dtype=np.intp)
        self._pending_y = np.empty(b, dtype=np.int8)
        self._n_pending = 0
        self._draws = None
        self._mixture = None

    def _batch_draws(self):
        """Copy index and Hedge uniform of every round of the current batch (keyed)."""
        if self._draws is None:
            rng = self._event_rng(self._key(3 * self._batch_index))
            copies = rng.integers(0, self.batch_size_, size=self.batch_size_)
            if self.copies == "shared":
                copies[:] = 0
            uniforms = rng.random(self.batch_size_)
            self._draws = (copies, uniforms, self._copies.probs())
        return self._draws

    def _segment(self, limit):
        return min(limit, self.batch_size_ - self._n_pending)

    def _play(self, x, y):
        copies, uniforms, probs = self._batch_draws()
        rows = slice(self._n_pending, self._n_pending + x.size)
        h = sample_rows(probs[copies[rows]], uniforms[rows])
        y_hat = self.labels_[h, x]
        self._pending_x[rows] = x
        self._pending_y[rows] = y
        self._n_pending += x.size
        if self._n_pending == self.batch_size_:
            self._end_batch()
        return y_hat

    def _end_batch(self):
        key = 3 * self._batch_index
        eps, delta = self.epsilon, self.delta
        synthetic = self._sanitizer().sanitize(
            self._pending_x, self._pending_y, self.labels_.shape[1], eps, delta,
            random_state=self._event_rng(self._key(key + 1)))
        self._pending_x[:] = 0  # the raw batch is not needed any more
        self._pending_y[:] = 0
        self._n_pending = 0
        self._batch_index += 1
        self.n_batches_ += 1
        self._draws = None
        self._mixture = None
        if synthetic is None:
            self.n_failed_batches_ += 1
            if self.on_failure == "stop":
                self._stop_updating(f"the sanitizer failed on batch {self.n_batches_}")
            return
        xs, ys = synthetic
        perm = self._event_rng(self._key(key + 2)).permutation(xs.size)
        xs, ys = xs[perm], ys[perm]
        # Copy i is fed synthetic row i: one Hedge step per copy, all at once; a shared
        # copy is fed the batch's mean loss.
        losses = ys[:, None] != self.labels_[:, xs].T
        if self.copies == "shared":
            losses = losses.mean(axis=0, keepdims=True)
        self._copies.update(losses)

    def _positive_rate(self, x):
        if self._mixture is None:
            self._mixture = self._copies.probs().mean(axis=0) @ (self.labels_ > 0)
        return self._mixture[x]
