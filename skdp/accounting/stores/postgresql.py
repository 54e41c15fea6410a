"""The ``postgresql://…`` store: one budget shared by processes on many machines.

psycopg 3 (``pip install "skdp[postgresql]"``), the same schema as the SQLite store.
A charge is one transaction that locks the ledger's row (``SELECT … FOR UPDATE``),
verifies the chain, checks the remainder and appends, so concurrent spenders on any
number of machines are serialised per ledger. A trigger refuses ``UPDATE`` and
``DELETE`` on charges; the hash chain catches an edit made around it.

The connection string may carry a password: it is used to connect and never kept in
:attr:`url`, a repr, a log line or an error message.
"""

import re
from contextlib import contextmanager
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


def redact_url(url):
    """``url`` without its password (and without a ``password=`` query parameter)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:***@{host}" if ":" in userinfo else f"{user}@{host}"
    query = re.sub(r"(?i)(password=)[^&]*", r"\1***", parts.query)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


class PostgreSQLStore(SQLStore):
    """Ledgers in a PostgreSQL database (see the module docstring)."""

    placeholder = "%s"
    lock_suffix = " FOR UPDATE"

    def __init__(self, url):
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
        self._create_schema(_TRIGGER, lock=[("SELECT pg_advisory_xact_lock(?)",
                                             (_SCHEMA_LOCK_KEY,))])

    def _connect(self):
        import psycopg

        try:
            return psycopg.connect(self._dsn, autocommit=True)
        except psycopg.Error as exc:
            # psycopg's message may quote the connection string; never show the password.
            message = str(exc).replace(self._dsn, self.url)
            raise LedgerIntegrityError(
                f"cannot reach the ledger store {self.url}: {type(exc).__name__}: "
                f"{_scrub(message, self._dsn)}"
            ) from None

    @contextmanager
    def _begin(self, conn):
        with conn.transaction():
            yield


def _scrub(message, dsn):
    password = urlsplit(dsn).password
    return message.replace(password, "***") if password else message
