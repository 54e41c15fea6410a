"""How Yan's predictor answers: BetweenThresholds runs, the reserved plan, the caps.

:class:`_ShrinkageAnswering` is the answering half of
:class:`~skdp.prediction.PrivatePredictor` (the fitting half stays there).

Ledger protocol (``budget_``, shared by every copy of one fitted predictor)
--------------------------------------------------------------------------
* The first answer of any copy *reserves the whole plan*: the composition of the
  cap of BSU instances (by the chosen accounting) or the one Stemmer instance's
  (ε, δ). Later steps are recorded at zero cost, so the ledger's labels count them:
  ``"BetweenThresholds instance i"`` when an instance starts and ``"hard query i"``
  at each ⊤.
* BSU: at most ``max_hard_queries_`` instances over all copies (each ends at its
  ⊤), checked before an instance starts.
* Stemmer: one instance for the life of the fitted predictor. A copy without the
  live instance (deepcopy, pickle) cannot answer once it was started: a second
  instance would be a second (ε, δ) release, and resuming it would need its noise.
* Hard queries: at most ``max_hard_queries_`` over all copies, in both
  calibrations.
* Too few rows: one ε-DP noisy count releases a majority label (charged ε, δ = 0,
  label ``"majority label"``); copies made before it was released are refused.

*Lemma 1 (stopping a Stemmer instance early).* Let M be BetweenThresholds with
Stemmer's calibration and cutoff c, run on adaptively chosen queries of
sensitivity 1/k, and let P stop feeding it after its v-th ⊤ (v ≤ c) or when a
caller stops. Then the transcript of P is (ε, δ)-DP. *Proof.* Extend P's
query sequence, after it stops, by constant queries 0 (sensitivity 0) until M
halts; M's transcript on the extended adaptive sequence is (ε, δ)-DP
(Thm 4.3 holds for adaptive queries), and P's transcript is a prefix of it
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
Stemmer instance), which the accountant bounds by (ε_plan, δ) whatever the stopping
point. The number i of instances used is data-dependent, and the optimal
composition bound for a *fixed* i is not an odometer: a filter valid for a
data-dependent i needs its own analysis (Rogers et al. 2016), which the per-i
bounds do not provide. Charging ε_plan at the first answer is therefore the
sound record; later steps cost 0 in the ledger. ∎
"""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..exceptions import BudgetExhaustedError
from ..mechanisms.between_thresholds import BetweenThresholds
from ..mechanisms.laplace import geometric_mechanism
from ._base import QueryBudgetExhaustedError

__all__ = []

_CHUNK_MIN, _CHUNK_MAX = 256, 16384
_RESERVE = "reserved the planned run"
_INSTANCE = "BetweenThresholds instance"
_HARD = "hard query"
_MAJORITY = "majority label"


class _ShrinkageAnswering:
    """Answering machinery of PrivatePredictor (see the module docstring)."""

    # ------------------------------------------------------------------ counters
    def _count_labels(self, prefix):
        return sum(label.startswith(prefix) for label in self._ledger_labels())

    @property
    def n_hard_queries_(self):
        self._check_answering_fitted()
        return self._count_labels(_HARD)

    @property
    def hard_queries_(self):
        self._check_answering_fitted()
        return self._state.forced_X.copy()

    @property
    def hard_labels_(self):
        self._check_answering_fitted()
        return self._from_pm(self._state.forced_y)

    def _check_answering_fitted(self):
        check_is_fitted(self, "budget_")

    def _mark(self, label):
        """Record a zero-cost step in ``budget_`` (shared by copies; counts the caps)."""
        self.budget_.spend(0.0, 0.0, label=f"{type(self).__name__}: {label}")

    def _majority_released(self):
        return self._count_labels(_MAJORITY) > 0

    def _ledger_labels(self):
        name = f"{type(self).__name__}: "
        return [label[len(name):] if label.startswith(name) else label
                for label in super()._ledger_labels()]

    # ------------------------------------------------------------------ paying
    def _refuse(self, message, answered):
        raise QueryBudgetExhaustedError(f"{type(self).__name__}: {message}", answered)

    def _start_instance(self, answered):
        state, cap = self._state, self.max_hard_queries_
        if self._count_labels(_HARD) >= cap:
            self._refuse(f"all {cap} hard queries of this predictor and its copies are used; "
                         f"{len(answered)} answer(s) of this call were released "
                         "(error.answers).", answered)
        started = self._count_labels(_INSTANCE)
        stemmer = self.calibration_ == "stemmer"
        if stemmer and started:
            self._refuse("its one Stemmer BetweenThresholds instance was started by another "
                         "copy (or before this copy was made) and cannot be resumed here; use "
                         "calibration='bsu' for a predictor answered from several copies.",
                         answered)
        if not stemmer and started >= cap:
            self._refuse(f"all {cap} BetweenThresholds instances of this predictor and its "
                         "copies are started.", answered)
        if not self._count_labels(_RESERVE):
            plan = self._plan
            try:
                self._pay(plan["planned_epsilon"], float(self.delta),
                          f"{_RESERVE} ({self.calibration_}, {cap} hard queries)")
            except BudgetExhaustedError as exc:
                raise QueryBudgetExhaustedError(str(exc), answered) from exc
        self._mark(f"{_INSTANCE} {started + 1}")
        state.mechanism = self._new_mechanism(1.0 / state.teachers.data.n_blocks)

    def _new_mechanism(self, sensitivity):
        """A fresh BetweenThresholds instance (a hook the privacy audit's broken variant
        overrides; nothing else should)."""
        # Each instance draws its noise from its own child generator, so the main
        # generator's sequence (partition, one seed per instance, one label per hard
        # query) — hence every answer — is the same however the queries are batched.
        child = np.random.default_rng(self._state.rng.integers(2**63))
        lower, upper = self.thresholds_
        return BetweenThresholds(
            lower, upper, self.epsilon_bt_, self.delta_bt_, sensitivity=sensitivity,
            calibration=self.calibration_, max_hard=self._plan["max_hard"], random_state=child,
        )

    def _majority(self, answered):
        """The released majority label (too few rows): one ε-DP noisy count."""
        state = self._state
        if state.majority is None:
            if self._majority_released():
                self._refuse("its majority label was released by another copy (or before "
                             "this copy was made); this copy cannot release another.", answered)
            try:
                self._pay(float(self.epsilon), 0.0, f"{_MAJORITY} (one noisy count)")
            except BudgetExhaustedError as exc:
                raise QueryBudgetExhaustedError(str(exc), answered) from exc
            y = state.pending[1]
            noisy = geometric_mechanism(int(np.count_nonzero(y > 0)), float(self.epsilon),
                                        random_state=state.rng)
            state.majority = np.int8(1 if 2 * int(noisy) >= y.size else -1)
        return state.majority

    # ------------------------------------------------------------------ answering
    def _hard_query(self, x, label):
        state = self._state
        state.forced_X = np.concatenate([state.forced_X, x[None, :]])
        state.forced_y = np.concatenate([state.forced_y, [label]]).astype(np.int8)
        self._mark(f"{_HARD} {state.forced_y.size}")
        if self.mode == "halfspace":
            state.teachers.fit(None, None, through=state.forced_X)
            return
        disagree = np.flatnonzero(state.teachers.predict_one(x) != label)
        state.teachers.fit(state.forced_X, state.forced_y, None, only=disagree)

    def _answer(self, X):
        state = self._state
        n = X.shape[0]
        answers = np.empty(n, dtype=np.int8)
        if state.teachers is None:  # too few rows: one released majority label
            answers[:] = self._majority(answers[:0].copy())
            return answers
        i = 0
        size = _CHUNK_MIN
        while i < n:
            if state.mechanism is None or state.mechanism.halted:
                state.mechanism = None
                self._start_instance(answers[:i].copy())
                size = _CHUNK_MIN
            # Votes are computed a chunk at a time; a hard query ends the chunk (the
            # teachers change), so chunks start small after one and grow while the
            # stream stays easy. Answers do not depend on the chunking.
            chunk = X[i : i + size]
            size = min(2 * size, _CHUNK_MAX)
            codes = state.mechanism.process(state.teachers.vote(chunk), stop_at_hard=True)
            m = codes.size
            answers[i : i + m] = codes
            if codes[-1] == BetweenThresholds.HARD:
                label = np.int8(state.rng.choice(np.array([-1, 1])))
                answers[i + m - 1] = label
                self._hard_query(chunk[m - 1], label)
                if self._count_labels(_HARD) >= self.max_hard_queries_:
                    state.mechanism = None  # the cap: the next query is refused
                size = _CHUNK_MIN
            i += m
        return answers
