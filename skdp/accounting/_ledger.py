"""The handle every copy of one budget shares, and how it crosses a process boundary.

A :class:`Ledger` names one ledger in one store. Every in-process copy of a
:class:`~skdp.PrivacyBudget` (``copy``, ``deepcopy``, ``clone``) and every
:class:`StreamRecord` on it hold the *same* ``Ledger`` object, so when a ``memory``
ledger moves to the shared SQLite file (the first time it is pickled), they all move
with it. Pickling a ``Ledger`` stores only its store's address (without password) and
its id: never a snapshot of what was spent, which a reload could replay.
"""

from __future__ import annotations

import bisect
import threading
import uuid
import weakref
from typing import TYPE_CHECKING, Any, cast

from ..exceptions import LedgerIntegrityError, StaleStateError
from .stores import open_store, promotion_url
from .stores._base import LedgerStore

if TYPE_CHECKING:
    from .stores.memory import MemoryStore

__all__ = ["Ledger", "StreamRecord", "charge_batch"]

# redacted URL -> URL with password, for stores opened in this process
_KNOWN_DSNS: dict[str, str] = {}


def _open(url: str, create: bool = True) -> LedgerStore:
    store = open_store(url, create=create)
    _KNOWN_DSNS[store.url] = _KNOWN_DSNS[store.portable_url] = url
    return store


class Ledger:
    """One ledger in one store; shared by every in-process handle on it."""

    def __init__(self, store: LedgerStore, ledger_id: str) -> None:
        self.store = store
        self.id = ledger_id
        self._lock = threading.Lock()

    @classmethod
    def create(cls, url: str, epsilon: float, delta: float, ledger_id: str | None = None) -> Ledger:
        store = _open(_KNOWN_DSNS.get(url, url))
        ledger = cls(store, ledger_id or uuid.uuid4().hex)
        store.create_ledger(ledger.id, epsilon, delta)
        if not store.shared:
            # Nothing outside this process can reach a memory ledger: free it with the
            # last handle (a no-op once it has moved to a shared store).
            weakref.finalize(ledger, cast("MemoryStore", store).drop_ledger, ledger.id)
        return ledger

    @classmethod
    def attach(cls, url: str, ledger_id: str) -> Ledger:
        store = _open(_KNOWN_DSNS.get(url, url), create=False)
        store.totals(ledger_id)  # LedgerIntegrityError if it is not there
        return cls(store, ledger_id)

    def run(self, operation: str, *args: Any, **kwargs: Any) -> Any:
        """Call ``store.<operation>(id, ...)``; retried once on the new store if the
        ledger moved (was promoted) while the call waited, which committed nothing.
        Inside :func:`charge_batch`, charges are held back and reads see them."""
        batches = getattr(_SCOPE, "batches", None)
        if batches is not None and operation in _Batch.OPERATIONS:
            key = (self.store.url, self.id)
            if key not in batches:
                batches[key] = _Batch(self)
            return getattr(batches[key], operation)(*args, **kwargs)
        store = self.store
        try:
            return getattr(store, operation)(self.id, *args, **kwargs)
        except LedgerIntegrityError:
            if self.store is store:
                raise
            return getattr(self.store, operation)(self.id, *args, **kwargs)

    def promote(self) -> None:
        """Move a ``memory`` ledger to the shared SQLite store (once; then a no-op)."""
        with self._lock:
            if self.store.shared:
                return
            target = _open(promotion_url())
            cast("MemoryStore", self.store).move_ledger(self.id, target)
            self.store = target

    def __copy__(self) -> Ledger:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Ledger:
        return self

    def __reduce__(self) -> tuple[Any, tuple[str, str]]:
        self.promote()
        _ATTACHED.setdefault((self.store.portable_url, self.id), self)
        return (_attach, (self.store.portable_url, self.id))


_SCOPE = threading.local()


class _Batch:
    """One ledger's charges held back by :func:`charge_batch`, and the reads that see them.

    Each held charge is checked as the store would check it — its cap counting the
    committed charges plus the held ones, its cost against the committed spend plus
    the held costs — so the code charging sees the same refusals at the same step as
    without the batch. The store checks everything again when the batch commits.
    Reads are lazy and read-only: the committed spend once, the committed charges
    only for a cap or a read of ``charges`` (a long ledger is not re-read per call).
    """

    OPERATIONS = frozenset({"charge", "charges", "spent"})

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        # The store itself (Ledger.run would route the reads back to this batch).
        self.store = ledger.store
        self.totals = self.store.totals(ledger.id)
        self._spent: tuple[float, float] | None = None
        self._base: list[Any] | None = None
        self._labels: list[str] | None = None
        self.items: list[tuple[float, float, str | None, tuple[str, int] | None]] = []

    def _committed(self) -> list[Any]:
        if self._base is None:
            self._base = list(self.store.charges(self.ledger.id))
            self._labels = sorted([c.label or "" for c in self._base]
                                  + [item[2] or "" for item in self.items])
        return self._base

    def charges(self) -> list[Any]:
        from .stores._base import Charge

        held, (eps, delta) = [], self.spent_before(0)
        base = self._committed()
        for i, (e, d, label, _) in enumerate(self.items):
            eps, delta = eps + e, delta + d
            held.append(Charge(len(base) + i, e, d, label or "", eps, delta, 0.0, 0.0, "", ""))
        return base + held

    def spent_before(self, n_held: int) -> tuple[float, float]:
        if self._spent is None:
            spent_eps, spent_delta = self.store.spent(self.ledger.id)
            self._spent = (spent_eps, spent_delta)
        eps, delta = self._spent
        for e, d, _, _ in self.items[:n_held]:
            eps, delta = eps + e, delta + d
        return eps, delta

    def spent(self) -> tuple[float, float]:
        return self.spent_before(len(self.items))

    def charge(self, epsilon: float, delta: float, label: str | None,
               stream: Any = None, cap: tuple[str, int] | None = None) -> int:
        from .stores._base import Charge, check_cap, check_fits

        if stream is not None:  # pragma: no cover - predictors answer without streams
            raise RuntimeError("a stream record's charge cannot be batched")
        if cap is not None:
            self._committed()
            labels = self._labels
            assert labels is not None  # set by _committed()
            i = bisect.bisect_left(labels, cap[0])
            j = bisect.bisect_left(labels, cap[0] + "\U0010ffff")
            check_cap(cap, j - i, label)
        used = self.spent()
        # check_fits reads what was spent from the last charge's running totals.
        check_fits(self.totals, Charge(0, 0.0, 0.0, "", *used, 0.0, 0.0, "", ""), epsilon,
                   delta, label)
        self.items.append((epsilon, delta, label, cap))
        if self._labels is not None:
            bisect.insort(self._labels, label or "")
        # Provisional: the committed position is known only at commit.
        return -len(self.items)

    def commit(self) -> None:
        if self.items:
            self.ledger.run("charge_many", self.items)


class charge_batch:
    """Hold back every charge made in this thread, then commit each ledger's charges in
    **one** transaction (``LedgerStore.charge_many``) when the block ends.

    One answering call of a durable predictor runs in one batch
    (``skdp.prediction._state``): a request of m rows that starts an instance and
    meets several hard queries commits once per ledger instead of once per step, and
    its answers leave only after that commit. All or nothing per ledger: if the
    commit is refused (a copy outside the batch took a capped slot or spent the
    budget meanwhile), its error is raised and nothing of that ledger's batch is
    recorded — the caller must then release nothing and drop the state the block
    changed (a durable run reloads it). Ledgers commit in the order the block first
    touched them; a refusal after an earlier ledger committed leaves that one's
    charges (an over-count, never an answer without its charge).

    The block ending by an exception in ``commit_on`` (e.g. a budget running out
    mid-call, whose answers so far are released) commits too; any other exception
    discards the held charges (the caller releases nothing of the block). A nested
    batch joins the outer one.
    """

    def __init__(self, commit_on: tuple[type[BaseException], ...] = ()) -> None:
        self.commit_on = commit_on
        self._outer = False

    def __enter__(self) -> charge_batch:
        self._outer = getattr(_SCOPE, "batches", None) is None
        if self._outer:
            _SCOPE.batches = {}
        return self

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        if not self._outer:
            return
        batches, _SCOPE.batches = _SCOPE.batches, None
        if kind is None or issubclass(kind, self.commit_on):
            for batch in batches.values():
                batch.commit()


# One Ledger object per (store, id) in a process, so handles loaded from several pickles
# share it as in-process copies do. Weak: the state lives in the store, not here.
_ATTACHED: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _attach(url: str, ledger_id: str) -> Ledger:
    key = (url, ledger_id)
    ledger = _ATTACHED.get(key)
    if ledger is None:
        ledger = _ATTACHED[key] = Ledger.attach(url, ledger_id)
    return ledger


class StreamRecord:
    """An immutable, versioned reference to one stateful private object's stream.

    Every state transition of the object is a compare-and-swap of the version in the
    ledger: :meth:`advance` (or :meth:`charge`, which also pays in the same
    transaction, followed by :meth:`next`) returns the *next* record and the object
    rebinds its attribute to it. The record is a value, never mutated, so whatever
    holds an older value — a shallow ``copy``, a ``__dict__`` snapshot or a
    ``__getstate__``/``__setstate__`` round trip restored into the same object, a
    pickle, a ``deepcopy`` — is stale once any holder moved on, and is refused with
    :class:`~skdp.exceptions.StaleStateError`. ``what`` names the object in that error.
    """

    __slots__ = ("id", "ledger", "version", "what")
    # Declared for the type checker (set once in __init__ through object.__setattr__).
    id: str
    ledger: Ledger
    version: int
    what: str

    def __init__(self, ledger: Ledger, what: str, stream_id: str | None = None,
                 version: int = 0) -> None:
        object.__setattr__(self, "ledger", ledger)
        object.__setattr__(self, "what", what)
        object.__setattr__(self, "id", stream_id or uuid.uuid4().hex)
        object.__setattr__(self, "version", int(version))
        if stream_id is None:
            ledger.run("create_stream", self.id)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a StreamRecord is immutable: rebind the holder's attribute to "
                             "the record advance() returns.")

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (StreamRecord, (self.ledger, self.what, self.id, self.version))

    def __copy__(self) -> StreamRecord:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> StreamRecord:
        return self

    def next(self) -> StreamRecord:
        """The record one version on (after a successful :meth:`charge`); no store call."""
        return StreamRecord(self.ledger, self.what, self.id, self.version + 1)

    def advance(self) -> StreamRecord:
        """Compare-and-swap this version to the next in the ledger; return the next record.

        Raises :class:`~skdp.exceptions.StaleStateError` if the ledger's version is not
        this record's (another holder moved on)."""
        store = self.ledger.store
        try:
            version = store.advance_stream(self.id, self.version, self.what)
        except StaleStateError:
            if self.ledger.store is store:  # not a ledger that moved meanwhile
                raise
            version = self.ledger.store.advance_stream(self.id, self.version, self.what)
        return StreamRecord(self.ledger, self.what, self.id, version)

    def charge(self, epsilon: float, delta: float, label: str | None,
               cap: tuple[str, int] | None = None) -> int:
        """Pay (ε, δ) to the ledger and advance, atomically; return the charge's ``seq``.

        The holder then rebinds to :meth:`next`. ``cap``: see
        :meth:`~skdp.accounting.stores.LedgerStore.charge`."""
        return int(self.ledger.run("charge", epsilon, delta, label,
                                   stream=(self.id, self.version), cap=cap))
