"""Six spawned processes that race on a ledger at one moment (the ``racers`` fixture).

The race tests (tests/test_ledger_caps.py, tests/test_ledger_stores.py,
tests/test_concurrent_caps.py) need several processes doing the same thing at once on
one store. Spawning a process and importing skdp in it costs ~3 CPU s, more than most
races, so one pool serves the whole session (per xdist worker): conftest's ``racers``
fixture starts it once, with ``PGPASSWORD`` set in the workers' environment only (what
their libpq reads for the PostgreSQL ledgers), and shuts it down at the end.

A task run by :meth:`Racers.race` is a module-level function (spawned workers import
it by name) that calls :func:`start` just before the racing part. A worker waiting at
the barrier never takes a second task, so each of the six tasks runs in its own
process.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import threading
import warnings
from concurrent.futures import ProcessPoolExecutor

N_PROCS = 6
_BARRIER: threading.Barrier | None = None


def _init_worker(barrier) -> None:
    global _BARRIER
    _BARRIER = barrier
    warnings.simplefilter("ignore")


def start() -> None:
    """Wait until all six racers are here (inside a task)."""
    _BARRIER.wait(timeout=120)


def _pid(index: int) -> int:
    start()
    return os.getpid()


class Racers:
    """A pool of :data:`N_PROCS` spawned processes sharing one barrier."""

    def __init__(self, env: dict[str, str]) -> None:
        ctx = mp.get_context("spawn")
        self._barrier = ctx.Barrier(N_PROCS)
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            self._pool = ProcessPoolExecutor(N_PROCS, mp_context=ctx,
                                             initializer=_init_worker,
                                             initargs=(self._barrier,))
            # Spawned processes start on demand: start all six now, while ``env`` is set.
            pids = self.race(_pid)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        assert len(set(pids)) == N_PROCS, pids

    def race(self, task, *args) -> list:
        """Run ``task(*args, worker_index)`` in every worker at once; their results."""
        futures = [self._pool.submit(task, *args, i) for i in range(N_PROCS)]
        try:
            return [f.result(timeout=300) for f in futures]
        except BaseException:
            self._barrier.abort()  # release the others; the next race gets a fresh barrier
            for f in futures:
                with contextlib.suppress(Exception):
                    f.result(timeout=300)
            self._barrier.reset()
            raise

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
