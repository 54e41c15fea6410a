"""A throwaway PostgreSQL server for the tests: Debian's binaries, a temp dir, a free port.

Hand-written instead of pytest-postgresql's ``postgresql_proc``: that one runs
``pg_ctl initdb`` as the calling user, and initdb refuses to run as root (CI is root),
with no option to run it as another user.

Two roles, as the ledger's threat model asks (docs: "The ledger's threat model"):
``skdp_owner`` owns every database and created the ledger tables in it
(:func:`skdp.accounting.stores.postgresql.schema_sql`); ``skdp``, the application role
the tests connect as, owns nothing and holds only the grants the store needs, so it
cannot DELETE, TRUNCATE, ALTER, DROP or disable the append-only trigger, nor create
tables.

Use it through the fixtures in ``tests/conftest.py``:

* ``postgresql_url`` (session): ``postgresql://skdp:s3cret-pw@127.0.0.1:PORT/skdp``,
  the application role ``skdp`` (a password, not a superuser, not the owner) on the
  database ``skdp``, whose ledger tables ``skdp_owner`` created.
* ``postgresql_db_url`` (function): the same role and server, but a fresh, uniquely
  named database (ledger tables created by the owner) that is dropped after the test.
* ``postgresql_db_owner_url`` (function): the owner role's URL of that same database
  (for tests that play an attacker holding the owner's rights, or create other tables).
* ``postgresql_server`` (session): the :class:`PostgresServer` itself.

The server listens on 127.0.0.1 only (no Unix socket), with password (SCRAM) auth for
every connection, and durability switched off (``fsync=off``) so it starts in about a
second. When the tests run as root, initdb/pg_ctl run as the ``postgres`` system user
(Debian's package creates it), or as a ``skdp-pg`` system user made for the purpose.
"""

from __future__ import annotations

import atexit
import glob
import os
import pwd
import re
import secrets
import shutil
import socket
import stat
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import quote

PG_USER = "skdp"
PG_PASSWORD = "s3cret-pw"
PG_OWNER = "skdp_owner"
PG_OWNER_PASSWORD = "0wner-s3cret"
PG_DATABASE = "skdp"
PG_HOST = "127.0.0.1"

#: Set to a directory holding initdb, pg_ctl and postgres to pick the binaries.
BINDIR_ENV = "SKDP_PG_BINDIR"
#: Set to 1 (CI does) to fail, not skip, when no PostgreSQL binaries are found.
REQUIRE_ENV = "SKDP_REQUIRE_POSTGRES"

_FALLBACK_SYSTEM_USER = "skdp-pg"
_NEEDED = ("initdb", "pg_ctl", "postgres")


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server binaries on this machine."""


def _has_binaries(bindir: str | os.PathLike | None) -> bool:
    return bool(bindir) and all(os.access(Path(bindir, b), os.X_OK) for b in _NEEDED)


def _version_key(path: str) -> tuple:
    m = re.search(r"/postgresql/(\d+)(?:\.(\d+))?/bin$", path)
    return (int(m.group(1)), int(m.group(2) or 0)) if m else (0, 0)


def find_bindir() -> Path:
    """The directory with initdb, pg_ctl and postgres, or raise PostgresUnavailable.

    Looks, in order, at ``$SKDP_PG_BINDIR``, ``pg_config --bindir``, the newest
    ``/usr/lib/postgresql/*/bin`` (Debian keeps the server binaries there, off PATH),
    and ``initdb`` on PATH (following symlinks).
    """
    candidates: list[str] = []
    if os.environ.get(BINDIR_ENV):
        candidates.append(os.environ[BINDIR_ENV])
    pg_config = shutil.which("pg_config")
    if pg_config:
        try:
            out = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, timeout=10, check=False
            ).stdout.strip()
            if out:
                candidates.append(out)
        except (OSError, subprocess.SubprocessError):
            pass
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version_key, reverse=True)
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(str(Path(os.path.realpath(initdb)).parent))
    for c in candidates:
        if _has_binaries(c):
            return Path(c)
    raise PostgresUnavailable(
        "no PostgreSQL server binaries (initdb, pg_ctl, postgres) found via "
        f"${BINDIR_ENV}, pg_config --bindir, /usr/lib/postgresql/*/bin or PATH; "
        "install Debian's `postgresql` package (.ci/run does)"
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((PG_HOST, 0))
        return s.getsockname()[1]


def _system_user() -> pwd.struct_passwd:
    """The unprivileged user that owns the server when we are root."""
    for name in ("postgres", _FALLBACK_SYSTEM_USER):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            pass
    subprocess.run(
        [
            "useradd",
            "--system",
            "--user-group",
            "--no-create-home",
            "--home-dir",
            "/nonexistent",
            "--shell",
            "/usr/sbin/nologin",
            _FALLBACK_SYSTEM_USER,
        ],
        check=True,
        capture_output=True,
    )
    return pwd.getpwnam(_FALLBACK_SYSTEM_USER)


def _world_traversable(path: Path) -> bool:
    p = path.resolve()
    return all(os.stat(d).st_mode & stat.S_IXOTH for d in (p, *p.parents))


def url_for(
    port: int, dbname: str = PG_DATABASE, user: str = PG_USER, password: str = PG_PASSWORD
) -> str:
    auth = f"{quote(user, safe='')}:{quote(password, safe='')}"
    return f"postgresql://{auth}@{PG_HOST}:{port}/{dbname}"


class PostgresServer:
    """One PostgreSQL server in a temp dir; ``start()``, then ``stop()`` (idempotent)."""

    def __init__(self, bindir: str | os.PathLike | None = None):
        self.bindir = Path(bindir) if bindir else find_bindir()
        self.port: int | None = None
        self.tmpdir: Path | None = None
        self.startup_seconds: float | None = None
        self.version: str | None = None
        self._admin_password = secrets.token_urlsafe(24)
        self._owner_pid: int | None = None
        self._run_as: pwd.struct_passwd | None = None

    def __repr__(self) -> str:  # no passwords here
        state = f"port={self.port}" if self.port else "not started"
        return f"PostgresServer({self.bindir}, {state})"

    # -- paths and URLs -------------------------------------------------------------
    @property
    def datadir(self) -> Path:
        return self.tmpdir / "data"

    @property
    def logfile(self) -> Path:
        return self.tmpdir / "server.log"

    @property
    def url(self) -> str:
        """The ``skdp`` role's URL for the ``skdp`` database."""
        return url_for(self.port)

    def url_for(self, dbname: str) -> str:
        return url_for(self.port, dbname)

    def owner_url_for(self, dbname: str) -> str:
        """The owner role's URL of ``dbname`` (it created the ledger tables there)."""
        return url_for(self.port, dbname, PG_OWNER, PG_OWNER_PASSWORD)

    # -- running the binaries -------------------------------------------------------
    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env.update(LC_ALL="C", LANG="C", TZ="UTC")
        if self._run_as is not None:
            env.update(
                HOME=str(self.tmpdir), USER=self._run_as.pw_name, LOGNAME=self._run_as.pw_name
            )
        return env

    def _run(self, binary: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        kw = {}
        if self._run_as is not None:
            # the equivalent of `runuser -u postgres --`, without needing util-linux
            kw = dict(user=self._run_as.pw_uid, group=self._run_as.pw_gid, extra_groups=[])
        return subprocess.run(
            [str(self.bindir / binary), *args],
            cwd=self.tmpdir,
            env=self._env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            **kw,
        )

    def _check(self, proc: subprocess.CompletedProcess, what: str) -> None:
        if proc.returncode != 0:
            raise RuntimeError(
                f"{what} failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
                f"\n--- server log ---\n{self._log_tail()}"
            )

    def _log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.logfile.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    # -- lifecycle ------------------------------------------------------------------
    def start(self) -> PostgresServer:
        t0 = time.perf_counter()
        if os.geteuid() == 0:
            self._run_as = _system_user()
        base = None
        if self._run_as is not None and not _world_traversable(Path(tempfile.gettempdir())):
            base = "/tmp"  # the server user must reach its directory
        self.tmpdir = Path(tempfile.mkdtemp(prefix="skdp-pg-", dir=base))
        self._owner_pid = os.getpid()
        atexit.register(self.stop)
        try:
            self._initdb()
            self._start_server()
            self._create_role_and_db()
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.perf_counter() - t0
        return self

    def _chown(self, path: Path) -> None:
        if self._run_as is not None:
            os.chown(path, self._run_as.pw_uid, self._run_as.pw_gid)

    def _initdb(self) -> None:
        self._chown(self.tmpdir)
        pwfile = self.tmpdir / "pwfile"
        pwfile.write_text(self._admin_password + "\n")
        pwfile.chmod(0o600)
        self._chown(pwfile)
        try:
            proc = self._run(
                "initdb",
                "-D",
                str(self.datadir),
                "-U",
                "postgres",
                f"--pwfile={pwfile}",
                "--auth=scram-sha-256",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            )
        finally:
            pwfile.unlink(missing_ok=True)
        self._check(proc, "initdb")
        with open(self.datadir / "postgresql.conf", "a") as f:
            f.write(
                "\n# skdp tests: a disposable server, loopback TCP only, no durability\n"
                f"listen_addresses = '{PG_HOST}'\n"
                "unix_socket_directories = ''\n"
                "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
                "max_connections = 200\nshared_buffers = 32MB\n"
                # keep statements (CREATE ROLE ... PASSWORD) out of the log on errors
                "log_min_error_statement = panic\n"
            )

    def _start_server(self, attempts: int = 5) -> None:
        for attempt in range(attempts):
            self.port = _free_port()
            proc = self._run(
                "pg_ctl",
                "-D",
                str(self.datadir),
                "-l",
                str(self.logfile),
                "-w",
                "-t",
                "60",
                "-o",
                f"-p {self.port}",
                "start",
                timeout=90,
            )
            if proc.returncode == 0:
                return
            if "already in use" not in self._log_tail() or attempt == attempts - 1:
                self._check(proc, "pg_ctl start")

    def _admin(self, dbname: str = "postgres"):
        import psycopg

        return psycopg.connect(
            host=PG_HOST,
            port=self.port,
            user="postgres",
            password=self._admin_password,
            dbname=dbname,
            autocommit=True,
            connect_timeout=10,
        )

    def _create_role_and_db(self) -> None:
        from psycopg import sql

        with self._admin() as conn:
            for role, password in ((PG_OWNER, PG_OWNER_PASSWORD), (PG_USER, PG_PASSWORD)):
                conn.execute(
                    sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
                        sql.Identifier(role), sql.Literal(password)
                    )
                )
            self.version = conn.execute("SHOW server_version").fetchone()[0]
        self.create_database(name=PG_DATABASE)

    def create_database(self, prefix: str = "skdp_t", *, name: str | None = None,
                        schema: bool = True) -> str:
        """Create a fresh database owned by ``skdp_owner`` and, if ``schema``, have the
        owner create the ledger tables for ``skdp``; return its name."""
        import psycopg
        from psycopg import sql

        name = name or f"{prefix}_{uuid.uuid4().hex[:12]}"
        with self._admin() as conn:
            conn.execute(
                sql.SQL("CREATE DATABASE {} OWNER {}").format(
                    sql.Identifier(name), sql.Identifier(PG_OWNER)
                )
            )
        if schema:
            from skdp.accounting.stores.postgresql import schema_sql

            with psycopg.connect(self.owner_url_for(name), autocommit=True) as conn:
                conn.execute(schema_sql(PG_USER))
        return name

    def drop_database(self, name: str) -> None:
        """Drop a database, disconnecting whoever is still connected to it."""
        from psycopg import sql

        with self._admin() as conn:
            if conn.info.server_version >= 130000:
                conn.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )
                return
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                (name,),
            )
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))

    def stop(self) -> None:
        """``pg_ctl stop -m fast`` and remove the temp dir; safe to call twice."""
        if self.tmpdir is None or os.getpid() != self._owner_pid:
            return  # never started, already stopped, or a forked child
        try:
            if (self.datadir / "postmaster.pid").exists():
                proc = self._run(
                    "pg_ctl",
                    "-D",
                    str(self.datadir),
                    "stop",
                    "-m",
                    "fast",
                    "-w",
                    "-t",
                    "30",
                    timeout=60,
                )
                if proc.returncode != 0:
                    self._run(
                        "pg_ctl",
                        "-D",
                        str(self.datadir),
                        "stop",
                        "-m",
                        "immediate",
                        "-w",
                        "-t",
                        "30",
                        timeout=60,
                    )
        finally:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None
            atexit.unregister(self.stop)
