"""The tight accountant against closed forms that are exact (or exact bounds).

* Homogeneous pure ε-DP: the exact optimal composition (Kairouz, Oh & Viswanath 2015,
  Thm 3.3), :func:`skdp.accounting.optimal_composition`. Every method is an upper bound,
  so never below it; "tight" and "pld" within 1 %.
* "basic" is Σε exactly; "advanced" is the heterogeneous DRV bound
  Σε(e^ε − 1) + √(2 log(1/δ′) Σε²), δ′ = δ − Σδᵢ, capped at Σε.
* Gaussian: the exact δ(ε) of the Gaussian mechanism (Balle & Wang 2018, Thm 8):
  δ(ε) = Φ(1/(2s) − εs) − e^ε Φ(−1/(2s) − εs) for k runs at σ, s = σ/√k.
* Bounded range: randomized response at ε/2 is ε-BR (its losses ±ε/2 span ε), so the
  optimal composition at ε/2 is a *lower* bound on any ε-BR composition; the zCDP
  conversion ρ + 2√(ρ log(1/δ)) (Bun & Steinke 2016, Prop. 1.3) with ρ = kε²/8 an upper
  bound on the Rényi method.

Property tests and bad inputs are in test_accountant_properties.py.
"""

import math

import pytest
from scipy import optimize, stats

from skdp.accounting import (
    ApproxDP,
    BoundedRange,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    PureDP,
    account,
    advanced_composition,
    epsilon_of,
    optimal_composition,
)

DELTAS = (1e-5, 1e-6, 1e-9)
UPPER_METHODS = ("tight", "pld", "rdp", "advanced", "basic")
# optimal_composition inflates δ by a relative 1e-9 and rounds ε up (to 1e-12), so its ε
# may exceed the exact one by far less than this relative slack.
OPT_SLACK = 1e-9


# --------------------------------------------------------------------------- KOV exact


def test_issue_reference_200_steps_of_005():
    """200 × ε = 0.05 at δ = 1e-6: ≤ 3.28 (exact KOV 3.2763)."""
    items = [(PureDP(0.05), 200)]
    exact = optimal_composition(0.05, 0.0, 200, 1e-6).epsilon
    assert exact == pytest.approx(3.2763, abs=1e-4)
    for method in ("tight", "pld"):
        eps = epsilon_of(items, 1e-6, method=method)
        assert exact * (1 - OPT_SLACK) <= eps <= 3.28, (method, eps)


HOMOGENEOUS = [
    (k, eps, delta)
    for k in (1, 2, 10, 100, 1000, 10_000)
    for eps in (0.005, 0.05, 0.3, 1.0, 3.0)
    for delta in DELTAS
    if k * eps <= 3000
]


@pytest.mark.parametrize(("k", "eps", "delta"), HOMOGENEOUS)
def test_homogeneous_pure_vs_optimal_composition(k, eps, delta):
    exact = optimal_composition(eps, 0.0, k, delta).epsilon
    acc_items = [(PureDP(eps), k)]
    for method in UPPER_METHODS:
        got = account(acc_items, method=method).epsilon(delta)
        assert got >= exact * (1 - OPT_SLACK), (method, k, eps, delta, got, exact)
        if method in ("tight", "pld"):
            assert got <= 1.01 * exact, (method, k, eps, delta, got, exact)


@pytest.mark.parametrize("kind", [PureDP, ApproxDP, Laplace, DiscreteLaplace])
def test_pure_events_at_delta_zero_cost_the_sum(kind):
    """At δ = 0 no composition theorem beats Σε for the worst ε-DP mechanism; a single
    Laplace / randomized-response run is exactly ε-DP, so k of them are exactly kε."""
    items = [(kind(0.1), 10), (kind(0.5), 2)]
    # Laplace's PLD is FFT-convolved, and a bound on the FFT round-off is put at L = ∞:
    # "pld" cannot reach δ = 0 for it (its δ → 0 limit is test_accountant_vs_dp_accounting's).
    methods = ("tight", "basic") if kind is Laplace else ("tight", "pld", "basic")
    for method in methods:
        got = account(items, method=method).epsilon(0.0)
        assert 2.0 * (1 - 1e-12) <= got <= 2.0 * 1.01, (kind, method, got)


# --------------------------------------------------------------------------- basic / advanced

CLOSED_FORM_PLANS = [
    [(PureDP(0.05), 200)],
    [(PureDP(0.1), 10), (BoundedRange(0.05), 100)],
    [(ApproxDP(0.2, 1e-8), 30), (Laplace(0.3), 7), (PureDP(1.0), 1)],
    [(DiscreteLaplace(0.25, 3), 40), (BoundedRange(0.01), 5000)],
]


@pytest.mark.parametrize("items", CLOSED_FORM_PLANS)
@pytest.mark.parametrize("delta", DELTAS)
def test_basic_is_the_sum_and_advanced_is_drv(items, delta):
    own = math.fsum(c * e.delta for e, c in items)
    if own > delta:  # the events' own δ do not fit: no ε works
        for method in ("basic", "advanced", "tight"):
            assert account(items, method=method).epsilon(delta) == math.inf, method
        return
    total = math.fsum(c * e.epsilon for e, c in items)
    assert account(items, method="basic").epsilon(delta) == pytest.approx(total, rel=1e-14)
    slack = delta - own
    drv = math.fsum(c * e.epsilon * math.expm1(e.epsilon) for e, c in items) + math.sqrt(
        2.0 * math.log(1.0 / slack) * math.fsum(c * e.epsilon**2 for e, c in items)
    )
    assert account(items, method="advanced").epsilon(delta) == pytest.approx(
        min(total, drv), rel=1e-12
    )
    if len(items) == 1:  # the homogeneous DRV theorem of composition.py
        ((event, k),) = items
        theorem = advanced_composition(event.epsilon, event.delta, k, slack).epsilon
        assert account(items, method="advanced").epsilon(delta) == pytest.approx(
            min(total, theorem), rel=1e-12
        )


def test_basic_delta_is_the_sum_of_deltas():
    items = [(ApproxDP(0.2, 1e-8), 30), (PureDP(0.1), 10)]
    acc = account(items, method="basic")
    assert acc.delta(7.0) == pytest.approx(3e-7, rel=1e-9)
    assert acc.delta(6.9) == 1.0  # below Σε basic composition says nothing


# --------------------------------------------------------------------------- bounded range


def test_issue_mixed_plan_beats_all_pure():
    """100 exponential-mechanism draws at 0.05 + 10 AboveThreshold at 0.1: strictly less
    than accounting all 110 as pure ε-DP."""
    mixed = [(BoundedRange(0.05), 100), (PureDP(0.1), 10)]
    pure = [(PureDP(0.05), 100), (PureDP(0.1), 10)]
    for delta in DELTAS:
        assert epsilon_of(mixed, delta) < epsilon_of(pure, delta), delta
        # "pld" counts BoundedRange as pure: the same composition
        assert epsilon_of(mixed, delta, "pld") == pytest.approx(
            epsilon_of(pure, delta, "pld"), rel=1e-12
        )


@pytest.mark.parametrize("k", [1, 10, 100, 1000, 10_000])
@pytest.mark.parametrize("eps", [0.01, 0.05, 0.2, 1.0])
@pytest.mark.parametrize("delta", DELTAS)
def test_bounded_range_between_rr_half_and_zcdp(k, eps, delta):
    lower = optimal_composition(eps / 2, 0.0, k, delta).epsilon * (1 - OPT_SLACK)
    rho = k * eps**2 / 8
    zcdp = rho + 2 * math.sqrt(rho * math.log(1 / delta))
    pure = optimal_composition(eps, 0.0, k, delta).epsilon
    items = [(BoundedRange(eps), k)]
    for method in ("tight", "rdp"):
        got = account(items, method=method).epsilon(delta)
        assert got >= lower, (method, got, lower)
    assert account(items, method="rdp").epsilon(delta) <= zcdp * (1 + 1e-12)
    assert epsilon_of(items, delta) <= min(zcdp, pure) * 1.01


# --------------------------------------------------------------------------- Gaussian


def gaussian_delta(eps, s):
    """Exact δ(ε) of one Gaussian run at σ = s on a sensitivity-1 query (Balle & Wang 2018)."""
    a, b = 1 / (2 * s) - eps * s, -1 / (2 * s) - eps * s
    return stats.norm.cdf(a) - math.exp(eps + stats.norm.logcdf(b))


def gaussian_epsilon(delta, s):
    hi = 1.0
    while gaussian_delta(hi, s) > delta:
        hi *= 2
    return optimize.brentq(lambda e: gaussian_delta(e, s) - delta, 0.0, hi, xtol=1e-14)


GAUSSIAN = [(s, k) for s in (0.5, 1.0, 2.0, 5.0, 20.0) for k in (1, 10, 100, 1000)]


@pytest.mark.parametrize(("sigma", "k"), GAUSSIAN)
@pytest.mark.parametrize("delta", DELTAS)
def test_gaussian_vs_analytic(sigma, k, delta):
    s = sigma / math.sqrt(k)
    exact = gaussian_epsilon(delta, s)
    if exact <= 1e-3:
        pytest.skip("δ(0) below δ: ε = 0")
    items = [(Gaussian(sigma), k)]
    for method in ("tight", "pld", "rdp"):
        acc = account(items, method=method)
        got = acc.epsilon(delta)
        # never below: the exact δ at skdp's ε is within δ
        assert gaussian_delta(got, s) <= delta * (1 + 1e-9), (method, got, exact)
        assert acc.delta(exact) >= delta * (1 - 1e-9), (method, acc.delta(exact))
        if method != "rdp":
            assert got <= 1.01 * exact, (method, got, exact)


@pytest.mark.parametrize("delta", DELTAS)
def test_rdp_gaussian_below_zcdp_conversion_and_monotone(delta):
    previous = 0.0
    for sigma in (50.0, 20.0, 10.0, 5.0, 2.0, 1.0, 0.5):  # ρ increasing
        rho = 100 / (2 * sigma**2)
        got = epsilon_of([(Gaussian(sigma), 100)], delta, "rdp")
        assert got <= (rho + 2 * math.sqrt(rho * math.log(1 / delta))) * (1 + 1e-12)
        assert got >= previous, (sigma, got, previous)
        previous = got
    for sigma in (20.0, 2.0):  # and non-increasing in δ
        values = [epsilon_of([(Gaussian(sigma), 100)], d, "rdp") for d in (1e-12, *DELTAS[::-1])]
        assert values == sorted(values, reverse=True), values
