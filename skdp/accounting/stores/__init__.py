"""Where privacy ledgers live: ``memory``, ``sqlite:///path`` and ``postgresql://…``.

:func:`open_store` turns a URL into a store; stores are cached per process, so every
handle on a store shares one connection per thread. :func:`promotion_url` names the
SQLite file that ``memory`` ledgers move to when they cross a process boundary:
``ledgers.sqlite`` in this user's private ledger directory
(:func:`~skdp.accounting.stores._keys.ledger_dir`: ``$SKDP_LEDGER_DIR``, else
``$XDG_STATE_HOME/skdp``, default ``~/.local/state/skdp``; mode 0700, owner checked).
"""

from __future__ import annotations

import os
import threading

from ._base import Charge, LedgerStore
from ._keys import check_private, ledger_dir
from .memory import MemoryStore
from .postgresql import redact_url, schema_sql

__all__ = ["Charge", "LedgerStore", "ledger_dir", "open_store", "promotion_url", "redact_url",
           "schema_sql"]

_STORES: dict[tuple[int, str], LedgerStore] = {}  # (pid, url) -> open store
_LOCK = threading.Lock()


def promotion_url() -> str:
    """The shared SQLite store that ``memory`` ledgers move to when pickled (the
    directory and, if it exists, the file are checked to be private to this user)."""
    path = os.path.join(ledger_dir(), "ledgers.sqlite")
    for part in ("", "-wal", "-shm"):
        if os.path.exists(path + part):
            check_private(path + part, directory=False)
    return "sqlite:///" + path


def open_store(url: str, create: bool = True) -> LedgerStore:
    """The store at ``url`` (``"memory"``, ``"sqlite:///path"``, ``"postgresql://…"``).

    ``create=False`` refuses to create a missing SQLite file (used when attaching to an
    existing ledger). Raises ``ValueError`` for an unknown scheme; the message never
    shows a password.
    """
    if not isinstance(url, str):
        raise TypeError(f"store must be a URL string, got {type(url).__name__}.")
    key = (os.getpid(), url)
    with _LOCK:
        store = _STORES.get(key)
        if store is None:
            store = _STORES[key] = _make_store(url, create)
    return store


def _make_store(url: str, create: bool) -> LedgerStore:
    if url == "memory":
        return MemoryStore()
    if url.startswith("sqlite:///"):
        from .sqlite import SQLiteStore

        return SQLiteStore(url[len("sqlite:///"):], create=create)
    if url.startswith(("postgresql://", "postgres://")) or ("=" in url and "://" not in url):
        # a libpq URI, or a key=value conninfo string
        from .postgresql import PostgreSQLStore

        return PostgreSQLStore(url)
    raise ValueError(
        f"unknown ledger store {redact_url(url)!r}: use 'memory', 'sqlite:///path/to/file.db' "
        "or 'postgresql://user@host/dbname'."
    )
