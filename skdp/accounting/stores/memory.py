"""The ``memory`` store: ledgers in this process's memory, for one process.

It is the fastest store and the default of :class:`~skdp.PrivacyBudget`. It never
crosses a process boundary silently:

* pickling a budget (or an estimator holding one) whose ledger is here first moves
  the ledger to the shared SQLite file of this machine (see
  :func:`skdp.accounting.stores.promotion_url`), so a joblib/loky or dask worker, or a
  later process loading the pickle, charges the same ledger as the parent; the chain is
  verified and sealed again under the ledger key there (here it is keyed with a secret
  of this process, which nothing else can reach, so creating a ``memory`` budget
  touches no file);
* a process created by ``fork`` that inherits the store without pickling cannot reach
  the parent's memory: any use of the store there raises
  :class:`~skdp.exceptions.PrivacyError` naming the fix.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import threading
from collections.abc import Iterator, Sequence

from ...exceptions import PrivacyError
from ._base import (
    Charge,
    LedgerStore,
    MissingLedgerError,
    check_cap,
    check_fits,
    genesis_hash,
    integrity_error,
    next_charge,
    spent_after,
    stale_error,
    verify_chain,
)
from ._keys import LedgerKey

__all__ = ["MemoryStore"]


class _MemoryLedger:
    def __init__(self, epsilon: float, delta: float) -> None:
        self.totals = (float(epsilon), float(delta))
        self.charges: list[Charge] = []
        self.streams: dict[str, int] = {}
        # The charges' labels, sorted: a cap counts its prefix by bisection instead of
        # scanning every charge (a predictor's single-row answers each check a cap).
        self.labels: list[str] = []

    def count_prefix(self, prefix: str, limit: int) -> int:
        """How many labels start with ``prefix``, counted up to ``limit``."""
        i = bisect.bisect_left(self.labels, prefix)
        count = 0
        while count < limit and i < len(self.labels) and self.labels[i].startswith(prefix):
            count, i = count + 1, i + 1
        return count


class MemoryStore(LedgerStore):
    """Ledgers in this process's memory (see the module docstring)."""

    url = "memory"
    shared = False

    def __init__(self) -> None:
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._ledgers: dict[str, _MemoryLedger] = {}
        self._stream_ledger: dict[str, str] = {}
        self._pending_drops: list[str] = []  # ledgers to forget at the next locked operation
        self._key = LedgerKey.ephemeral()

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """The store's lock, after forgetting the ledgers whose drop was deferred."""
        with self._lock:
            self._drain_drops()
            yield

    def _drain_drops(self) -> None:
        while self._pending_drops:  # a finalizer may queue more meanwhile: loop
            self._forget(self._pending_drops.pop())

    def _check_process(self) -> None:
        if os.getpid() != self._pid:
            raise PrivacyError(
                "a PrivacyBudget in the 'memory' store was inherited by a forked process "
                "without being pickled; the child cannot charge the parent's ledger. Pass "
                "the budget (or the estimator) to the worker as an argument, which moves the "
                "ledger to a shared SQLite file, or create it with "
                "PrivacyBudget(..., store='sqlite:///path/ledger.db')."
            )

    def _get(self, ledger_id: str) -> _MemoryLedger:
        self._check_process()
        try:
            return self._ledgers[ledger_id]
        except KeyError:
            raise integrity_error(ledger_id, "it is not in this process's memory",
                                  MissingLedgerError) from None

    def create_ledger(self, ledger_id: str, epsilon: float, delta: float) -> None:
        with self._locked():
            self._check_process()
            self._ledgers[ledger_id] = _MemoryLedger(epsilon, delta)

    def move_ledger(self, ledger_id: str, target: LedgerStore) -> None:
        """Copy a ledger (verified) and its streams into ``target`` and forget it here.

        One acquisition of the store's lock: no charge can land between the copy and
        the drop (a charge that waited for the lock then finds the ledger gone and is
        retried on ``target`` by its :class:`~skdp.accounting._ledger.Ledger`).
        """
        with self._locked():
            ledger = self._get(ledger_id)
            problem = self._problem(ledger_id, ledger)
            if problem is not None:
                raise integrity_error(ledger_id, problem)
            target.import_ledger(ledger_id, *ledger.totals, ledger.charges, ledger.streams)
            self._forget(ledger_id)

    def drop_ledger(self, ledger_id: str) -> None:
        """Forget a ledger nobody holds any more (a no-op once it moved elsewhere).

        A weakref finalizer calls this, and the garbage collector may run finalizers
        inside any allocation — also one this thread makes while it holds the store's
        lock (a ``move_ledger`` importing into SQLite did). Waiting for the lock there
        would deadlock, so the drop is queued and, when the lock is busy, done by the
        next locked operation.
        """
        self._pending_drops.append(ledger_id)  # atomic: no lock needed to queue it
        if self._lock.acquire(blocking=False):
            try:
                self._drain_drops()
            finally:
                self._lock.release()

    def _forget(self, ledger_id: str) -> None:
        ledger = self._ledgers.pop(ledger_id, None)
        for stream_id in ledger.streams if ledger else ():
            self._stream_ledger.pop(stream_id, None)

    def _problem(self, ledger_id: str, ledger: _MemoryLedger) -> str | None:
        head = ledger.charges[-1].hash if ledger.charges else genesis_hash(
            self._key, ledger_id, *ledger.totals)
        return verify_chain(self._key, ledger_id, ledger.totals, ledger.charges,
                            len(ledger.charges), head)

    def totals(self, ledger_id: str) -> tuple[float, float]:
        with self._locked():
            return self._get(ledger_id).totals

    def charges(self, ledger_id: str) -> list[Charge]:
        with self._locked():
            return list(self._get(ledger_id).charges)

    def streams(self, ledger_id: str) -> dict[str, int]:
        with self._locked():
            return dict(self._get(ledger_id).streams)

    def spent(self, ledger_id: str) -> tuple[float, float]:
        with self._locked():
            return spent_after(self._last(self._get(ledger_id)))

    def verify(self, ledger_id: str) -> str | None:
        with self._locked():
            return self._problem(ledger_id, self._get(ledger_id))

    @staticmethod
    def _last(ledger: _MemoryLedger) -> Charge | None:
        return ledger.charges[-1] if ledger.charges else None

    def charge_many(self, ledger_id: str,
                    items: Sequence[tuple[float, float, str | None, tuple[str, int] | None]],
                    stream: tuple[str, int] | None = None) -> list[int]:
        with self._locked():
            ledger = self._get(ledger_id)
            # Memory cannot be edited from outside the process, so the chain is not
            # re-checked here (it is on promotion and by verify()). All or nothing: the
            # charges are checked against the ledger plus the ones before them, then
            # appended together.
            last = self._last(ledger)
            new: list[Charge] = []
            labels: list[str | None] = []
            for epsilon, delta, label, cap in items:
                if cap is not None:  # first, as in the SQL stores
                    earlier = sum((lab or "").startswith(cap[0]) for lab in labels)
                    check_cap(cap, ledger.count_prefix(cap[0], cap[1]) + earlier, label)
                check_fits(ledger.totals, last, epsilon, delta, label)
                last = next_charge(self._key, ledger_id, ledger.totals, last, epsilon, delta,
                                   label)
                new.append(last)
                labels.append(label)
            if stream is not None and new:
                self._cas(stream[0], stream[1], items[0][2])
            for charge in new:
                ledger.charges.append(charge)
                bisect.insort(ledger.labels, charge.label)
            return [charge.seq for charge in new]

    def create_stream(self, ledger_id: str, stream_id: str) -> None:
        with self._locked():
            self._get(ledger_id).streams[stream_id] = 0
            self._stream_ledger[stream_id] = ledger_id

    def advance_stream(self, stream_id: str, expected_version: int, what: str) -> int:
        with self._locked():
            self._check_process()
            return self._cas(stream_id, expected_version, what)

    def _cas(self, stream_id: str, expected_version: int, what: str | None) -> int:
        ledger_id = self._stream_ledger.get(stream_id)
        streams = self._ledgers[ledger_id].streams if ledger_id in self._ledgers else {}
        if streams.get(stream_id) != expected_version:
            raise stale_error(what)
        streams[stream_id] = expected_version + 1
        return expected_version + 1
