"""`PrivacyBudget`: a ledger of privacy loss that copies can share but never reset.

Semantics (the reason this module exists; diffprivlib's accountant reports 0 spent
after ``clone``):

* A budget is a *handle* on a ledger. ``copy.copy``, ``copy.deepcopy`` and so
  ``sklearn.base.clone`` (which deep-copies non-estimator parameters) return a new
  handle on the **same** ledger: whatever either spends, both see. Copying a budget
  can never double the privacy loss it allows.
* Pickling stores the ledger's identity and every charge. Unpickling in a process
  where that ledger is alive re-attaches to it and *merges* charges the live ledger
  has not seen (e.g. spent in a joblib worker), so nothing spent anywhere is lost;
  unpickling elsewhere restores the ledger with everything already spent — a saved
  model resumes where it was, never with a fresh budget.
* Spending is atomic and thread-safe: a charge fits entirely, or
  :class:`~skdp.exceptions.BudgetExhaustedError` is raised and nothing changes.
* Across processes nothing can be atomic: two workers may both spend the same
  remainder. The merge then finds the ledger over-spent, marks it (``overspent``)
  and warns. For a hard guarantee, spend from one process.

A brand-new ledger is made only by constructing a new ``PrivacyBudget``.
"""

import math
import threading
import uuid
import warnings
import weakref

from .._validation import check_delta, check_epsilon
from ..exceptions import BudgetExhaustedError, PrivacyWarning
from .composition import PrivacyCost

__all__ = ["PrivacyBudget"]

# Relative slack when comparing a sum of charges to the total, so that e.g. ten
# charges of 0.1 fit in ε = 1 despite float rounding. The overrun it allows is at
# most 1e-12·ε: far below any meaningful privacy difference.
_REL_TOL = 1e-12

_LIVE_LEDGERS = weakref.WeakValueDictionary()
_REGISTRY_LOCK = threading.Lock()


class _Ledger:
    """The shared state behind every handle: totals and the list of charges."""

    def __init__(self, epsilon, delta, ledger_id=None, charges=()):
        self.id = ledger_id or uuid.uuid4().hex
        self.epsilon = epsilon
        self.delta = delta
        self.charges = list(charges)  # (charge_id, epsilon, delta, label)
        self.lock = threading.Lock()

    def spent(self):
        return PrivacyCost(
            math.fsum(c[1] for c in self.charges), math.fsum(c[2] for c in self.charges)
        )

    def fits(self, epsilon, delta):
        spent = self.spent()
        return spent.epsilon + epsilon <= self.epsilon * (1 + _REL_TOL) and (
            spent.delta + delta <= self.delta * (1 + _REL_TOL)
        )


def _attach(ledger_id, epsilon, delta, charges):
    """Return the live ledger with this id (merging unseen charges) or a restored one."""
    with _REGISTRY_LOCK:
        ledger = _LIVE_LEDGERS.get(ledger_id)
        if ledger is None:
            ledger = _Ledger(epsilon, delta, ledger_id, charges)
            _LIVE_LEDGERS[ledger_id] = ledger
            return ledger
    with ledger.lock:
        known = {c[0] for c in ledger.charges}
        ledger.charges.extend(c for c in charges if c[0] not in known)
        overspent = not ledger.fits(0.0, 0.0)
    if overspent:
        warnings.warn(
            f"Privacy ledger {ledger_id[:8]} was spent beyond its total in another process "
            "(e.g. parallel workers spending one budget). The privacy loss has exceeded "
            "the budget; spend from a single process for a hard guarantee.",
            PrivacyWarning,
            stacklevel=3,
        )
    return ledger


class PrivacyBudget:
    """A total (ε, δ) privacy budget and the ledger of what has been spent from it.

    Charges add up by basic composition. For tighter accounting over many similar
    steps, size each step with :func:`skdp.accounting.calibrate` and then charge the
    composed total once.

    Parameters
    ----------
    epsilon : float
        Total ε > 0.
    delta : float, default=0.0
        Total δ in [0, 1).

    Attributes
    ----------
    epsilon, delta : float
        The totals.
    spent, remaining : PrivacyCost
        (ε, δ) spent so far and still available.
    charges : tuple of (epsilon, delta, label)
        Every charge made through any handle on this ledger, in order.
    overspent : bool
        True only if charges merged from another process exceeded the total.

    Notes
    -----
    Copies share the ledger (see the module docstring): ``clone``, ``deepcopy`` and
    pickling never reset or duplicate the spent privacy.

    Examples
    --------
    >>> from skdp.accounting import PrivacyBudget
    >>> budget = PrivacyBudget(epsilon=1.0, delta=1e-6)
    >>> budget.spend(0.25, label="histogram")
    >>> budget.remaining.epsilon
    0.75
    >>> import copy
    >>> twin = copy.deepcopy(budget)
    >>> twin.spend(0.75)
    >>> budget.remaining.epsilon
    0.0
    """

    def __init__(self, epsilon, delta=0.0):
        self._ledger = _Ledger(check_epsilon(epsilon), check_delta(delta))
        with _REGISTRY_LOCK:
            _LIVE_LEDGERS[self._ledger.id] = self._ledger

    @property
    def epsilon(self):
        return self._ledger.epsilon

    @property
    def delta(self):
        return self._ledger.delta

    @property
    def spent(self):
        with self._ledger.lock:
            return self._ledger.spent()

    @property
    def remaining(self):
        spent = self.spent
        return PrivacyCost(
            max(self.epsilon - spent.epsilon, 0.0), max(self.delta - spent.delta, 0.0)
        )

    @property
    def charges(self):
        with self._ledger.lock:
            return tuple((eps, delta, label) for _, eps, delta, label in self._ledger.charges)

    @property
    def overspent(self):
        with self._ledger.lock:
            return not self._ledger.fits(0.0, 0.0)

    def can_spend(self, epsilon, delta=0.0):
        """True if a charge of (ε, δ) would fit now."""
        epsilon = check_epsilon(epsilon, allow_zero=True)
        delta = check_delta(delta)
        with self._ledger.lock:
            return self._ledger.fits(epsilon, delta)

    def spend(self, epsilon, delta=0.0, *, label=None):
        """Charge (ε, δ) to the budget, atomically.

        Parameters
        ----------
        epsilon : float
            ε ≥ 0 of the charge.
        delta : float, default=0.0
            δ in [0, 1) of the charge.
        label : str, optional
            What the charge paid for, kept in :attr:`charges`.

        Raises
        ------
        BudgetExhaustedError
            If the charge does not fit in what remains; nothing is recorded.
        PrivacyParameterError
            If ε or δ is invalid; nothing is recorded.
        """
        epsilon = check_epsilon(epsilon, allow_zero=True)
        delta = check_delta(delta)
        with self._ledger.lock:
            if not self._ledger.fits(epsilon, delta):
                spent = self._ledger.spent()
                raise BudgetExhaustedError(
                    f"cannot spend (ε={epsilon:g}, δ={delta:g})"
                    + (f" for {label}" if label else "")
                    + f": only (ε={max(self.epsilon - spent.epsilon, 0):g}, "
                    f"δ={max(self.delta - spent.delta, 0):g}) of the budget "
                    f"(ε={self.epsilon:g}, δ={self.delta:g}) remains. Nothing was spent."
                )
            self._ledger.charges.append((uuid.uuid4().hex, epsilon, delta, label))

    def shares_ledger_with(self, other):
        """True if ``other`` is a handle on the same ledger (a copy of this budget)."""
        return isinstance(other, PrivacyBudget) and other._ledger is self._ledger

    def __copy__(self):
        twin = object.__new__(PrivacyBudget)
        twin._ledger = self._ledger
        return twin

    def __deepcopy__(self, memo):
        return self.__copy__()

    def __getstate__(self):
        ledger = self._ledger
        with ledger.lock:
            return {
                "ledger_id": ledger.id,
                "epsilon": ledger.epsilon,
                "delta": ledger.delta,
                "charges": list(ledger.charges),
            }

    def __setstate__(self, state):
        self._ledger = _attach(
            state["ledger_id"], state["epsilon"], state["delta"], state["charges"]
        )

    def __repr__(self):
        spent = self.spent
        return (
            f"PrivacyBudget(epsilon={self.epsilon:g}, delta={self.delta:g}; "
            f"spent ε={spent.epsilon:g}, δ={spent.delta:g}; {len(self.charges)} charges)"
        )
