"""The ``postgresql://…`` store: one budget shared by processes on many machines.

psycopg 3 (``pip install "skdp[postgresql]"``), the same schema as the SQLite store.
A charge is one transaction that locks the ledger's row (``SELECT … FOR UPDATE``),
checks the ledger's head, checks the remainder and appends, so concurrent spenders on any
number of machines are serialised per ledger. A trigger refuses ``UPDATE`` and
``DELETE`` on charges; the hash chain catches an edit made around it.

The connection string may carry a password: it is used to connect and never kept in
:attr:`url`, a repr, a log line or an error message.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ...exceptions import LedgerIntegrityError
from ._sql import SQLStore

__all__ = ["PostgreSQLStore", "redact_url"]

_TRIGGER = (
    """CREATE OR REPLACE FUNCTION skdp_append_only() RETURNS trigger LANGUAGE plpgsql AS
       $$ BEGIN RAISE EXCEPTION 'skdp charges are append-only'; END $$""",
    """CREATE OR REPLACE TRIGGER skdp_charges_append_only BEFORE UPDATE OR DELETE
       ON skdp_charges FOR EACH ROW EXECUTE FUNCTION skdp_append_only()""",
)
# Any fixed key: serialises concurrent schema creation (CREATE TABLE IF NOT EXISTS races).
_SCHEMA_LOCK_KEY = 0x736B6470


def redact_url(url: str, mask: str | None = "***") -> str:
    """``url`` with its password (in the user info or a ``password=`` query parameter)
    replaced by ``mask`` — or, with ``mask=None``, removed, which leaves libpq to find
    it (``PGPASSWORD``, ``~/.pgpass``)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:{mask}@{host}" if ":" in userinfo and mask else f"{user}@{host}"
    if mask:
        query = re.sub(r"(?i)(password=)[^&]*", rf"\g<1>{mask}", parts.query)
    else:
        query = "&".join(p for p in parts.query.split("&")
                         if p and not p.lower().startswith("password="))
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


class PostgreSQLStore(SQLStore):
    """Ledgers in a PostgreSQL database (see the module docstring)."""

    placeholder = "%s"
    lock_suffix = " FOR UPDATE"

    def __init__(self, url: str) -> None:
        super().__init__()
        try:
            import psycopg  # noqa: F401  (optional dependency)
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError(
                "the postgresql:// ledger store needs psycopg 3: "
                'pip install "skdp[postgresql]"'
            ) from None
        self._dsn = url
        self.url = redact_url(url)
        # What a pickle carries: no password at all (a masked one would be sent to the
        # server); a process that did not open the store with its password gets it
        # from libpq's environment.
        self._portable_url = redact_url(url, mask=None)
        self._create_schema(_TRIGGER, lock=[("SELECT pg_advisory_xact_lock(?)",
                                             (_SCHEMA_LOCK_KEY,))])

    def _connect(self) -> Any:
        import psycopg

        try:
            return psycopg.connect(self._dsn, autocommit=True)
        except psycopg.Error as exc:
            # psycopg's message may quote the connection string; never show the password.
            raise LedgerIntegrityError(
                f"cannot reach the ledger store {self.url}: {type(exc).__name__}: "
                f"{_scrub(str(exc), self._dsn)}"
            ) from None

    @contextmanager
    def _begin(self, conn: Any) -> Iterator[None]:
        with conn.transaction():
            yield


def _scrub(message: str, dsn: str) -> str:
    password = urlsplit(dsn).password
    return message.replace(password, "***") if password else message
