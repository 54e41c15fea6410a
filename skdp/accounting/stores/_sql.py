"""What the SQLite and PostgreSQL stores share: one schema, one charge transaction.

The dialects differ only in how a transaction takes the ledger's lock (SQLite:
``BEGIN IMMEDIATE`` takes the database's write lock; PostgreSQL: ``SELECT … FOR UPDATE``
on the ledger's row), in placeholders, and in how the append-only trigger is written.
"""

import os
import threading
from contextlib import contextmanager

from ._base import (
    Charge,
    LedgerStore,
    charge_hash,
    check_fits,
    genesis_hash,
    integrity_error,
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
    implement ``_connect`` (a new DB-API connection), ``_begin(conn)`` (a context
    manager around one write transaction) and ``_create_schema(conn)``.

    Connections are per process and per thread: a connection is never shared across
    ``fork`` or between threads.
    """

    shared = True
    placeholder = "?"
    lock_suffix = ""

    def __init__(self):
        self._local = threading.local()
        self._verified = {}  # ledger id -> the charges this process last verified

    def _connection(self):
        local = self._local
        if getattr(local, "pid", None) != os.getpid():
            local.conn = self._connect()
            local.pid = os.getpid()
        return local.conn

    def _sql(self, statement):
        return statement.replace("?", self.placeholder)

    @contextmanager
    def _transaction(self):
        conn = self._connection()
        with self._begin(conn):
            cursor = conn.cursor()
            try:
                yield lambda statement, args=(): (
                    cursor.execute(self._sql(statement), args) if args
                    else cursor.execute(statement))
            finally:
                cursor.close()

    def _locked_ledger(self, execute, ledger_id):
        row = execute("SELECT epsilon, delta, head_count, head_hash FROM skdp_ledgers "
                      "WHERE ledger_id = ?" + self.lock_suffix, (ledger_id,)).fetchone()
        if row is None:
            raise integrity_error(ledger_id, f"it is not in the store {self.url}")
        return (float(row[0]), float(row[1])), int(row[2]), row[3]

    @staticmethod
    def _read_charges(execute, ledger_id):
        rows = execute("SELECT seq, epsilon, delta, label, prev_hash, hash FROM skdp_charges "
                       "WHERE ledger_id = ? ORDER BY seq", (ledger_id,)).fetchall()
        return [Charge(int(r[0]), float(r[1]), float(r[2]), r[3], r[4], r[5]) for r in rows]

    def _checked(self, execute, ledger_id):
        totals, head_count, head_hash = self._locked_ledger(execute, ledger_id)
        charges = self._read_charges(execute, ledger_id)
        problem = verify_chain(ledger_id, *totals, charges, head_count, head_hash,
                               self._verified.get(ledger_id, ()))
        if problem is None:
            self._verified[ledger_id] = charges
        return totals, charges, problem

    # ------------------------------------------------------------------ interface
    def create_ledger(self, ledger_id, epsilon, delta):
        self.import_ledger(ledger_id, epsilon, delta, (), {})

    def import_ledger(self, ledger_id, epsilon, delta, charges, streams):
        head = charges[-1].hash if charges else genesis_hash(ledger_id, epsilon, delta)
        with self._transaction() as execute:
            execute("INSERT INTO skdp_ledgers VALUES (?, ?, ?, ?, ?)",
                    (ledger_id, float(epsilon), float(delta), len(charges), head))
            for c in charges:
                execute("INSERT INTO skdp_charges VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (ledger_id, c.seq, c.epsilon, c.delta, c.label, c.prev_hash, c.hash))
            for stream_id, version in streams.items():
                execute("INSERT INTO skdp_streams VALUES (?, ?, ?)",
                        (stream_id, ledger_id, version))

    def totals(self, ledger_id):
        with self._transaction() as execute:
            return self._locked_ledger(execute, ledger_id)[0]

    def charges(self, ledger_id):
        with self._transaction() as execute:
            self._locked_ledger(execute, ledger_id)
            return self._read_charges(execute, ledger_id)

    def streams(self, ledger_id):
        with self._transaction() as execute:
            rows = execute("SELECT stream_id, version FROM skdp_streams WHERE ledger_id = ?",
                           (ledger_id,)).fetchall()
        return {r[0]: int(r[1]) for r in rows}

    def verify(self, ledger_id):
        with self._transaction() as execute:
            return self._checked(execute, ledger_id)[2]

    def charge(self, ledger_id, epsilon, delta, label, stream=None):
        with self._transaction() as execute:
            totals, charges, problem = self._checked(execute, ledger_id)
            if problem is not None:
                raise integrity_error(ledger_id, problem)
            check_fits(ledger_id, totals, charges, epsilon, delta, label)
            if stream is not None:
                self._cas(execute, stream[0], stream[1], label)
            seq = len(charges)
            prev = charges[-1].hash if charges else genesis_hash(ledger_id, *totals)
            digest = charge_hash(ledger_id, seq, epsilon, delta, label, prev)
            execute("INSERT INTO skdp_charges VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (ledger_id, seq, float(epsilon), float(delta), label or "", prev, digest))
            execute("UPDATE skdp_ledgers SET head_count = ?, head_hash = ? WHERE ledger_id = ?",
                    (seq + 1, digest, ledger_id))
            new = Charge(seq, float(epsilon), float(delta), label or "", prev, digest)
        self._verified[ledger_id] = [*charges, new]
        return seq

    def create_stream(self, ledger_id, stream_id):
        with self._transaction() as execute:
            execute("INSERT INTO skdp_streams VALUES (?, ?, 0)", (stream_id, ledger_id))

    def advance_stream(self, stream_id, expected_version, what):
        with self._transaction() as execute:
            return self._cas(execute, stream_id, expected_version, what)

    @staticmethod
    def _cas(execute, stream_id, expected_version, what):
        cursor = execute("UPDATE skdp_streams SET version = version + 1 "
                         "WHERE stream_id = ? AND version = ?", (stream_id, expected_version))
        if cursor.rowcount != 1:
            raise stale_error(what)
        return expected_version + 1
