"""What every query-budgeted private predictor shares: budget, exhaustion, copies.

A *private predictor* (Dwork & Feldman 2018) keeps its labelled training sample
secret and answers a stream of queries; the whole transcript of answers is
(ε, δ)-differentially private with respect to the sample. Unlike a private
learner, it pays privacy while *answering*, so the ledger lives in fitted state.

The pattern (PERP predictors follow it too)
-------------------------------------------
* ``epsilon``, ``delta`` (parameters) are the guarantee of the whole transcript of
  one fitted predictor. ``fit`` spends nothing: it builds a fresh ledger
  ``budget_`` (a :class:`~skdp.accounting.PrivacyBudget` with total (ε, δ)) and
  ``predict``/``score`` charge it as they release answers. ``budget_.spent`` is
  the composed privacy loss of everything released so far, ``budget_.remaining``
  what is left, and ``privacy_spent_`` mirrors ``budget_.spent``.
* ``budget`` (optional parameter) is charged the same amounts at the same time,
  so several predictors (e.g. the clones of a ``GridSearchCV``) on one dataset
  spend from one total and stop with :class:`~skdp.exceptions.BudgetExhaustedError`.
* **Exhaustion** raises :class:`QueryBudgetExhaustedError` (a
  ``BudgetExhaustedError``). A call refused *before* any data-dependent step
  leaves the predictor exactly as it was (nothing released). A call that runs out
  *during* the stream (Yan's predictor: the cap on hard queries is reached inside
  the batch) carries the answers already released in ``error.answers``; the
  predictor's state includes them. Rolling such a call back would not be sound:
  whether the cap is reached inside a batch depends on the data, and a retried
  batch would either re-use noise already acted on or draw fresh noise for a
  second, unpaid run.
* **Copies.** ``sklearn.base.clone`` returns an *unfitted* predictor (it cannot
  answer; refitting starts a new mechanism, which a shared ``budget`` accounts
  for). ``copy.deepcopy`` and pickling keep the fitted state and the *same*
  ledger ``budget_`` (a handle on one ledger, which lives in the store of
  ``budget`` — or moves to this machine's shared SQLite file when pickled — so
  copies in other processes charge it too), and all copies together can never
  release more than (ε, δ). Each
  copy gets a **fresh random generator** and drops any half-used mechanism
  instance: two copies must never answer with the same noise, which would void
  the composition argument. Hence a copy's answers differ from the original's.
* ``score`` spends exactly like ``predict``. Where a predictor offers
  ``predict_proba`` / ``decision_function``, they are scores of the same charged
  answers (never an exact vote fraction), and spend alike.
* Spend from one thread: the cap check and the ledger charge are each atomic, but
  two copies starting their last allowed instance at the same moment could both
  pass the check (the ledger then refuses whichever charge no longer fits).
"""

from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .._input import validate_data
from .._labels import check_labels_in, resolve_classes
from ..accounting import PrivacyBudget, PrivacyCost
from ..base import PrivateEstimatorMixin
from ..exceptions import BudgetExhaustedError

__all__ = ["QueryBudgetExhaustedError", "QueryBudgetedPredictor"]


class QueryBudgetExhaustedError(BudgetExhaustedError):
    """A predictor's query budget cannot pay for (the rest of) a ``predict`` call.

    Attributes
    ----------
    answers : ndarray
        The labels released by this call before the budget ran out (possibly
        empty), in the order of the queries. They are part of the private
        transcript and are already paid for.
    n_answered : int
        ``len(answers)``.
    """

    def __init__(self, message: str, answers: ArrayLike | None = None) -> None:
        super().__init__(message)
        self.answers = np.asarray([] if answers is None else answers)
        self.n_answered = int(self.answers.shape[0])


class _StreamState:
    """Per-copy mutable state of a fitted predictor (mutated in place by predict).

    Held as the private attribute ``_state``: it is internal, **non-private** state
    (the training rows or the teachers trained on them, the live mechanism instance
    with its noisy thresholds, the random generator) and must never be released —
    e.g. ``teachers.vote(q)`` returns exact teacher votes without spending anything.

    Copying (deepcopy, pickle) drops the active mechanism instance and replaces the
    generator by a fresh one from OS entropy: no two copies share noise.
    """

    def __init__(self, rng):
        self.rng = rng
        self.mechanism = None

    def __getstate__(self):
        state = self.__dict__.copy()
        state["rng"] = None
        state["mechanism"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.rng = np.random.default_rng()
        self.mechanism = None


class QueryBudgetedPredictor(PrivateEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Base class of skdp's binary private predictors (see the module docstring).

    Subclasses implement ``_fit_private(X, y_pm)`` (y_pm in {−1, +1}) and
    ``_answer(X)`` (returns ±1 labels or raises :class:`QueryBudgetExhaustedError`
    with ±1 ``answers``), and charge through :meth:`_pay`.
    """

    _parameter_constraints: dict = {
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "budget": [PrivacyBudget, None],
        "random_state": ["random_state", np.random.Generator],
        "classes": ["array-like", None],
    }

    # ---------------------------------------------------------------- tags / data
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = True
        tags.classifier_tags.multi_class = False
        tags.classifier_tags.poor_score = True
        return tags

    def _validate_training_data(self, X, y, reset=True):
        # Label checks are resolve_classes' (against the public classes when given).
        return validate_data(self, X, y, reset=reset)

    def _set_classes(self, y, classes=None):
        """``classes_`` of a new fit: the public ``classes`` (``partial_fit``'s argument
        or the parameter), else read from y with a ``PrivacyLeakWarning``."""
        return resolve_classes(self, y, classes)

    def _check_first_partial_fit(self, classes):
        if classes is None and self.classes is None:
            raise ValueError("classes must be passed on the first call to partial_fit "
                             "(or as the classes= parameter).")

    def _check_later_partial_fit(self, y, classes):
        resolve_classes(self, y, classes, first_call=False)

    def _later_partial_fit_rows(self, X, y, classes):
        """A later ``partial_fit``'s rows, validated against the first fit: (X, y in ±1)."""
        X, y = self._validate_training_data(X, y, reset=False)
        self._check_later_partial_fit(y, classes)
        return X, self._to_pm(y)

    def _to_pm(self, y):
        check_labels_in(y, self.classes_)
        return np.where(y == self.classes_[1], 1, -1).astype(np.int8)

    def _from_pm(self, labels):
        return self.classes_[(np.asarray(labels) > 0).astype(np.intp)]

    # ---------------------------------------------------------------- accounting
    def _new_ledger(self, epsilon, delta):
        """Create ``budget_`` and return the generator of this fitted predictor.

        ``budget_`` lives in the same store as ``budget`` (if any), so a pickled
        predictor reaches its query ledger wherever it reaches the user's. With a
        ``budget``, fit records a zero-cost charge there; its place in the ledger keys
        the generator, so clones fitted with one integer seed (the folds of a search)
        never share noise.
        """
        budget = self.budget
        self.budget_ = PrivacyBudget(epsilon, delta,
                                     store="memory" if budget is None else budget.store)
        key = self._pay_budget(0.0, 0.0, "fit (answers are charged as they are released)")
        return self._release_generator(key)

    @property
    def privacy_spent_(self) -> PrivacyCost:
        """(ε, δ) spent so far from ``budget_`` — by this predictor and its copies."""
        check_is_fitted(self, "budget_")
        return self.budget_.spent

    def _pay(self, epsilon, delta, label):
        """Charge ``budget`` (if any), then ``budget_``; atomic for each ledger.

        ``budget_`` always fits by construction (the caps are sized to it) unless a
        copy sharing it spent first; then the user's charge is not rolled back (the
        ledgers are append-only), which can only over-count.
        """
        full = f"{type(self).__name__}: {label}"
        if not self.budget_.can_spend(epsilon, delta):
            raise BudgetExhaustedError(
                f"{full}: the predictor's ledger budget_ has {self.budget_.remaining} left."
            )
        if self.budget is not None:
            self.budget.spend(epsilon, delta, label=full)
        self.budget_.spend(epsilon, delta, label=full)

    def _ledger_labels(self):
        return [label or "" for _, _, label in self.budget_.charges]

    # ---------------------------------------------------------------- public API
    def predict(self, X: ArrayLike) -> NDArray:
        """Answer the queries in ``X`` in order, spending from ``budget_``.

        Returns
        -------
        y : ndarray of shape (n_queries,)
            One label from ``classes_`` per row.

        Raises
        ------
        QueryBudgetExhaustedError
            When the query budget runs out; see the class docstring for what
            ``error.answers`` holds and which state the predictor is left in.
        """
        check_is_fitted(self, "budget_")
        try:
            labels = self._answer(validate_data(self, X, reset=False))
        except QueryBudgetExhaustedError as exc:
            exc.answers = self._from_pm(exc.answers) if exc.n_answered else exc.answers
            raise
        return self._from_pm(labels)

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """Accuracy of :meth:`predict` on ``(X, y)``: **spends** like ``predict(X)``."""
        return super().score(X, y, sample_weight=sample_weight)

    def _answer(self, X):  # pragma: no cover - abstract
        raise NotImplementedError


