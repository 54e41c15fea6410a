"""How Yan's predictor answers: BetweenThresholds runs, the reserved plan, the caps.

:class:`_ShrinkageAnswering` is the answering half of
:class:`~skdp.prediction.PrivatePredictor` (the fitting half stays there).

Ledger protocol (``budget_``, shared by every copy of one fitted predictor)
--------------------------------------------------------------------------
* The first answer of any copy *reserves the whole plan*: the composition of the
  cap of BSU instances (by the chosen accounting) or the one Stemmer / charged instance's
  (ε, δ), paid exactly once over all copies (``_pay_once``). Later steps are recorded
  at zero cost, so the ledger's labels count them: ``"BetweenThresholds instance i"``
  when an instance starts and ``"hard query i"`` at each ⊤, each with its cap checked
  in the same transaction (``_mark(..., cap=...)``) before any answer of that
  instance, or the ⊤, leaves the call. Copies racing for the last slot cannot both
  get it; the loser refuses with the answers released so far.
* BSU: at most ``max_hard_queries_`` instances over all copies (each ends at its
  ⊤).
* Stemmer or charged: one instance for the life of the fitted predictor. A copy without the
  live instance (deepcopy, pickle) cannot answer once it was started: a second
  instance would be a second (ε, δ) release, and resuming it would need its noise.
* Hard queries: at most ``max_hard_queries_`` over all copies, in both
  calibrations. A ⊤ refused by the cap is not released, and the teachers stay as
  they were.
* Too few rows: the subsample-and-aggregate fallback reserves its own plan
  (``skdp.prediction._small_sample``, Lemma F).
* Scores (``skdp.prediction._scored``): L → t_l/2, R → (1 + t_u)/2 (the middles of
  the vote intervals the answer points to), ⊤ with released random label s →
  ½ + s·(t_u − t_l)/4 (the middle of the band's half on the label's side). A
  function of the released code and label only: post-processing.

*Lemma 1 (stopping a single instance early).* Let M be BetweenThresholds with
Stemmer's calibration and cutoff c, or the charged calibration (its noise
certified for the gap, cutoff c and sensitivity 1/k), run on adaptively chosen
queries of sensitivity 1/k, and let P stop feeding it after its v-th ⊤ (v ≤ c) or when a
caller stops. Then the transcript of P is (ε, δ)-DP. *Proof.* Extend P's
query sequence, after it stops, by constant queries 0 (sensitivity 0) until M
halts; M's transcript on the extended adaptive sequence is (ε, δ)-DP
(Thm 4.3, and the charged lemma of ``skdp.mechanisms._charged_calibration``, hold
for adaptive queries: the latter's supermartingale is over an adaptive adversary's
queries, and a sensitivity-0 query is one), and P's transcript is a prefix of it
whose length is a function of the transcript (the position of the v-th ⊤):
post-processing. The queries are adaptive because the vote on x_t depends on
the forced labels of earlier ⊤ answers (public, drawn independently of the
data); for fixed forced labels one changed row changes one teacher, so every
vote still has sensitivity 1/k. ``process(stop_at_hard=True)`` keeps the
noise of unanswered queries for the next call, so the answers equal feeding
the queries one at a time. ∎

*Lemma 2 (reserving the plan).* Once answering starts, charging the plan's cost
(ε_plan, δ) is a sound record of the privacy spent, whatever happens later.
*Proof.* The transcript is an adaptive composition of at most v instances (or one
Stemmer / charged instance), which the accountant bounds by (ε_plan, δ) whatever the stopping
point. With copies (deepcopy, pickle, other processes on one shared ledger) several BSU
instances run at once and their queries interleave arbitrarily: a *concurrent*
composition of at most v interactive (ε_bt, δ_bt)-DP mechanisms on one sample, each with
its own noise (a copy never reuses another's generator), v enforced through the shared
ledger's instance cap. Vadhan & Zhang 2023 (STOC: every interactive f-DP mechanism is an
interactive post-processing of a non-interactive one, so every composition bound for
non-interactive (ε, δ)-DP mechanisms — the exact optimal one of ``accounting="paper"``,
the PLD of ``"tight"`` — holds for concurrent composition) and Lyu 2022 (NeurIPS: the
same for (ε, δ)-DP, optimal, and Rényi DP) make the bound of the sequential plan valid
for any interleaving. The number i of instances used is data-dependent, and the optimal
composition bound for a *fixed* i is not an odometer: a filter valid for a
data-dependent i needs its own analysis (Rogers et al. 2016), which the per-i
bounds do not provide. Charging ε_plan at the first answer is therefore the
sound record; later steps cost 0 in the ledger. ∎

*Lemma 3 (teacher updates).* With either ``teacher_update`` rule, after the hard
queries (x₁, s₁), …, (x_j, s_j) of the transcript so far, teacher i is a function
G(S_i, transcript) of its own block S_i and the released transcript only. *Proof.*
``"refit"``: teacher i is the clone's ``fit`` on S_i plus the released (x, s) rows,
refit when it disagreed with a released s (a function of the teacher as it then was,
by induction G(S_i, earlier transcript), and of (x, s)); the clone's
``random_state`` is a public parameter or randomness independent of the data.
``"none"``: teacher i is its fit on S_i, a function of S_i alone. So for samples
differing in one row, which lies in one block, every teacher but one is the same
function of the transcript, and every vote has sensitivity 1/k given the transcript:
the premise of Yan's Observation 1 and Claim 1 (proved in her Appendix A.1 as Claim
12: "one different point makes one f_{i,j} different"), which her Alg. 2 states for
any generator G(S_i, transcript_j) (step 2a), and of Lemma 1 above. ∎ ``"none"`` is
not Yan's G_oblivious (an ERM over C restricted to the hard queries): her bound on
the number of hard queries (Claim 5) does not cover it — nor refit forests, which are
no ERM either; the cap, not that bound, is what the guarantee rests on.
``tests/privacy/test_teacher_update_audit.py`` audits both rules and a twin whose
update reads the other blocks' votes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.utils.validation import check_is_fitted

from .._streams import child_generator
from ..exceptions import BudgetExhaustedError, CapReachedError
from ..mechanisms.between_thresholds import BetweenThresholds
from ._base import QueryBudgetExhaustedError

__all__: list[str] = []

_CHUNK_MIN, _CHUNK_MAX = 256, 16384
_RESERVE = "reserved the planned run"
_INSTANCE = "BetweenThresholds instance"
_HARD = "hard query"


class _ShrinkageAnswering:
    """Answering machinery of PrivatePredictor (see the module docstring)."""

    _state: Any  # the host's _StreamState
    _from_pm: Any

    # ------------------------------------------------------------------ counters
    def _count_labels(self, prefix):
        return sum(label.startswith(prefix) for label in self._ledger_labels())

    @property
    def n_hard_queries_(self) -> int:
        """Hard queries answered by this predictor and its copies (the capped count)."""
        self._check_answering_fitted()
        return self._count_labels(_HARD)

    @property
    def hard_queries_(self) -> NDArray[np.float64]:
        """This copy's hard queries, shape (n_hard, n_features)."""
        self._check_answering_fitted()
        return self._state.forced_X.copy()

    @property
    def hard_labels_(self) -> NDArray:
        """The released labels of ``hard_queries_`` (from ``classes_``)."""
        self._check_answering_fitted()
        return self._from_pm(self._state.forced_y)

    def _check_answering_fitted(self):
        check_is_fitted(self, "budget_")

    def _ledger_labels(self):
        name = f"{type(self).__name__}: "
        return [label[len(name):] if label.startswith(name) else label
                for label in super()._ledger_labels()]

    # ------------------------------------------------------------------ paying
    def _refuse(self, message, answered):
        raise QueryBudgetExhaustedError(f"{type(self).__name__}: {message}", answered)

    def _refuse_hard_cap(self, answered):
        cap = self.max_hard_queries_
        self._refuse(f"all {cap} hard queries of this predictor and its copies are used; "
                     f"{len(answered)} answer(s) of this call were released "
                     "(error.answers).", answered)

    def _refuse_instance(self, answered):
        if self.calibration_ in ("stemmer", "charged"):
            self._refuse(f"its one {self.calibration_} BetweenThresholds instance was started "
                         "by another copy (or before this copy was made) and cannot be resumed "
                         "here; use calibration='bsu' for a predictor answered from several "
                         "copies.", answered)
        self._refuse(f"all {self.max_hard_queries_} BetweenThresholds instances of this "
                     "predictor and its copies are started.", answered)

    def _start_instance(self, answered):
        state, cap = self._state, self.max_hard_queries_
        limit = 1 if self.calibration_ in ("stemmer", "charged") else cap
        # Reading the counts first only refuses early, with nothing paid; the caps are
        # enforced by the capped mark below, in the same transaction as the record.
        if self._count_labels(_HARD) >= cap:
            self._refuse_hard_cap(answered)
        started = self._count_labels(_INSTANCE)
        if started >= limit:
            self._refuse_instance(answered)
        try:
            self._pay_once(self._plan["planned_epsilon"], float(self.delta),
                           f"{_RESERVE} ({self.calibration_}, {cap} hard queries)")
            self._mark(f"{_INSTANCE} {started + 1}", cap=(_INSTANCE, limit))
        except CapReachedError:
            self._refuse_instance(answered)
        except BudgetExhaustedError as exc:
            raise QueryBudgetExhaustedError(str(exc), answered) from exc
        state.mechanism = self._new_mechanism(1.0 / state.teachers.data.n_blocks)

    def _new_mechanism(self, sensitivity):
        """A fresh BetweenThresholds instance (a hook the privacy audit's broken variant
        overrides; nothing else should)."""
        # Each instance draws its noise from its own child generator, so the main
        # generator's sequence (partition, one seed per instance, one label per hard
        # query) — hence every answer — is the same however the queries are batched.
        child = child_generator(self._state.rng)
        lower, upper = self.thresholds_
        return BetweenThresholds(
            lower, upper, self.epsilon_bt_, self.delta_bt_, sensitivity=sensitivity,
            calibration=self.calibration_, max_hard=self._plan["max_hard"], random_state=child,
        )

    # ------------------------------------------------------------------ answering
    def _record_hard_query(self, answered):
        """Record the next ⊤ under the hard-query cap, before it is released; at the cap
        refuse with ``answered``, the teachers and hard queries as they were."""
        state = self._state
        try:
            self._mark(f"{_HARD} {state.forced_y.size + 1}",
                       cap=(_HARD, self.max_hard_queries_))
        except CapReachedError:
            state.mechanism = None  # it answered ⊤: it cannot go on without the update
            self._refuse_hard_cap(answered)

    def _hard_query(self, x, label):
        """Record the hard query (x, label) and update the teachers; return whether any
        teacher changed (else the votes already computed stay exact)."""
        state = self._state
        state.forced_X = np.concatenate([state.forced_X, x[None, :]])
        state.forced_y = np.concatenate([state.forced_y, [label]]).astype(np.int8)
        if self.mode_ == "halfspace":
            state.teachers.fit(None, None, through=state.forced_X)
            return True
        disagree = np.flatnonzero(state.teachers.predict_one(x) != label)
        to_refit = getattr(state.teachers, "to_refit", None)
        if to_refit is not None:  # estimator teachers: teacher_update
            disagree = to_refit(disagree)
        if disagree.size:
            state.teachers.fit(state.forced_X, state.forced_y, None, only=disagree)
        return bool(disagree.size)

    def _code_scores(self, codes):
        """Scores of released BetweenThresholds codes (see the module docstring)."""
        lower, upper = self.thresholds_
        return np.where(codes < 0, lower / 2.0, (1.0 + upper) / 2.0)

    def _answer_scores(self, X):
        state = self._state
        if state.teachers is None:  # too few rows: subsample-and-aggregate
            return self._fallback_scores(X)
        n = X.shape[0]
        answers = np.empty(n)
        lower, upper = self.thresholds_
        i = 0
        size = _CHUNK_MIN
        votes, start = np.empty(0), 0  # exact votes of X[start : start + votes.size]
        while i < n:
            if state.mechanism is None or state.mechanism.halted:
                state.mechanism = None
                self._start_instance(answers[:i].copy())
            # Votes are computed a chunk at a time; a hard query that changes the
            # teachers ends the chunk, so chunks start small after one and grow while
            # the stream stays easy. Answers do not depend on the chunking.
            if i >= start + votes.size:
                start = i
                votes = state.teachers.vote(X[i : i + size])
                size = min(2 * size, _CHUNK_MAX)
            codes = state.mechanism.process(votes[i - start :], stop_at_hard=True)
            m = codes.size
            answers[i : i + m] = self._code_scores(codes)
            if codes[-1] == BetweenThresholds.HARD:
                self._record_hard_query(answers[: i + m - 1].copy())
                label = np.int8(state.rng.choice(np.array([-1, 1])))
                answers[i + m - 1] = 0.5 + label * (upper - lower) / 4.0
                if self._hard_query(X[i + m - 1], label):
                    votes, size = np.empty(0), _CHUNK_MIN
                if self._count_labels(_HARD) >= self.max_hard_queries_:
                    state.mechanism = None  # the cap: the next query is refused
            i += m
        return answers
