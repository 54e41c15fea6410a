"""What every private skdp estimator shares: its privacy parameters and how it pays.

Budget semantics for estimators
-------------------------------
* ``epsilon`` and ``delta`` are constructor parameters: the guarantee of *one*
  release (one ``fit``, or one model release from ``partial_fit`` where the
  estimator documents that). They describe the total; they are never decremented.
* ``budget`` (optional) is a :class:`~skdp.accounting.PrivacyBudget` to charge
  before each release. ``clone`` deep-copies parameters, and a deep-copied budget
  shares its ledger, so every clone made by ``GridSearchCV`` or
  ``cross_val_score`` charges the *same* ledger: the total privacy loss of a whole
  model search on one dataset is accounted, and the search stops with
  :class:`~skdp.exceptions.BudgetExhaustedError` when it is spent.
* The privacy a fitted estimator has spent lives in fitted state
  (``privacy_spent_``, a :class:`~skdp.accounting.PrivacyCost`); predictors that
  answer queries privately own a fitted ``budget_`` ledger, which copies of the
  fitted estimator share (so a copy cannot answer more queries than ε allows).
* Charges happen after input validation and before any data-dependent randomness:
  bad input never costs privacy, and a charge that does not fit leaves the
  estimator unchanged.
* Noise: with a ``budget``, each release's generator is derived from
  ``random_state`` *and* the release's position in the ledger (its charge ``seq``), so
  two releases charged to one ledger never share noise — not clones in a search with
  one integer seed, not deepcopies, not reloaded pickles — while a fresh ledger and the
  same seed reproduce a run. Without a budget, ``random_state`` is used as sklearn
  does, and a fixed integer seed warns once (:class:`~skdp.exceptions.PrivacyWarning`):
  two fits with one seed on neighbouring data share their noise.
* Stateful private objects (a stream of an online learner, a decision list's
  ``partial_fit`` buffer) open a versioned stream record in the budget's ledger (or
  in a private one): every transition is a compare-and-swap, and a stale copy is
  refused with :class:`~skdp.exceptions.StaleStateError`. (Copies of a fitted
  predictor instead drop the running mechanism and pay for a new one from the shared
  ``budget_``; see :mod:`skdp.prediction._base`.)
"""

from __future__ import annotations

import numbers
import warnings
from typing import cast

import numpy as np

from ._validation import RandomStateLike, check_delta, check_epsilon, check_generator
from .accounting import PrivacyBudget, PrivacyCost
from .accounting._ledger import Ledger, StreamRecord
from .exceptions import PrivacyWarning

__all__ = ["PrivateEstimatorMixin"]


class PrivateEstimatorMixin:
    """Mixin for estimators with ``epsilon``, ``delta`` and ``budget`` parameters.

    Place it first among the bases, before sklearn's mixins:
    ``class X(PrivateEstimatorMixin, ClassifierMixin, BaseEstimator)``.
    """

    # Parameters the estimator's __init__ sets (declared for the type checker only).
    epsilon: float
    random_state: RandomStateLike

    def _check_privacy_params(self) -> tuple[float, float]:
        """Validate ε, δ and the budget with privacy-specific messages; return (ε, δ)."""
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(getattr(self, "delta", 0.0))
        budget = getattr(self, "budget", None)
        if budget is not None and not isinstance(budget, PrivacyBudget):
            raise TypeError(
                f"budget must be a skdp.PrivacyBudget or None, got {type(budget).__name__}."
            )
        return epsilon, delta

    # Left unannotated on purpose: mypy would then type privacy_spent_ as a writable
    # attribute of the mixin, which query-budgeted predictors override with a read-only
    # property (they never call _charge).
    def _charge(self, epsilon, delta, label, *, accumulate=True, stream=None):  # type: ignore[no-untyped-def]
        """Pay (ε, δ) from ``self.budget`` (if any), then record it in ``privacy_spent_``.

        ``accumulate=False`` starts a new model (``fit``): ``privacy_spent_`` becomes
        this charge; otherwise (e.g. another release from ``partial_fit``) it adds up.
        Raises :class:`~skdp.exceptions.BudgetExhaustedError` without changing the
        estimator when the budget cannot pay. ``stream`` (a stream record from
        :meth:`_open_stream`) is advanced first — in the same transaction as the charge
        when it lives in the budget's ledger — so a stale copy is refused unpaid.
        Returns the release's noise key for :meth:`_release_generator`: the charge's
        ``seq`` in the budget's ledger, or ``None`` without a budget.
        """
        key = self._pay_budget(epsilon, delta, label, stream)
        spent = getattr(self, "privacy_spent_", None) if accumulate else None
        if spent is None:
            spent = PrivacyCost(0.0, 0.0)
        self.privacy_spent_ = PrivacyCost(spent.epsilon + epsilon, spent.delta + delta)
        return key

    def _pay_budget(self, epsilon: float, delta: float, label: str,
                    stream: StreamRecord | None = None) -> int | None:
        """Charge ``self.budget`` (if any); return the charge's ``seq`` or ``None``."""
        budget = getattr(self, "budget", None)
        if stream is not None and (budget is None or stream.ledger is not budget._ledger):
            stream.advance()
            stream = None
        if budget is None:
            return None
        return budget._charge(epsilon, delta, f"{type(self).__name__}: {label}", stream=stream)

    def _budget_has_room_for_delta(self, delta: float) -> bool:
        """Whether ``self.budget`` (if any) could still pay a δ of ``delta``.

        Learners whose accounting can be pure or approximate use this to stay pure on a
        ledger without δ (``PrivacyBudget(ε)`` defaults to δ = 0) instead of being
        refused. The ledger's totals are public, so reading them leaks nothing.
        """
        budget = getattr(self, "budget", None)
        return budget is None or budget.remaining.delta >= delta

    def _release_generator(self, key: int | None) -> np.random.Generator:
        """The generator of the release charged as ``key`` (see the module docstring)."""
        random_state = self.random_state
        seeded = isinstance(random_state, numbers.Integral) and not isinstance(
            random_state, bool)
        if key is None:
            if seeded:
                _warn_fixed_seed_once()
            return check_generator(random_state)
        base = int(cast(int, random_state)) if seeded else int(
            check_generator(random_state).integers(2**63))
        return np.random.default_rng([base, int(key)])

    def _open_stream(self) -> StreamRecord:
        """Open a versioned stream record for this object's private state.

        In the budget's ledger, else in a private one (which still catches stale
        in-process copies and, once pickled, stale copies in other processes of this
        machine).
        """
        budget = getattr(self, "budget", None)
        ledger = budget._ledger if budget is not None else Ledger.create("memory", 0.0, 0.0)
        return StreamRecord(ledger, f"This fitted {type(self).__name__}")

    def _begin_stream(self, epsilon: float, delta: float, from_fit: bool) -> None:
        """Start a stream that pays (ε, δ) once: open its record, charge (advancing it
        in the same transaction), and draw the stream's seed ``_entropy`` from the
        release's generator. Nothing changes if the budget cannot pay."""
        stream = self._open_stream()
        key = self._charge(epsilon, delta, "fit" if from_fit else "partial_fit stream",
                           accumulate=False, stream=stream)
        self._stream = stream
        self._entropy = int(self._release_generator(key).integers(2**63))


_FIXED_SEED_WARNED: list[bool] = []


def _warn_fixed_seed_once() -> None:
    if _FIXED_SEED_WARNED:
        return
    _FIXED_SEED_WARNED.append(True)
    warnings.warn(
        "A private estimator got a fixed integer random_state and no budget: two fits with "
        "the same seed on neighbouring datasets (e.g. the folds of a search) draw the same "
        "noise, so together they are not covered by ε each. Pass budget=PrivacyBudget(...) "
        "(noise is then keyed by each release's place in the ledger) or random_state=None. "
        "(Shown once per process.)",
        PrivacyWarning, stacklevel=4,
    )
