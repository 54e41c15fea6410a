"""What the SQLite and PostgreSQL stores share: one schema, one charge transaction.

The dialects differ only in how a transaction takes the ledger's lock (SQLite:
``BEGIN IMMEDIATE`` takes the database's write lock; PostgreSQL: ``SELECT … FOR UPDATE``
on the ledger's row), in placeholders, in how the append-only trigger is written and
how its presence is checked.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from ...exceptions import LedgerIntegrityError
from ._base import (
    Charge,
    LedgerStore,
    MissingLedgerError,
    check_cap,
    check_fits,
    check_head,
    genesis_hash,
    integrity_error,
    key_error,
    next_charge,
    spent_after,
    stale_error,
    stream_mac,
    verify_chain,
)
from ._keys import ledger_key
from ._witness import WITNESS

__all__ = ["SQLStore"]

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS skdp_ledgers (
        ledger_id TEXT PRIMARY KEY,
        epsilon DOUBLE PRECISION NOT NULL,
        delta DOUBLE PRECISION NOT NULL,
        head_count BIGINT NOT NULL,
        head_hash TEXT NOT NULL,
        key_id TEXT NOT NULL,
        seal TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS skdp_charges (
        ledger_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        epsilon DOUBLE PRECISION NOT NULL,
        delta DOUBLE PRECISION NOT NULL,
        label TEXT NOT NULL,
        total_epsilon DOUBLE PRECISION NOT NULL,
        total_delta DOUBLE PRECISION NOT NULL,
        comp_epsilon DOUBLE PRECISION NOT NULL,
        comp_delta DOUBLE PRECISION NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL,
        PRIMARY KEY (ledger_id, seq))""",
    """CREATE TABLE IF NOT EXISTS skdp_streams (
        stream_id TEXT PRIMARY KEY,
        ledger_id TEXT NOT NULL,
        version BIGINT NOT NULL,
        mac TEXT NOT NULL)""",
)
TABLES = ("skdp_ledgers", "skdp_charges", "skdp_streams")
# The columns this version reads and writes, per table (a store of another version fails
# the SELECT and is refused).
_COLUMN_CHECKS = (
    "SELECT ledger_id, epsilon, delta, head_count, head_hash, key_id, seal FROM skdp_ledgers "
    "WHERE 1 = 0",
    "SELECT ledger_id, seq, epsilon, delta, label, total_epsilon, total_delta, comp_epsilon, "
    "comp_delta, prev_hash, hash FROM skdp_charges WHERE 1 = 0",
    "SELECT stream_id, ledger_id, version, mac FROM skdp_streams WHERE 1 = 0",
)


class SQLStore(LedgerStore):
    """Base of the SQL stores. Subclasses set ``placeholder``, ``lock_suffix`` and
    ``url``, implement ``_connect`` (a new DB-API connection), ``_begin(conn)`` (a
    context manager around one write transaction), ``_existing_tables`` and
    ``_check_guards``, and call :meth:`_open_schema` with their append-only trigger
    statements.

    Every ledger is sealed with the process's ledger key
    (:func:`~skdp.accounting.stores._keys.ledger_key`) and every committed head and
    stream step is remembered by the rollback witness
    (:mod:`~skdp.accounting.stores._witness`).

    Connections are per process and per thread: a connection is never shared across
    ``fork`` or between threads.
    """

    shared = True
    placeholder = "?"
    lock_suffix = ""

    def __init__(self) -> None:
        self._local = threading.local()
        self._walked: set[str] = set()  # ledgers whose whole chain this process has verified

    # ------------------------------------------------------------------ schema
    def _open_schema(self, triggers: tuple[str, ...],
                     lock: Sequence[tuple[str, tuple[Any, ...]]] = ()) -> None:
        """Create the tables and triggers in an empty store; in one that has them, check
        they have this version's columns and that the append-only guards are in place.

        Tables are never re-created over existing ones and triggers never silently
        re-added: a store whose guards were removed is refused (it was tampered with).
        """
        with self._transaction() as execute:
            for locking in lock:
                execute(*locking)
            existing = self._existing_tables(execute)
            if not existing:
                self._create_schema(execute, SCHEMA + triggers)
                return
        if len(existing) < len(TABLES):
            raise self._foreign_schema()
        try:
            with self._transaction() as execute:
                for check in _COLUMN_CHECKS:
                    execute(check)
        except LedgerIntegrityError:
            raise
        except Exception:  # the driver's own error type: the column list does not match
            raise self._foreign_schema() from None
        with self._transaction() as execute:
            problem = self._check_guards(execute)
        if problem is not None:
            raise LedgerIntegrityError(
                f"the ledger store {self.url} was tampered with: {problem}. What its "
                "ledgers say was spent cannot be trusted; keep the file (or database) as "
                "evidence and use a new store.")

    def _create_schema(self, execute: Callable[..., Any], statements: tuple[str, ...]) -> None:
        for statement in statements:
            execute(statement)

    def _foreign_schema(self) -> LedgerIntegrityError:
        return LedgerIntegrityError(
            f"the ledger store {self.url} holds tables of another skdp version; use a "
            "new store (or move the old one away) and keep the old file as the record "
            "of what it spent.")

    def _existing_tables(self, execute: Callable[..., Any]) -> set[str]:  # pragma: no cover
        """Which of :data:`TABLES` exist (each dialect's catalogue query)."""
        raise NotImplementedError

    def _check_guards(self, execute: Callable[..., Any]) -> str | None:  # pragma: no cover
        """``None`` if the append-only triggers are in place and enabled, else why not."""
        raise NotImplementedError

    def _connect(self) -> Any:  # pragma: no cover - interface
        """A new DB-API connection (each store's own)."""
        raise NotImplementedError

    def _begin(self, conn: Any) -> AbstractContextManager[None]:  # pragma: no cover
        """A context that is one transaction on ``conn`` (each store's own)."""
        raise NotImplementedError

    def _connection(self) -> Any:
        local = self._local
        if getattr(local, "pid", None) != os.getpid():
            local.conn = self._connect()
            local.pid = os.getpid()
        return local.conn

    def _sql(self, statement: str) -> str:
        return statement.replace("?", self.placeholder)

    def _begin_read(self, conn: Any) -> AbstractContextManager[None]:
        """A context that is one read-only transaction on ``conn`` seeing one snapshot
        (default: a write transaction; the stores take no write lock here)."""
        return self._begin(conn)

    @contextmanager
    def _transaction(self, read: bool = False) -> Iterator[Callable[..., Any]]:
        """One transaction: a write transaction holding the store's write lock, or with
        ``read`` a read-only one on one snapshot that takes no lock, so reads of what
        was spent neither wait for charges nor make them wait."""
        conn = self._connection()
        with (self._begin_read(conn) if read else self._begin(conn)):
            cursor = conn.cursor()
            try:
                yield lambda statement, args=(): (
                    cursor.execute(self._sql(statement), args) if args
                    else cursor.execute(statement))
            finally:
                cursor.close()

    # ------------------------------------------------------------------ reading
    @property
    def _witness_name(self) -> str:
        """How the witness names this store: its address without secrets."""
        return self.portable_url

    def _locked_ledger(self, execute: Callable[..., Any], ledger_id: str,
                       lock: bool = True) -> tuple[tuple[float, float], int, str]:
        """Lock the ledger's row (unless ``lock`` is False: a read in a snapshot) and
        check its key and seal; return (totals, head)."""
        row = execute("SELECT epsilon, delta, head_count, head_hash, key_id, seal "
                      "FROM skdp_ledgers WHERE ledger_id = ?" + (self.lock_suffix if lock
                                                                  else ""),
                      (ledger_id,)).fetchone()
        if row is None:
            seen = WITNESS.head(self._witness_name, ledger_id)
            if seen is not None:
                raise integrity_error(
                    ledger_id, f"it is no longer in the store {self.url}, where this machine "
                    f"has seen it with {seen[0]} charges (it was deleted)")
            raise integrity_error(ledger_id, f"it is not in the store {self.url}",
                                  MissingLedgerError)
        key = ledger_key()
        totals = (float(row[0]), float(row[1]))
        if row[4] != key.key_id:
            raise key_error(ledger_id, self.url, row[4], key)
        if row[5] != genesis_hash(key, ledger_id, *totals):
            raise integrity_error(ledger_id, "its totals were altered (its seal does not match)")
        return totals, int(row[2]), row[3]

    _COLUMNS = ("seq, epsilon, delta, label, total_epsilon, total_delta, comp_epsilon, "
                "comp_delta, prev_hash, hash")

    @staticmethod
    def _charge_row(row: Sequence[Any]) -> Charge:
        return Charge(int(row[0]), float(row[1]), float(row[2]), row[3], float(row[4]),
                      float(row[5]), float(row[6]), float(row[7]), row[8], row[9])

    def _read_charges(self, execute: Callable[..., Any], ledger_id: str) -> list[Charge]:
        rows = execute(f"SELECT {self._COLUMNS} FROM skdp_charges WHERE ledger_id = ? "
                       "ORDER BY seq", (ledger_id,)).fetchall()
        return [self._charge_row(r) for r in rows]

    def _witnessed(self, execute: Callable[..., Any], ledger_id: str, head_count: int,
                   head_hash: str) -> str | None:
        """The witness's verdict on the store's head (see ``Witness.check_head``)."""
        def hash_at(seq: int) -> str | None:
            row = execute("SELECT hash FROM skdp_charges WHERE ledger_id = ? AND seq = ?",
                          (ledger_id, seq)).fetchone()
            return None if row is None else row[0]

        return WITNESS.check_head(self._witness_name, ledger_id, head_count, head_hash,
                                  hash_at)

    def _head(self, execute: Callable[..., Any],
              ledger_id: str) -> tuple[tuple[float, float], Charge | None, str | None]:
        """Lock the ledger, check its head; return (totals, last charge, problem)."""
        totals, head_count, head_hash = self._locked_ledger(execute, ledger_id)
        key = ledger_key()
        count, sum_eps, sum_delta = execute(
            "SELECT COUNT(*), COALESCE(SUM(epsilon), 0), COALESCE(SUM(delta), 0) "
            "FROM skdp_charges WHERE ledger_id = ?", (ledger_id,)).fetchone()
        last = self._last_charge(execute, ledger_id, head_count)
        problem = check_head(key, ledger_id, totals, head_count, head_hash, last, int(count),
                             (float(sum_eps), float(sum_delta)))
        if problem is None:
            problem = self._witnessed(execute, ledger_id, head_count, head_hash)
        if problem is None and ledger_id not in self._walked:
            problem = verify_chain(key, ledger_id, totals,
                                   self._read_charges(execute, ledger_id), head_count, head_hash)
            if problem is None:
                self._walked.add(ledger_id)
        return totals, last, problem

    def _last_charge(self, execute: Callable[..., Any], ledger_id: str,
                     head_count: int) -> Charge | None:
        row = execute(f"SELECT {self._COLUMNS} FROM skdp_charges WHERE ledger_id = ? "
                      "AND seq = ?", (ledger_id, head_count - 1)).fetchone()
        return None if row is None else self._charge_row(row)

    # ------------------------------------------------------------------ interface
    def create_ledger(self, ledger_id: str, epsilon: float, delta: float) -> None:
        self.import_ledger(ledger_id, epsilon, delta, (), {})

    def import_ledger(self, ledger_id: str, epsilon: float, delta: float, charges: Sequence[Charge],
                      streams: Mapping[str, int]) -> None:
        """Create the ledger, sealed and chained under this process's key.

        ``charges`` (already verified by the caller) are re-chained: only their costs
        and labels are copied. A ledger the witness has seen in this store, or whose
        charges or streams are still in it, is never created afresh.
        """
        key = ledger_key()
        totals = (float(epsilon), float(delta))
        seen = WITNESS.head(self._witness_name, ledger_id)
        if seen is not None:
            raise integrity_error(
                ledger_id, f"it existed in the store {self.url} (this machine has seen it "
                f"with {seen[0]} charges) and is gone; it is not re-created empty. Use a "
                "new ledger_id for a new budget")
        last = None
        rechained = []
        for c in charges:
            last = next_charge(key, ledger_id, totals, last, c.epsilon, c.delta, c.label)
            rechained.append(last)
        seal = genesis_hash(key, ledger_id, *totals)
        head = last.hash if last is not None else seal
        with self._transaction() as execute:
            orphan = execute("SELECT 1 FROM skdp_charges WHERE ledger_id = ? UNION ALL "
                             "SELECT 1 FROM skdp_streams WHERE ledger_id = ?",
                             (ledger_id, ledger_id)).fetchone()
            if orphan is not None:
                raise integrity_error(
                    ledger_id, f"its charges are in the store {self.url} but its ledger "
                    "record was deleted; it is not re-created empty")
            execute("INSERT INTO skdp_ledgers (ledger_id, epsilon, delta, head_count, "
                    "head_hash, key_id, seal) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (ledger_id, *totals, len(rechained), head, key.key_id, seal))
            for c in rechained:
                self._insert(execute, ledger_id, c)
            for stream_id, version in streams.items():
                execute("INSERT INTO skdp_streams (stream_id, ledger_id, version, mac) "
                        "VALUES (?, ?, ?, ?)", (stream_id, ledger_id, version,
                                                stream_mac(key, stream_id, ledger_id, version)))
        WITNESS.saw(self._witness_name, ledger_id, len(rechained), head)
        for stream_id, version in streams.items():
            WITNESS.saw(self._witness_name, stream=(stream_id, version))

    @staticmethod
    def _insert(execute: Callable[..., Any], ledger_id: str, c: Charge) -> None:
        execute("INSERT INTO skdp_charges (ledger_id, seq, epsilon, delta, label, "
                "total_epsilon, total_delta, comp_epsilon, comp_delta, prev_hash, hash) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (ledger_id, *c))

    # Reads run in a read-only snapshot transaction without the row lock: a snapshot
    # holds a head and the charges committed with it (charges are committed together
    # with the head that counts them), so what a read returns is a state the ledger
    # had; every check of key, seal and witness is made as in a charge.
    def totals(self, ledger_id: str) -> tuple[float, float]:
        with self._transaction(read=True) as execute:
            return self._locked_ledger(execute, ledger_id, lock=False)[0]

    def charges(self, ledger_id: str) -> list[Charge]:
        with self._transaction(read=True) as execute:
            self._locked_ledger(execute, ledger_id, lock=False)
            return self._read_charges(execute, ledger_id)

    def spent(self, ledger_id: str) -> tuple[float, float]:
        with self._transaction(read=True) as execute:
            _, head_count, _ = self._locked_ledger(execute, ledger_id, lock=False)
            return spent_after(self._last_charge(execute, ledger_id, head_count))

    def streams(self, ledger_id: str) -> dict[str, int]:
        with self._transaction(read=True) as execute:
            rows = execute("SELECT stream_id, version FROM skdp_streams WHERE ledger_id = ?",
                           (ledger_id,)).fetchall()
        return {r[0]: int(r[1]) for r in rows}

    def verify(self, ledger_id: str) -> str | None:
        with self._transaction(read=True) as execute:
            totals, head_count, head_hash = self._locked_ledger(execute, ledger_id,
                                                                lock=False)
            return (verify_chain(ledger_key(), ledger_id, totals,
                                 self._read_charges(execute, ledger_id), head_count, head_hash)
                    or self._witnessed(execute, ledger_id, head_count, head_hash))

    def charge_many(self, ledger_id: str,
                    items: Sequence[tuple[float, float, str | None, tuple[str, int] | None]],
                    stream: tuple[str, int] | None = None) -> list[int]:
        if not items:
            return []
        key, seqs = ledger_key(), list[int]()
        with self._transaction() as execute:
            totals, last, problem = self._head(execute, ledger_id)
            if problem is not None:
                raise integrity_error(ledger_id, problem)
            for epsilon, delta, label, cap in items:
                # The cap first: a step whose cap is full is refused as such
                # (CapReachedError) whether or not its cost would still fit. The count
                # sees this transaction's earlier inserts.
                if cap is not None:
                    count = execute("SELECT COUNT(*) FROM skdp_charges WHERE ledger_id = ? "
                                    "AND substr(label, 1, ?) = ?",
                                    (ledger_id, len(cap[0]), cap[0])).fetchone()[0]
                    check_cap(cap, int(count), label)
                check_fits(totals, last, epsilon, delta, label)
                if stream is not None and not seqs:
                    self._cas(execute, stream[0], stream[1], label)
                last = next_charge(key, ledger_id, totals, last, epsilon, delta, label)
                self._insert(execute, ledger_id, last)
                seqs.append(last.seq)
            assert last is not None  # items is not empty: at least one charge was made
            execute("UPDATE skdp_ledgers SET head_count = ?, head_hash = ? WHERE ledger_id = ?",
                    (last.seq + 1, last.hash, ledger_id))
        # Committed: remember the new head (and stream version) before anything leaves.
        WITNESS.saw(self._witness_name, ledger_id, last.seq + 1, last.hash,
                    stream=None if stream is None else (stream[0], stream[1] + 1))
        return seqs

    def create_stream(self, ledger_id: str, stream_id: str) -> None:
        mac = stream_mac(ledger_key(), stream_id, ledger_id, 0)
        with self._transaction() as execute:
            execute("INSERT INTO skdp_streams (stream_id, ledger_id, version, mac) "
                    "VALUES (?, ?, 0, ?)", (stream_id, ledger_id, mac))

    def advance_stream(self, stream_id: str, expected_version: int, what: str) -> int:
        with self._transaction() as execute:
            version = self._cas(execute, stream_id, expected_version, what)
        WITNESS.saw(self._witness_name, stream=(stream_id, version))
        return version

    def _checked_stream(self, execute: Callable[..., Any], stream_id: str, what: str | None,
                        *, lock: bool = True) -> tuple[str, int, Any]:
        """A stream record's ``(ledger_id, version, ledger key)``, after checking that it
        exists, its seal and the rollback witness (row-locked with ``lock``)."""
        row = execute("SELECT ledger_id, version, mac FROM skdp_streams WHERE stream_id = ?"
                      + (self.lock_suffix if lock else ""), (stream_id,)).fetchone()
        if row is None:
            raise LedgerIntegrityError(
                f"the stream record {stream_id[:8]} of {what} is missing from the store "
                f"{self.url} (it was deleted). Continuing is refused.")
        ledger_id, version, mac = row[0], int(row[1]), row[2]
        key = ledger_key()
        if mac != stream_mac(key, stream_id, ledger_id, version):
            raise integrity_error(ledger_id, f"its stream record {stream_id[:8]} was altered "
                                  "(or sealed with another ledger key)")
        problem = WITNESS.check_stream(self._witness_name, stream_id, version)
        if problem is not None:
            raise integrity_error(ledger_id, problem)
        return ledger_id, version, key

    def _cas(self, execute: Callable[..., Any], stream_id: str, expected_version: int,
             what: str | None) -> int:
        """Compare-and-swap a stream's version, after checking its seal and the witness."""
        ledger_id, version, key = self._checked_stream(execute, stream_id, what)
        if version != expected_version:
            raise stale_error(what)
        cursor = execute("UPDATE skdp_streams SET version = ?, mac = ? "
                         "WHERE stream_id = ? AND version = ?",
                         (version + 1, stream_mac(key, stream_id, ledger_id, version + 1),
                          stream_id, version))
        if cursor.rowcount != 1:
            raise stale_error(what)
        return version + 1
