"""A private predictor's running mechanism: one state object, optionally durable in a store.

Every query-budgeted predictor holds its running mechanism in **one** object,
:class:`PredictorState`, as its private attribute ``_state`` (composition: the
estimator owns it; the estimator's parameters and fitted attributes stay public
configuration). What it holds depends on the predictor:

* ``rng`` — the generator of the mechanism's coins (⊤ labels, partitions);
* ``teachers`` — the teachers trained on disjoint blocks of the private rows, with
  their updates on hard queries (``forced_X``, ``forced_y``: the hard queries and
  their released labels); ``teachers.vote(q)`` is an *exact* vote of the private
  data;
* ``mechanism`` — the live BetweenThresholds instance (its noisy thresholds and
  progress), or PERP's running phase;
* ``answers`` — the memory of released answers (scores by row hash), ``scores`` the
  running prior of subsample-and-aggregate's released counts;
* ``fallback``, ``pending``, ``k_target``, ``block_size``, ``hypotheses`` — Yan's
  small-sample fallback and what ``partial_fit`` needs;
* ``quotas`` — where ``skdp serve`` runs it: rows answered per bearer token (keyed
  by the token's SHA-256 digest), saved with the state so every replica counts them.

**This is private state.** Exact votes and the mechanism's noise live here: publish
answers, never this object, a pickle of the fitted predictor, or its saved copy.

Copies (deepcopy, pickle) of an ordinary state draw a fresh generator and drop the
live instance, so no two copies answer with the same noise (``skdp.prediction._base``).

Durable state
-------------
:meth:`~skdp.prediction.PrivatePredictor.make_durable` keeps the state in the store
of the predictor's ledger ``budget_`` (SQLite, or PostgreSQL for replicas on several
machines) as a *state record* (:mod:`skdp.accounting.stores._states`): encrypted and
sealed under the ledger key, versioned, every save a compare-and-swap. From then on
every answering call of the predictor, of its pickles and deep copies, in any process
that reaches the store:

1. takes the record's lock (a process lock, plus a file lock next to an SQLite store
   or a PostgreSQL advisory lock), so replicas answer one call at a time;
2. reloads the state if the stored version is not the one it holds (another replica
   or a restarted process moved on);
3. answers, charging the ledger as always, but with the call's charges held back and
   committed together, one transaction per ledger, when it has answered
   (:func:`~skdp.accounting._ledger.charge_batch`; a commit refused because a copy
   outside the lock took a capped slot meanwhile releases nothing of the call);
4. saves the new state by compare-and-swap from the version it loaded, and only then
   lets the answers leave the call. A save that finds the record moved on
   (:class:`~skdp.exceptions.StaleStateError`) drops this run's answers unreleased and
   answers again from the newer state.

So a restart or a second replica continues the *same* mechanism: the same instance
and its noisy thresholds, the same hard queries and teachers, the same answer memory
(a row answered before is answered the same after), the plan paid once. A process
killed between a charge and the save released nothing of that call; its charges stay
in the ledger (an over-count, never an answer without its charge), and if one of them
came from the live instance (a hard query, an instance start) that instance is not
continued (:meth:`_DurableLink.sync`) — unless, as for PERP, the state says its steps do
not depend on that noise (``steps_reveal_mechanism``; ``_perp_base._PERPState``). A stale
copy can never save over a newer state. The generators are not carried over (an
:class:`~skdp._streams.EphemeralGenerator` pickles as a fresh one): a continued
mechanism draws its future coins afresh, which is as private as the original's and
keeps nothing in the store that could step a generator back. The training rows are
not stored again: the saved state refers to the model's rows by their token, so the
model file and the state record together are the predictor.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import pickle
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from ..accounting._ledger import charge_batch
from ..accounting.stores._states import load_state, open_state, save_state, state_version
from ..exceptions import StaleStateError
from ._teachers import _Blocks, _FittedModels

__all__ = ["PredictorState", "answer_on_state"]

# Attempts of one answering call when another replica saves in between (with the
# record's lock held by every replica this does not happen; the loop is the safety net).
_ATTEMPTS = 5


class PredictorState:
    """The running mechanism of one fitted private predictor (see the module docstring).

    Private state: it holds exact teacher votes and the live mechanism's noise.
    ``_durable`` is ``None``, or the link to its state record when the predictor was
    made durable; ``_version`` is the record's version this object holds (``None``:
    reload before use).
    """

    #: Whether a ledger step a run commits (a hard query, an instance start) depends on
    #: the live mechanism's noise, so that a run lost after such a step taints the live
    #: mechanism (:meth:`_DurableLink.sync`). PERP's state says no (``_perp_base``).
    steps_reveal_mechanism = True

    def __init__(self, rng: Any) -> None:
        self.rng = rng
        self.mechanism = None
        self._durable: _DurableLink | None = None
        self._version: int | None = None

    # ------------------------------------------------------------------ copies
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["rng"] = None
        state["mechanism"] = None
        state["_version"] = None  # a durable copy reloads the record before answering
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        from .._streams import release_generator

        state.setdefault("_durable", None)
        state.setdefault("_version", None)
        self.__dict__.update(state)
        self.rng = release_generator()
        self.mechanism = None

    # ------------------------------------------------------------------ durable
    def _stored_once(self) -> dict[Any, Any]:
        """What this state's saves refer to instead of storing it: the training rows
        (``("blocks", token)``) and the teachers as ``fit`` made them (``("models",
        token)`` for the list, ``("model", token, i)`` for each), all held by the model
        file. A save then writes only the teachers a hard query refitted."""
        found: dict[Any, Any] = {}
        for holder in (getattr(self, "teachers", None), getattr(self, "fallback", None)):
            data = getattr(holder, "data", None)
            if isinstance(data, _Blocks):
                found["blocks", data.token] = data
            base = getattr(holder, "base", None)
            if isinstance(base, _FittedModels):
                found["models", base.token] = base
                for i, model in enumerate(base.models):
                    found["model", base.token, i] = model
        return found

    def _payload(self) -> bytes:
        """The bytes saved in the state record: everything but the training rows and the
        fitted teachers (referred to by token: :meth:`_stored_once`) and the link itself.
        Private: exact votes are in it."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("_durable", "_version")}
        refs = {id(obj): key for key, obj in self._stored_once().items()}
        buffer = io.BytesIO()
        pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
        # Every referred object is alive (held by this state) while dumping, so its id
        # names it alone.
        pickler.persistent_id = lambda obj: refs.get(id(obj))  # type: ignore[method-assign]
        pickler.dump(state)
        return buffer.getvalue()

    def _restore(self, payload: bytes, version: int) -> None:
        """Replace this state by the saved one (the link stays)."""
        held = self._stored_once()

        def persistent_load(pid: Any) -> Any:
            key = tuple(pid)
            if key not in held:
                raise ValueError(
                    "the saved running mechanism refers to training rows or teachers this "
                    "fitted predictor does not hold (it was continued after more "
                    "partial_fit rows than this copy has); load the model that made it "
                    "durable.")
            return held[key]

        unpickler = pickle.Unpickler(io.BytesIO(payload))
        unpickler.persistent_load = persistent_load  # type: ignore[method-assign]
        restored = unpickler.load()
        link = self._durable
        self.__dict__.clear()
        self.__dict__.update(restored)
        self._durable = link
        self._version = version


def _lock_key(stream_id: str) -> int:
    return int.from_bytes(hashlib.sha256(stream_id.encode()).digest()[:8], "big",
                          signed=True)


class _DurableLink:
    """Where a durable state's record lives: the ledger handle (its store) and the
    record's id. One per record and process (copies share its lock)."""

    def __init__(self, ledger: Any, stream_id: str, what: str) -> None:
        self.ledger = ledger
        self.stream_id = stream_id
        self.what = what
        self._lock = threading.RLock()
        self._pg = threading.local()

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (_attach_link, (self.ledger, self.stream_id, self.what))

    def __copy__(self) -> _DurableLink:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> _DurableLink:
        return self

    @property
    def store(self) -> Any:
        return self.ledger.store

    # ------------------------------------------------------------------ locks
    @contextlib.contextmanager
    def _store_lock(self) -> Iterator[None]:
        """Hold the record's lock across processes (and, by the RLock, threads)."""
        from ..accounting.stores.postgresql import PostgreSQLStore
        from ..accounting.stores.sqlite import SQLiteStore

        store = self.store
        with self._lock:
            if isinstance(store, SQLiteStore):
                import fcntl

                tag = hashlib.sha256(self.stream_id.encode()).hexdigest()[:16]
                path = f"{store.path}.{tag}.lock"
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                    yield
                finally:
                    os.close(fd)  # releases the lock
            elif isinstance(store, PostgreSQLStore):
                # A session-level advisory lock on a connection of its own: the ledger's
                # transactions run on the store's connection meanwhile.
                conn = getattr(self._pg, "conn", None)
                if conn is None or getattr(self._pg, "pid", None) != os.getpid():
                    conn = self._pg.conn = store._connect()
                    self._pg.pid = os.getpid()
                key = _lock_key(self.stream_id)
                conn.execute("SELECT pg_advisory_lock(%s)", (key,))
                try:
                    yield
                finally:
                    conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
            else:  # pragma: no cover - durable states live in shared stores only
                yield

    # ------------------------------------------------------------------ record
    def open(self, state: PredictorState) -> None:
        """Create the record from ``state``, or load the record into ``state``."""
        with self._store_lock():
            version, payload = open_state(self.store, self.ledger.id, self.stream_id,
                                          self.what, state._payload)
            state._durable = self
            if payload is None:
                state._version = version
            else:
                state._restore(payload, version)

    def _ledger_steps(self) -> int:
        return len(self.ledger.run("charges"))

    def sync(self, state: PredictorState) -> None:
        """Reload ``state`` unless it holds the stored version (lock held).

        A reloaded live instance is *tainted* if the ledger holds steps that no saved
        state accounts for: some run on it committed a step (a hard query, an
        instance) and then neither saved nor released — a process killed between the
        two. That step, now in the ledger and its counts, depends on the instance's
        noisy thresholds, so continuing the instance would reveal a second run of
        them; the instance is dropped and the next query starts a new one (capped and
        recorded like any other; a single-instance calibration is then refused).
        """
        if state._version is not None and state._version == state_version(
                self.store, self.stream_id):
            return
        version, payload = load_state(self.store, self.stream_id, self.what)
        state._restore(payload, version)
        if state.mechanism is not None and state.steps_reveal_mechanism and (
                self._ledger_steps() > getattr(state, "ledger_steps", 0)):
            state.mechanism = None

    def run(self, state_of: Callable[[], PredictorState], answer: Callable[[], Any]) -> Any:
        """One answering call on the durable state (steps 1–4 of the module docstring).

        ``state_of()`` returns the predictor's current state object; ``answer()``
        answers from it. Its result (or its :class:`QueryBudgetExhaustedError`, whose
        answers were released too) leaves only once the new state is saved.
        """
        from ._base import QueryBudgetExhaustedError

        with self._store_lock():
            for _ in range(_ATTEMPTS):
                state = state_of()
                self.sync(state)
                try:
                    # The call's charges commit together, before the save below; a
                    # budget running out mid-call commits what its released answers used.
                    with charge_batch(commit_on=(QueryBudgetExhaustedError,)):
                        result = answer()
                except QueryBudgetExhaustedError:
                    if self._save(state):
                        raise
                    continue
                except BaseException:
                    state._version = None  # drop this run's changes: reload next time
                    raise
                if self._save(state):
                    return result
            raise StaleStateError(
                f"{self.what} could not save its state: other replicas kept moving it on "
                f"({_ATTEMPTS} attempts). Nothing of this call was released.")

    def read(self, state_of: Callable[[], PredictorState], read: Callable[[], Any]) -> Any:
        """``read()`` on the newest saved state (lock held; nothing saved)."""
        with self._store_lock():
            self.sync(state_of())
            return read()

    def _save(self, state: PredictorState) -> bool:
        """Save by compare-and-swap; False (state marked for reload) if it moved on."""
        assert state._version is not None
        if state.mechanism is not None and state.steps_reveal_mechanism:
            # What the ledger holds as this state is saved: a later reload that finds
            # more steps knows a run after it committed without saving (see sync).
            state.ledger_steps = self._ledger_steps()
        try:
            state._version = save_state(self.store, self.stream_id, state._version,
                                        state._payload(), self.what)
        except StaleStateError:
            state._version = None
            return False
        return True


def answer_on_state(state_of: Callable[[], PredictorState], answer: Callable[[], Any],
                    gate: Callable[[Any, int], Any] | None = None, n_rows: int = 0) -> Any:
    """``answer()`` on the predictor's state ``state_of()`` — through its durable link
    (:meth:`_DurableLink.run`: lock, reload, save by compare-and-swap) if it has one.

    ``gate(state, n_rows)``, if given, runs first on the current (for a durable
    predictor: freshly loaded) state; it may raise to refuse the call, or return a
    callable run once the answers are released into the state, before it is saved
    (``skdp serve`` keeps its per-token quotas this way).
    """
    def run() -> Any:
        commit = None if gate is None else gate(state_of(), n_rows)
        result = answer()
        if commit is not None:
            commit()
        return result

    link = state_of()._durable
    return run() if link is None else link.run(state_of, run)


_LINKS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _attach_link(ledger: Any, stream_id: str, what: str) -> _DurableLink:
    link = _LINKS.get((ledger.id, stream_id))
    if link is None:
        link = _LINKS[(ledger.id, stream_id)] = _DurableLink(ledger, stream_id, what)
    return link


def make_durable(estimator: Any) -> None:
    """Make ``estimator``'s state durable in the store of its ``budget_`` (promoting a
    ``memory`` ledger to this machine's shared SQLite file first)."""
    state = estimator._state
    if state._durable is not None:
        return
    ledger = estimator.budget_._ledger
    ledger.promote()
    link = _attach_link(ledger, f"{ledger.id}/running-mechanism",
                        f"the running mechanism of a fitted {type(estimator).__name__}")
    link.open(state)
