"""The Thm 11–12 solver: fixed point, accounting, and infeasibility reports.

``accounting="paper"`` is checked against Thm 11's formulas and two-layer advanced
composition; ``"tight"`` (the default) against the tight accountant
(tests/linear/test_dp_winnow_tight_accounting.py has the comparisons between them).
"""

import math

import pytest

from skdp.accounting import advanced_composition
from skdp.exceptions import PrivacyParameterError
from skdp.linear import solve_dp_winnow_parameters
from skdp.linear._winnow_accounting import spent_epsilon


def _layers_fit(p, epsilon, delta):
    """Independent re-check of Thm 11's accounting: K ε̂-DP SVTs + mK 4η-DP draws."""
    def layer(step, k):
        return min(k * step, advanced_composition(step, 0.0, k, delta / 2).epsilon)

    svt = layer(p.svt_epsilon, p.max_updates)
    em = layer(4 * p.learning_rate, p.max_updates * p.n_samples)
    return svt + em <= epsilon * (1 + 1e-9)


def _fits(p, epsilon, delta):
    """The guarantee of whichever accounting p was calibrated by."""
    if p.accounting == "paper":
        return _layers_fit(p, epsilon, delta)
    # the tight accountant, by the methods accurate for this plan
    spent = spent_epsilon(p.svt_epsilon, p.learning_rate, p.max_updates, p.n_samples, delta)
    return spent <= epsilon * (1 + 1e-9)


@pytest.mark.parametrize("epsilon", [0.3, 0.9])
@pytest.mark.parametrize("margin", [1.0, 0.5])
def test_theory_fixed_point_and_paper_formulas(epsilon, margin):
    delta, T, d, beta = 1e-6, 10, 4, 0.5
    p = solve_dp_winnow_parameters(epsilon, delta, margin, T, d, beta=beta, setting="theory",
                                   accounting="paper")
    assert p.feasible, p.reason
    assert p.accounting == "paper"
    K, m, eta = p.max_updates, p.n_samples, p.learning_rate
    log2d = math.log(2 / delta)
    assert m == math.ceil(2 * math.log(2 * T / beta) / (0.25 * margin**2))  # Lemma 13, c=½
    assert eta == pytest.approx(epsilon / (16 * math.sqrt(2 * m * K * log2d)))  # Thm 11, 4η
    assert p.svt_epsilon == pytest.approx(epsilon / (4 * math.sqrt(2 * K * log2d)))
    assert p.threshold == pytest.approx(8 * math.log(2 * T / beta) / p.svt_epsilon)
    # K is the least integer with K ≥ 2 log d/(ηρ − η²), η = η(K)  (Thm 12)
    def bound(k):
        e = epsilon / (16 * math.sqrt(2 * m * k * log2d))
        return 2 * math.log(d) / (e * margin - e * e)

    assert bound(K) <= K and bound(K - 1) > K - 1
    assert _layers_fit(p, epsilon, delta)


@pytest.mark.parametrize("accounting", ["paper", "tight"])
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
@pytest.mark.parametrize("margin", [1.0, 1 / 3, 0.1])
def test_practical_fixed_point_and_accounting(epsilon, margin, accounting):
    delta, d = 1e-6, 202
    p = solve_dp_winnow_parameters(epsilon, delta, margin, 10**6, d, accounting=accounting)
    assert p.feasible and p.setting == "practical" and p.accounting == accounting
    assert p.n_samples % 2 == 1 and p.n_samples >= min(math.ceil(1 / margin), 63)
    assert p.threshold == pytest.approx(1 / p.svt_epsilon)
    assert _fits(p, epsilon, delta)
    assert p.epsilon_spent <= epsilon * (1 + 1e-9)
    # least fixed point: K satisfies Thm 12's bound for its own η; K − 1 does not
    def ok(k):
        e = solve_dp_winnow_parameters(epsilon, delta, margin, 10**6, d, max_updates=k,
                                       n_samples=p.n_samples,
                                       accounting=accounting).learning_rate
        gap = e * margin - e * e
        return gap > 0 and k >= 2 * math.log(d) / gap

    if p.reason:  # K capped below the fixed point (tiny ε·ρ): said so
        assert "capped" in p.reason and p.max_updates == 10**9
    else:
        assert ok(p.max_updates) and not ok(p.max_updates - 1)


@pytest.mark.parametrize("accounting", ["paper", "tight"])
def test_overrides_recalibrate_privacy(accounting):
    p = solve_dp_winnow_parameters(1.0, 1e-6, 0.5, 1000, 10, max_updates=7, n_samples=3,
                                   threshold=2.5, accounting=accounting)
    assert (p.max_updates, p.n_samples, p.threshold) == (7, 3, 2.5)
    assert _fits(p, 1.0, 1e-6)
    q = solve_dp_winnow_parameters(1.0, 1e-6, 0.5, 1000, 10, max_updates=70, n_samples=3,
                                   accounting=accounting)
    assert q.svt_epsilon < p.svt_epsilon and q.learning_rate < p.learning_rate


@pytest.mark.parametrize("accounting", ["paper", "tight"])
def test_privacy_does_not_depend_on_horizon(accounting):
    a = solve_dp_winnow_parameters(1.0, 1e-6, 0.5, 10, 10, max_updates=50, accounting=accounting)
    b = solve_dp_winnow_parameters(1.0, 1e-6, 0.5, 10**9, 10, max_updates=50,
                                   accounting=accounting)
    assert (a.svt_epsilon, a.learning_rate) == (b.svt_epsilon, b.learning_rate)


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        (dict(epsilon=1.5, setting="theory"), "ε < 1"),
        (dict(epsilon=0.5, margin=0.1, setting="theory"), "exceeds"),
        (dict(margin=0.0), "margin"),
        (dict(margin=1.5), "margin"),
        (dict(beta=1.0), "beta"),
    ],
)
@pytest.mark.parametrize("accounting", ["paper", "tight"])
def test_reports_when_no_valid_setting_exists(kwargs, reason, accounting):
    args = dict(epsilon=0.5, delta=1e-6, margin=0.5, n_rounds=100, n_features=10)
    args.update(kwargs)
    p = solve_dp_winnow_parameters(**args, accounting=accounting)
    assert not p.feasible and reason in p.reason and p.accounting == accounting


def test_invalid_privacy_parameters_raise():
    with pytest.raises(PrivacyParameterError, match="delta must be > 0"):
        solve_dp_winnow_parameters(1.0, 0.0, 0.5, 100, 10)
    with pytest.raises(PrivacyParameterError):
        solve_dp_winnow_parameters(-1.0, 1e-6, 0.5, 100, 10)
    with pytest.raises(ValueError, match="setting"):
        solve_dp_winnow_parameters(1.0, 1e-6, 0.5, 100, 10, setting="nope")
    with pytest.raises(ValueError, match="accounting"):
        solve_dp_winnow_parameters(1.0, 1e-6, 0.5, 100, 10, accounting="basic")
