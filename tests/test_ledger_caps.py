"""Count caps checked in the same transaction as the charge (issue 26, item 2).

A plan's caps (hard queries, instances, releases, switches) used to be checked by
counting ledger labels and then recorded in a separate transaction, so concurrent
copies could all pass the check before any recorded its step. ``cap=`` makes the count
and the append one transaction; these tests race real processes on each store.
"""

from __future__ import annotations

import multiprocessing as mp

import pytest
from _postgres import PG_PASSWORD

from skdp import CapReachedError, PrivacyBudget

_PREFIX = "hard query"


def _race(budget: PrivacyBudget, barrier, n_tries: int, out) -> None:
    barrier.wait()
    won = 0
    for _ in range(n_tries):
        try:
            budget._charge(0.0, 0.0, f"{_PREFIX} x", cap=(_PREFIX, 3))
            won += 1
        except CapReachedError:
            pass
    out.put(won)


def _race_processes(budget: PrivacyBudget, n_procs: int = 6, n_tries: int = 4) -> int:
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(n_procs), ctx.Queue()
    procs = [ctx.Process(target=_race, args=(budget, barrier, n_tries, out))
             for _ in range(n_procs)]
    for p in procs:
        p.start()
    won = sum(out.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(timeout=60)
    return won


def test_cap_refuses_the_charge_after_the_limit_and_records_nothing():
    budget = PrivacyBudget(1.0)
    for i in range(3):
        budget._charge(0.0, 0.0, f"{_PREFIX} {i}", cap=(_PREFIX, 3))
    budget._charge(0.0, 0.0, "other step", cap=("other", 3))
    with pytest.raises(CapReachedError, match="cap of 3"):
        budget._charge(0.1, 0.0, f"{_PREFIX} 3", cap=(_PREFIX, 3))
    budget._charge(1.0, 0.0, "spends the rest")
    with pytest.raises(CapReachedError):  # the cap is named even when the cost would not fit
        budget._charge(0.1, 0.0, f"{_PREFIX} 3", cap=(_PREFIX, 3))
    assert len(budget.charges) == 5 and budget.spent.epsilon == 1.0
    assert budget.verify()


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
def test_six_processes_never_pass_a_cap_together(store, tmp_path, request, monkeypatch):
    url = f"sqlite:///{tmp_path / 'caps.db'}"
    if store == "postgresql":
        url = request.getfixturevalue("postgresql_db_url")
        monkeypatch.setenv("PGPASSWORD", PG_PASSWORD)  # what the workers' libpq reads
    budget = PrivacyBudget(1.0, store=url)
    assert _race_processes(budget) == 3
    assert sum(label.startswith(_PREFIX) for *_, label in budget.charges) == 3
    assert budget.verify()
