"""Machinery the agnostic private online learners share.

:class:`_AgnosticOnlineClassifier` is the base of
:class:`~skdp.online.BatchSanitizedOnlineClassifier` and
:class:`~skdp.online.PrivateExpertsClassifier`: a finite class as a label matrix,
randomised per-round predictions (a hypothesis drawn from the learner's current
distribution), the doubling-trick buckets that keep privacy for streams of any length,
and real-valued features through the public discretisation of a class that owns one
(e.g. :class:`~skdp.hypotheses.RealThresholds`).
"""

import math

import numpy as np

from ..hypotheses.finite import FiniteClass
from ..hypotheses.littlestone import (
    PointVersionSpace,
    ThresholdVersionSpace,
    point_class,
    threshold_class,
)
from ._base import PrivateOnlineDomainClassifier

__all__ = ["MAX_TABLE", "label_matrix", "sample_rows", "softmax_rows"]

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
    if callable(getattr(hc, "finite_class", None)):  # a class over discretised reals
        hc = hc.finite_class()
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
    (probability of +1 at x under the current distribution, which ``predict_proba``
    returns).
    """

    # ----------------------------------------------------------------- streams
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

    # predict_proba / decision_function: the probability of +1 under the released
    # distribution (post-processing of the private statistics' releases), not smoothed.
    _proba_smoothing = 0.0

    def _released_score(self, x):
        return 2.0 * self._positive_rate(x) - 1.0

    def _after_block(self):
        self._positive_rate(np.empty(0, dtype=np.intp))  # fill the cache before predict

    def _fresh_predict_one(self, x):
        return None
