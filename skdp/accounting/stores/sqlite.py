"""The ``sqlite:///path`` store: one ledger file shared by the processes of one machine.

Standard-library :mod:`sqlite3` in WAL mode. Every charge is one ``BEGIN IMMEDIATE``
transaction (it takes the database's write lock before reading what was spent), so
check-and-spend is atomic under concurrent processes; ``synchronous=FULL`` makes a
committed charge survive a killed process (and a power cut). Charges are append-only:
triggers refuse ``UPDATE`` and ``DELETE`` on them. Anyone who can write the file can
drop the triggers (or the tables): a store whose triggers are gone is refused when a
process opens it, an edit made around them breaks the keyed chain, and an older copy of
the file is refused by the rollback witness. A new file is created mode 0600.

URLs follow SQLAlchemy: ``sqlite:///ledger.db`` is relative to the working directory,
``sqlite:////var/lib/skdp/ledger.db`` absolute. The store's :attr:`url` is always the
absolute form, so a pickle loaded from another directory finds the same file.
"""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ._base import MissingLedgerError
from ._sql import TABLES, SQLStore

__all__ = ["SQLiteStore"]

_TRIGGER_NAMES = ("skdp_charges_no_update", "skdp_charges_no_delete")
_TRIGGERS = tuple(
    f"""CREATE TRIGGER IF NOT EXISTS {name}
        BEFORE {verb} ON skdp_charges
        BEGIN SELECT RAISE(ABORT, 'skdp charges are append-only'); END"""
    for name, verb in zip(_TRIGGER_NAMES, ("UPDATE", "DELETE"), strict=True)
)
_BUSY_TIMEOUT_S = 120.0
_POLL_MIN_S, _POLL_MAX_S = 0.0005, 0.01


class SQLiteStore(SQLStore):
    """Ledgers in an SQLite file (see the module docstring).

    Parameters
    ----------
    path : str
        The database file.
    create : bool, default=True
        Create the file if it does not exist. Attaching to a ledger from a pickle
        passes ``False``: a missing file is an error, never a fresh, empty ledger.
    """

    def __init__(self, path: str, create: bool = True) -> None:
        super().__init__()
        self.path = os.path.abspath(path)
        self.url = "sqlite:///" + self.path
        if not create and not os.path.exists(self.path):
            raise MissingLedgerError(
                f"the ledger file {self.path} does not exist on this machine. A budget "
                "pickled in one process reaches only processes of the same machine through "
                "its SQLite file; to share one budget between machines, create it with "
                "PrivacyBudget(..., store='postgresql://…')."
            )
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        with contextlib.suppress(FileExistsError):  # 0600 from the start, not the umask's
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        self._open_schema(_TRIGGERS)

    def _existing_tables(self, execute: Callable[..., Any]) -> set[str]:
        rows = execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN "
                       "(?, ?, ?)", TABLES).fetchall()
        return {r[0] for r in rows}

    def _check_guards(self, execute: Callable[..., Any]) -> str | None:
        rows = execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND "
                       "tbl_name = 'skdp_charges'").fetchall()
        missing = set(_TRIGGER_NAMES) - {r[0] for r in rows}
        return None if not missing else (
            "the append-only triggers on its charges were removed")

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None,
                               check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        return conn

    @staticmethod
    def _write_lock(conn: sqlite3.Connection) -> None:
        """``BEGIN IMMEDIATE`` (the database's write lock), waiting at most
        ``_BUSY_TIMEOUT_S`` in short, jittered polls.

        SQLite's own busy handler sleeps 1, 2, 5, … then 100 ms between tries, so the
        writer that has waited longest polls least often while a writer that just
        committed takes the lock again at once: measured with 8 processes charging in a
        loop, the slowest got 0.2 % of the charges and one charge waited 3.4 s. Here
        every waiter polls at the same rate whatever it has waited (a pause growing to
        at most ``_POLL_MAX_S``, drawn uniformly below it so waiters do not poll in
        step), which shares the lock between writers.
        """
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            deadline = time.monotonic() + _BUSY_TIMEOUT_S
            pause = _POLL_MIN_S
            while True:
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as exc:
                    if "locked" not in str(exc) and "busy" not in str(exc):
                        raise
                    if time.monotonic() >= deadline:
                        raise
                time.sleep(random.uniform(0.0, pause))
                pause = min(2.0 * pause, _POLL_MAX_S)
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")

    @contextmanager
    def _begin(self, conn: sqlite3.Connection) -> Iterator[None]:
        self._write_lock(conn)
        try:
            yield
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @contextmanager
    def _begin_read(self, conn: sqlite3.Connection) -> Iterator[None]:
        # A deferred transaction in WAL mode: one snapshot from its first read, no
        # write lock, never blocked by a writer nor blocking one.
        conn.execute("BEGIN")
        try:
            yield
        finally:
            conn.execute("COMMIT")
