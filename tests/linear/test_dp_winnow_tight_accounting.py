"""DP-Winnow's two accountings: "paper" reproduces the old numbers, "tight" is within (ε, δ)
by the tight accountant and never below the paper's parameters."""

import math
import warnings

import numpy as np
import pytest

from skdp.accounting import BoundedRange, PureDP, account
from skdp.exceptions import PrivacyWarning
from skdp.linear import DPWinnowClassifier, OnlineDecisionListClassifier
from skdp.linear import solve_dp_winnow_parameters as solve
from skdp.linear._winnow_accounting import PLD_MAX_EVENTS, spent_epsilon

DELTA = 1e-6

# (ε, K, m) → (ε̂, η) and (ε, ρ) → (K, m, ε̂, η) at d = 202, T = 10⁶, recorded from the
# solver before the tight accountant (two layers of (ε/2, δ/2), advanced composition).
PAPER_FIXED = {
    (0.5, 10, 3): (0.025, 0.0021002992411697603),
    (0.5, 1000, 11): (0.0014551725827161785, 0.00010968822899412731),
    (1.0, 100, 11): (0.009126658046646625, 0.0006879838090871628),
    (4.0, 1000, 11): (0.011023580220397525, 0.000831117744321361),
}
PAPER_DEFAULT = {
    (0.5, 1.0): (851653, 1, 4.9863840820820243e-05, 1.2465960205205061e-05),
    (1.0, 1 / 3): (5844873, 3, 3.775345306024354e-05, 5.449242284307127e-06),
    (1.0, 0.1): (238118682, 11, 5.914902601509211e-06, 4.458525742011344e-07),
    (4.0, 0.2): (1854395, 5, 0.00025606840267317044, 2.862943390784276e-05),
}


def _spent(p, delta=DELTA):
    """ε of p's run by the accountant's methods that are accurate for its plan."""
    if p.setting == "scheduled":  # no sparse vector: a count and the draws
        return account(p.privacy_events).epsilon(delta)
    return spent_epsilon(p.svt_epsilon, p.learning_rate, p.max_updates, p.n_samples, delta)


@pytest.mark.parametrize(("key", "expected"), PAPER_FIXED.items())
def test_paper_reproduces_the_old_numbers_at_fixed_k(key, expected):
    epsilon, k, m = key
    p = solve(epsilon, DELTA, 0.1, 10**6, 202, max_updates=k, n_samples=m, accounting="paper")
    assert (p.svt_epsilon, p.learning_rate) == expected
    assert p.accounting == "paper"
    assert p.epsilon_spent == p.epsilon_svt_layer + p.epsilon_em_layer <= epsilon * (1 + 1e-9)


@pytest.mark.parametrize(("key", "expected"), PAPER_DEFAULT.items())
def test_paper_reproduces_the_old_fixed_point(key, expected):
    epsilon, margin = key
    p = solve(epsilon, DELTA, margin, 10**6, 202, accounting="paper")
    assert (p.max_updates, p.n_samples, p.svt_epsilon, p.learning_rate) == expected


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
@pytest.mark.parametrize(("k", "m"), [(1, 1), (10, 3), (100, 11), (1000, 11), (10**5, 3)])
def test_tight_is_within_budget_and_at_least_the_paper(epsilon, k, m):
    paper = solve(epsilon, DELTA, 0.1, 10**6, 202, max_updates=k, n_samples=m,
                  accounting="paper")
    tight = solve(epsilon, DELTA, 0.1, 10**6, 202, max_updates=k, n_samples=m)
    assert tight.accounting == "tight" and tight.feasible
    assert tight.svt_epsilon >= paper.svt_epsilon
    assert tight.learning_rate >= paper.learning_rate
    # the paper's relative weights are kept: ε̂/η is unchanged
    assert tight.svt_epsilon / tight.learning_rate == pytest.approx(
        paper.svt_epsilon / paper.learning_rate, rel=1e-9)
    assert _spent(tight) <= epsilon * (1 + 1e-9)
    assert tight.epsilon_spent <= epsilon * (1 + 1e-9)
    # the events are what the estimator runs: K ε̂-DP sparse vectors, mK 4η-BR draws
    assert tight.privacy_events == ((PureDP(tight.svt_epsilon), k),
                                    (BoundedRange(4 * tight.learning_rate), k * m))
    if k * m > 10:  # beyond a handful of mechanisms the joint accounting gains ≥ 1.4×
        assert tight.learning_rate >= 1.4 * paper.learning_rate


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
@pytest.mark.parametrize("margin", [1.0, 1 / 3, 0.1])
def test_tight_fixed_point_is_smaller_and_least(epsilon, margin):
    d = 202
    paper = solve(epsilon, DELTA, margin, 10**6, d, accounting="paper")
    tight = solve(epsilon, DELTA, margin, 10**6, d)
    assert tight.max_updates <= paper.max_updates and tight.n_samples == paper.n_samples
    assert tight.svt_epsilon >= paper.svt_epsilon and tight.learning_rate >= paper.learning_rate
    assert _spent(tight) <= epsilon * (1 + 1e-9)

    def ok(k):
        eta = solve(epsilon, DELTA, margin, 10**6, d, max_updates=k,
                    n_samples=tight.n_samples).learning_rate
        gap = eta * margin - eta * eta
        return gap > 0 and k >= 2 * math.log(d) / gap

    assert ok(tight.max_updates) and not ok(tight.max_updates - 1)


@pytest.mark.parametrize("epsilon", [0.3, 0.9])
@pytest.mark.parametrize("margin", [1.0, 0.5])
def test_tight_theory_preset(epsilon, margin):
    T, d, beta = 10, 4, 0.5
    paper = solve(epsilon, DELTA, margin, T, d, beta=beta, setting="theory", accounting="paper")
    tight = solve(epsilon, DELTA, margin, T, d, beta=beta, setting="theory")
    assert tight.feasible and tight.accounting == "tight"
    assert tight.n_samples == paper.n_samples and tight.max_updates <= paper.max_updates
    assert tight.threshold == pytest.approx(8 * math.log(2 * T / beta) / tight.svt_epsilon)
    # ε̂ : η keeps Thm 11's ratio 4√m : 1; both are scaled up by the accountant
    assert tight.svt_epsilon / tight.learning_rate == pytest.approx(
        4 * math.sqrt(tight.n_samples), rel=1e-9)
    assert tight.learning_rate >= paper.learning_rate
    assert _spent(tight) <= epsilon * (1 + 1e-9)
    k, log_d = tight.max_updates, math.log(d)
    eta = tight.learning_rate
    assert k >= 2 * log_d / (eta * margin - eta * eta)
    prev = solve(epsilon, DELTA, margin, T, d, beta=beta, setting="theory",
                 max_updates=k - 1).learning_rate
    gap = prev * margin - prev * prev
    assert gap <= 0 or k - 1 < 2 * log_d / gap  # K is the least fixed point


@pytest.mark.parametrize("cls", [DPWinnowClassifier, OnlineDecisionListClassifier])
def test_estimators_use_and_record_the_tight_accounting(cls, rng):
    X = rng.integers(0, 2, size=(300, 4))
    y = X[:, 1]
    clf = cls(epsilon=1.0, random_state=0, classes=[0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        clf.fit(X, y)
    p = clf.parameters_
    assert p.accounting == "tight"
    assert clf.privacy_spent_ == (1.0, DELTA)  # the charge is the guarantee, as before
    assert _spent(p) <= 1.0 + 1e-9
    assert np.isfinite(p.epsilon_spent) and p.epsilon_spent <= 1.0 + 1e-9


def test_huge_plans_stay_private():
    """K·(m + 1) = 1.2·10¹⁰ events of ε ≈ 10⁻⁶ (calibrated by the Rényi bound): the
    accountant's full "tight" method and advanced composition agree that it fits."""
    p = solve(0.5, DELTA, 0.1, 10**6, 202, max_updates=10**9, n_samples=11)
    assert p.max_updates * (p.n_samples + 1) > PLD_MAX_EVENTS
    assert account(p.privacy_events, method="tight").epsilon(DELTA) <= 0.5
    assert account(p.privacy_events, method="advanced").epsilon(DELTA) > 0.5  # tight wins
    paper = solve(0.5, DELTA, 0.1, 10**6, 202, max_updates=10**9, n_samples=11,
                  accounting="paper")
    assert 2.0 < p.learning_rate / paper.learning_rate < 3.0
