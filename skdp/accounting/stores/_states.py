"""Private state records: a stateful private object's state, sealed and versioned in a store.

A *state record* keeps the running state of one private object (a predictor's live
mechanism) next to its ledger, so that a restarted process or a second replica
continues the *same* object instead of starting (and paying for) a new one. It is a
stream record (``skdp_streams``: its version, sealed by the ledger key and
witnessed against rollback) plus one row of ``skdp_states``:

    (stream_id, ledger_id, version, nonce, payload, mac)

* ``payload`` is the state's bytes **encrypted** under the ledger key: a keystream
  SHAKE-256(domain ‖ key ‖ nonce) XORed onto the bytes, a fresh 16-byte ``nonce`` per
  version (SHAKE-256 keyed by a secret prefix is a pseudorandom function, as in NIST's
  KMAC, so the keystream is indistinguishable from random to whoever lacks the key).
  The state is private — it may hold exact statistics of the data (a predictor's
  teachers, hence exact votes) — so whoever can read the database but holds no ledger
  key learns only its length.
* ``mac`` is an HMAC, under the ledger key, of the stream id, ledger id, version,
  nonce and a SHA-256 of the ciphertext (encrypt-then-MAC). Nothing is unpickled
  before its tag verifies, so whoever can write the database without the key can
  neither forge nor alter a state, nor move one between records or versions; an
  older genuine row (a rollback) has an older version, which the stream's own seal
  and this machine's rollback witness refuse.
* Every save is a compare-and-swap of the stream's version, in the same transaction
  as the new row: a copy holding an older version is refused with
  :class:`~skdp.exceptions.StaleStateError` and writes nothing.

A key holder (or a database superuser who also has the key) can read and replace
states: the key is the boundary, as for the charges.

SQLite stores create the table on first use; PostgreSQL application roles cannot
create tables, so the owner creates it with the rest of the schema
(:func:`~skdp.accounting.stores.postgresql.schema_sql`).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from typing import Any

import numpy as np

from ...exceptions import LedgerIntegrityError
from ._base import integrity_error, stale_error, stream_mac
from ._keys import LedgerKey, ledger_key
from ._witness import WITNESS

__all__ = ["STATES_TABLE_SQL", "load_state", "open_state", "save_state", "state_version"]

STATES_TABLE_SQL = """CREATE TABLE IF NOT EXISTS skdp_states (
        stream_id TEXT PRIMARY KEY,
        ledger_id TEXT NOT NULL,
        version BIGINT NOT NULL,
        nonce TEXT NOT NULL,
        payload {blob} NOT NULL,
        mac TEXT NOT NULL)"""
_ENC_DOMAIN = b"skdp-state-encryption-v1\x1f"
_NONCE_BYTES = 16


def _keystream_xor(key: LedgerKey, nonce: bytes, data: bytes) -> bytes:
    stream = hashlib.shake_256(_ENC_DOMAIN + key.secret + b"\x1f" + nonce).digest(len(data))
    out = np.bitwise_xor(np.frombuffer(data, dtype=np.uint8),
                         np.frombuffer(stream, dtype=np.uint8))
    return out.tobytes()


def _mac(key: LedgerKey, stream_id: str, ledger_id: str, version: int, nonce: str,
         ciphertext: bytes) -> str:
    return key.mac("skdp-state-v1", stream_id, ledger_id, str(int(version)), nonce,
                   hashlib.sha256(ciphertext).hexdigest())


def _seal(key: LedgerKey, stream_id: str, ledger_id: str, version: int,
          payload: bytes) -> tuple[str, bytes, str]:
    nonce = secrets.token_bytes(_NONCE_BYTES)
    ciphertext = _keystream_xor(key, nonce, payload)
    return nonce.hex(), ciphertext, _mac(key, stream_id, ledger_id, version, nonce.hex(),
                                         ciphertext)


def _ensure_table(store: Any) -> None:
    """SQLite: create ``skdp_states`` once per store object (PostgreSQL: schema_sql)."""
    if getattr(store, "_states_ready", False):
        return
    from .sqlite import SQLiteStore

    if isinstance(store, SQLiteStore):
        with store._transaction() as execute:
            execute(STATES_TABLE_SQL.format(blob="BLOB"))
    store._states_ready = True


def _check_shared(store: Any) -> None:
    if not getattr(store, "shared", False) or not hasattr(store, "_transaction"):
        raise ValueError(
            f"private state can be kept only in a shared ledger store (sqlite:/// or "
            f"postgresql://), not {store.url or 'memory'}.")


def _missing_table(store: Any, exc: Exception) -> Exception:
    if "skdp_states" in str(exc):
        return LedgerIntegrityError(
            f"the ledger store {store.url} has no skdp_states table for private state. "
            "Have the database's owner role run the SQL of "
            "skdp.accounting.stores.postgresql.schema_sql('<this role>') (it creates the "
            "table and its grants; existing tables are kept).")
    return exc


def _read(store: Any, execute: Callable[..., Any], stream_id: str, what: str,
          lock: bool) -> tuple[str, int, bytes | None]:
    """Check and read a state record: (ledger_id, version, payload or None if absent)."""
    ledger_id, version, key = store._checked_stream(execute, stream_id, what, lock=lock)
    state = execute("SELECT version, nonce, payload, mac FROM skdp_states WHERE stream_id = ?",
                    (stream_id,)).fetchone()
    if state is None:
        raise integrity_error(ledger_id, f"the saved state of {what} was deleted")
    s_version, nonce, ciphertext = int(state[0]), state[1], bytes(state[2])
    if (s_version != version
            or state[3] != _mac(key, stream_id, ledger_id, version, nonce, ciphertext)):
        raise integrity_error(ledger_id, f"the saved state of {what} was altered or "
                              "replaced by another one")
    return ledger_id, version, _keystream_xor(key, bytes.fromhex(nonce), ciphertext)


def open_state(store: Any, ledger_id: str, stream_id: str, what: str,
               payload: Callable[[], bytes]) -> tuple[int, bytes | None]:
    """Create the state record ``stream_id`` of ledger ``ledger_id`` with ``payload()``
    at version 0, or find it: return ``(version, None)`` if this call created it, else
    ``(version, stored payload)``. Two processes opening one record at once: one
    creates, the other reads what it created."""
    _check_shared(store)
    _ensure_table(store)
    for _ in range(2):
        try:
            with store._transaction() as execute:
                row = execute("SELECT 1 FROM skdp_streams WHERE stream_id = ?",
                              (stream_id,)).fetchone()
                if row is not None:
                    _, version, data = _read(store, execute, stream_id, what, lock=False)
                    found = (version, data)
                else:
                    key = ledger_key()
                    nonce, ciphertext, mac = _seal(key, stream_id, ledger_id, 0, payload())
                    execute("INSERT INTO skdp_streams (stream_id, ledger_id, version, mac) "
                            "VALUES (?, ?, 0, ?)",
                            (stream_id, ledger_id, stream_mac(key, stream_id, ledger_id, 0)))
                    execute("INSERT INTO skdp_states (stream_id, ledger_id, version, nonce, "
                            "payload, mac) VALUES (?, ?, 0, ?, ?, ?)",
                            (stream_id, ledger_id, nonce, ciphertext, mac))
                    found = (0, None)
        except LedgerIntegrityError:
            raise
        except Exception as exc:  # the driver's error: a concurrent creation, or no table
            problem = _missing_table(store, exc)
            if problem is not exc:
                raise problem from None
            continue  # another process created it meanwhile: read it
        WITNESS.saw(store.portable_url, stream=(stream_id, found[0]))
        return found
    raise LedgerIntegrityError(f"cannot create or read the state record of {what} in "
                               f"{store.url}.")


def load_state(store: Any, stream_id: str, what: str) -> tuple[int, bytes]:
    """The record's (version, payload), checked (seal, tag, rollback witness)."""
    with store._transaction() as execute:
        _, version, data = _read(store, execute, stream_id, what, lock=False)
    WITNESS.saw(store.portable_url, stream=(stream_id, version))
    assert data is not None
    return version, data


def state_version(store: Any, stream_id: str) -> int | None:
    """The record's version as stored (unchecked: a hint whether to reload; every save
    is checked by its compare-and-swap)."""
    with store._transaction() as execute:
        row = execute("SELECT version FROM skdp_streams WHERE stream_id = ?",
                      (stream_id,)).fetchone()
    return None if row is None else int(row[0])


def save_state(store: Any, stream_id: str, expected_version: int, payload: bytes,
               what: str) -> int:
    """Compare-and-swap the record from ``expected_version`` to the next with ``payload``
    (one transaction); return the new version. :class:`StaleStateError` if the stored
    version moved on (nothing written)."""
    with store._transaction() as execute:
        version = store._cas(execute, stream_id, expected_version, what)
        row = execute("SELECT ledger_id FROM skdp_streams WHERE stream_id = ?",
                      (stream_id,)).fetchone()
        nonce, ciphertext, mac = _seal(ledger_key(), stream_id, row[0], version, payload)
        cursor = execute("UPDATE skdp_states SET version = ?, nonce = ?, payload = ?, mac = ? "
                         "WHERE stream_id = ? AND version = ?",
                         (version, nonce, ciphertext, mac, stream_id, expected_version))
        if cursor.rowcount != 1:
            raise stale_error(what)
    WITNESS.saw(store.portable_url, stream=(stream_id, version))
    return version
