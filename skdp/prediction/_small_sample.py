"""Yan's predictor below its teacher floor: a subsample-and-aggregate answer.

BetweenThresholds' gap needs thousands of teachers, one labelled row each at least.
With fewer rows, :class:`~skdp.prediction.PrivatePredictor` answers like
:class:`~skdp.prediction.SubsampleAggregatePredictor` planned for
``n_queries`` distinct queries: k' = min(⌈4/ε_q⌉, max(1, ⌊n/m⌋)) teachers on
disjoint blocks, one noisy count per new query, scored by
:class:`~skdp.prediction.subsample_aggregate.VoteScores` (which tends to the
released majority label where the noise dwarfs the votes). So below the floor it
answers exactly what ``SubsampleAggregatePredictor(n_teachers=k')`` answers with
the same ε, δ and T.

*Rows per teacher m (public).* m = 2 for a hypothesis class (a plain binary
``LogisticRegression`` estimator included: it runs as ``Halfspaces``), m = 10 for
any other scikit-learn estimator — subsample-and-aggregate's own default, whose
m = 10 is why the two used to coincide. Below the floor the per-answer ε_q is tiny
(ε = 1, T = 2·10⁴: ε_q = 0.0017, noise scale ≈ 600 votes), so the count's signal,
k'·|q − ½|, matters more than each teacher's accuracy: on issue 16's 2-D task
(``benchmarks/private_prediction.py --task 2d``, ε = 1, 4 seeds) halfspace teachers on
n = 3 000 rows answer 0.59 with m = 10 (300 teachers: the released majority label),
0.68 with m = 2 and 0.69 with m = 1; thresholds (X ~ U[0, 1], T = 5 000, 3 seeds) at
n = 2 000 answer 0.62 / 0.72 / 0.55 with m = 10 / 2 / 1 (a one-row threshold block
is a constant). An arbitrary estimator
fitted on two rows is mostly a constant, hence its m = 10. m, n, ε, δ and T are
public, so k' is too (Lemma F holds for every k').

*Lemma F (the fallback's plan).* Let ε_q be the largest per-answer ε such that
T = ``n_queries`` ``DiscreteLaplace(ε_q)`` events compose to (ε, δ) by
:func:`skdp.accounting.calibrate_plan` (``accounting="paper"``: exact optimal
composition). A transcript of at most T answers, each the noisy count of
teachers trained on disjoint blocks plus discrete Laplace(ε_q) noise, asked
adaptively by the predictor and all its copies, and post-processed into scores,
is (ε, δ)-DP. *Proof.* One changed row changes one block, hence one teacher, so
every count has sensitivity 1 and each answer is ε_q-DP (Ghosh, Roughgarden &
Sundararajan 2009), whatever the earlier answers; at most T of them are released
(the ledger counts the answers of every copy and refuses, before anything is
computed, a call that would pass T), and the composition bound holds for adaptive
sequences of at most T such events, however many are actually used. Scores, labels
and probabilities are functions of the released counts and independent coins. ∎

Ledger: the first answer of any copy reserves the plan (the composed ε of T answers
at δ), once over all copies, as Lemma 2 of ``_shrinkage_answering`` does for the
BetweenThresholds plan; each call then claims its queries with a zero-cost
``"fallback queries a-b"`` before answering (``claim_queries`` in
``skdp.prediction._base``: the ranges of all copies tile 1, …, T without overlap, so
at most T answers are released). Once the plan is
reserved the predictor keeps answering this way: ``partial_fit`` rows are pooled but
never turn it into Yan's predictor (that would be a second release).
"""

from __future__ import annotations

import math

import numpy as np

from ..exceptions import BudgetExhaustedError
from ._base import QueryBudgetExhaustedError, claim_queries
from ._teachers import _as_hypothesis_class, _Blocks, _partition, make_teachers
from .subsample_aggregate import VoteScores, _composed_epsilon, _NoisyCounts, _per_query_epsilon

__all__: list[str] = []

_RESERVE = "reserved the subsample-and-aggregate fallback"
_QUERIES = "fallback queries "
#: Rows per fallback teacher m: hypothesis-class teachers, other estimators (docstring).
ROWS_PER_TEACHER = {"class": 2, "estimator": 10}


def fallback_teachers(n: int, eps_q: float, class_teachers: bool) -> int:
    """k' = min(⌈4/ε_q⌉, max(1, ⌊n/m⌋)), m from :data:`ROWS_PER_TEACHER`."""
    m = ROWS_PER_TEACHER["class" if class_teachers else "estimator"]
    return max(1, min(math.ceil(4.0 / eps_q), n // m))


class _SmallSampleFallback(_NoisyCounts):
    """The small-sample half of PrivatePredictor (see the module docstring)."""

    def _fallback_epsilon(self):
        return _per_query_epsilon(float(self.epsilon), float(self.delta),
                                  int(self._planned_queries()), self.accounting)

    def _build_fallback(self):
        """(Re)train the fallback teachers on the pooled rows (nothing released)."""
        state = self._state
        X, y_pm = state.pending
        n = X.shape[0]
        class_teachers = (state.hypotheses is not None
                          or _as_hypothesis_class(self.estimator, X.shape[1]) is not None)
        k = fallback_teachers(n, self._fallback_epsilon(), class_teachers)
        data = _Blocks(X, y_pm, _partition(n, k, state.rng), k)
        state.fallback = make_teachers(state.hypotheses, self.estimator, data, self.n_jobs)
        state.fallback.fit(None, None, None)
        state.scores = VoteScores()

    def _fallback_started(self):
        return self._count_labels(_RESERVE) > 0

    def _fallback_used(self):
        used = 0
        for label in self._ledger_labels():
            if label.startswith(_QUERIES):
                first, last = label[len(_QUERIES):].split("-")
                used += int(last) - int(first) + 1
        return used

    def _fallback_scores(self, X):
        state, n, planned = self._state, X.shape[0], int(self._planned_queries())

        def refuse(remaining):
            self._refuse(f"{n} new queries asked but only {remaining} of the "
                         f"n_queries={planned} of its small-sample fallback remain "
                         "(for this predictor and its copies). Nothing was answered.",
                         np.empty(0))

        used = self._fallback_used()
        if used + n > planned:
            refuse(planned - used)  # before the plan is paid
        eps_q = self._fallback_epsilon()
        if not self._fallback_started():
            planned_eps = min(_composed_epsilon(eps_q, float(self.delta), planned,
                                                self.accounting), float(self.epsilon))
            try:
                self._pay_once(planned_eps, float(self.delta), f"{_RESERVE} ({planned} queries)")
            except BudgetExhaustedError as exc:
                raise QueryBudgetExhaustedError(str(exc), np.empty(0)) from exc

        def record(a):
            self._mark(f"{_QUERIES}{a + 1}-{a + n}", cap=(f"{_QUERIES}{a + 1}-", 1))

        claim_queries(self._fallback_used, record, n, planned, refuse)
        noisy = self._release_counts(state.fallback, X, eps_q)
        return state.scores(noisy, state.fallback.data.n_blocks, eps_q, state.rng)
