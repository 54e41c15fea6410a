"""What every ledger store provides, and the keyed chain that makes its charges tamper-evident.

A store keeps three kinds of record:

* a **ledger**: its id, its totals (ε, δ), the fingerprint of the key that seals it
  (``key_id``), its seal (an HMAC of its id and totals) and its head (number of charges
  and the tag of the last one);
* its **charges**, append-only: ``(seq, epsilon, delta, label, total_epsilon,
  total_delta, prev_hash, hash)``, where the totals are the running sums up to that
  charge and ``hash`` is an HMAC-SHA256 tag, under the ledger key, of the row and the
  previous row's tag; the first row chains to the seal. The key is not in the store
  (:mod:`~skdp.accounting.stores._keys`), so whoever can write the store cannot forge a
  row, edit a cost, change the totals or re-chain the ledger after deleting a row:
  :func:`verify_chain` says where it breaks;
* **streams**: ``(stream_id, ledger_id, version, mac)``. A stateful private object (a
  predictor mid-stream, an online learner's stream) moves its state forward only by a
  compare-and-swap of ``version``, so a stale copy of it is refused; ``mac`` seals the
  version.

What a keyed chain cannot show is a *rollback*: an older, genuine state of the store
(fewer charges, an older stream version). The rollback witness
(:mod:`~skdp.accounting.stores._witness`) remembers the newest head and stream versions
this machine has seen, in the process and in this user's private directory, and the
stores refuse any state older than that.

A charge is one transaction: lock the ledger, check its seal and head (:func:`check_head`:
the row count, the stored costs' sum against the chained running totals, the last row's
tag — constant work in Python however long the ledger — and the witness), check that
the charge fits, append it (and advance a stream, if one is given), commit. The whole
chain is walked by ``verify`` and the first time a process charges a ledger. Nothing
leaves the call before the commit, so a process killed mid-charge either committed it
or did not.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from ...exceptions import (
    BudgetExhaustedError,
    CapReachedError,
    LedgerIntegrityError,
    LedgerKeyError,
    StaleStateError,
)
from ._keys import LedgerKey

__all__ = ["Charge", "LedgerStore", "MissingLedgerError", "check_cap", "check_head",
           "next_charge", "verify_chain"]

# Relative slack when comparing a sum of charges to the total, so that e.g. ten charges
# of 0.1 fit in ε = 1 despite float rounding. The overrun it allows is at most 1e-12·ε.
_REL_TOL = 1e-12
# How far the store's own SUM() over the charges may drift from the chained running
# totals (SQL sums in another order): far below any meaningful change of ε or δ.
_SUM_TOL = 1e-9


class Charge(NamedTuple):
    """One committed charge: its position, its cost, what paid for it, the running
    totals up to and including it (Neumaier-compensated sums: ``total + comp`` is the
    sum of all costs so far to within a couple of rounding errors, however many), and
    its chain link."""

    seq: int
    epsilon: float
    delta: float
    label: str
    total_epsilon: float
    total_delta: float
    comp_epsilon: float
    comp_delta: float
    prev_hash: str
    hash: str

    @property
    def running(self) -> tuple[float, float, float, float]:
        """(total_epsilon, total_delta, comp_epsilon, comp_delta): what the hash covers
        besides the charge itself."""
        return (self.total_epsilon, self.total_delta, self.comp_epsilon, self.comp_delta)

    @property
    def spent(self) -> tuple[float, float]:
        """(ε, δ) up to and including this charge: the running sums, compensated."""
        return (self.total_epsilon + self.comp_epsilon, self.total_delta + self.comp_delta)


def spent_after(last: Charge | None) -> tuple[float, float]:
    """(ε, δ) spent once ``last`` is committed (``None``: nothing yet)."""
    return (0.0, 0.0) if last is None else last.spent


def genesis_hash(key: LedgerKey, ledger_id: str, epsilon: float, delta: float) -> str:
    """The ledger's seal, which the first charge chains to: a tag of its id and totals."""
    return key.mac("skdp-ledger-v2", ledger_id, repr(float(epsilon)), repr(float(delta)))


def charge_hash(key: LedgerKey, ledger_id: str, seq: int, epsilon: float, delta: float,
                label: str | None, totals: Iterable[float], prev_hash: str) -> str:
    """The tag of one charge row, chained to ``prev_hash``; ``totals`` are its running
    (total_epsilon, total_delta, comp_epsilon, comp_delta)."""
    return key.mac("skdp-charge-v2", ledger_id, str(int(seq)), repr(float(epsilon)),
                   repr(float(delta)), label or "", *(repr(float(t)) for t in totals),
                   prev_hash)


def stream_mac(key: LedgerKey, stream_id: str, ledger_id: str, version: int) -> str:
    """The tag that seals one version of a stream record."""
    return key.mac("skdp-stream-v2", stream_id, ledger_id, str(int(version)))


def _neumaier(total: float, comp: float, value: float) -> tuple[float, float]:
    """One step of Neumaier's compensated summation: the new (total, compensation)."""
    new = total + value
    if abs(total) >= abs(value):
        return new, comp + ((total - new) + value)
    return new, comp + ((value - new) + total)


def next_charge(key: LedgerKey, ledger_id: str, totals: tuple[float, float], last: Charge | None,
                epsilon: float, delta: float, label: str | None) -> Charge:
    """The charge that follows ``last`` (``None`` for the first): running totals, link."""
    epsilon, delta, label = float(epsilon), float(delta), label or ""
    if last is None:
        seq, prev, run = 0, genesis_hash(key, ledger_id, *totals), (0.0, 0.0, 0.0, 0.0)
    else:
        seq, prev, run = last.seq + 1, last.hash, last.running
    total_eps, comp_eps = _neumaier(run[0], run[2], epsilon)
    total_delta, comp_delta = _neumaier(run[1], run[3], delta)
    run = (total_eps, total_delta, comp_eps, comp_delta)
    return Charge(seq, epsilon, delta, label, *run, prev,
                  charge_hash(key, ledger_id, seq, epsilon, delta, label, run, prev))


def verify_chain(key: LedgerKey, ledger_id: str, totals: tuple[float, float],
                 charges: Sequence[Charge], head_count: int, head_hash: str) -> str | None:
    """Return ``None`` if the charges form an intact chain ending at the head, else why not.

    ``charges`` must be ordered by ``seq``. The message names positions, never labels.
    """
    last = None
    for position, charge in enumerate(charges):
        if charge.seq != position:
            return f"charge #{position} is missing (a row was deleted)"
        expected = next_charge(key, ledger_id, totals, last, charge.epsilon, charge.delta,
                               charge.label)
        if charge.prev_hash != expected.prev_hash:
            return f"charge #{position} does not chain to the one before it"
        if charge != expected:
            return f"charge #{position} was altered after it was recorded"
        last = charge
    return check_head(key, ledger_id, totals, head_count, head_hash, last, len(charges),
                      spent(charges))


def check_head(key: LedgerKey, ledger_id: str, totals: tuple[float, float], head_count: int,
               head_hash: str, last: Charge | None, count: int,
               sums: tuple[float, float]) -> str | None:
    """The per-charge check: ``None`` if the ledger's head is intact, else why not.

    ``last`` is the charge at position ``head_count - 1``, ``count`` and ``sums`` what
    the store holds. A deleted row changes ``count``; an edited cost changes ``sums``
    away from the running totals chained into ``last``; an edited last row breaks its
    hash. (Edits that change no cost, e.g. of a label, are caught by ``verify_chain``.)
    """
    if count != head_count:
        return (f"the ledger records {head_count} charges but {count} remain "
                "(a row was deleted)")
    if last is None:
        return None if head_hash == genesis_hash(key, ledger_id, *totals) else (
            "its totals or head were altered")
    if last.seq != head_count - 1 or last.hash != head_hash:
        return "its last charge is missing or the head was altered"
    if last.hash != charge_hash(key, ledger_id, last.seq, last.epsilon, last.delta, last.label,
                                last.running, last.prev_hash):
        return f"charge #{last.seq} was altered after it was recorded"
    for stored, chained in zip(sums, last.spent, strict=True):
        if abs(stored - chained) > _SUM_TOL * max(1.0, abs(chained)):
            return "a charge was altered after it was recorded (the costs no longer add up)"
    return None


def spent(charges: Iterable[Charge]) -> tuple[float, float]:
    """(ε, δ) spent: the exact sums of the charges (basic composition)."""
    return (math.fsum(c.epsilon for c in charges), math.fsum(c.delta for c in charges))


def fits(totals: tuple[float, float], used: tuple[float, float], epsilon: float,
         delta: float) -> bool:
    """True if a charge of (ε, δ) fits in ``totals`` after ``used`` was spent."""
    return (used[0] + epsilon <= totals[0] * (1 + _REL_TOL)
            and used[1] + delta <= totals[1] * (1 + _REL_TOL))


def check_fits(totals: tuple[float, float], last: Charge | None, epsilon: float, delta: float,
               label: str | None) -> None:
    """Raise :class:`BudgetExhaustedError` unless a charge of (ε, δ) fits after ``last``.

    What was spent is the running totals chained into the last charge (compensated, so
    exact to within a couple of rounding errors however many charges there are).
    Nothing is changed.
    """
    used_eps, used_delta = spent_after(last)
    if fits(totals, (used_eps, used_delta), epsilon, delta):
        return
    left_eps, left_delta = max(totals[0] - used_eps, 0), max(totals[1] - used_delta, 0)
    if fits(totals, (used_eps, used_delta), epsilon, 0.0):
        # Only δ is short — typically PrivacyBudget(ε) (δ = 0 by default) paying for an
        # estimator whose default delta is 1e-6.
        hint = (" The ε fits; the δ does not: give the budget a δ (PrivacyBudget(epsilon, "
                "delta=...)) or run the estimator with delta=0 where it offers pure ε-DP.")
    else:
        # Name the parameter that does not fit and the two ways out; a ledger is never
        # reset, so "spend less" and "a new budget for new data" are the only fixes.
        hint = (f" The ε does not fit: run with epsilon ≤ {left_eps:g}, or use a new "
                "PrivacyBudget for data this one has not been charged for (a budget is never "
                "reset).")
    raise BudgetExhaustedError(
        f"cannot spend (ε={epsilon:g}, δ={delta:g})" + (f" for {label}" if label else "")
        + f": only (ε={left_eps:g}, δ={left_delta:g})"
        f" of the budget (ε={totals[0]:g}, δ={totals[1]:g}) remains. Nothing was spent." + hint
    )


def check_cap(cap: tuple[str, int] | None, count: int, label: str | None) -> None:
    """Raise :class:`CapReachedError` if ``count`` charges already fill ``cap``."""
    if cap is not None and count >= cap[1]:
        raise CapReachedError(
            f"cannot record {label or 'this step'}: its cap of {cap[1]} is reached "
            "(counted over every copy charging this ledger). Nothing was spent.")


class MissingLedgerError(LedgerIntegrityError):
    """The ledger is not in the store and nothing says it ever was (so a new ledger of
    that name may be created)."""


def integrity_error(ledger_id: str, problem: str,
                    kind: type[LedgerIntegrityError] = LedgerIntegrityError,
                    ) -> LedgerIntegrityError:
    return kind(
        f"privacy ledger {ledger_id[:8]} does not verify: {problem}. What it says was "
        "spent cannot be trusted, so spending from it is refused; see PrivacyBudget.verify()."
    )


def stale_error(what: str | None) -> StaleStateError:
    return StaleStateError(
        f"{what} is a stale copy: its private state has since been continued by another "
        "copy (an older pickle, a second loader of one pickle, or a deepcopy branch). "
        "Continuing it would release a second continuation of the same private state. "
        "Use the copy that is up to date, or fit again (charged again)."
    )


class LedgerStore:
    """Interface of a ledger store; see the module docstring for the records it keeps.

    Subclasses implement the methods below (``import_ledger``: shared stores only).
    ``url`` is the store's address with any password masked (safe for a repr, a log line
    or an error message), ``portable_url`` the address a pickle carries (no password;
    libpq finds it); ``shared`` says whether other processes can reach the store by that
    address.
    """

    url = ""
    shared = False

    @property
    def portable_url(self) -> str:
        """The address a pickle carries (no secrets); by default :attr:`url`."""
        return getattr(self, "_portable_url", self.url)

    def create_ledger(self, ledger_id: str, epsilon: float,
                      delta: float) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def totals(self, ledger_id: str) -> tuple[float, float]:  # pragma: no cover - interface
        """(ε, δ) totals; :class:`LedgerIntegrityError` if the ledger is not in the store."""
        raise NotImplementedError

    def charges(self, ledger_id: str) -> list[Charge]:  # pragma: no cover - interface
        """Every charge, ordered by ``seq``."""
        raise NotImplementedError

    def spent(self, ledger_id: str) -> tuple[float, float]:  # pragma: no cover - interface
        """(ε, δ) spent: the running totals of the last charge (no chain walk)."""
        raise NotImplementedError

    def verify(self, ledger_id: str) -> str | None:  # pragma: no cover - interface
        """``None`` if the ledger's chain is intact, else a message saying what is wrong."""
        raise NotImplementedError

    def charge(self, ledger_id: str, epsilon: float, delta: float, label: str | None,
               stream: tuple[str, int] | None = None,
               cap: tuple[str, int] | None = None) -> int:
        """Append a charge atomically and return its ``seq``.

        ``stream``, a ``(stream_id, expected_version)`` pair, is advanced by one in the
        same transaction (:class:`StaleStateError` if its version moved on). ``cap``, a
        ``(label_prefix, limit)`` pair, refuses the charge with :class:`CapReachedError`
        if ``limit`` charges whose label starts with ``label_prefix`` are already
        recorded — checked in the same transaction, so concurrent copies cannot pass
        the cap together. Raises :class:`BudgetExhaustedError` or
        :class:`LedgerIntegrityError` with nothing recorded.
        """
        return self.charge_many(ledger_id, [(epsilon, delta, label, cap)], stream)[0]

    def charge_many(self, ledger_id: str,
                    items: Sequence[tuple[float, float, str | None, tuple[str, int] | None]],
                    stream: tuple[str, int] | None = None) -> list[int]:  # pragma: no cover
        """Append several charges ``(epsilon, delta, label, cap)`` in **one** transaction,
        in order, each checked as :meth:`charge` checks one (its cap counting the ones
        before it); return their ``seq``. All or nothing: the first that does not fit
        or whose cap is full raises, and none is recorded. (One request's charges:
        ``skdp.accounting._ledger.charge_batch``.)
        """
        raise NotImplementedError

    def create_stream(self, ledger_id: str, stream_id: str) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def advance_stream(
        self, stream_id: str, expected_version: int, what: str,
    ) -> int:  # pragma: no cover
        """Compare-and-swap ``version`` from ``expected_version`` to one more; return it."""
        raise NotImplementedError

    def import_ledger(self, ledger_id: str, epsilon: float, delta: float, charges: Sequence[Charge],
                      streams: Mapping[str, int]) -> None:  # pragma: no cover
        """Copy a ledger, its charges (verified by the caller; chained again under this
        store's key) and its streams into this store.

        Shared stores only: they are where a ``memory`` ledger moves when pickled."""
        raise NotImplementedError

    def streams(self, ledger_id: str) -> dict[str, int]:  # pragma: no cover - interface
        """``{stream_id: version}`` of the ledger's streams."""
        raise NotImplementedError


def key_error(ledger_id: str, store_url: str, stored_key_id: str, key: LedgerKey) -> LedgerKeyError:
    """The ledger was sealed under another key than ``key``: name both fingerprints."""
    return LedgerKeyError(
        f"privacy ledger {ledger_id[:8]} in {store_url} was sealed with the ledger key "
        f"{stored_key_id!r}, but this process's key (from {key.source}) is {key.key_id!r}. "
        "Every machine that charges a shared ledger needs the same key: set SKDP_LEDGER_KEY "
        "to the same secret on each (see the user guide's privacy model, 'The ledger's "
        "threat model'). Spending is refused; nothing was recorded."
    )
