"""The ``skdp demo`` rows of the private online learners."""

import re

import numpy as np
import pytest

from skdp.accounting import PrivacyBudget
from skdp.exceptions import BudgetExhaustedError
from skdp.online._agnostic_demo import demo_row as agnostic_demo_row
from skdp.online._demo import demo_row, dpsoa_demo_row

_CELLS = {"what", "privacy", "private result", "non-private"}


def test_demo_row_spends_its_epsilon_and_reports_both_learners():
    budget = PrivacyBudget(epsilon=10.0, delta=1e-5)
    row = demo_row(np.random.default_rng(0), budget)
    assert _CELLS <= set(row) <= _CELLS | {"note", "details"}
    assert budget.spent.epsilon == pytest.approx(2.0)
    assert budget.spent.delta == pytest.approx(1e-6)
    soa = int(re.match(r"(\d+) wrong", row["non-private"]).group(1))
    assert soa == 8  # the adaptive adversary forces exactly Ldim = 8 on the SOA
    private, last = map(int, re.match(r"(\d+) wrong answers in 4000 rounds, (\d+) in the last",
                                      row["private result"]).groups())
    assert 0 <= last <= private <= 4000
    # same generator state, same row
    assert demo_row(np.random.default_rng(0), PrivacyBudget(epsilon=10.0, delta=1e-5)) == row


def test_demo_row_refuses_before_spending_when_the_budget_is_short():
    budget = PrivacyBudget(epsilon=1.0, delta=1e-5)
    with pytest.raises(BudgetExhaustedError):
        demo_row(np.random.default_rng(1), budget)
    assert budget.spent.epsilon == 0.0 and budget.spent.delta == 0.0


def test_dpsoa_demo_row_spends_its_epsilon_and_learns_the_point():
    budget = PrivacyBudget(epsilon=10.0, delta=1e-5)
    row = dpsoa_demo_row(np.random.default_rng(0), budget)
    assert _CELLS <= set(row) <= _CELLS | {"note", "details"}
    assert budget.spent.epsilon == pytest.approx(4.0)
    assert budget.spent.delta == pytest.approx(1e-6)
    assert row["non-private"].startswith("1 wrong ")  # Ldim of a point function
    private, last = map(int, re.match(r"(\d+) wrong answers in \d+ rounds, (\d+) in the last",
                                      row["private result"]).groups())
    assert 0 <= last <= private <= 40_000


def test_agnostic_demo_row_charges_each_private_learner():
    budget = PrivacyBudget(epsilon=10.0, delta=1e-5)
    row = agnostic_demo_row(np.random.default_rng(0), budget)
    assert _CELLS <= set(row) <= _CELLS | {"note", "details"}
    assert budget.spent.epsilon == pytest.approx(2.0)
    experts, batch = map(int, re.match(r"(-?\d+) \(private experts\) and (-?\d+) \(batched\)",
                                       row["private result"]).groups())
    assert max(experts, batch) <= 20_000
