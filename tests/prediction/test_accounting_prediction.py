"""Private prediction's accounting: "tight" composes within (ε, δ) and beats "paper";
"paper" reproduces the earlier closed-form numbers; PERP has nothing left to gain."""

import math

import numpy as np
import pytest

from skdp.accounting import ApproxDP, DiscreteLaplace, account, calibrate, compose
from skdp.hypotheses import Thresholds
from skdp.prediction import (
    PrivatePredictor,
    SubsampleAggregatePredictor,
    perp_parameters,
    shrinkage_parameters,
)
from skdp.prediction.subsample_aggregate import _per_query_epsilon

DELTA = 1e-6

# The closed-form numbers before the accountant (shrinkage_parameters(ε, 1e-6, cap)).
YAN_PAPER = {
    (0.5, 8): (0.06251250960234245, 6.25e-08, 17402),
    (1.0, 8): (0.12500985724317104, 6.25e-08, 8436),
    (1.0, 16): (0.0637522914649793, 3.125e-08, 17571),
    (4.0, 16): (0.2503140672451707, 3.125e-08, 4213),
}
SUBSAMPLE_PAPER = {
    (0.5, 1000): 0.003929015339176204,
    (1.0, 100): 0.024011080395907946,
    (1.0, 1000): 0.007495100133452802,
    (4.0, 10000): 0.008380022912504271,
}


@pytest.mark.parametrize(("eps", "cap"), sorted(YAN_PAPER))
def test_yan_paper_reproduces_the_closed_form(eps, cap):
    p = shrinkage_parameters(eps, DELTA, cap, accounting="paper")
    eps_bt, delta_bt, k = YAN_PAPER[eps, cap]
    assert p["epsilon_bt"] == pytest.approx(eps_bt, rel=1e-12)
    assert p["delta_bt"] == delta_bt
    assert p["min_teachers"] == k


@pytest.mark.parametrize(("eps", "cap"), [*sorted(YAN_PAPER), (1.0, 64), (2.0, 1)])
def test_yan_tight_composes_within_budget_and_needs_fewer_teachers(eps, cap):
    tight = shrinkage_parameters(eps, DELTA, cap)
    paper = shrinkage_parameters(eps, DELTA, cap, accounting="paper")
    event = ApproxDP(tight["epsilon_bt"], tight["delta_bt"])
    by_accountant = account([(event, cap)]).epsilon(DELTA)
    exact = compose(tight["epsilon_bt"], tight["delta_bt"], cap, DELTA, method="optimal")
    # The ledger's bound is the smaller of two valid upper bounds; the accountant's
    # own bound is within its discretisation of the budget.
    assert min(by_accountant, exact.epsilon) <= eps * (1 + 1e-12)
    assert by_accountant <= eps * (1 + 1e-4)
    assert cap * tight["delta_bt"] < DELTA
    assert tight["epsilon_bt"] < 1.0
    assert tight["min_teachers"] <= paper["min_teachers"]
    cum = tight["cumulative_epsilon"]
    assert np.all(np.diff(cum) >= 0) and cum[-1] <= eps
    for i in (1, cap):
        assert cum[i - 1] <= account([(event, i)]).epsilon(DELTA) + 1e-12


def test_yan_teacher_count_at_epsilon_one():
    # The headline number: fewer teachers at the same (ε, δ, cap).
    assert shrinkage_parameters(1.0, DELTA, 8)["min_teachers"] < 8436
    assert shrinkage_parameters(1.0, DELTA, 16)["min_teachers"] < 17571


def test_private_predictor_runs_the_chosen_accounting():
    eps, delta, cap = 2.0, 1e-3, 6
    rng = np.random.default_rng(0)
    for accounting in ("paper", "tight"):
        p = shrinkage_parameters(eps, delta, cap, accounting=accounting)
        X = rng.random((p["min_teachers"], 1))
        y = (X[:, 0] > 0.5).astype(int)
        clf = PrivatePredictor(Thresholds(), epsilon=eps, delta=delta, max_hard_queries=cap,
                               accounting=accounting, calibration="bsu",
                               thresholds=(0.375, 0.625), classes=[0, 1],
                               random_state=0).fit(X, y)
        assert clf.n_teachers_ == p["min_teachers"] == clf.min_teachers_
        assert (clf.epsilon_bt_, clf.delta_bt_) == (p["epsilon_bt"], p["delta_bt"])
        np.testing.assert_array_equal(clf._plan["cumulative_epsilon"], p["cumulative_epsilon"])


@pytest.mark.parametrize(("eps", "n_queries"), sorted(SUBSAMPLE_PAPER))
def test_subsample_paper_reproduces_and_tight_is_no_worse(eps, n_queries):
    paper = _per_query_epsilon(eps, DELTA, n_queries, "paper")
    assert paper == pytest.approx(SUBSAMPLE_PAPER[eps, n_queries], rel=1e-12)
    tight = _per_query_epsilon(eps, DELTA, n_queries, "tight")
    assert tight >= paper
    by_accountant = account([(DiscreteLaplace(tight), n_queries)]).epsilon(DELTA)
    exact = compose(tight, 0.0, n_queries, DELTA, method="optimal").epsilon
    assert min(by_accountant, exact) <= eps * (1 + 1e-12)
    assert by_accountant <= eps * (1 + 1e-4)


@pytest.mark.parametrize("accounting", ["paper", "tight"])
def test_subsample_ledger_follows_the_accounting(accounting):
    rng = np.random.default_rng(1)
    X = rng.random((3000, 1))
    y = (X[:, 0] >= 0.4).astype(int)
    clf = SubsampleAggregatePredictor(Thresholds(), epsilon=1.0, delta=DELTA, n_queries=50,
                                      accounting=accounting, classes=[0, 1],
                                      random_state=0).fit(X, y)
    assert clf.epsilon_query_ == _per_query_epsilon(1.0, DELTA, 50, accounting)
    clf.predict(X[:20])
    by_closed_form = compose(clf.epsilon_query_, 0.0, 20, DELTA, method="optimal").epsilon
    if accounting == "tight":
        expected = min(account([(DiscreteLaplace(clf.epsilon_query_), 20)]).epsilon(DELTA),
                       by_closed_form)
    else:
        expected = by_closed_form
    assert clf.privacy_spent_.epsilon == pytest.approx(expected, rel=1e-12)
    clf.predict(X[20:50])
    assert clf.privacy_spent_.epsilon <= 1.0 * (1 + 1e-12)


def test_subsample_pure_dp_at_delta_zero():
    assert _per_query_epsilon(1.0, 0.0, 7, "tight") * 7 <= 1.0
    assert _per_query_epsilon(1.0, 0.0, 7, "tight") == _per_query_epsilon(1.0, 0.0, 7, "paper")


@pytest.mark.parametrize("eps", [0.5, 1.0, 4.0])
@pytest.mark.parametrize("d", [1, 2])
def test_perp_copies_are_already_at_the_exact_optimum(eps, d):
    # Every phase's 2d ChallengeBT copies (ε_0, δ_0) compose to (ε, δ_p) by basic
    # composition, and at δ_p ≈ 1e-17 the *exact* optimal composition of 2d (ε_0, δ_0)
    # events allows no larger ε_0: no accountant (each an upper bound on it) can
    # improve PERP's per-copy ε_0, so its schedule keeps the closed form.
    params = perp_parameters(eps, DELTA, 0.1, 0.05, 0.5, d, preset="practical", n_phases=3)
    for q in params.phases:
        assert q.epsilon_instance == pytest.approx(eps / (2 * d), rel=1e-12)
        best = calibrate(eps, q.delta, 2 * d, method="optimal", step_delta=q.delta_instance)
        assert best.epsilon == pytest.approx(q.epsilon_instance, rel=1e-9)
        event = ApproxDP(q.epsilon_instance, q.delta_instance)
        assert account([(event, 2 * d)]).epsilon(q.delta) <= eps * (1 + 1e-9)
        assert not math.isnan(account([(event, 2 * d)]).epsilon(q.delta))
