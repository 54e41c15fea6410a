"""The ``postgresql://…`` store: one budget shared by processes on many machines.

psycopg 3 (``pip install "skdp[postgresql]"``), the same schema as the SQLite store.
A charge is one transaction that locks the ledger's row (``SELECT … FOR UPDATE``),
checks the ledger's seal and head, checks the remainder and appends, so concurrent
spenders on any number of machines are serialised per ledger.

**Roles.** Run the store as an application role that does not own the tables: an owner
role creates them once (:func:`schema_sql` prints the SQL) and grants the application
role only ``SELECT`` and ``INSERT`` on charges and ``UPDATE`` of the head and stream
columns, so it cannot ``DELETE``, ``TRUNCATE``, ``ALTER`` or disable the append-only
trigger. The store works with a schema it cannot create; a role that may create it
(e.g. one owning the database) gets the tables created on first use — then it owns
them, which the threat model does not cover. A store whose trigger was dropped or
disabled is refused.

**Passwords.** The connection string may carry a password, in any form libpq accepts (the
URL's user info, a ``password=`` query parameter however its key is spelled or
percent-encoded, a ``key=value`` conninfo string). The string is parsed by libpq
itself and the password is used to connect, never kept in :attr:`url`, the pickled
address, a repr, a log line or an error message.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote, urlencode

from ...exceptions import LedgerIntegrityError, PrivacyWarning
from ._sql import SCHEMA, TABLES, SQLStore
from ._states import STATES_TABLE_SQL

__all__ = ["PostgreSQLStore", "parse_conninfo", "redact_url", "schema_sql"]

_TRIGGER_NAME = "skdp_charges_append_only"
_TRIGGER = (
    """CREATE OR REPLACE FUNCTION skdp_append_only() RETURNS trigger LANGUAGE plpgsql AS
       $$ BEGIN RAISE EXCEPTION 'skdp charges are append-only'; END $$""",
    f"""CREATE OR REPLACE TRIGGER {_TRIGGER_NAME} BEFORE UPDATE OR DELETE OR TRUNCATE
       ON skdp_charges FOR EACH STATEMENT EXECUTE FUNCTION skdp_append_only()""",
)
# Any fixed key: serialises concurrent schema creation (CREATE TABLE IF NOT EXISTS races).
_SCHEMA_LOCK_KEY = 0x736B6470
# Connection parameters that are secrets (libpq's names).
_SECRETS = ("password", "sslpassword")
_SCHEMES = ("postgresql://", "postgres://")
_ENCODE_HINT = ("percent-encode the special characters of the user name and password "
                "(@ as %40, / as %2F, # as %23, ? as %3F, : as %3A), or pass the password "
                "through PGPASSWORD or ~/.pgpass")


def schema_sql(app_role: str = "skdp_app") -> str:
    """The SQL an owner role runs once to create the ledger tables for ``app_role``.

    ``app_role`` gets exactly what the store needs: it reads everything, inserts ledgers,
    charges and streams, and updates only a ledger's head and a stream's version.
    It cannot delete, truncate, alter, or disable the append-only trigger.
    """
    role = '"' + app_role.replace('"', '""') + '"'
    grants = (
        *(f"REVOKE ALL ON {t} FROM PUBLIC" for t in (*TABLES, "skdp_states")),
        f"GRANT SELECT, INSERT ON skdp_charges TO {role}",
        f"GRANT SELECT, INSERT, UPDATE (head_count, head_hash) ON skdp_ledgers TO {role}",
        f"GRANT SELECT, INSERT, UPDATE (version, mac) ON skdp_streams TO {role}",
        # Private state records (skdp.accounting.stores._states): sealed rows, updated
        # only by a compare-and-swap of their version.
        f"GRANT SELECT, INSERT, UPDATE (version, nonce, payload, mac) ON skdp_states TO {role}",
    )
    states = STATES_TABLE_SQL.format(blob="BYTEA")
    statements = (*(" ".join(s.split()) for s in (*SCHEMA, states, *_TRIGGER)), *grants)
    return ";\n".join(statements) + ";\n"


class _Refused(ValueError):
    """A URL that cannot be shown or used safely (its text is never quoted)."""


def parse_conninfo(url: str) -> dict[str, str]:
    """libpq's own reading of a connection string (URI or ``key=value``).

    Refuses, without quoting it, a URI whose user info libpq would split differently
    from how it reads (an unencoded ``@`` or ``/`` in the password): libpq would take
    part of the password for a host, port or database name.
    """
    from psycopg.conninfo import conninfo_to_dict

    if url.startswith(_SCHEMES):
        rest = url.split("://", 1)[1]
        slash = rest.find("/")
        authority = rest if slash < 0 else rest[:slash]
        # libpq's user info ends at the first '@' before any '/': a second '@', or an
        # '@' after the first '/', means a password (or a value) with an unencoded
        # '@' or '/' that libpq would misread.
        if authority.count("@") > 1 or (slash >= 0 and "@" in rest[slash:]):
            raise _Refused("the PostgreSQL URL is ambiguous: " + _ENCODE_HINT)
    try:
        params = conninfo_to_dict(url)
    except Exception:  # libpq's message quotes the string: never show it
        raise _Refused("libpq cannot parse the PostgreSQL connection string: "
                       + _ENCODE_HINT) from None
    return {k: str(v) for k, v in params.items() if v is not None}


def _canonical(params: dict[str, str], mask: str | None) -> str:
    """A ``postgresql://`` URI for ``params``: secrets masked (``mask``) or left out."""
    params = dict(params)
    user, host, port = params.pop("user", None), params.pop("host", None), params.pop(
        "port", None)
    dbname = params.pop("dbname", None)
    has_secret = any(params.pop(k, None) is not None for k in _SECRETS)
    userinfo = quote(user or "", safe="")
    if has_secret and mask:
        userinfo += ":" + mask
    netloc = userinfo + "@" if userinfo else ""
    if host is not None and "," not in host and not host.startswith("/") and (
            port is None or "," not in port):
        netloc += f"[{host}]" if ":" in host else quote(host, safe="")
        if port is not None:
            netloc += ":" + quote(port, safe="")
    else:  # several hosts, a socket directory: query parameters, as libpq allows
        params = {**({"host": host} if host is not None else {}),
                  **({"port": port} if port is not None else {}), **params}
    query = urlencode(params, quote_via=quote, safe="")
    return (f"postgresql://{netloc}/{quote(dbname or '', safe='')}"
            + (f"?{query}" if query else ""))


def redact_url(url: str, mask: str | None = "***") -> str:
    """``url`` with every password replaced by ``mask`` — or, with ``mask=None``, removed,
    which leaves libpq to find it (``PGPASSWORD``, ``~/.pgpass``).

    PostgreSQL connection strings (URIs and ``key=value``) are read by libpq itself and
    rebuilt, so no form of password survives (user info, ``password=`` keys however
    spelled or encoded, unencoded ``#``, ``?`` or ``/``). A string that cannot be read
    safely is replaced by ``postgresql://***``; any other URL keeps only its scheme when
    it has user info.
    """
    if url == "memory" or url.startswith("sqlite:///"):
        return url
    if url.startswith(_SCHEMES) or ("=" in url and "://" not in url):
        try:
            return _canonical(parse_conninfo(url), mask)
        except (_Refused, ImportError):
            return "postgresql://***"
    scheme = url.split("://", 1)[0] if "://" in url else ""
    return f"{scheme[:20]}://***" if scheme.isalnum() else "***"


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
        try:
            params = parse_conninfo(url)
        except _Refused as exc:
            raise ValueError(str(exc)) from None
        self._secrets = [params[k] for k in _SECRETS if params.get(k)]
        self._dsn = url
        self.url = _canonical(params, "***")
        # What a pickle carries: no password at all (a masked one would be sent to the
        # server); a process that did not open the store with its password gets it
        # from libpq's environment.
        self._portable_url = _canonical(params, None)
        self._open_schema(_TRIGGER, lock=[("SELECT pg_advisory_xact_lock(?)",
                                           (_SCHEMA_LOCK_KEY,))])
        with self._transaction() as execute:
            owns = execute("SELECT pg_has_role(current_user, tableowner, 'USAGE') FROM "
                           "pg_tables WHERE tablename = 'skdp_charges' AND schemaname = "
                           "ANY (current_schemas(false))").fetchone()
        if owns is not None and owns[0]:
            warnings.warn(PrivacyWarning(
                f"the role of the ledger store {self.url} owns its tables, so it can delete, "
                "truncate or alter them and disable their append-only trigger. The keyed "
                "chain and this machine's rollback witness still detect what they can; to "
                "take those rights away, have an owner role create the tables and connect "
                "as a role with only the grants of "
                "skdp.accounting.stores.postgresql.schema_sql('<role>')."), stacklevel=2)

    def _create_schema(self, execute: Callable[..., Any], statements: tuple[str, ...]) -> None:
        import psycopg

        try:
            super()._create_schema(execute, statements)
        except psycopg.errors.InsufficientPrivilege:
            raise LedgerIntegrityError(
                f"the ledger tables do not exist in {self.url} and this role may not create "
                "them. Have the database's owner role run the SQL of "
                "skdp.accounting.stores.postgresql.schema_sql('<this role>') once (see the "
                "user guide, 'The ledger's threat model')."
            ) from None

    def _existing_tables(self, execute: Callable[..., Any]) -> set[str]:
        rows = execute("SELECT t FROM unnest(?::text[]) AS t WHERE to_regclass(t) IS NOT NULL",
                       (list(TABLES),)).fetchall()
        return {r[0] for r in rows}

    def _check_guards(self, execute: Callable[..., Any]) -> str | None:
        row = execute("SELECT tgenabled FROM pg_trigger WHERE tgname = ? AND "
                      "tgrelid = 'skdp_charges'::regclass", (_TRIGGER_NAME,)).fetchone()
        if row is None:
            return "the append-only trigger on its charges was dropped"
        return None if row[0] in ("O", "A") else (
            "the append-only trigger on its charges was disabled")

    def _connect(self) -> Any:
        import psycopg

        try:
            return psycopg.connect(self._dsn, autocommit=True)
        except psycopg.Error as exc:
            # psycopg's message may quote the connection string; never show the password.
            raise LedgerIntegrityError(
                f"cannot reach the ledger store {self.url}: {type(exc).__name__}: "
                f"{self._scrub(str(exc))}"
            ) from None

    def _scrub(self, message: str) -> str:
        """``message`` without any secret of the connection string, in any encoding."""
        for secret in self._secrets:
            for form in {secret, quote(secret, safe=""), quote(secret), quote(secret, safe="/"),
                         secret.replace("'", "\\'")}:
                message = message.replace(form, "***")
        return message

    @contextmanager
    def _begin(self, conn: Any) -> Iterator[None]:
        with conn.transaction():
            yield

    @contextmanager
    def _begin_read(self, conn: Any) -> Iterator[None]:
        # One snapshot for the whole read (a head and the charges committed with it),
        # read-only, no row lock: reads of spent/charges no longer queue behind
        # charges (SELECT … FOR UPDATE) nor make them wait.
        with conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield
