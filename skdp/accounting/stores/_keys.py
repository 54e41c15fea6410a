"""This user's private ledger directory and the secret key that seals ledgers.

**The directory** (:func:`ledger_dir`) holds the SQLite file that ``memory`` ledgers move
to when pickled, the ledger key file and the rollback witness
(:mod:`~skdp.accounting.stores._witness`). It is ``$SKDP_LEDGER_DIR`` if set, else
``$XDG_STATE_HOME/skdp`` (default ``~/.local/state/skdp``): never a predictable path in a
shared temporary directory, where another local user could create it first and swap an
older ledger in. It is created mode 0700; a directory owned by another user, or
writable by group or others, is refused with a message naming the fix, and so is a
file in it that another user owns or that others can read or write. Files are created
0600.

**The key** (:func:`ledger_key`) turns the ledger's hash chain into a chain of
HMAC-SHA256 tags: without it, nobody who can write the store can forge a charge, an
edited cost, other totals or a re-chained ledger. It is ``$SKDP_LEDGER_KEY`` (at least
32 characters) if set, else the file ``ledger.key`` in the private directory, made from
32 random bytes the first time it is needed. It is never written to a store and never
pickled. Every machine that charges one ``postgresql://`` ledger needs the same key
(set ``SKDP_LEDGER_KEY`` to the same secret on each); a ledger sealed under another key
is refused with :class:`~skdp.exceptions.LedgerKeyError`, never chained afresh.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import stat
import threading
from typing import NamedTuple

from ...exceptions import LedgerIntegrityError, LedgerKeyError

__all__ = ["LedgerKey", "check_private", "create_private_file", "ledger_dir", "ledger_key"]

DIR_ENV = "SKDP_LEDGER_DIR"
KEY_ENV = "SKDP_LEDGER_KEY"
KEY_FILE = "ledger.key"
_MIN_KEY_CHARS = 32
_POSIX = hasattr(os, "getuid")


_HMAC_BASES: dict[bytes, hmac.HMAC] = {}


class LedgerKey(NamedTuple):
    """A ledger key: the secret, a public fingerprint of it (``key_id``, safe to store
    and to show) and where it came from (for error messages)."""

    secret: bytes
    key_id: str
    source: str

    @classmethod
    def from_secret(cls, secret: bytes, source: str) -> LedgerKey:
        key_id = hmac.new(secret, b"skdp-ledger-key-id", hashlib.sha256).hexdigest()[:16]
        return cls(secret, key_id, source)

    @classmethod
    def ephemeral(cls) -> LedgerKey:
        """A key that lives and dies with this process (the ``memory`` store's)."""
        return cls.from_secret(secrets.token_bytes(32), "this process (memory store)")

    def mac(self, *parts: str) -> str:
        """HMAC-SHA256 of the parts (joined by a unit separator), hex."""
        base = _HMAC_BASES.get(self.secret)
        if base is None:  # the keyed state, once per key: each tag then costs one copy
            base = _HMAC_BASES[self.secret] = hmac.new(self.secret, digestmod=hashlib.sha256)
        tag = base.copy()
        tag.update("\x1f".join(parts).encode())
        return tag.hexdigest()

    def __repr__(self) -> str:  # never the secret
        return f"LedgerKey(key_id={self.key_id!r}, source={self.source!r})"


def _unsafe(path: str, problem: str, fix: str) -> LedgerIntegrityError:
    return LedgerIntegrityError(
        f"the ledger location {path} is not private: {problem}. Another local user could "
        f"replace the ledger or the rollback witness kept there, so it is not used. {fix}"
    )


def check_private(path: str, *, directory: bool) -> None:
    """Refuse ``path`` unless this user owns it and nobody else can write it (a file:
    nor read it). A no-op where the OS has no POSIX owners and modes."""
    if not _POSIX:  # pragma: no cover - Windows: per-user profile folders
        return
    st = os.stat(path)
    if directory and not stat.S_ISDIR(st.st_mode):
        raise _unsafe(path, "it is not a directory", f"Remove it or set ${DIR_ENV} elsewhere.")
    if st.st_uid != os.getuid():
        raise _unsafe(path, f"it is owned by uid {st.st_uid}, not by you (uid {os.getuid()})",
                      f"Set ${DIR_ENV} to a directory of your own, or remove {path}.")
    allowed = 0o755 if directory else 0o700
    if st.st_mode & 0o777 & ~allowed:
        raise _unsafe(path, f"its mode is {st.st_mode & 0o777:o}",
                      f"Run: chmod {'700' if directory else '600'} {path}")


def ledger_dir() -> str:
    """This user's private ledger directory (created 0700; checked every call)."""
    folder = os.environ.get(DIR_ENV)
    if not folder:
        if _POSIX:
            base = os.environ.get("XDG_STATE_HOME") or ""
            if not os.path.isabs(base):  # the XDG spec: ignore a relative value
                base = os.path.join(os.path.expanduser("~"), ".local", "state")
        else:  # pragma: no cover - Windows
            base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~")
        folder = os.path.join(base, "skdp")
    folder = os.path.abspath(folder)
    with contextlib.suppress(FileExistsError):
        os.makedirs(folder, mode=0o700)
        os.chmod(folder, 0o700)  # makedirs' mode is filtered by the umask
    check_private(folder, directory=True)
    return folder


def create_private_file(path: str, content: bytes = b"") -> None:
    """Create ``path`` 0600 with ``content`` atomically if it does not exist (a file that
    appears concurrently wins); then check it is private."""
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     0o600)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(content)
                f.flush()
                os.fsync(f.fileno())
            with contextlib.suppress(FileExistsError):  # never overwrites a file
                os.link(tmp, path)
        finally:
            os.unlink(tmp)
    check_private(path, directory=False)


_CACHE: dict[tuple[str | None, ...], LedgerKey] = {}
_LOCK = threading.Lock()


def ledger_key() -> LedgerKey:
    """The key that seals this process's shared ledgers (see the module docstring)."""
    env = os.environ.get(KEY_ENV)
    cache_key = (env, os.environ.get(DIR_ENV), os.environ.get("XDG_STATE_HOME"),
                 os.environ.get("HOME"))
    key = _CACHE.get(cache_key)
    if key is not None:
        return key
    with _LOCK:
        if env is not None:
            if len(env) < _MIN_KEY_CHARS:
                raise LedgerKeyError(
                    f"${KEY_ENV} is set but shorter than {_MIN_KEY_CHARS} characters; use a "
                    "random secret, e.g. the output of: python -c \"import secrets; "
                    "print(secrets.token_hex(32))\"")
            key = LedgerKey.from_secret(env.encode(), f"${KEY_ENV}")
        else:
            path = os.path.join(ledger_dir(), KEY_FILE)
            create_private_file(path, secrets.token_hex(32).encode())
            with open(path, "rb") as f:
                secret = f.read().strip()
            if len(secret) < _MIN_KEY_CHARS:
                raise LedgerKeyError(
                    f"the ledger key file {path} holds no key (fewer than {_MIN_KEY_CHARS} "
                    "characters). If ledgers were sealed with it, restore it from a backup; "
                    f"otherwise remove it and a new key is made (or set ${KEY_ENV}).")
            key = LedgerKey.from_secret(secret, path)
        _CACHE[cache_key] = key
    return key
