"""One request's charges in one transaction: ``charge_batch`` and the stores' ``charge_many``.

All or nothing per ledger; a held charge is refused at the same step as an immediate
one (caps and costs counting the batch's earlier charges); reads inside the batch see
the held charges; a refused commit (a writer outside the batch took the capped slot)
records nothing of the batch.
"""

from __future__ import annotations

import pytest
from _postgres import PG_PASSWORD

from skdp import BudgetExhaustedError, PrivacyBudget
from skdp.accounting._ledger import charge_batch
from skdp.exceptions import CapReachedError


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def store(request, tmp_path, monkeypatch):
    if request.param == "memory":
        return "memory"
    if request.param == "sqlite":
        return "sqlite:///" + str(tmp_path / "ledger.db")
    monkeypatch.setenv("PGPASSWORD", PG_PASSWORD)
    return request.getfixturevalue("postgresql_db_url")


def test_charge_many_is_all_or_nothing(store):
    budget = PrivacyBudget(1.0, 1e-6, store=store)
    ledger = budget._ledger
    budget._charge(0.1, 0.0, "hard query 1")
    items = [(0.1, 0.0, "hard query 2", ("hard query", 3)),
             (0.1, 0.0, "hard query 3", ("hard query", 3)),
             (0.1, 0.0, "hard query 4", ("hard query", 3))]  # the 4th passes the cap
    with pytest.raises(CapReachedError):
        ledger.run("charge_many", items)
    assert len(budget.charges) == 1
    with pytest.raises(BudgetExhaustedError):
        ledger.run("charge_many", [(0.5, 0.0, "a", None), (0.5, 0.0, "b", None)])
    assert len(budget.charges) == 1
    assert ledger.run("charge_many", items[:2]) == [1, 2]
    assert [label for _, _, label in budget.charges][1:] == ["hard query 2", "hard query 3"]
    assert budget.verify()


def test_batch_holds_charges_and_refuses_at_the_same_step(store):
    budget = PrivacyBudget(1.0, 1e-6, store=store)
    with charge_batch():
        budget._charge(0.25, 0.0, "instance 1", cap=("instance", 2))
        budget._charge(0.25, 0.0, "instance 2", cap=("instance", 2))
        with pytest.raises(CapReachedError):
            budget._charge(0.0, 0.0, "instance 3", cap=("instance", 2))
        assert budget.spent.epsilon == 0.5 and len(budget.charges) == 2  # held, seen
        assert not budget.can_spend(0.75)
        # Nothing committed yet: another handle outside this thread's batch sees none.
        assert len(budget._ledger.store.charges(budget.ledger_id)) == 0
    assert [label for _, _, label in budget.charges] == ["instance 1", "instance 2"]
    assert budget.verify()
    # Any other exception discards the held charges; commit_on commits them.
    with pytest.raises(KeyError), charge_batch():
        budget._charge(0.25, 0.0, "lost")
        raise KeyError
    assert len(budget.charges) == 2
    with pytest.raises(BudgetExhaustedError), charge_batch(commit_on=(BudgetExhaustedError,)):
        budget._charge(0.25, 0.0, "kept")
        budget._charge(0.5, 0.0, "too much")
    assert [label for _, _, label in budget.charges][-1] == "kept"


def test_a_refused_commit_records_nothing_of_the_batch(store):
    """A writer outside the batch takes the capped slot between the batch's check and its
    commit: the commit is refused whole, and the caller (a durable run) releases
    nothing."""
    budget = PrivacyBudget(1.0, 1e-6, store=store)
    with pytest.raises(CapReachedError), charge_batch():
        budget._charge(0.1, 0.0, "queries 1-5")
        budget._charge(0.1, 0.0, "hard query 1", cap=("hard query", 1))
        budget._ledger.store.charge(budget.ledger_id, 0.0, 0.0, "hard query (a copy)",
                                    cap=("hard query", 1))
    assert [label for _, _, label in budget.charges] == ["hard query (a copy)"]
    assert budget.verify()
