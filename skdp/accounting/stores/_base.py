"""What every ledger store provides, and the hash chain that makes its charges tamper-evident.

A store keeps three kinds of record:

* a **ledger**: its id, its totals (ε, δ) and its head (number of charges and the hash
  of the last one);
* its **charges**, append-only: ``(seq, epsilon, delta, label, prev_hash, hash)``, where
  ``hash`` covers the row and the previous row's hash, and the first row chains to a
  genesis hash that covers the ledger's id and totals. Deleting, inserting or editing a
  row (or the totals) breaks the chain; :func:`verify_chain` says where;
* **streams**: ``(stream_id, ledger_id, version)``. A stateful private object (a
  predictor mid-stream, an online learner's stream) moves its state forward only by a
  compare-and-swap of ``version``, so a stale copy of it is refused.

A charge is one transaction: lock the ledger, verify its chain, check that the charge
fits, append it (and advance a stream, if one is given), commit. Nothing leaves the
call before the commit, so a process killed mid-charge either committed it or did not.
"""

import hashlib
import math
from typing import NamedTuple

from ...exceptions import BudgetExhaustedError, LedgerIntegrityError, StaleStateError

__all__ = ["Charge", "LedgerStore", "charge_hash", "genesis_hash", "verify_chain"]

# Relative slack when comparing a sum of charges to the total, so that e.g. ten charges
# of 0.1 fit in ε = 1 despite float rounding. The overrun it allows is at most 1e-12·ε.
_REL_TOL = 1e-12


class Charge(NamedTuple):
    """One committed charge: its position, its cost, what paid for it, and its chain link."""

    seq: int
    epsilon: float
    delta: float
    label: str
    prev_hash: str
    hash: str


def _digest(*parts):
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def genesis_hash(ledger_id, epsilon, delta):
    """The hash the first charge chains to; it covers the ledger's id and totals."""
    return _digest("skdp-ledger-v1", ledger_id, repr(float(epsilon)), repr(float(delta)))


def charge_hash(ledger_id, seq, epsilon, delta, label, prev_hash):
    """The hash of one charge row, chained to ``prev_hash``."""
    return _digest(ledger_id, str(int(seq)), repr(float(epsilon)), repr(float(delta)),
                   label or "", prev_hash)


def verify_chain(ledger_id, epsilon, delta, charges, head_count, head_hash, verified=()):
    """Return ``None`` if the charges form an intact chain ending at the head, else why not.

    ``charges`` must be ordered by ``seq``. The message names positions, never labels.
    ``verified`` are charges this process already checked: a row equal to the one at
    the same position there is not hashed again (any edit or deletion makes it
    differ), which keeps a charge on a long ledger fast.
    """
    expected = genesis_hash(ledger_id, epsilon, delta)
    for position, charge in enumerate(charges):
        if position < len(verified) and charge == verified[position] and (
                charge.prev_hash == expected):
            expected = charge.hash
            continue
        if charge.seq != position:
            return f"charge #{position} is missing (a row was deleted)"
        if charge.prev_hash != expected:
            return f"charge #{position} does not chain to the one before it"
        expected = charge_hash(ledger_id, charge.seq, charge.epsilon, charge.delta,
                               charge.label, charge.prev_hash)
        if charge.hash != expected:
            return f"charge #{position} was altered after it was recorded"
    if len(charges) != head_count or expected != head_hash:
        return (f"the ledger records {head_count} charges but {len(charges)} remain "
                "(a row was deleted or the head was altered)")
    return None


def spent(charges):
    """(ε, δ) spent: the exact sums of the charges (basic composition)."""
    return (math.fsum(c.epsilon for c in charges), math.fsum(c.delta for c in charges))


def check_fits(ledger_id, totals, charges, epsilon, delta, label):
    """Raise :class:`BudgetExhaustedError` unless a charge of (ε, δ) fits; nothing is changed."""
    used_eps, used_delta = spent(charges)
    if (used_eps + epsilon <= totals[0] * (1 + _REL_TOL)
            and used_delta + delta <= totals[1] * (1 + _REL_TOL)):
        return
    raise BudgetExhaustedError(
        f"cannot spend (ε={epsilon:g}, δ={delta:g})" + (f" for {label}" if label else "")
        + f": only (ε={max(totals[0] - used_eps, 0):g}, δ={max(totals[1] - used_delta, 0):g})"
        f" of the budget (ε={totals[0]:g}, δ={totals[1]:g}) remains. Nothing was spent."
    )


def integrity_error(ledger_id, problem):
    return LedgerIntegrityError(
        f"privacy ledger {ledger_id[:8]} does not verify: {problem}. What it says was "
        "spent cannot be trusted, so spending from it is refused; see PrivacyBudget.verify()."
    )


def stale_error(what):
    return StaleStateError(
        f"{what} is a stale copy: its private state has since been continued by another "
        "copy (an older pickle, a second loader of one pickle, or a deepcopy branch). "
        "Continuing it would release a second continuation of the same private state. "
        "Use the copy that is up to date, or fit again (charged again)."
    )


class LedgerStore:
    """Interface of a ledger store; see the module docstring for the records it keeps.

    Subclasses implement every method below. ``url`` is the store's address with any
    password removed (safe for a repr, a log line or an error message); ``shared`` says
    whether other processes can reach the store by that address.
    """

    url = ""
    shared = False

    def create_ledger(self, ledger_id, epsilon, delta):  # pragma: no cover - interface
        raise NotImplementedError

    def totals(self, ledger_id):  # pragma: no cover - interface
        """(ε, δ) totals; :class:`LedgerIntegrityError` if the ledger is not in the store."""
        raise NotImplementedError

    def charges(self, ledger_id):  # pragma: no cover - interface
        """Every charge, ordered by ``seq``."""
        raise NotImplementedError

    def verify(self, ledger_id):  # pragma: no cover - interface
        """``None`` if the ledger's chain is intact, else a message saying what is wrong."""
        raise NotImplementedError

    def charge(self, ledger_id, epsilon, delta, label, stream=None):  # pragma: no cover
        """Append a charge atomically and return its ``seq``.

        ``stream``, a ``(stream_id, expected_version)`` pair, is advanced by one in the
        same transaction (:class:`StaleStateError` if its version moved on). Raises
        :class:`BudgetExhaustedError` or :class:`LedgerIntegrityError` with nothing
        recorded.
        """
        raise NotImplementedError

    def create_stream(self, ledger_id, stream_id):  # pragma: no cover - interface
        raise NotImplementedError

    def advance_stream(self, stream_id, expected_version, what):  # pragma: no cover
        """Compare-and-swap ``version`` from ``expected_version`` to one more; return it."""
        raise NotImplementedError

    def import_ledger(self, ledger_id, epsilon, delta, charges, streams):  # pragma: no cover
        """Copy a ledger, its charges (chain intact) and its streams into this store."""
        raise NotImplementedError

    def streams(self, ledger_id):  # pragma: no cover - interface
        """``{stream_id: version}`` of the ledger's streams."""
        raise NotImplementedError
