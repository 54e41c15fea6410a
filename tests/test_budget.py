"""PrivacyBudget: atomic spending and the shared-ledger semantics of copies."""

import copy
import pickle
import subprocess
import sys
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.base import BaseEstimator, clone

from skdp import BudgetExhaustedError, PrivacyBudget, PrivacyParameterError


def test_spend_and_remaining():
    budget = PrivacyBudget(1.0, 1e-6)
    budget.spend(0.3, 1e-7, label="a")
    assert budget.spent == pytest.approx((0.3, 1e-7))
    assert budget.remaining == pytest.approx((0.7, 9e-7))
    assert budget.charges == ((0.3, 1e-7, "a"),)


def test_ten_tenths_fit_exactly():
    budget = PrivacyBudget(1.0)
    for _ in range(10):
        budget.spend(0.1)
    assert budget.remaining.epsilon == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(BudgetExhaustedError):
        budget.spend(1e-9)


def test_failed_spend_changes_nothing():
    budget = PrivacyBudget(1.0, 1e-6)
    budget.spend(0.9)
    before = (budget.spent, budget.charges)
    with pytest.raises(BudgetExhaustedError, match="Nothing was spent"):
        budget.spend(0.2)
    with pytest.raises(BudgetExhaustedError):
        budget.spend(0.05, 2e-6)  # ε fits, δ does not: all or nothing
    assert (budget.spent, budget.charges) == before


@pytest.mark.parametrize(
    "epsilon, delta",
    [(0.0, 0.0), (-1.0, 0.0), (float("inf"), 0.0), (float("nan"), 0.0), (1.0, 1.0),
     (1.0, -0.1), (1.0, float("nan")), ("1", 0.0), (True, 0.0)],
)
def test_invalid_totals(epsilon, delta):
    with pytest.raises(PrivacyParameterError):
        PrivacyBudget(epsilon, delta)


def test_invalid_charges_change_nothing():
    budget = PrivacyBudget(1.0)
    for eps, delta in [(-0.1, 0.0), (float("nan"), 0.0), (0.1, 1.5)]:
        with pytest.raises(PrivacyParameterError):
            budget.spend(eps, delta)
    assert budget.charges == ()


@given(st.lists(st.floats(min_value=0.0, max_value=0.5), max_size=40))
def test_spent_never_exceeds_total(charges):
    budget = PrivacyBudget(2.0)
    for eps in charges:
        fits = budget.can_spend(eps)
        try:
            budget.spend(eps)
            assert fits
        except BudgetExhaustedError:
            assert not fits
        assert budget.spent.epsilon <= 2.0 * (1 + 1e-12)


def test_repr_is_readable():
    budget = PrivacyBudget(1.0, 1e-6)
    budget.spend(0.25)
    assert repr(budget) == "PrivacyBudget(epsilon=1, delta=1e-06; spent ε=0.25, δ=0; 1 charges)"


@pytest.mark.parametrize("duplicate", [copy.copy, copy.deepcopy, lambda b: clone(b, safe=False)])
def test_copies_share_one_ledger(duplicate):
    budget = PrivacyBudget(1.0)
    budget.spend(0.6)
    twin = duplicate(budget)
    assert twin.shares_ledger_with(budget) and twin.spent.epsilon == pytest.approx(0.6)
    twin.spend(0.4)
    assert budget.remaining.epsilon == pytest.approx(0.0)
    with pytest.raises(BudgetExhaustedError):
        budget.spend(0.01)


class _UsesBudget(BaseEstimator):
    def __init__(self, budget=None):
        self.budget = budget


def test_clone_of_an_estimator_keeps_the_spent_budget():
    # diffprivlib's accountant reports 0 spent after clone; ours cannot.
    est = _UsesBudget(budget=PrivacyBudget(1.0))
    est.budget.spend(0.7)
    cloned = clone(est)
    assert cloned.budget.spent.epsilon == pytest.approx(0.7)
    cloned.budget.spend(0.3)
    assert est.budget.remaining.epsilon == pytest.approx(0.0)
    nested = copy.deepcopy({"a": est, "b": cloned})
    assert nested["a"].budget.shares_ledger_with(nested["b"].budget)


def test_pickle_in_process_reattaches():
    budget = PrivacyBudget(1.0)
    budget.spend(0.5)
    restored = pickle.loads(pickle.dumps(budget))
    assert restored.shares_ledger_with(budget)
    restored.spend(0.5)
    assert not budget.can_spend(0.01)


_CHILD = """
import pickle, sys
budget = pickle.loads(sys.stdin.buffer.read())
spent_on_arrival = budget.spent.epsilon
budget.spend(0.25, label="in worker")
sys.stdout.buffer.write(pickle.dumps((spent_on_arrival, budget)))
"""


def test_pickle_in_fresh_process_charges_the_same_ledger():
    budget = PrivacyBudget(1.0)
    budget.spend(0.5, label="parent")
    done = subprocess.run(
        [sys.executable, "-c", _CHILD], input=pickle.dumps(budget), capture_output=True, check=True
    )
    spent_on_arrival, returned = pickle.loads(done.stdout)
    assert spent_on_arrival == pytest.approx(0.5)  # a fresh process never starts at zero
    # The worker charged the one shared ledger: the parent sees it at once.
    assert returned.shares_ledger_with(budget)
    assert budget.spent.epsilon == pytest.approx(0.75)
    assert [label for *_, label in budget.charges] == ["parent", "in worker"]
    # Loading the worker's pickle again replays nothing.
    pickle.loads(done.stdout)
    assert budget.spent.epsilon == pytest.approx(0.75)


def test_spending_across_processes_cannot_overspend():
    budget = PrivacyBudget(1.0)
    snapshot = pickle.dumps(budget)
    budget.spend(0.5)  # the parent spends after pickling: the worker must see it
    worker = subprocess.run(
        [sys.executable, "-c", _CHILD.replace("0.25", "0.75")], input=snapshot,
        capture_output=True,
    )
    assert worker.returncode != 0 and b"BudgetExhaustedError" in worker.stderr
    assert budget.spent.epsilon == pytest.approx(0.5)


def test_concurrent_spending_never_exceeds_total():
    budget = PrivacyBudget(1.0)
    successes = []

    def worker():
        for _ in range(200):
            try:
                budget.spend(0.001)
                successes.append(1)
            except BudgetExhaustedError:
                pass

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(successes) == 1000
    assert budget.spent.epsilon <= 1.0 + 1e-12


def test_a_refusal_for_delta_alone_says_so():
    # PrivacyBudget(ε) has δ = 0; an estimator's default δ = 1e-6 is what does not fit.
    budget = PrivacyBudget(1.0)
    with pytest.raises(BudgetExhaustedError, match="The ε fits; the δ does not"):
        budget.spend(0.5, 1e-6)
    with pytest.raises(BudgetExhaustedError) as refused:
        budget.spend(2.0)
    assert "δ does not" not in str(refused.value)
    assert budget.spent == (0.0, 0.0)


def test_a_refusal_for_epsilon_names_what_fits_and_the_fix():
    budget = PrivacyBudget(1.0, 1e-5)
    budget.spend(0.75)
    with pytest.raises(BudgetExhaustedError, match=r"ε does not fit: run with epsilon ≤ 0\.25"
                       r".*new PrivacyBudget"):
        budget.spend(0.5, 1e-6)
    assert budget.spent == (0.75, 0.0)
