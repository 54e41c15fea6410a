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
  A predictor made *durable* (``make_durable``; ``skdp.prediction._state``) is the
  exception: its running mechanism lives in the ledger's store, and every copy, in
  any process, continues that one mechanism under its lock and compare-and-swap.
* ``score`` spends exactly like ``predict``. Where a predictor offers
  ``predict_proba`` / ``decision_function``, they are scores of the same charged
  answers (never an exact vote fraction), and spend alike.
* **Caps hold over concurrent copies.** Every count a plan was paid for (hard
  queries, mechanism instances, answered queries, one-off releases) is recorded in
  ``budget_`` by a charge whose cap is checked in the same ledger transaction
  (``cap=`` of :meth:`~skdp.accounting.PrivacyBudget._charge`), before the answer
  that depends on it leaves the call; copies racing for the last slot cannot both
  win it, and the loser is refused with nothing recorded. One-off payments (a
  plan's reservation, a single release) are *idempotent*: each copy either pays
  them or finds them paid, in ``budget_`` and in ``budget`` (where the label names
  this predictor's ``budget_``), so two copies can neither both pay nor both skip.
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
from .._validation import RANDOM_STATE_CONSTRAINT
from ..accounting import PrivacyBudget, PrivacyCost
from ..base import PrivateEstimatorMixin
from ..exceptions import BudgetExhaustedError, CapReachedError

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


def claim_queries(used, record, n, limit, refuse):
    """Claim the next ``n`` query numbers of a stream capped at ``limit`` answers over
    all copies of a predictor; return ``a``, the claimed range being a + 1, …, a + n.

    ``used()`` sums the ranges recorded so far — or returns any total the ledger once
    had (e.g. the end of this copy's last claim: a cheap first guess; the argument
    below covers it, a stale total being refused and re-read); ``record(a)`` records
    the range with a cap of one on ranges starting at a + 1 (one ledger transaction: ``cap=`` on the
    label prefix ``"a+1-"``), raising :class:`~skdp.exceptions.CapReachedError` if one
    does; ``refuse(remaining)`` raises. *Why the recorded ranges tile 1, …, used
    without overlap:* every range starts one after the total some copy read, and at
    most one range starts at each number. A copy whose total is stale read a total
    that an earlier range ended at, and the range starting right after it is recorded,
    so its claim is refused; it re-reads the total (which grew: another copy
    progressed) and tries again. So a recorded range starts exactly where the recorded
    ones end, and its end ≤ ``limit`` was checked against the true total.
    """
    while True:
        start = used()
        if start + n > limit:
            refuse(limit - start)
        try:
            record(start)
        except CapReachedError:
            continue
        return start


def _charge_once(budget, epsilon, delta, label, prefix):
    """Charge ``budget`` unless a charge labelled ``prefix…`` is recorded (checked in
    the same transaction); True if this call charged. The store checks the cap before
    the cost, so a step another copy paid is CapReachedError even when a second
    payment would no longer fit."""
    try:
        budget._charge(epsilon, delta, label, cap=(prefix, 1))
    except CapReachedError:
        return False
    return True


class QueryBudgetedPredictor(PrivateEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Base class of skdp's binary private predictors (see the module docstring).

    Subclasses implement ``_fit_private(X, y_pm)`` (y_pm in {−1, +1}) and
    ``_answer(X)`` (returns ±1 labels or raises :class:`QueryBudgetExhaustedError`
    with ±1 ``answers``), and charge through :meth:`_pay` (a plain charge),
    :meth:`_pay_once` (a one-off step, once over all copies), :meth:`_claim` /
    :meth:`_mark` (a capped step, paid or free; see :func:`claim_queries` for
    ranges of answered queries).
    """

    _parameter_constraints: dict = {
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "budget": [PrivacyBudget, None],
        "random_state": [*RANDOM_STATE_CONSTRAINT],
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

    def _mark(self, label, cap=None):
        """Record a zero-cost step in ``budget_`` (shared by copies; counts the caps).

        ``cap`` = ``(label_prefix, limit)``: refuse with
        :class:`~skdp.exceptions.CapReachedError`, recording nothing, when ``limit``
        steps whose label starts with ``label_prefix`` are recorded — checked in the
        step's own transaction, so concurrent copies cannot pass the cap together.
        """
        name = f"{type(self).__name__}: "
        self.budget_._charge(0.0, 0.0, name + label,
                             cap=None if cap is None else (name + cap[0], cap[1]))

    def _claim(self, epsilon, delta, label, cap):
        """Pay (ε, δ) for a capped step: ``budget_`` first, in one transaction with its
        cap (as :meth:`_mark`), then ``budget``.

        ``budget_`` decides which copy gets the step, so a copy that loses the race
        pays nothing anywhere. If ``budget`` then refuses (another user of it spent
        meanwhile; it is checked first), the step stays recorded in ``budget_`` unused:
        an over-count, never an answer without its charge.
        """
        full = f"{type(self).__name__}: {label}"
        if self.budget is not None and not self.budget.can_spend(epsilon, delta):
            raise BudgetExhaustedError(f"{full}: budget has {self.budget.remaining} left.")
        if cap is not None:
            cap = (f"{type(self).__name__}: {cap[0]}", cap[1])
        self.budget_._charge(epsilon, delta, full, cap=cap)
        if self.budget is not None:
            self.budget.spend(epsilon, delta, label=full)

    def _pay_once(self, epsilon, delta, what, note=""):
        """Pay a one-off step ``what`` (a plan's reservation, a single release) exactly
        once over this predictor and all its copies; True if this call paid it, False
        if it was paid already.

        Idempotent in both ledgers, each by a cap of one on the step's label: first
        ``budget`` (its label names this predictor's ``budget_``, which clones sharing
        ``budget`` do not share), then ``budget_`` (label ``what`` + ``note``, e.g. the
        released value for copies to read). A copy that finds the step paid in one
        ledger still makes sure of the other, so a crash between the two charges is
        completed by the next copy, and no copy can go on without both paid.
        """
        name = type(self).__name__
        if self.budget is not None:
            tag = f"{name} [budget_ {self.budget_.ledger_id}]: {what}"
            _charge_once(self.budget, epsilon, delta, tag, tag)
        tag = f"{name}: {what}"
        return _charge_once(self.budget_, epsilon, delta, tag + note, tag)

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


