"""Yan's predictor below its teacher floor: a subsample-and-aggregate answer.

BetweenThresholds' gap needs thousands of teachers, one labelled row each at least.
With fewer rows, :class:`~skdp.prediction.PrivatePredictor` answers like
:class:`~skdp.prediction.SubsampleAggregatePredictor` planned for
``planned_queries`` distinct queries: k' = min(⌈4/ε_q⌉, max(1, ⌊n/10⌋)) teachers on
disjoint blocks, one noisy count per new query, scored by
:class:`~skdp.prediction.subsample_aggregate.VoteScores` (which tends to the
released majority label where the noise dwarfs the votes). So below the floor it
answers exactly what subsample-and-aggregate answers with the same ε, δ and T.

*Lemma F (the fallback's plan).* Let ε_q be the largest per-answer ε such that
T = ``planned_queries`` ``DiscreteLaplace(ε_q)`` events compose to (ε, δ) by
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
at δ), as Lemma 2 of ``_shrinkage_answering`` does for the BetweenThresholds plan;
each call then records a zero-cost ``"fallback queries a-b"``. Once the plan is
reserved the predictor keeps answering this way: ``partial_fit`` rows are pooled but
never turn it into Yan's predictor (that would be a second release).
"""

from __future__ import annotations

import math

import numpy as np

from ..exceptions import BudgetExhaustedError
from ._base import QueryBudgetExhaustedError
from ._teachers import _Blocks, _partition, make_teachers
from .subsample_aggregate import VoteScores, _composed_epsilon, _NoisyCounts, _per_query_epsilon

__all__: list[str] = []

_RESERVE = "reserved the subsample-and-aggregate fallback"
_QUERIES = "fallback queries "


class _SmallSampleFallback(_NoisyCounts):
    """The small-sample half of PrivatePredictor (see the module docstring)."""

    def _fallback_epsilon(self):
        return _per_query_epsilon(float(self.epsilon), float(self.delta),
                                  int(self.planned_queries), self.accounting)

    def _build_fallback(self):
        """(Re)train the fallback teachers on the pooled rows (nothing released)."""
        state = self._state
        X, y_pm = state.pending
        n = X.shape[0]
        k = max(1, min(math.ceil(4.0 / self._fallback_epsilon()), n // 10))
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
        state, n, planned = self._state, X.shape[0], int(self.planned_queries)
        used = self._fallback_used()
        if used + n > planned:
            self._refuse(f"{n} new queries asked but only {planned - used} of the "
                         f"planned_queries={planned} of its small-sample fallback remain "
                         "(for this predictor and its copies). Nothing was answered.",
                         np.empty(0))
        eps_q = self._fallback_epsilon()
        if not self._fallback_started():
            planned_eps = min(_composed_epsilon(eps_q, float(self.delta), planned,
                                                self.accounting), float(self.epsilon))
            try:
                self._pay(planned_eps, float(self.delta), f"{_RESERVE} ({planned} queries)")
            except BudgetExhaustedError as exc:
                raise QueryBudgetExhaustedError(str(exc), np.empty(0)) from exc
        self._mark(f"{_QUERIES}{used + 1}-{used + n}")
        noisy = self._release_counts(state.fallback, X, eps_q)
        return state.scores(noisy, state.fallback.data.n_blocks, eps_q, state.rng)
