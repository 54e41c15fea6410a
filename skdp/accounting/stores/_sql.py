"""What the SQLite and PostgreSQL stores share: one schema, one charge transaction.

The dialects differ only in how a transaction takes the ledger's lock (SQLite:
``BEGIN IMMEDIATE`` takes the database's write lock; PostgreSQL: ``SELECT … FOR UPDATE``
on the ledger's row), in placeholders, and in how the append-only trigger is written.
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
    check_cap,
    check_fits,
    check_head,
    genesis_hash,
    integrity_error,
    next_charge,
    spent_after,
    stale_error,
    verify_chain,
)

__all__ = ["SQLStore"]

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS skdp_ledgers (
        ledger_id TEXT PRIMARY KEY,
        epsilon DOUBLE PRECISION NOT NULL,
        delta DOUBLE PRECISION NOT NULL,
        head_count BIGINT NOT NULL,
        head_hash TEXT NOT NULL)""",
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
        version BIGINT NOT NULL)""",
)


class SQLStore(LedgerStore):
    """Base of the SQL stores. Subclasses set ``placeholder``, ``lock_suffix`` and
    ``url``, implement ``_connect`` (a new DB-API connection) and ``_begin(conn)`` (a
    context manager around one write transaction), and call :meth:`_create_schema`
    with their append-only trigger statements.

    Connections are per process and per thread: a connection is never shared across
    ``fork`` or between threads.
    """

    shared = True
    placeholder = "?"
    lock_suffix = ""

    def __init__(self) -> None:
        self._local = threading.local()
        self._walked: set[str] = set()  # ledgers whose whole chain this process has verified

    def _create_schema(self, statements: tuple[str, ...],
                       lock: Sequence[tuple[str, tuple[Any, ...]]] = ()) -> None:
        """Create the tables (if missing) and check they have this version's columns."""
        with self._transaction() as execute:
            for locking in lock:
                execute(*locking)
            for statement in SCHEMA + statements:
                execute(statement)
        try:
            with self._transaction() as execute:
                execute(f"SELECT {self._COLUMNS} FROM skdp_charges WHERE 1 = 0")
        except Exception:  # the driver's own error type: the column list does not match
            raise LedgerIntegrityError(
                f"the ledger store {self.url} holds tables of another skdp version; use a "
                "new store (or move the old one away) and keep the old file as the record "
                "of what it spent."
            ) from None

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

    @contextmanager
    def _transaction(self) -> Iterator[Callable[..., Any]]:
        conn = self._connection()
        with self._begin(conn):
            cursor = conn.cursor()
            try:
                yield lambda statement, args=(): (
                    cursor.execute(self._sql(statement), args) if args
                    else cursor.execute(statement))
            finally:
                cursor.close()

    def _locked_ledger(self, execute: Callable[..., Any],
                       ledger_id: str) -> tuple[tuple[float, float], int, str]:
        row = execute("SELECT epsilon, delta, head_count, head_hash FROM skdp_ledgers "
                      "WHERE ledger_id = ?" + self.lock_suffix, (ledger_id,)).fetchone()
        if row is None:
            raise integrity_error(ledger_id, f"it is not in the store {self.url}")
        return (float(row[0]), float(row[1])), int(row[2]), row[3]

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

    def _head(self, execute: Callable[..., Any],
              ledger_id: str) -> tuple[tuple[float, float], Charge | None, str | None]:
        """Lock the ledger, check its head; return (totals, last charge, problem)."""
        totals, head_count, head_hash = self._locked_ledger(execute, ledger_id)
        count, sum_eps, sum_delta = execute(
            "SELECT COUNT(*), COALESCE(SUM(epsilon), 0), COALESCE(SUM(delta), 0) "
            "FROM skdp_charges WHERE ledger_id = ?", (ledger_id,)).fetchone()
        last = self._last_charge(execute, ledger_id, head_count)
        problem = check_head(ledger_id, totals, head_count, head_hash, last, int(count),
                             (float(sum_eps), float(sum_delta)))
        if problem is None and ledger_id not in self._walked:
            problem = verify_chain(ledger_id, totals, self._read_charges(execute, ledger_id),
                                   head_count, head_hash)
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
        head = charges[-1].hash if charges else genesis_hash(ledger_id, epsilon, delta)
        with self._transaction() as execute:
            execute("INSERT INTO skdp_ledgers VALUES (?, ?, ?, ?, ?)",
                    (ledger_id, float(epsilon), float(delta), len(charges), head))
            for c in charges:
                self._insert(execute, ledger_id, c)
            for stream_id, version in streams.items():
                execute("INSERT INTO skdp_streams VALUES (?, ?, ?)",
                        (stream_id, ledger_id, version))

    @staticmethod
    def _insert(execute: Callable[..., Any], ledger_id: str, c: Charge) -> None:
        execute("INSERT INTO skdp_charges VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (ledger_id, *c))

    def totals(self, ledger_id: str) -> tuple[float, float]:
        with self._transaction() as execute:
            return self._locked_ledger(execute, ledger_id)[0]

    def charges(self, ledger_id: str) -> list[Charge]:
        with self._transaction() as execute:
            self._locked_ledger(execute, ledger_id)
            return self._read_charges(execute, ledger_id)

    def spent(self, ledger_id: str) -> tuple[float, float]:
        with self._transaction() as execute:
            _, head_count, _ = self._locked_ledger(execute, ledger_id)
            return spent_after(self._last_charge(execute, ledger_id, head_count))

    def streams(self, ledger_id: str) -> dict[str, int]:
        with self._transaction() as execute:
            rows = execute("SELECT stream_id, version FROM skdp_streams WHERE ledger_id = ?",
                           (ledger_id,)).fetchall()
        return {r[0]: int(r[1]) for r in rows}

    def verify(self, ledger_id: str) -> str | None:
        with self._transaction() as execute:
            totals, head_count, head_hash = self._locked_ledger(execute, ledger_id)
            return verify_chain(ledger_id, totals, self._read_charges(execute, ledger_id),
                                head_count, head_hash)

    def charge(self, ledger_id: str, epsilon: float, delta: float, label: str | None,
               stream: tuple[str, int] | None = None,
               cap: tuple[str, int] | None = None) -> int:
        with self._transaction() as execute:
            totals, last, problem = self._head(execute, ledger_id)
            if problem is not None:
                raise integrity_error(ledger_id, problem)
            check_fits(totals, last, epsilon, delta, label)
            if cap is not None:
                count = execute("SELECT COUNT(*) FROM skdp_charges WHERE ledger_id = ? "
                                "AND substr(label, 1, ?) = ?",
                                (ledger_id, len(cap[0]), cap[0])).fetchone()[0]
                check_cap(cap, int(count), label)
            if stream is not None:
                self._cas(execute, stream[0], stream[1], label)
            new = next_charge(ledger_id, totals, last, epsilon, delta, label)
            self._insert(execute, ledger_id, new)
            execute("UPDATE skdp_ledgers SET head_count = ?, head_hash = ? WHERE ledger_id = ?",
                    (new.seq + 1, new.hash, ledger_id))
            return new.seq

    def create_stream(self, ledger_id: str, stream_id: str) -> None:
        with self._transaction() as execute:
            execute("INSERT INTO skdp_streams VALUES (?, ?, 0)", (stream_id, ledger_id))

    def advance_stream(self, stream_id: str, expected_version: int, what: str) -> int:
        with self._transaction() as execute:
            return self._cas(execute, stream_id, expected_version, what)

    @staticmethod
    def _cas(execute: Callable[..., Any], stream_id: str, expected_version: int,
             what: str | None) -> int:
        cursor = execute("UPDATE skdp_streams SET version = version + 1 "
                         "WHERE stream_id = ? AND version = ?", (stream_id, expected_version))
        if cursor.rowcount != 1:
            raise stale_error(what)
        return expected_version + 1
