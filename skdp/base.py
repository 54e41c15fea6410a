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
* Noise (see :mod:`skdp._streams`): with the default ``random_state=None`` a
  release's noise comes from OS entropy drawn at release time and never stored, so
  nothing in a fitted estimator — its pickle, its attributes, its ``get_params()`` —
  can regenerate it (a holder of the model and all rows but one cannot replay the
  release to learn the last row). A stream that needs noise for later events holds
  forward-secure keys (:class:`~skdp._streams.StreamNoise`) that derive only events
  not yet run. A learner that can still continue its stream is private running state
  (future noise keys, its live mechanisms' noisy thresholds and generators), not a
  publishable model — a batch ``fit`` that keeps no stream is. A copy or pickle of a
  noise source holds no key or generator state: it is re-keyed from OS entropy.
* Seeds are a testing mode: an int, Generator, RandomState or SeedSequence
  ``random_state`` makes the noise reproducible from ``get_params()`` and warns
  (:class:`~skdp.exceptions.PrivacyWarning`) at every seeded release and at every
  ``clone`` (which searches call in the parent process, so the warning is seen even
  when fits run in workers). Together with a ``budget`` a bare seed is refused unless
  the user opts in by name, ``random_state=skdp.TestingSeed(seed)``; the noise is then
  keyed by the seed *and* the release's charge ``seq``, so two releases charged to one
  ledger still never share noise. Clones of an estimator seeded with a Generator or
  RandomState get independent children of it, never a copy of its state.
* Stateful private objects (a stream of an online learner, a decision list's
  ``partial_fit`` buffer) hold a versioned stream record (an immutable value in the
  budget's ledger, or in a private one): every transition is a compare-and-swap that
  returns the next record, and whatever still holds an older one — a shallow copy, a
  ``__dict__`` snapshot, a ``__setstate__`` of an old state, a pickle, a deepcopy
  branch — is refused with :class:`~skdp.exceptions.StaleStateError`. (Copies of a
  fitted predictor instead drop the running mechanism and pay for a new one from the
  shared ``budget_``; see :mod:`skdp.prediction._base`.)
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from ._streams import StreamNoise, release_generator
from ._validation import (
    RandomStateLike,
    check_delta,
    check_epsilon,
    check_random_state_mode,
    fork_random_state,
    seeded_generator,
    seeded_warning,
)
from .accounting import PrivacyBudget, PrivacyCost
from .accounting._ledger import Ledger, StreamRecord
from .exceptions import BudgetExhaustedError, PrivacyWarning

__all__ = ["PrivateEstimatorMixin"]


@contextlib.contextmanager
def unchanged_if_unpaid(estimator: Any) -> Iterator[None]:
    """Restore ``estimator``'s attributes when the block raises ``BudgetExhaustedError``.

    A refused charge must leave the estimator exactly as it was (fitted state, stream
    record, noise keys), whatever the block had set before the ledger said no.
    """
    saved = dict(estimator.__dict__)
    try:
        yield
    except BudgetExhaustedError:
        estimator.__dict__.clear()
        estimator.__dict__.update(saved)
        raise


class PrivateEstimatorMixin:
    """Mixin for estimators with ``epsilon``, ``delta`` and ``budget`` parameters.

    Place it first among the bases, before sklearn's mixins:
    ``class X(PrivateEstimatorMixin, ClassifierMixin, BaseEstimator)``.
    """

    # Parameters the estimator's __init__ sets (declared for the type checker only).
    epsilon: float
    random_state: RandomStateLike

    def _check_privacy_params(self) -> tuple[float, float]:
        """Validate ε, δ, the budget and the seed mode (a bare seed with a budget is
        refused) with privacy-specific messages; return (ε, δ)."""
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(getattr(self, "delta", 0.0))
        budget = getattr(self, "budget", None)
        if budget is not None and not isinstance(budget, PrivacyBudget):
            raise TypeError(
                f"budget must be a skdp.PrivacyBudget or None, got {type(budget).__name__}."
            )
        check_random_state_mode(getattr(self, "random_state", None), budget is not None,
                                type(self).__name__)
        return epsilon, delta

    # _charge and _add_spent are left unannotated on purpose: mypy would then type
    # privacy_spent_ as a writable attribute of the mixin, which query-budgeted
    # predictors override with a read-only property (they never call either).
    def _charge(self, epsilon, delta, label, *, accumulate=True):  # type: ignore[no-untyped-def]
        """Pay (ε, δ) from ``self.budget`` (if any), then record it in ``privacy_spent_``.

        ``accumulate=False`` starts a new model (``fit``): ``privacy_spent_`` becomes
        this charge; otherwise (e.g. another release from ``partial_fit``) it adds up.
        Raises :class:`~skdp.exceptions.BudgetExhaustedError` without changing the
        estimator when the budget cannot pay. Returns the release's charge ``seq`` in the
        budget's ledger (``None`` without a budget): what keys seeded noise apart.
        """
        key = self._pay_budget(epsilon, delta, label)
        self._add_spent(epsilon, delta, accumulate)
        return key

    def _add_spent(self, epsilon, delta, accumulate):  # type: ignore[no-untyped-def]
        spent = getattr(self, "privacy_spent_", None) if accumulate else None
        if spent is None:
            spent = PrivacyCost(0.0, 0.0)
        self.privacy_spent_ = PrivacyCost(spent.epsilon + epsilon, spent.delta + delta)

    def _pay_budget(self, epsilon: float, delta: float, label: str) -> int | None:
        """Charge ``self.budget`` (if any); return the charge's ``seq`` or ``None``."""
        budget = getattr(self, "budget", None)
        if budget is None:
            return None
        return budget._charge(epsilon, delta, f"{type(self).__name__}: {label}")

    def _budget_has_room_for_delta(self, delta: float) -> bool:
        """Whether ``self.budget`` (if any) could still pay a δ of ``delta``.

        Learners whose accounting can be pure or approximate use this to stay pure on a
        ledger without δ (``PrivacyBudget(ε)`` defaults to δ = 0) instead of being
        refused. The ledger's totals are public, so reading them leaks nothing.
        """
        budget = getattr(self, "budget", None)
        return budget is None or budget.remaining.delta >= delta

    # ------------------------------------------------------------------ noise
    def _seeded(self) -> bool:
        """Seeded testing mode (warns); False for the default OS-entropy noise."""
        random_state = getattr(self, "random_state", None)
        if random_state is None:
            return False
        warnings.warn(seeded_warning(type(self).__name__), PrivacyWarning, stacklevel=4)
        return True

    def _release_generator(self, key: int | None, index: int = 0) -> np.random.Generator:
        """The generator of one release (``index`` within a stream charged as ``key``).

        Default: OS entropy drawn now, to be used for this release and dropped — the
        caller must not store it on the estimator. Seeded: see
        :func:`~skdp._validation.seeded_generator`.
        """
        if not self._seeded():
            return release_generator()
        return seeded_generator(self.random_state, key, index)

    def __sklearn_clone__(self) -> Any:
        # clone() deep-copies random_state: a Generator would repeat the original's noise
        # in every clone, so the clone gets an independent child. Searches clone in the
        # parent process, so this is also where a seed's warning reaches the user when
        # the fits run in workers.
        clone = super().__sklearn_clone__()  # type: ignore[misc]
        random_state = getattr(self, "random_state", None)
        if random_state is not None:
            self._seeded()
            forked = fork_random_state(random_state)
            if forked is not random_state:
                clone.random_state = forked
        return clone

    # ----------------------------------------------------------------- streams
    def _open_stream(self) -> StreamRecord:
        """Open a versioned stream record for this object's private state.

        In the budget's ledger, else in a private one (which still catches stale
        in-process copies and, once pickled, stale copies in other processes of this
        machine).
        """
        budget = getattr(self, "budget", None)
        ledger = budget._ledger if budget is not None else Ledger.create("memory", 0.0, 0.0)
        return StreamRecord(ledger, f"This fitted {type(self).__name__}")

    def _open_paid_stream(self, epsilon: float, delta: float, label: str) -> int | None:
        """Open a stream record, pay (ε, δ) for it and advance it in one transaction.

        Sets ``_stream`` (the advanced record) and ``privacy_spent_``; returns the
        charge's ``seq`` (``None`` without a budget). Nothing changes if the budget
        cannot pay.
        """
        stream = self._open_stream()
        budget = getattr(self, "budget", None)
        if budget is None:
            key, stream = None, stream.advance()
        else:
            # The budget's own charge path, advancing the record in the same transaction
            # (a stale copy is refused unpaid); the record is a value: rebind to the next.
            key = budget._charge(epsilon, delta, f"{type(self).__name__}: {label}",
                                 stream=stream)
            stream = stream.next()
        self._add_spent(epsilon, delta, accumulate=False)
        self._stream = stream
        return key

    def _advance_stream(self) -> None:
        """Compare-and-swap the stream one step; a stale copy is refused here, before it
        touches its private state."""
        self._stream = self._stream.advance()

    def _begin_stream(self, epsilon: float, delta: float, from_fit: bool) -> None:
        """Start a stream that pays (ε, δ) once: open its record and charge (advancing it
        in the same transaction), then key the stream's noise ``_noise`` (OS entropy, or
        the seed in testing mode). Nothing changes if the budget cannot pay."""
        key = self._open_paid_stream(epsilon, delta, "fit" if from_fit else "partial_fit stream")
        self._noise = (StreamNoise.from_seed(seeded_generator(self.random_state, key))
                       if self._seeded() else StreamNoise.fresh())
