"""`PrivacyBudget`: a handle on a durable ledger of privacy loss that no copy can reset.

Semantics (every line is tested in tests/test_budget.py and tests/test_ledger_*.py):

* A budget is a *handle* on a ledger that lives in a **store** named by URL:
  ``"memory"`` (default; this process), ``"sqlite:///path"`` (processes of one machine)
  or ``"postgresql://…"`` (processes on many machines).
* ``copy``, ``deepcopy`` and so ``sklearn.base.clone`` return a handle on the **same**
  ledger. Pickling stores only the store's address (without password) and the ledger's
  id, never what was spent: a reloaded pickle can never restore spent budget.
* A ``memory`` ledger that is pickled (into a joblib/loky or dask worker, or to a file)
  first moves to this user's shared SQLite file in a private directory
  (``$SKDP_LEDGER_DIR``, default ``~/.local/state/skdp``; mode 0700, owner checked);
  the parent's handles move with it, so every process charges the same ledger. Loading
  such a pickle on another machine raises
  :class:`~skdp.exceptions.LedgerIntegrityError` naming the fix (a ``postgresql://``
  store). A process that inherits a ``memory`` ledger through ``fork`` without pickling
  cannot spend it (:class:`~skdp.exceptions.PrivacyError`).
* A charge is one transaction — check the ledger, check the remainder, append,
  commit — that completes before any data-dependent output leaves the call. Under
  concurrent processes it is atomic: the total is never exceeded. A process killed
  mid-charge either committed it or released nothing.
* Charges are appended, never updated or deleted, and form a chain of HMAC tags under
  a ledger key kept outside the store (``$SKDP_LEDGER_KEY`` or a key file in the
  private directory; never pickled): an edited or forged row, edited totals or a
  re-chained ledger make :meth:`PrivacyBudget.verify` and every later spend on a shared
  store refuse. A rollback witness (this process, and a sealed file in the private
  directory) refuses an older copy of a store, deleted newest charges, a reset stream
  version, and the re-creation of a ledger that existed.

A brand-new ledger is made only by constructing a ``PrivacyBudget`` (or naming a new
``ledger_id``).
"""

from __future__ import annotations

from typing import Any

from .._validation import check_delta, check_epsilon
from ..exceptions import LedgerIntegrityError
from ._ledger import Ledger, StreamRecord
from .composition import PrivacyCost
from .stores._base import MissingLedgerError, fits, integrity_error

__all__ = ["PrivacyBudget"]


class PrivacyBudget:
    """A total (ε, δ) privacy budget and the durable ledger of what has been spent.

    Charges add up by basic composition. For tighter accounting over many similar
    steps, size each step with :func:`skdp.accounting.calibrate` and charge the
    composed total once.

    Parameters
    ----------
    epsilon : float
        Total ε > 0.
    delta : float, default=0.0
        Total δ in [0, 1).
    store : str, default="memory"
        Where the ledger lives: ``"memory"`` (one process; moves itself to a shared
        SQLite file when pickled), ``"sqlite:///path/to/ledger.db"`` (processes of one
        machine) or ``"postgresql://user@host/db"`` (processes on many machines; needs
        ``pip install "skdp[postgresql]"``; pass the password through libpq's
        ``PGPASSWORD`` or ``~/.pgpass`` so that pickles never carry it). The shared
        stores seal every ledger with the ledger key (``$SKDP_LEDGER_KEY``, else a key
        file made in this user's private ledger directory): every machine charging one
        ``postgresql://`` ledger needs the same key. See the user guide's "The
        ledger's threat model".
    ledger_id : str, optional
        Name of the ledger. If a ledger of that name exists in ``store`` with the same
        totals, this handle attaches to it (how processes on several machines share one
        budget); if its totals differ, ``ValueError``. If it does not exist it is
        created — unless it existed and was deleted (its charges remain, or this
        machine has seen it), which raises
        :class:`~skdp.exceptions.LedgerIntegrityError`. By default a new ledger.

    Attributes
    ----------
    epsilon, delta : float
        The totals.
    spent, remaining : PrivacyCost
        (ε, δ) spent so far and still available, read from the store.
    charges : tuple of (epsilon, delta, label)
        Every charge made through any handle on this ledger, in order.
    store : str
        The store's address, without password.
    ledger_id : str
        The ledger's name in its store.

    Notes
    -----
    See the module :mod:`skdp.accounting.budget` and the user guide's "Budgets across
    processes and machines" for the full semantics.

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

    def __init__(self, epsilon: float, delta: float = 0.0, *, store: str = "memory",
                 ledger_id: str | None = None) -> None:
        epsilon, delta = check_epsilon(epsilon), check_delta(delta)
        if ledger_id is None:
            self._ledger = Ledger.create(store, epsilon, delta)
            return
        try:
            self._ledger = Ledger.attach(store, str(ledger_id))
        except MissingLedgerError:  # never existed (as far as the store and witness tell)
            try:
                self._ledger = Ledger.create(store, epsilon, delta, str(ledger_id))
            except LedgerIntegrityError:  # it did exist: never re-created empty
                raise
            except Exception:  # created concurrently by another process: attach to it
                self._ledger = Ledger.attach(store, str(ledger_id))
        if self._ledger.run("totals") != (epsilon, delta):
            raise ValueError(
                f"ledger {ledger_id!r} in {self.store} has totals "
                f"(ε={self.epsilon:g}, δ={self.delta:g}), not (ε={epsilon:g}, δ={delta:g})."
            )

    @property
    def epsilon(self) -> float:
        return self._ledger.run("totals")[0]

    @property
    def delta(self) -> float:
        return self._ledger.run("totals")[1]

    @property
    def store(self) -> str:
        return self._ledger.store.url

    @property
    def ledger_id(self) -> str:
        return self._ledger.id

    @property
    def spent(self) -> PrivacyCost:
        return PrivacyCost(*self._ledger.run("spent"))

    @property
    def remaining(self) -> PrivacyCost:
        total_eps, total_delta = self._ledger.run("totals")
        used = self.spent
        return PrivacyCost(max(total_eps - used.epsilon, 0.0),
                           max(total_delta - used.delta, 0.0))

    @property
    def charges(self) -> tuple[tuple[float, float, str | None], ...]:
        return tuple((c.epsilon, c.delta, c.label or None)
                     for c in self._ledger.run("charges"))

    def verify(self) -> bool:
        """Check that no charge was forged, altered or deleted and that the store is not
        older than what this machine has seen; return True.

        Raises
        ------
        LedgerIntegrityError
            Naming the first charge that breaks the keyed chain, or the rollback.
        """
        problem = self._ledger.run("verify")
        if problem is not None:
            raise integrity_error(self._ledger.id, problem)
        return True

    def can_spend(self, epsilon: float, delta: float = 0.0) -> bool:
        """True if a charge of (ε, δ) would fit now."""
        epsilon = check_epsilon(epsilon, allow_zero=True)
        delta = check_delta(delta)
        return fits(self._ledger.run("totals"), self.spent, epsilon, delta)

    def spend(self, epsilon: float, delta: float = 0.0, *, label: str | None = None) -> None:
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
        LedgerIntegrityError
            If the ledger does not verify; nothing is recorded.
        PrivacyParameterError
            If ε or δ is invalid; nothing is recorded.
        """
        self._charge(epsilon, delta, label)

    def _charge(self, epsilon: float, delta: float, label: str | None,
                stream: StreamRecord | None = None,
                cap: tuple[str, int] | None = None) -> int:
        """:meth:`spend`, returning the charge's position in the ledger (its ``seq``).

        ``stream`` (a :class:`~skdp.accounting._ledger.StreamRecord` on this ledger) is
        advanced in the same transaction. ``cap`` = ``(label_prefix, limit)`` refuses
        the charge with :class:`~skdp.exceptions.CapReachedError` when ``limit``
        charges whose label starts with ``label_prefix`` are recorded, checked in the
        same transaction (how a plan's count caps hold under concurrent copies).
        """
        epsilon = check_epsilon(epsilon, allow_zero=True)
        delta = check_delta(delta)
        if stream is not None:
            return stream.charge(epsilon, delta, label, cap=cap)
        return self._ledger.run("charge", epsilon, delta, label, cap=cap)

    def shares_ledger_with(self, other: object) -> bool:
        """True if ``other`` is a handle on the same ledger (a copy of this budget)."""
        return (isinstance(other, PrivacyBudget) and other._ledger.id == self._ledger.id
                and other._ledger.store.url == self._ledger.store.url)

    def __copy__(self) -> PrivacyBudget:
        twin = object.__new__(PrivacyBudget)
        twin._ledger = self._ledger
        return twin

    def __deepcopy__(self, memo: dict[int, Any]) -> PrivacyBudget:
        return self.__copy__()

    def __repr__(self) -> str:
        used = self.spent
        return (
            f"PrivacyBudget(epsilon={self.epsilon:g}, delta={self.delta:g}; "
            f"spent ε={used.epsilon:g}, δ={used.delta:g}; {len(self.charges)} charges"
            + ("" if self.store == "memory" else f"; store={self.store}") + ")"
        )
