"""Count caps checked in the same transaction as the charge (issue 26, item 2).

A plan's caps (hard queries, instances, releases, switches) used to be checked by
counting ledger labels and then recorded in a separate transaction, so concurrent
copies could all pass the check before any recorded its step. ``cap=`` makes the count
and the append one transaction; these tests race real processes on each store.
"""

from __future__ import annotations

import _spawned
import pytest
from _spawned import N_PROCS

from skdp import CapReachedError, PrivacyBudget

_PREFIX = "hard query"


def _race(budget: PrivacyBudget, n_tries: int, index: int) -> int:
    """Charge a capped step ``n_tries`` times in a racer; how many were accepted."""
    _spawned.start()
    won = 0
    for _ in range(n_tries):
        try:
            budget._charge(0.0, 0.0, f"{_PREFIX} x", cap=(_PREFIX, 3))
            won += 1
        except CapReachedError:
            pass
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
def test_six_processes_never_pass_a_cap_together(store, tmp_path, request, racers):
    url = f"sqlite:///{tmp_path / 'caps.db'}"
    if store == "postgresql":
        url = request.getfixturevalue("postgresql_db_url")
    budget = PrivacyBudget(1.0, store=url)
    assert N_PROCS == 6
    assert sum(racers.race(_race, budget, 4)) == 3
    assert sum(label.startswith(_PREFIX) for *_, label in budget.charges) == 3
    assert budget.verify()
