"""What both PERP predictors share: the sample, the ledger, answers and their scores.

:class:`_PERPBase` keeps the initial labelled sample until the first
data-dependent answer, then hands it to the running mechanism
(:class:`~skdp.prediction._perp_phase.RectanglesRun`) and charges the ledger as
the stream goes on. With fewer rows than the first phase needs (a public fact:
n is the size of the user's own input), it answers one privately estimated
majority label instead (:func:`noisy_majority_score`).
"""

from __future__ import annotations

import numbers
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..accounting import PrivacyBudget
from ..exceptions import BudgetExhaustedError, PrivacyParameterError, PrivacyWarning
from ..mechanisms.between_thresholds import HIGH, LOW
from ..mechanisms.laplace import discrete_laplace
from ._base import QueryBudgetedPredictor, QueryBudgetExhaustedError, _StreamState
from ._perp_parameters import PERPParameters, perp_parameters
from ._perp_phase import RectanglesRun

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["noisy_majority_score"]

#: Above this many rows a preset's initial-sample need is not a dataset anyone has:
#: the paper preset refuses (instead of silently answering data-independently).
_IMPOSSIBLE_ROWS = 10**9
#: Phase 1 may buffer up to t_1 labelled queries (its dataset D); refuse beyond this.
_MAX_PHASE_ROWS = 2 * 10**9
_MAJORITY = "majority label (one noisy count; too few rows for the first phase)"

_PERP_CONSTRAINTS = {
    **QueryBudgetedPredictor._parameter_constraints,
    "delta": [Interval(numbers.Real, 0, 1, closed="neither")],
    "alpha": [Interval(numbers.Real, 0, 1, closed="neither")],
    "beta": [Interval(numbers.Real, 0, 1, closed="neither")],
    "gamma": [Interval(numbers.Real, 0, 1, closed="right")],
    "preset": [StrOptions({"paper", "practical", "sharp"})],
    "slice_size": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "max_hard": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "threshold": [Interval(numbers.Real, 0, None, closed="neither"), None],
    "first_phase_length": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "verbose": ["verbose"],
}


def noisy_majority_score(y_pm: NDArray[Any], epsilon: float,
                         random_state: np.random.Generator | None = None,
                         size: int | None = None) -> NDArray[np.float64]:
    """The small-sample answer: a score in [−1, 1] from two ε-DP noisy counts.

    a = max(#positives + Z₁, 0), b = max(#negatives + Z₂, 0) with Z₁, Z₂ i.i.d.
    discrete Laplace(1/ε); s = (a − b)/(a + b) (0 if a + b = 0), so that
    P(``classes_[1]``) = (1 + s)/2 = a/(a + b), the noisy positive fraction.
    ``size``: that many independent draws (for the audit).

    *Privacy.* Adding or removing one row changes exactly one of the two counts,
    by 1: the count vector has ℓ1-sensitivity 1, and the geometric mechanism on
    it is ε-DP (Ghosh, Roughgarden & Sundararajan 2009) under add/remove, with no
    assumption on n (n is never used). The label (s > 0) and the probability are
    post-processing. Audit and broken twin (no noise):
    ``tests/privacy/test_perp_proba_audit.py``.
    """
    y_pm = np.asarray(y_pm)
    counts = np.array([np.count_nonzero(y_pm > 0), np.count_nonzero(y_pm < 0)])
    shape = (2,) if size is None else (size, 2)
    noisy = counts + discrete_laplace(1.0 / epsilon, size=shape, random_state=random_state)
    a, b = np.maximum(noisy, 0).astype(float).T
    total = a + b
    return np.divide(a - b, total, out=np.zeros_like(total), where=total > 0)


class _PERPBase(QueryBudgetedPredictor):
    """Shared fitting, answering and accounting of the PERP predictors.

    Subclasses provide ``_schedule(epsilon, delta, n_features)``, ``_rows_needed``,
    ``_initial_privacy`` and ``_start_run(X, y_pm, rng)`` (returns the run and the
    column indices the run sees).
    """

    _parameter_constraints: dict = _PERP_CONSTRAINTS
    #: The running mechanism's class (a hook for the privacy audits' broken variants).
    _run_class = RectanglesRun

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-6, alpha: float = 0.1,
                 beta: float = 0.05, gamma: float = 0.5, *, preset: str = "practical",
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
        state = _StreamState(self._new_ledger(epsilon, delta))
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
                    f"α, β, γ, d — the paper's constants; got {n}. Use preset='practical' "
                    "(same mechanisms and privacy proof, smaller utility constants) or see "
                    "perp_parameters for what each preset needs."
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

    # ------------------------------------------------------------------ answering
    def _ready(self):
        state = self._state
        return state.started or (state.majority is None
                                 and state.X.shape[0] >= self.initial_sample_size_)

    def _start(self):
        state = self._state
        eps0, delta0 = self._initial_privacy()
        self._pay_or_refuse(eps0, delta0, "initial sample (phase-1 slices)")
        state.started = True
        state.mechanism, state.columns = self._start_run(state.X, state.y, state.rng)
        state.X = state.y = None  # held by the mechanism now; never used again

    def _pay_or_refuse(self, epsilon, delta, label):
        try:
            self._pay(epsilon, delta, label)
        except BudgetExhaustedError as exc:
            raise QueryBudgetExhaustedError(str(exc), np.empty(0, dtype=np.int8)) from exc

    def _majority_score(self):
        """The released majority score; a copy (deepcopy, pickle) reads it from the
        shared ledger ``budget_``, where the release recorded it, instead of paying
        for a second one."""
        state = self._state
        if state.majority is None:
            tag = f"{type(self).__name__}: {_MAJORITY}, s = "
            released = [label[len(tag):] for label in self._ledger_labels()
                        if label.startswith(tag)]
            if released:
                state.majority = float(released[0])
            else:
                score = float(noisy_majority_score(state.y, float(self.epsilon), state.rng))
                self._pay_or_refuse(float(self.epsilon), 0.0, f"{_MAJORITY}, s = {score!r}")
                state.majority = score
        return state.majority

    def _scores(self, X):
        """The released score of each query in [−1, 1] (see ``predict_proba``)."""
        state = self._state
        n = X.shape[0]
        if not self._ready():
            score = self._majority_score()
            state.n_answered += n
            return np.full(n, score)
        if state.mechanism is None:
            if state.started:
                raise QueryBudgetExhaustedError(
                    f"{type(self).__name__}: this is a copy (deepcopy/pickle) of a predictor "
                    "whose mechanism is running; continuing it here would fork the mechanism "
                    "(its noise cannot be shared, and a second run on the same sample costs "
                    "another ε that the shared ledger budget_ does not have). Use the original.",
                    np.empty(0, dtype=np.int8),
                )
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
        # inside (all copies "low") +(1 − α), "medium" 0, "high" −(1 − α)
        level = np.select([walk == LOW, walk == HIGH], [1.0, -1.0], 0.0)
        return level * (1.0 - float(self.alpha))

    def _answer(self, X):
        return np.where(self._scores(X) > 0, 1, -1).astype(np.int8)

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """Answer the queries in ``X`` in order and return their scores in [−1, 1].

        Spends exactly like :meth:`predict` (these *are* the answers: the stream
        moves on); positive means ``classes_[1]``, and ``predict`` on the same
        answers is ``classes_[1]`` exactly where the score is > 0. See
        :meth:`predict_proba` for what the score is.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        ndarray of shape (n_queries,)
            2·P(``classes_[1]``) − 1 of :meth:`predict_proba`.
        """
        check_is_fitted(self, "budget_")
        X = validate_data(self, X, reset=False)
        return self._scores(X)

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Answer the queries in ``X`` in order, as probabilities of each class.

        Spends exactly like :meth:`predict`: each row is one answer of the stream,
        and its argmax is the label ``predict`` would have released for it.
        P(``classes_[1]``) = (1 + s)/2 with s the released score:

        * running mechanism: the walk of Alg. 5 step 5f, i.e. the copies'
          BetweenThresholds answers to this query — s = 1 − α if every copy
          answered "low" (inside), 0 if the first other answer was "medium" (the
          query lies in a boundary slice's band: P = ½, labelled ``classes_[0]``
          like Alg. 5 does), −(1 − α) if it was "high" (outside). A smoothed
          one-hot with a third, boundary level; not fitted to data (wrap in
          ``CalibratedClassifierCV`` for calibrated values).
        * too few rows: P = the released noisy positive fraction
          (:func:`noisy_majority_score`), the same for every query.

        *Privacy.* Nothing beyond ``predict`` is released. The walk's codes are
        the outputs of the ChallengeBT copies, which Thm 4.6's proof (and the
        ``"sharp"`` lemma) treats as released transcripts — every copy's privacy
        is stated for its whole transcript of codes, of which the label is a
        function — and the query stream each copy sees is unchanged; a query's
        own answer is excluded from its own privacy game (Def. 3.8), so showing
        its code to its asker costs nothing. The fallback score is
        post-processing of one ε-DP release (charged at the first answer). The
        audit ``tests/privacy/test_perp_proba_audit.py`` checks both against the
        same claims as ``predict`` (and catches a noiseless twin).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        ndarray of shape (n_queries, 2)
            Columns in ``classes_`` order; rows sum to 1.
        """
        share = (1.0 + self.decision_function(X)) / 2.0
        return np.column_stack([1.0 - share, share])

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
