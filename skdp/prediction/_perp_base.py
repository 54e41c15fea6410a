"""What both PERP predictors share: the sample, the ledger, answers and their scores.

:class:`_PERPBase` keeps the initial labelled sample until the first
data-dependent answer, then hands it to the running mechanism
(:class:`~skdp.prediction._perp_phase.RectanglesRun`) and charges the ledger as
the stream goes on. With fewer rows than the first phase needs (a public fact:
n is the size of the user's own input), it answers one privately estimated
majority label instead (``_perp_scores``).
"""

from __future__ import annotations

import numbers
import warnings
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._input import validate_data
from ..accounting import PrivacyBudget
from ..exceptions import BudgetExhaustedError, PrivacyParameterError, PrivacyWarning
from ._base import QueryBudgetedPredictor, QueryBudgetExhaustedError
from ._perp_parameters import PERPParameters, perp_parameters
from ._perp_phase import RectanglesRun
from ._perp_scores import _PERPScores
from ._state import PredictorState, answer_on_state, make_durable

if TYPE_CHECKING:
    from typing_extensions import Self

__all__: list[str] = []

#: Above this many rows a preset's initial-sample need is not a dataset anyone has:
#: the paper preset refuses (instead of silently answering data-independently).
_IMPOSSIBLE_ROWS = 10**9
#: The one-off payment of the initial sample (ledger label, after the class name).
_INITIAL = "initial sample (phase-1 slices)"
#: Phase 1 may buffer up to t_1 labelled queries (its dataset D); refuse beyond this.
_MAX_PHASE_ROWS = 2 * 10**9

class _PERPState(PredictorState):
    """A PERP predictor's running mechanism (``_state``; see ``skdp.prediction._state``).

    What it holds, and what :meth:`_PERPBase.make_durable` saves (encrypted and sealed
    under the ledger key) in the ledger's store: until the first data-dependent answer
    the initial labelled sample (``X``, ``y``); from then on the running phase
    (``mechanism``, a :class:`~skdp.prediction._perp_phase.RectanglesRun`): its 2d
    ChallengeBT copies with their slices of the sample's positives (or of an earlier
    phase's positively answered queries), their noisy thresholds, Stoppers and buffered
    noise, their datasets of "medium" queries, and the phase's positively answered
    queries (the next phase's sample); the stump's selected axis and direction
    (``axis``, ``sign``); the released majority score; the counters (queries
    answered, phase, step, re-executions); ``skdp serve``'s per-token quotas.

    **Private**: the slices are training rows and the thresholds are the mechanism's
    noise. Publish answers, never this object, a pickle of the fitted predictor, or
    its saved copy.
    """

    #: The ledger steps a PERP run commits — (ε, δ(0)) at the first data-dependent
    #: answer, δ(i) for each range of queries — are data-independent: a run lost
    #: between such a step and its save (a process killed) released nothing, and its
    #: step says nothing about the copies' noise, so the saved phase is continued
    #: (``_DurableLink.sync``).
    steps_reveal_mechanism = False


_PERP_CONSTRAINTS = {
    **QueryBudgetedPredictor._parameter_constraints,
    "delta": [Interval(numbers.Real, 0, 1, closed="neither")],
    "alpha": [Interval(numbers.Real, 0, 1, closed="neither")],
    "beta": [Interval(numbers.Real, 0, 1, closed="neither")],
    "gamma": [Interval(numbers.Real, 0, 1, closed="right")],
    "preset": [StrOptions({"paper", "practical", "sharp", "charged"})],
    "slice_size": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "max_hard": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "threshold": [Interval(numbers.Real, 0, None, closed="neither"), None],
    "first_phase_length": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "verbose": ["verbose"],
}


class _PERPBase(_PERPScores, QueryBudgetedPredictor):
    """Shared fitting, answering and accounting of the PERP predictors.

    Subclasses provide ``_schedule(epsilon, delta, n_features)``, ``_rows_needed``,
    ``_initial_privacy`` and ``_start_run(X, y_pm, rng)`` (returns the run and the
    column indices the run sees).
    """

    _parameter_constraints: dict = _PERP_CONSTRAINTS
    #: The running mechanism's class (a hook for the privacy audits' broken variants).
    _run_class = RectanglesRun

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-6, alpha: float = 0.1,
                 beta: float = 0.05, gamma: float = 0.5, *, preset: str = "charged",
                 slice_size: int | None = None, max_hard: int | None = None,
                 threshold: float | None = None, first_phase_length: int | None = None,
                 budget: PrivacyBudget | None = None,
                 random_state: int | np.random.Generator | None = None, verbose: int = 0,
                 classes: ArrayLike | None = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.alpha = alpha
        self.beta = beta
        self.gamma = gamma
        self.preset = preset
        self.slice_size = slice_size
        self.max_hard = max_hard
        self.threshold = threshold
        self.first_phase_length = first_phase_length
        self.budget = budget
        self.random_state = random_state
        self.verbose = verbose
        self.classes = classes

    # ------------------------------------------------------------------ hooks
    def _schedule(self, epsilon: float, delta: float, n_features: int) -> PERPParameters:
        raise NotImplementedError  # pragma: no cover - abstract

    def _rows_needed(self, params: PERPParameters, n_features: int) -> int:
        raise NotImplementedError  # pragma: no cover - abstract

    def _initial_privacy(self) -> tuple[float, float]:
        raise NotImplementedError  # pragma: no cover - abstract

    def _start_run(self, X, y_pm, rng):
        raise NotImplementedError  # pragma: no cover - abstract

    # ------------------------------------------------------------------ fitting
    def _perp_parameters(self, epsilon, delta, alpha, beta, n_features):
        return perp_parameters(
            epsilon, delta, alpha, beta, self.gamma, n_features, preset=self.preset,
            n_phases=3, slice_size=self.slice_size, max_hard=self.max_hard,
            threshold=self.threshold, first_phase_length=self.first_phase_length,
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike) -> Self:
        """Store the initial labelled sample; spends nothing (answers pay).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two labels; ``classes_[1]`` (the larger) is the positive class.

        Returns
        -------
        self
        """
        return self._fit(X, y)

    def _fit(self, X, y, classes=None):
        epsilon, delta = self._check_privacy_params()
        if delta == 0:
            raise PrivacyParameterError(
                f"{type(self).__name__} needs δ > 0 (ChallengeBT, Stopper and RSC are (ε, δ)).")
        X, y = self._validate_training_data(X, y, reset=True)
        classes = self._set_classes(y, classes)
        params = self._schedule(epsilon, delta, X.shape[1])
        self.classes_ = classes
        y_pm = self._to_pm(y)
        self.parameters_ = params
        self.initial_sample_size_ = self._rows_needed(params, X.shape[1])
        state = _PERPState(self._new_ledger(epsilon, delta))
        state.X, state.y = X, y_pm
        state.started = False
        state.majority = None
        state.n_answered = 0
        state.n_stream = 0
        state.phase, state.step, state.n_reexecutions = 1, 0, 0
        self._state = state
        self._check_sample(stacklevel=4)
        return self

    def _check_sample(self, stacklevel):
        n, need = self._state.X.shape[0], self.initial_sample_size_
        params = self.parameters_
        if n < need:
            if self.preset == "paper" and need > _IMPOSSIBLE_ROWS:
                raise ValueError(
                    f"{type(self).__name__}(preset='paper') needs {need:.3g} labelled rows "
                    f"(and phases of {params.first_phase_length:.3g} queries) at these ε, δ, "
                    f"α, β, γ, d — the paper's constants; got {n}. Use the default "
                    "preset='charged' (the same guarantee with a sharper schedule and "
                    "constants) or see perp_parameters for what each preset needs."
                )
            warnings.warn(
                f"{type(self).__name__}: {n} labelled rows are fewer than the {need} the "
                f"first phase needs at ε = {float(self.epsilon):g} (preset={self.preset!r}); "
                "until partial_fit adds rows the predictor answers one majority label "
                "estimated by one noisy count (ε charged at the first answer; after that "
                "the mechanism can no longer start).",
                PrivacyWarning,
                stacklevel=stacklevel,
            )
        elif params.first_phase_length * params.n_features > _MAX_PHASE_ROWS:
            raise ValueError(
                f"{type(self).__name__}: phase 1 lasts {params.first_phase_length:.3g} queries "
                "and may have to store each of them; refusing to start a mechanism that "
                "cannot hold its own phase in memory."
            )

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X: ArrayLike, y: ArrayLike, classes: ArrayLike | None = None) -> Self:
        """Append labelled rows to the initial sample (before the first answered query).

        The first call is ``fit`` (``classes`` required, here or as the parameter).
        Later calls before any query has been answered from the data pool the rows,
        so ``fit`` on the concatenation and a sequence of ``partial_fit`` calls give
        the same predictor (same ``random_state``). Once the mechanism has started, the
        initial sample is held by running mechanisms (RSC slices, ChallengeBT
        copies) and cannot grow: a ``ValueError`` is raised, nothing changes. Once
        a majority label was released (too few rows), the rows are kept but never
        used (the ledger has no ε left for the mechanism), with a warning.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like of shape (2,), optional
            The public label set (first call only, unless given as the parameter).

        Returns
        -------
        self
        """
        if not hasattr(self, "budget_"):
            self._check_first_partial_fit(classes)
            return self._fit(X, y, classes=classes)
        if self._state._durable is not None:
            # Every replica holds the model file's state; rows added here alone would
            # fork the replicas' samples.
            raise ValueError(f"{type(self).__name__}: a durable predictor (make_durable) "
                             "takes no more partial_fit rows; fit a new predictor on all "
                             "the rows.")
        X, y_pm = self._later_partial_fit_rows(X, y, classes)
        state = self._state
        if state.started:
            raise ValueError(
                f"{type(self).__name__}: the initial sample is already in use by the running "
                f"mechanism ({state.n_stream} queries answered from it); it cannot grow. "
                "Fit a new predictor (a new mechanism, charged anew) to use more rows."
            )
        state.X = np.concatenate([state.X, X])
        state.y = np.concatenate([state.y, y_pm])
        if state.majority is not None:
            warnings.warn(
                f"{type(self).__name__}: a majority label was already released (ε spent); "
                "these rows are kept but the predictor keeps answering it. Fit a new "
                "predictor to use them.", PrivacyWarning, stacklevel=3)
            return self
        self._check_sample(stacklevel=4)
        return self

    # ------------------------------------------------------------------ durable
    def make_durable(self) -> Self:
        """Keep the running mechanism in the store of ``budget_``, shared by every copy.

        From now on this predictor, its pickles and deep copies, in every process
        that reaches the store (a restarted ``skdp serve``, replicas on one SQLite file
        or one PostgreSQL database), answer from one saved state: each call takes the
        record's lock, loads the newest version, answers, and saves the next by
        compare-and-swap before any answer leaves it. So they continue the *same*
        stream — the same phase, ChallengeBT copies and noisy thresholds, the initial
        sample paid once — where an ordinary copy of a started predictor refuses, and a
        stale copy never saves over a newer state
        (:class:`~skdp.exceptions.StaleStateError`). A ``memory`` ledger first moves to
        this machine's shared SQLite file. Calling it on a predictor whose record exists
        (another copy made it durable) loads that record. See
        ``skdp.prediction._state``.

        What is stored (encrypted and sealed under the ledger key): before the first
        answer the initial labelled sample; then the running phase — the copies'
        slices of the sample's positives, their noisy thresholds, Stoppers and buffered
        noise, their "medium" queries, the phase's positively answered queries — the
        released majority score and the counters.

        Privacy: unchanged — the same charges, committed before their answers. A process
        killed between a charge and the save released nothing of that call (its charge
        stays in the ledger: an over-count); the run is continued from the saved state,
        since PERP's charges are data-independent (δ(i) per query, (ε, δ(0)) at the
        first answer) and say nothing about the lost run's noise; if that run was the
        one that started the mechanism, it is started again without a second payment
        (nothing of the first start was ever released). The saved state is **private**
        (training rows, the mechanism's noise): keep the model file and the store
        private.

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

    # ------------------------------------------------------------------ answering
    def _ready(self):
        state = self._state
        return state.started or (state.majority is None
                                 and state.X.shape[0] >= self.initial_sample_size_)

    def _refuse_copy(self):
        raise QueryBudgetExhaustedError(
            f"{type(self).__name__}: this is a copy (deepcopy/pickle) of a predictor "
            "whose mechanism is running; continuing it here would fork the mechanism "
            "(its noise cannot be shared, and a second run on the same sample costs "
            "another ε that the shared ledger budget_ does not have). Use the original.",
            np.empty(0, dtype=np.int8),
        )

    def _start(self):
        state = self._state
        eps0, delta0 = self._initial_privacy()
        # One run per fitted predictor over all its copies: paid once, in the same
        # transaction that checks no copy started it (a copy made before the start
        # that finds it paid refuses, as a copy made after it does).
        # A durable run names its state record in the payment.
        link = state._durable
        note = "" if link is None else f" [state {link.stream_id}]"
        try:
            paid = self._pay_once(eps0, delta0, _INITIAL, note=note)
        except BudgetExhaustedError as exc:
            if isinstance(exc, QueryBudgetExhaustedError):
                raise
            raise QueryBudgetExhaustedError(str(exc), np.empty(0, dtype=np.int8)) from exc
        if not paid and not (link is not None and self._paid_by_a_lost_run(note)):
            self._refuse_copy()
        state.started = True
        state.mechanism, state.columns = self._start_run(state.X, state.y, state.rng)
        state.X = state.y = None  # held by the mechanism now; never used again

    def _paid_by_a_lost_run(self, note):
        """Whether the initial payment was made by a run on this durable record.

        Every such run holds the record's lock and saves the started mechanism before
        any answer leaves it; this run holds the lock and loaded a state that is not
        started, so the paying run never saved: it was lost (killed, or its call
        failed) and released nothing of its start. Starting again from the sample is
        then the only start anyone sees, already paid. A payment by another copy (no
        note, or another record's) is a run that may have released answers: refused.
        """
        tag = f"{type(self).__name__}: {_INITIAL}"
        paid = [label for label in self._ledger_labels() if label.startswith(tag)]
        return paid == [tag + note]

    def _pay_or_refuse(self, epsilon, delta, label):
        try:
            self._pay(epsilon, delta, label)
        except BudgetExhaustedError as exc:
            raise QueryBudgetExhaustedError(str(exc), np.empty(0, dtype=np.int8)) from exc

    def _scores(self, X, as_output=None, gate=None):
        """The released score in [−1, 1] of each row of ``X`` (validated here), in order.

        ``gate`` is as for ``_ScoredAnswers._scores`` (``skdp serve``'s quotas);
        ``as_output`` is unused: a PERP call is refused before it answers any row
        (every charge of a call precedes its answers), so a refusal carries no
        answers to convert.
        """
        check_is_fitted(self, "budget_")
        return self._answered(validate_data(self, X, reset=False), gate)

    def _answered(self, X, gate=None):
        """Answer the validated rows ``X`` on the (durable, if made so) state."""
        return answer_on_state(lambda: self._state, lambda: self._stream_scores(X), gate,
                               X.shape[0])

    def _stream_scores(self, X):
        """The next answers of the stream: scores of the rows of ``X``."""
        state = self._state
        n = X.shape[0]
        if not self._ready():
            score = self._majority_score()
            state.n_answered += n
            return np.full(n, score)
        if state.mechanism is None:
            if state.started:
                self._refuse_copy()
            self._start()
        sched = self.parameters_.delta_schedule
        a = state.n_stream
        delta_q = float(sched.remaining_after(a) - sched.remaining_after(a + n))
        self._pay_or_refuse(0.0, max(delta_q, 0.0), f"queries {a + 1}–{a + n}")
        run = state.mechanism
        walk = run.answer(X[:, state.columns])
        state.n_answered += n
        state.n_stream += n
        state.phase, state.step, state.n_reexecutions = run.phase, run.step, run.n_reexecutions
        return self._walk_scores(walk)

    def _answer(self, X):
        return np.where(self._answered(X) > 0, 1, -1).astype(np.int8)

    # ------------------------------------------------------------------ attributes
    @property
    def queries_answered_(self) -> int:
        """Queries answered so far by this predictor (all calls, data-independent ones too)."""
        check_is_fitted(self, "budget_")
        return self._state.n_answered

    @property
    def phase_(self) -> int:
        """The current phase p (1-based); phase p lasts t_p = t_1·3^(p−1) queries."""
        check_is_fitted(self, "budget_")
        state = self._state
        return state.phase + (1 if state.step == self.parameters_.phase(state.phase).length
                              else 0)

    @property
    def next_phase_sample_size_(self) -> int:
        """Queries the current phase still has to answer (and label) before the next starts.

        Phases are data-independent: phase p ends after t_p queries, whose
        positively labelled ones form the next phase's sample.
        """
        check_is_fitted(self, "budget_")
        state = self._state
        length = self.parameters_.phase(state.phase).length
        if state.step == length:
            return self.parameters_.phase(state.phase + 1).length
        return length - state.step

    @property
    def n_reexecutions_(self) -> int:
        """ChallengeBT copies re-executed on their medium queries after a Stopper halt."""
        check_is_fitted(self, "budget_")
        return self._state.n_reexecutions

    @property
    def mechanism_started_(self) -> bool:
        """True once the initial sample has been handed to the mechanism (first answer)."""
        check_is_fitted(self, "budget_")
        return self._state.started

    @property
    def majority_released_(self) -> bool:
        """True once the too-few-rows majority label was released (ε charged)."""
        check_is_fitted(self, "budget_")
        return self._state.majority is not None
