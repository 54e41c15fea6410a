"""The rollback witness: the newest ledger heads and stream versions this machine has seen.

A keyed chain (:mod:`~skdp.accounting.stores._base`) makes every charge unforgeable,
but an older copy of a store is made of genuine charges: restoring it (or deleting the
newest charges and moving the head back to a genuine older one) hands out privacy that
was already spent, and resetting a stream record to a genuine older version lets a
stale copy of a private object continue. The witness remembers, per store and ledger,
the head (charge count and last tag) and, per stream, the version — in this process,
and in ``witness.sqlite`` in this user's private ledger directory
(:func:`~skdp.accounting.stores._keys.ledger_dir`), each row sealed with the ledger key
so that it cannot be lowered either. The SQL stores refuse a head with fewer charges
than the witness, a head whose chain does not pass through the witnessed one, a stream
whose version is older than the witnessed one, and the re-creation of a ledger the
witness knows.

What it cannot see: a rollback to a state no process on this machine has gone past
(e.g. a ``postgresql://`` ledger charged only by other machines, each of which has its
own witness and refuses what it has seen rolled back).

Cost: one read of the file the first time a process meets a ledger or stream, one
upsert after each committed charge or stream step (WAL, ``synchronous=NORMAL``: it
survives a killed process; a power cut may lose the last steps, which leaves the
witness older, never wrong).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable

from ...exceptions import LedgerIntegrityError
from ._keys import LedgerKey, create_private_file, ledger_dir, ledger_key

__all__ = ["WITNESS", "Witness"]

_FILE = "witness.sqlite"
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS heads (
        key_id TEXT NOT NULL, store TEXT NOT NULL, ledger_id TEXT NOT NULL,
        count INTEGER NOT NULL, hash TEXT NOT NULL, mac TEXT NOT NULL,
        PRIMARY KEY (key_id, store, ledger_id))""",
    """CREATE TABLE IF NOT EXISTS streams (
        key_id TEXT NOT NULL, store TEXT NOT NULL, stream_id TEXT NOT NULL,
        version INTEGER NOT NULL, mac TEXT NOT NULL,
        PRIMARY KEY (key_id, store, stream_id))""",
)


def _head_mac(key: LedgerKey, store: str, ledger_id: str, count: int, head: str) -> str:
    return key.mac("skdp-witness-head", store, ledger_id, str(count), head)


def _stream_mac(key: LedgerKey, store: str, stream_id: str, version: int) -> str:
    return key.mac("skdp-witness-stream", store, stream_id, str(version))


class Witness:
    """See the module docstring. One per process (:data:`WITNESS`); thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._heads: dict[tuple[str, str], tuple[int, str]] = {}
        self._streams: dict[tuple[str, str], int] = {}
        self._read: set[tuple[str, str, str]] = set()  # rows already merged from the file
        self._conn: tuple[int, str, sqlite3.Connection] | None = None
        if hasattr(os, "register_at_fork"):  # a lock held by another thread at fork
            os.register_at_fork(after_in_child=self._after_fork)

    def _after_fork(self) -> None:
        self._lock = threading.Lock()  # what it knows stays true in the child

    # ------------------------------------------------------------------ the file
    def _db(self) -> tuple[sqlite3.Connection, LedgerKey]:
        key = ledger_key()
        path = os.path.join(ledger_dir(), _FILE)
        if self._conn is None or self._conn[:2] != (os.getpid(), path):
            create_private_file(path)
            conn = sqlite3.connect(path, timeout=120.0, isolation_level=None,
                                   check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            for statement in _SCHEMA:
                conn.execute(statement)
            self._conn = (os.getpid(), path, conn)
        return self._conn[2], key

    @staticmethod
    def _altered(what: str) -> LedgerIntegrityError:
        return LedgerIntegrityError(
            f"the rollback witness's record of {what} (in {_FILE} in your private ledger "
            "directory) does not verify under the ledger key: it was altered. Spending is "
            "refused; restore the directory from a backup.")

    def _load_head(self, store: str, ledger_id: str) -> None:
        if ("h", store, ledger_id) in self._read:
            return
        conn, key = self._db()
        row = conn.execute("SELECT count, hash, mac FROM heads WHERE key_id = ? AND store = ? "
                           "AND ledger_id = ?", (key.key_id, store, ledger_id)).fetchone()
        if row is not None:
            if row[2] != _head_mac(key, store, ledger_id, int(row[0]), row[1]):
                raise self._altered(f"ledger {ledger_id[:8]}")
            self._merge_head(store, ledger_id, int(row[0]), row[1])
        self._read.add(("h", store, ledger_id))

    def _load_stream(self, store: str, stream_id: str) -> None:
        if ("s", store, stream_id) in self._read:
            return
        conn, key = self._db()
        row = conn.execute("SELECT version, mac FROM streams WHERE key_id = ? AND store = ? "
                           "AND stream_id = ?", (key.key_id, store, stream_id)).fetchone()
        if row is not None:
            if row[1] != _stream_mac(key, store, stream_id, int(row[0])):
                raise self._altered(f"stream {stream_id[:8]}")
            key_ = (store, stream_id)
            self._streams[key_] = max(self._streams.get(key_, -1), int(row[0]))
        self._read.add(("s", store, stream_id))

    def _merge_head(self, store: str, ledger_id: str, count: int, head: str) -> None:
        known = self._heads.get((store, ledger_id))
        if known is None or count > known[0]:
            self._heads[(store, ledger_id)] = (count, head)

    # ------------------------------------------------------------------ interface
    def head(self, store: str, ledger_id: str) -> tuple[int, str] | None:
        """The newest (charge count, head tag) seen of this ledger, or ``None``."""
        with self._lock:
            self._load_head(store, ledger_id)
            return self._heads.get((store, ledger_id))

    def stream(self, store: str, stream_id: str) -> int | None:
        """The newest version seen of this stream, or ``None``."""
        with self._lock:
            self._load_stream(store, stream_id)
            return self._streams.get((store, stream_id))

    def saw(self, store: str, ledger_id: str | None = None, count: int = 0, head: str = "",
            stream: tuple[str, int] | None = None) -> None:
        """Remember a committed head (``ledger_id``, ``count``, ``head``) and/or a stream's
        committed ``(stream_id, version)``, here and in the file (never lowering either)."""
        with self._lock:
            conn, key = self._db()
            conn.execute("BEGIN IMMEDIATE")
            try:
                if ledger_id is not None:
                    self._merge_head(store, ledger_id, count, head)
                    conn.execute(
                        "INSERT INTO heads VALUES (?, ?, ?, ?, ?, ?) "
                        "ON CONFLICT (key_id, store, ledger_id) DO UPDATE SET "
                        "count = excluded.count, hash = excluded.hash, mac = excluded.mac "
                        "WHERE excluded.count > heads.count",
                        (key.key_id, store, ledger_id, count, head,
                         _head_mac(key, store, ledger_id, count, head)))
                if stream is not None:
                    stream_id, version = stream
                    known = self._streams.get((store, stream_id), -1)
                    self._streams[(store, stream_id)] = max(known, version)
                    conn.execute(
                        "INSERT INTO streams VALUES (?, ?, ?, ?, ?) "
                        "ON CONFLICT (key_id, store, stream_id) DO UPDATE SET "
                        "version = excluded.version, mac = excluded.mac "
                        "WHERE excluded.version > streams.version",
                        (key.key_id, store, stream_id, version,
                         _stream_mac(key, store, stream_id, version)))
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def check_head(self, store: str, ledger_id: str, head_count: int, head_hash: str,
                   hash_at: Callable[[int], str | None]) -> str | None:
        """``None`` if the store's head is the witnessed one or extends it, else why not.

        ``hash_at(seq)`` returns the stored tag of charge ``seq`` (``None`` if absent).
        """
        seen = self.head(store, ledger_id)
        if seen is None:
            return None
        count, head = seen
        if head_count < count:
            return (f"the store holds {head_count} charges but this machine has seen "
                    f"{count} (an older copy of the ledger was restored, or its newest "
                    "charges were deleted)")
        if head_count == count:
            return None if head_hash == head else (
                "its head is not the one this machine has seen (the ledger was replaced)")
        if count == 0:  # the seal, checked on every read, is what the chain starts at
            return None
        return None if hash_at(count - 1) == head else (
            f"charge #{count - 1} is not the one this machine has seen (the ledger was "
            "replaced by another copy)")

    def check_stream(self, store: str, stream_id: str, version: int) -> str | None:
        """``None`` unless the store's ``version`` is older than the witnessed one."""
        seen = self.stream(store, stream_id)
        if seen is None or version >= seen:
            return None
        return (f"its stream record {stream_id[:8]} is at version {version} but this machine "
                f"has seen version {seen} (the record was reset)")


#: The process's witness.
WITNESS = Witness()
