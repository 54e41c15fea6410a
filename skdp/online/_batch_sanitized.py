"""Agnostic private online learning by batch sanitization (Li, Wang & Ye 2024, Alg 3).

Also home of :class:`_AgnosticOnlineClassifier`, the machinery the agnostic learners of
this package share (:class:`BatchSanitizedOnlineClassifier` here and
:class:`~skdp.online.PrivateExpertsClassifier`): a finite class as a label matrix,
randomised per-round predictions (a hypothesis drawn from the learner's current
distribution), and the doubling-trick buckets that keep privacy for streams of any
length.
"""

import math
import numbers

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..accounting import PrivacyBudget
from ..hypotheses.finite import FiniteClass
from ..hypotheses.littlestone import (
    PointVersionSpace,
    ThresholdVersionSpace,
    point_class,
    threshold_class,
)
from ._base import PrivateOnlineDomainClassifier
from ._sanitizers import HistogramSanitizer, Sanitizer

__all__ = ["BatchSanitizedOnlineClassifier"]

#: Largest label matrix (hypotheses × domain points) the agnostic learners accept.
MAX_TABLE = 2**24

# Per bucket, event keys are bucket · _BUCKET_STRIDE + local key (keys must stay < 2⁶⁴).
_BUCKET_STRIDE = 2**40


def label_matrix(hypothesis_class, name, max_table=MAX_TABLE):
    """±1 (int8) label matrix (H, N) of a finite class; refuses what is too large."""
    if hypothesis_class is None:
        raise ValueError(f"{name} needs a hypothesis_class: a FiniteClass, a ±1 label "
                         "matrix, threshold_class(N), point_class(N) …")
    hc = hypothesis_class
    if isinstance(hc, ThresholdVersionSpace):
        hc = threshold_class(hc.n_domain) if hc.n_domain < math.isqrt(max_table) else hc
    elif isinstance(hc, PointVersionSpace):
        hc = point_class(hc.n_domain) if hc.n_domain < math.isqrt(max_table) else hc
    if isinstance(hc, (ThresholdVersionSpace, PointVersionSpace)):
        raise ValueError(f"{name}: the class over {hc.n_domain} points is too large for a "
                         f"label matrix (max_table={max_table}).")
    if not isinstance(hc, FiniteClass):
        try:
            hc = FiniteClass(hc)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name}: hypothesis_class must be a finite class (FiniteClass "
                             f"or a ±1 label matrix): {exc}") from exc
    L = hc.label_matrix
    if L.size > max_table:
        raise ValueError(f"{name}: the label matrix has {L.shape[0]} × {L.shape[1]} entries, "
                         f"more than max_table={max_table}.")
    return L


def softmax_rows(log_weights):
    """Row-wise softmax of a 2-D array (stable)."""
    z = log_weights - log_weights.max(axis=1, keepdims=True)
    w = np.exp(z)
    return w / w.sum(axis=1, keepdims=True)


def sample_rows(probs, uniforms):
    """Index drawn from each row's distribution by inversion with the given uniforms."""
    cdf = np.cumsum(probs, axis=1)
    idx = np.count_nonzero(cdf < uniforms[:, None] * cdf[:, -1:], axis=1)
    return np.minimum(idx, probs.shape[1] - 1)


class _AgnosticOnlineClassifier(PrivateOnlineDomainClassifier):
    """Randomised private online learners over a finite class, in doubling buckets.

    The stream is cut into buckets, each played by a fresh instance of the algorithm on
    its own rounds: with ``n_rounds=None`` (or past the horizon) buckets of 1, 2, 4, …
    rounds (Li, Wang & Ye §5, "unknown horizon"); with ``n_rounds=T`` buckets of
    T, 2T, 4T, …; ``fit`` with ``n_rounds=None`` uses len(X) for the first bucket. Every
    row lies in exactly one bucket and each bucket's instance is (ε, δ)-DP in its own
    rows, so the whole stream is (ε, δ)-DP by parallel composition, for any length.

    Each round's prediction is the label of a hypothesis drawn from the current
    distribution of the instance (randomness keyed by the round, so blocks give the
    same run as one pass); ``predict`` returns the majority label of that distribution
    (deterministic post-processing). Subclasses implement ``_new_bucket(horizon)``,
    ``_segment(limit)`` (how many rows the next vectorised segment may hold),
    ``_play(x, y)`` (predict a segment, ±1, then absorb it) and ``_positive_rate(x)``
    (probability of +1 at x under the current distribution).
    """

    # ----------------------------------------------------------------- streams
    def _hypotheses(self):
        return self.hypothesis_class

    def _prepare_stream(self, from_fit):
        L = label_matrix(self._hypotheses(), type(self).__name__)
        return L.shape[1], {"labels": L}

    def _before_block(self, n_rows, first_call, from_fit, plan):
        super()._before_block(n_rows, first_call, from_fit, plan)
        if first_call:
            self._first_horizon = n_rows if (from_fit and self.n_rounds is None) else None

    def _init_stream(self, plan):
        self.labels_ = plan["labels"]
        self.n_hypotheses_ = self.labels_.shape[0]
        self.n_buckets_ = 0
        self._start_bucket()

    def _bucket_horizon(self, k):
        first = self.n_rounds if self.n_rounds is not None else (self._first_horizon or 1)
        return int(first) << k

    def _start_bucket(self):
        self.bucket_horizon_ = self._bucket_horizon(self.n_buckets_)
        self._bucket_seen = 0
        self.n_buckets_ += 1
        self._new_bucket(self.bucket_horizon_)
        if self.verbose and self.n_buckets_ > 1:
            print(f"[{type(self).__name__}] bucket {self.n_buckets_} "
                  f"({self.bucket_horizon_} rounds) starts after {self.n_rounds_seen_} rounds")

    def _next_bucket(self):
        """The current bucket is full: start the next one (or stop, in a subclass)."""
        self._start_bucket()

    def _key(self, local):
        return (self.n_buckets_ - 1) * _BUCKET_STRIDE + local

    # ----------------------------------------------------------------- the loop
    def _run(self, idx, ys, record):
        # Overrides the base loop: predictions are randomised per round, so there is no
        # fixed released hypothesis to vectorise against; the subclasses vectorise over
        # segments between state changes instead.
        n = idx.shape[0]
        wrong_at = np.zeros(n, dtype=bool) if record else None
        pos = 0
        while pos < n:
            if not self._frozen() and self._bucket_seen >= self.bucket_horizon_:
                self._next_bucket()  # lazily: predict() keeps the finished bucket's state
            if self._frozen():
                wrong = self._released_predict(idx[pos:]) != ys[pos:]
                end = n
            else:
                left = self.bucket_horizon_ - self._bucket_seen
                end = pos + self._segment(min(n - pos, left))
                wrong = self._play(idx[pos:end], ys[pos:end]) != ys[pos:end]
                self._bucket_seen += end - pos
            self._n_mistakes += int(np.count_nonzero(wrong))
            self.n_rounds_seen_ += end - pos
            if record:
                wrong_at[pos:end] = wrong
            pos = end
        return wrong_at

    def _step(self, x, y, wrong):  # pragma: no cover - _run above never calls it
        raise NotImplementedError

    def _released_predict(self, x):
        return np.where(self._positive_rate(x) > 0.5, 1, -1).astype(np.int8)

    def _fresh_predict_one(self, x):
        return None


class BatchSanitizedOnlineClassifier(_AgnosticOnlineClassifier):
    """Private agnostic online learner by batch sanitization (Li, Wang & Ye, Alg 3).

    X holds domain indices (shape (n, 1), integers in [0, N)); the class is finite,
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

    The copies are Hedge (exponential weights over the class, learning rate
    η = √(8 ln H / (T/B)) for the T/B rows a copy sees): proper, with expected regret
    √((T/B)·ln H / 2) on any sequence.

    Parameters
    ----------
    epsilon : float, default=1.0
        ε of the whole stream (every prediction of every round).
    delta : float, default=1e-6
        δ ∈ [0, 1) passed to the sanitizer; the default sanitizer is pure ε-DP and
        charges δ = 0.
    hypothesis_class : FiniteClass, ±1 label matrix, or ThresholdVersionSpace /
        PointVersionSpace (turned into label matrices)
        Required. At most ``MAX_TABLE`` = 2²⁴ (hypothesis, point) entries.
    batch_size : int or "auto", default="auto"
        B. ``"auto"``: B = ⌈(2N/ε)^{2/3}·T^{1/3} / (ln H)^{1/3}⌉ clipped to [1, T], which
        balances the copies' regret √(T·B·ln H) against the histogram sanitizer's error
        about 2N·T/(εB) (a practical choice; the paper's B = Θ̃((T d⁵√d*/ε)^{1/2})
        belongs to the generic Littlestone sanitizer).
    n_rounds : int, optional
        Horizon T of the first bucket (utility only: it sizes B and η). ``None``: len(X)
        for ``fit``; buckets of 1, 2, 4, … rounds for a ``partial_fit`` stream. Past the
        horizon the stream continues in fresh buckets of 2T, 4T, … rounds.
    learning_rate : float or "auto", default="auto"
        η of the Hedge copies (``"auto"``: as above). Any value keeps privacy.
    sanitizer : Sanitizer, optional
        Default :class:`~skdp.online.HistogramSanitizer` (pure ε-DP noisy cell histogram).
        Any object with ``sanitize`` and ``cost`` (see :class:`~skdp.online.Sanitizer`).
    on_failure : {"skip", "stop"}, default="skip"
        When a sanitizer call fails (e.g. every noisy count of a small batch is ≤ 0):
        ``"stop"`` is the paper's "exit" — the learner stops updating for good and
        keeps predicting its last distribution (``updates_stopped_``, a
        :class:`~skdp.exceptions.PrivacyWarning`); ``"skip"`` (a practical choice)
        feeds the copies nothing for that batch and goes on. Either way the decision
        is post-processing of the sanitizer's output: privacy is the same.
    classes : array-like of shape (2,), default=None
        The label set, a **public** parameter: ``classes_`` is exactly
        ``np.unique(classes)`` (``classes_[1]`` is the +1 label) whatever ``y``
        holds, and labels of ``y`` outside it raise ``ValueError``. ``None``: read
        from ``y`` as scikit-learn does (``partial_fit`` then needs its own
        ``classes`` on the first call), with a
        :class:`~skdp.exceptions.PrivacyLeakWarning` — the label set is then a
        statistic of the private data that the guarantee does not cover.
    budget : PrivacyBudget, optional
        Charged once per stream (by ``fit`` and by the first ``partial_fit``).
    random_state : None, int or numpy.random.Generator
        Source of all randomness.
    verbose : int, default=0
        Print when buckets start or the learner stops.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    labels_ : ndarray of int8, shape (H, N)
        The class.
    batch_size_ : int
        B of the current bucket.
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
    permutation) is the paper's; the Hedge copies, the histogram sanitizer, B = "auto"
    and the doubling policy are practical choices for finite classes on small domains.
    With this sanitizer the regret is Õ(T^{2/3}) (error α ≈ 2N/(εB) in Thm 4.1); the
    paper's generic sanitizer gives Õ(T^{3/4}) (Cor 4.3).

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
    (:class:`~skdp.exceptions.PrivacyError`).

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
        "batch_size": [Interval(numbers.Integral, 1, None, closed="left"),
                       StrOptions({"auto"})],
        "n_rounds": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither"),
                          StrOptions({"auto"})],
        "sanitizer": [Sanitizer, None],
        "on_failure": [StrOptions({"skip", "stop"})],
        "budget": [PrivacyBudget, None],
        "random_state": ["random_state", np.random.Generator],
        "verbose": ["verbose"],
        "classes": ["array-like", None],
    }

    def __init__(self, epsilon=1.0, delta=1e-6, hypothesis_class=None, batch_size="auto",
                 n_rounds=None, *, learning_rate="auto", sanitizer=None, on_failure="skip",
                 budget=None, random_state=None, verbose=0, classes=None):
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

    # ----------------------------------------------------------------- parameters
    def _sanitizer(self):
        return HistogramSanitizer() if self.sanitizer is None else self.sanitizer

    def _stream_cost(self, plan):
        epsilon, delta = self._check_privacy_params()
        return self._sanitizer().cost(epsilon, delta)

    def _auto_batch_size(self, horizon):
        n_cells = 2 * self.labels_.shape[1]
        log_h = max(math.log(self.n_hypotheses_), 1.0)
        b = (n_cells / self.epsilon) ** (2 / 3) * horizon ** (1 / 3) / log_h ** (1 / 3)
        return int(min(max(math.ceil(b), 1), horizon))

    # ----------------------------------------------------------------- buckets
    def _init_stream(self, plan):
        self.n_batches_ = self.n_failed_batches_ = 0
        super()._init_stream(plan)

    def _new_bucket(self, horizon):
        b = (self._auto_batch_size(horizon) if self.batch_size == "auto"
             else int(min(self.batch_size, horizon)))
        self.batch_size_ = b
        per_copy = max(1, math.ceil(horizon / b))
        self.learning_rate_ = (math.sqrt(8.0 * math.log(max(self.n_hypotheses_, 2)) / per_copy)
                               if self.learning_rate == "auto" else float(self.learning_rate))
        self._log_weights = np.zeros((b, self.n_hypotheses_))
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
            uniforms = rng.random(self.batch_size_)
            cdf_copies = softmax_rows(self._log_weights)
            self._draws = (copies, uniforms, cdf_copies)
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
        # Copy i is fed synthetic row i: one Hedge step per copy, all at once.
        self._log_weights -= self.learning_rate_ * (ys[:, None] != self.labels_[:, xs].T)

    def _positive_rate(self, x):
        if self._mixture is None:
            probs = softmax_rows(self._log_weights)
            self._mixture = probs.mean(axis=0) @ (self.labels_ > 0)
        return self._mixture[x]
