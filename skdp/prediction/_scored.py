"""One released score per query: predict, predict_proba and decision_function agree.

Yan's predictor and subsample-and-aggregate release, for every query, one number
p ∈ (0, 1) — the *score* — from which everything else is read:

* ``predict`` is ``classes_[1]`` iff p > ½ (a score is never exactly ½);
* ``predict_proba`` is ``[1 − p, p]``; ``decision_function`` is p − ½.

**Answers are remembered.** A query asked again (the same row, byte for byte) gets
the score it got the first time, from the transcript: re-publishing a released
answer is post-processing and costs nothing. So predict, predict_proba and
decision_function on the same rows agree however often and in whatever order they
are called, and a repeated query never spends budget. Within one call the new rows
are answered in the order of their first occurrence. The memory holds released
answers only (keyed by two 64-bit hashes of the row's bytes; rows are told apart
by the first hash within a call and by both across calls — a collision, probability
~2⁻⁶⁴ per pair, would at worst share or re-ask an answer, never leak one), so
copies and pickles may carry it.
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.utils.validation import check_is_fitted

from .._input import validate_data
from ._base import QueryBudgetExhaustedError
from ._state import answer_on_state, make_durable

__all__: list[str] = []

_P = TypeVar("_P", bound="_ScoredAnswers")

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1, _MIX2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


def _splitmix(z: NDArray[np.uint64]) -> NDArray[np.uint64]:
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


def _row_hashes(X: NDArray[np.float64]) -> tuple[NDArray[np.uint64], NDArray[np.uint64]]:
    """Two independent 64-bit hashes of each row's float64 bytes."""
    words = np.ascontiguousarray(X, dtype=np.float64).view(np.uint64)
    n = words.shape[0]
    a = np.full(n, 0x243F6A8885A308D3, dtype=np.uint64)
    b = np.full(n, 0x13198A2E03707344, dtype=np.uint64)
    for j in range(words.shape[1]):
        a = _splitmix(a ^ words[:, j])
        b = _splitmix(b + words[:, j] + _GOLDEN)
    return a, b


class _AnswerCache:
    """Released scores by row hash (see the module docstring).

    A list of runs, each sorted by the first hash; a new batch is a new run, and a run
    is merged into the one before it while that one is less than twice its size (a
    binary counter), so a stored answer is moved O(log T) times in all and a lookup
    searches at most ~log₂ T runs — single-row calls stay cheap however long the
    stream.
    """

    def __init__(self) -> None:
        self.runs: list[tuple[NDArray[np.uint64], NDArray[np.uint64], NDArray[np.float64]]] = []

    def lookup(self, a: NDArray[np.uint64], b: NDArray[np.uint64]) -> NDArray[np.float64]:
        """Scores of the rows with hashes (a, b), ``a`` sorted; NaN where not released."""
        out = np.full(a.size, np.nan)
        for keys, check, scores in self.runs:
            pos = np.minimum(np.searchsorted(keys, a), keys.size - 1)
            hit = (keys[pos] == a) & (check[pos] == b)
            out[hit] = scores[pos[hit]]
        return out

    def store(self, a: NDArray[np.uint64], b: NDArray[np.uint64],
              scores: NDArray[np.float64]) -> None:
        """Remember released scores; ``a`` sorted."""
        if a.size == 0:
            return
        self.runs.append((a, b, np.asarray(scores, dtype=float)))
        while len(self.runs) > 1 and self.runs[-2][0].size < 2 * self.runs[-1][0].size:
            (k1, c1, s1), (k2, c2, s2) = self.runs[-2], self.runs.pop()
            keys = np.concatenate([k1, k2])
            order = np.argsort(keys, kind="stable")
            self.runs[-1] = (keys[order], np.concatenate([c1, c2])[order],
                             np.concatenate([s1, s2])[order])


class _ScoredAnswers:
    """Mixin: predict / predict_proba / decision_function from released scores.

    The host implements ``_answer_scores(X)``: scores of new queries in order, or
    :class:`QueryBudgetExhaustedError` whose ``answers`` are the scores released
    before the budget ran out.
    """

    _state: Any  # the host's _StreamState (holds ``answers``, an _AnswerCache)
    classes_: NDArray

    def make_durable(self: _P) -> _P:
        """Keep the running mechanism in the store of ``budget_``, shared by every copy.

        From now on this predictor, its pickles and deep copies, in every process
        that reaches the store (a restarted server, replicas on one SQLite file or one
        PostgreSQL database), answer from one saved state: each call loads the newest
        version, answers, and saves the next by compare-and-swap before any answer
        leaves it, so they continue the *same* mechanism — no new instance and no
        second payment — and a stale copy never saves over a newer one
        (:class:`~skdp.exceptions.StaleStateError`; the call then answers from the
        newer state). A ``memory`` ledger first moves to this machine's shared SQLite
        file. Calling it on a predictor whose record exists (another copy made it
        durable) loads that record. See ``skdp.prediction._state``.

        Privacy: unchanged — the same charges, committed before their answers. The
        saved state is private (exact teacher votes, the live instance's noisy
        thresholds): it is encrypted and sealed under the ledger key, and the model
        file and the store must both be kept private.

        Returns
        -------
        self
        """
        check_is_fitted(self, "budget_")
        make_durable(self)
        return self

    @property
    def durable_(self) -> bool:
        """Whether the running mechanism is kept in the ledger's store
        (:meth:`make_durable`)."""
        check_is_fitted(self, "budget_")
        return self._state._durable is not None

    def _scores(self, X, as_output, gate=None):
        """Released scores of the rows of ``X`` (answering the new ones).

        ``gate(state, n_rows)``, if given, runs first on the current (for a durable
        predictor: freshly loaded) state; it may raise to refuse the call, or return a
        callable run once the answers are released into the state, before it is saved
        (``skdp serve`` keeps its per-token quotas this way).
        """
        check_is_fitted(self, "budget_")
        X = validate_data(self, X, reset=False)
        return answer_on_state(lambda: self._state,
                               lambda: self._released_scores(X, as_output), gate, X.shape[0])

    def _released_scores(self, X, as_output):
        cache = self._state.answers
        a, b = _row_hashes(X)
        order = np.argsort(a, kind="stable")  # work in hash order; equal rows adjacent
        a, b = a[order], b[order]
        scores = cache.lookup(a, b)
        missing = np.flatnonzero(np.isnan(scores))
        if missing.size:
            am = a[missing]
            lead = np.r_[True, am[1:] != am[:-1]]  # the first (earliest) row of each key
            group = np.cumsum(lead) - 1
            firsts = missing[lead]
            by_time = np.argsort(order[firsts], kind="stable")  # in query order
            new = firsts[by_time]
            try:
                released = self._answer_scores(X[order[new]])
            except QueryBudgetExhaustedError as exc:
                m = exc.n_answered
                released = np.asarray(exc.answers, dtype=float)
                done = np.sort(by_time[:m])
                by_group = np.full(firsts.size, np.nan)
                by_group[by_time[:m]] = released
                cache.store(a[firsts[done]], b[firsts[done]], by_group[done])
                scores[missing] = by_group[group]
                answers = np.empty(scores.size)
                answers[order] = scores
                unanswered = np.flatnonzero(np.isnan(answers))
                stop = int(unanswered[0]) if unanswered.size else answers.size
                exc.answers = as_output(answers[:stop])
                exc.n_answered = stop
                raise
            by_group = np.empty(firsts.size)
            by_group[by_time] = released
            cache.store(a[firsts], b[firsts], by_group)
            scores[missing] = by_group[group]
        out = np.empty(scores.size)
        out[order] = scores
        return out

    def _labels(self, scores: NDArray[np.float64]) -> NDArray:
        return self.classes_[(scores > 0.5).astype(np.intp)]

    @staticmethod
    def _proba(scores: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.column_stack([1.0 - scores, scores])

    def predict(self, X: ArrayLike) -> NDArray:
        """Answer the queries in ``X``, spending from ``budget_`` for new rows only.

        Returns
        -------
        y : ndarray of shape (n_queries,)
            ``classes_[1]`` where the released score is above ½, else ``classes_[0]``.

        Raises
        ------
        QueryBudgetExhaustedError
            When the query budget runs out; ``error.answers`` holds the labels of
            the rows before the first one left unanswered.
        """
        return self._labels(self._scores(X, self._labels))

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Released scores as probabilities, shape (n_queries, 2) in ``classes_`` order.

        Spends exactly like :meth:`predict` (the same released answer per row: a
        row answered by either method before is free). See the class docstring for
        what the score of each answer is.
        """
        return self._proba(self._scores(X, self._proba))

    def predict_log_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """``log`` of :meth:`predict_proba` (spends like it)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """Released score minus ½, shape (n_queries,): positive means ``classes_[1]``.

        Spends exactly like :meth:`predict`.
        """
        return self._scores(X, lambda s: s - 0.5) - 0.5
