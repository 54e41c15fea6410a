"""Tests for skdp.accounting.composition."""

import itertools
import math
import time
import warnings
from decimal import Decimal, localcontext

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from skdp.accounting.composition import (
    METHODS,
    PrivacyCost,
    advanced_composition,
    basic_composition,
    basic_composition_sequence,
    calibrate,
    compose,
    optimal_composition,
    optimal_composition_delta,
)
from skdp.exceptions import PrivacyParameterError

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)

# Per-step ε from 1e-4 to 10 (log-uniform), k up to 10⁴, δ' from 1e-12 to 0.1.
epsilons = st.floats(-4.0, 1.0).map(lambda x: 10.0**x)
ks = st.one_of(st.integers(1, 50), st.integers(1, 10_000))
deltas = st.floats(-12.0, -1.0).map(lambda x: 10.0**x)


def exact_delta_pure(eps, k, eps_g, digits=60):
    """δ_pure(ε_g) for the k-fold randomized-response pair in 60-digit arithmetic."""
    with localcontext() as ctx:
        ctx.prec = digits
        e = Decimal(eps)
        g = Decimal(eps_g).exp()
        total = Decimal(0)
        for ell in range(k + 1):
            term = ((k - ell) * e).exp() - g * (ell * e).exp()
            if term > 0:
                total += math.comb(k, ell) * term
        return total / (1 + e.exp()) ** k


# --------------------------------------------------------------------------- reference values


def test_reference_200_steps_of_005():
    """200 × pure ε = 0.05 at δ' = 1e-6. The '≈ 3.92 by advanced composition' figure
    quoted for this setting is the KOV closed form (Thm 3.5); DRV gives ≈ 4.23."""
    drv = advanced_composition(0.05, 0.0, 200, 1e-6, variant="drv")
    kov = advanced_composition(0.05, 0.0, 200, 1e-6, variant="kov")
    opt = optimal_composition(0.05, 0.0, 200, 1e-6)
    # DRV: sqrt(400 ln 1e6)·0.05 + 10·(e^0.05 − 1)
    assert drv.epsilon == pytest.approx(
        math.sqrt(400 * math.log(1e6)) * 0.05 + 10 * math.expm1(0.05), rel=1e-14
    )
    assert drv.epsilon == pytest.approx(4.2296, abs=1e-4)
    assert drv.delta == pytest.approx(1e-6)
    assert kov.epsilon == pytest.approx(3.9200, abs=1e-4)
    assert kov.delta == pytest.approx(1e-6, rel=1e-12)
    assert opt.epsilon == pytest.approx(3.27634, abs=1e-5)
    assert opt.epsilon < kov.epsilon < drv.epsilon < basic_composition(0.05, 0.0, 200).epsilon
    assert opt.delta <= 1e-6


def test_reference_optimal_is_exact_against_high_precision():
    opt = optimal_composition(0.05, 0.0, 200, 1e-6)
    exact = exact_delta_pure(0.05, 200, opt.epsilon)
    assert exact <= Decimal("1e-6")
    # and it is the smallest such ε to ~1e-9: slightly less no longer fits
    assert exact_delta_pure(0.05, 200, opt.epsilon * (1 - 1e-8)) > Decimal("1e-6")


def test_optimal_large_k_is_fast_and_stable():
    optimal_composition(0.01, 0.0, 10_000, 1e-6)  # warm-up (imports, caches)
    start = time.perf_counter()
    opt = optimal_composition(0.01, 0.0, 10_000, 1e-6)
    elapsed = time.perf_counter() - start
    assert opt.epsilon == pytest.approx(4.88552, abs=1e-5)
    assert opt.epsilon < advanced_composition(0.01, 0.0, 10_000, 1e-6, variant="kov").epsilon
    assert elapsed < 0.25  # ~10 ms on a laptop; generous for CI


def test_calibrate_large_k_is_fast():
    calibrate(1.0, 1e-6, 10_000)
    for method in METHODS:
        start = time.perf_counter()
        calibrate(1.0, 1e-6, 10_000, method=method)
        assert time.perf_counter() - start < 0.25  # ~20 ms for "optimal"


# --------------------------------------------------------------------------- basic


def test_basic_composition():
    assert basic_composition(0.1, 1e-7, 10) == pytest.approx((1.0, 1e-6))
    assert isinstance(basic_composition(0.1, 0.0, 3), PrivacyCost)
    assert basic_composition(1.0, 0.3, 5).delta == 1.0  # vacuous but true


def test_basic_composition_sequence():
    total = basic_composition_sequence([(0.1, 0.0), PrivacyCost(0.5, 1e-6), (1, 0)])
    assert total == pytest.approx((1.6, 1e-6))
    assert basic_composition_sequence(iter([(0.2, 0.1)])) == pytest.approx((0.2, 0.1))
    with pytest.raises(PrivacyParameterError, match="empty"):
        basic_composition_sequence([])
    with pytest.raises(PrivacyParameterError, match="pair"):
        basic_composition_sequence([0.1])
    with pytest.raises(PrivacyParameterError, match=r"costs\[1\].epsilon"):
        basic_composition_sequence([(0.1, 0.0), (-1.0, 0.0)])
    with pytest.raises(PrivacyParameterError, match=r"costs\[0\].delta"):
        basic_composition_sequence([(0.1, 1.5)])
    with pytest.raises(PrivacyParameterError, match="iterable"):
        basic_composition_sequence(3.0)


# --------------------------------------------------------------------------- advanced


def test_kov_with_step_delta():
    cost = advanced_composition(0.1, 1e-7, 50, 1e-6, variant="kov")
    assert cost.delta == pytest.approx(1 - (1 - 1e-7) ** 50 * (1 - 1e-6), rel=1e-10)
    drv = advanced_composition(0.1, 1e-7, 50, 1e-6)
    assert drv.delta == pytest.approx(50 * 1e-7 + 1e-6)


def test_kov_capped_by_basic():
    # one step: the first term kε wins
    assert advanced_composition(0.5, 0.0, 1, 1e-6, variant="kov").epsilon == 0.5


@SETTINGS
@given(eps=epsilons, k=ks, slack=deltas)
def test_bound_ordering(eps, k, slack):
    drv = advanced_composition(eps, 0.0, k, slack).epsilon
    kov = advanced_composition(eps, 0.0, k, slack, variant="kov").epsilon
    opt = optimal_composition(eps, 0.0, k, slack).epsilon
    assert 0.0 <= opt <= kov <= k * eps
    assert opt <= drv * (1 + 1e-12)


# --------------------------------------------------------------------------- optimal: exactness


@pytest.mark.parametrize(
    ("eps", "k", "eps_g"),
    [
        (0.05, 200, 1.0),
        (0.05, 200, 3.0),
        (1e-4, 300, 1e-3),
        (1.0, 30, 4.5),
        (3.0, 25, 20.0),
        (10.0, 12, 60.0),
        (0.3, 1, 0.1),
        (0.01, 1000, 0.5),
    ],
)
def test_optimal_delta_matches_high_precision(eps, k, eps_g):
    got = optimal_composition_delta(eps, 0.0, k, eps_g)
    exact = float(exact_delta_pure(eps, k, eps_g))
    assert got >= exact  # rounded up: an upper bound
    assert got <= exact * (1 + 1e-8)


@pytest.mark.parametrize(("eps", "k"), [(0.1, 20), (0.5, 15), (0.02, 101)])
def test_optimal_delta_matches_kov_theorem_3_3(eps, k):
    """KOV Thm 3.3: at ε_g = (k − 2i)ε,
    δ_i = Σ_{l<i} C(k,l)(e^{(k−l)ε} − e^{(k−2i+l)ε})/(1+e^ε)^k."""
    for i in range(k // 2 + 1):
        delta_i = (
            sum(
                math.comb(k, ell) * (math.exp((k - ell) * eps) - math.exp((k - 2 * i + ell) * eps))
                for ell in range(i)
            )
            / (1 + math.exp(eps)) ** k
        )
        got = optimal_composition_delta(eps, 0.0, k, (k - 2 * i) * eps)
        assert got == pytest.approx(delta_i, rel=1e-8, abs=1e-300)


@pytest.mark.parametrize(("eps", "k"), [(0.05, 200), (0.7, 40), (0.001, 5000)])
def test_optimal_delta_matches_privacy_loss_distribution(eps, k):
    """Independent formulation: the privacy loss of k-fold randomized response is
    (2J − k)ε with J ~ Binomial(k, e^ε/(1+e^ε)); δ(ε_g) = E[(1 − e^{ε_g − L})_+]."""
    j = np.arange(k + 1)
    pmf = stats.binom.pmf(j, k, 1.0 / (1.0 + math.exp(-eps)))
    loss = (2 * j - k) * eps
    for eps_g in np.linspace(0.0, 0.5 * k * eps, 7):
        expected = float(np.sum(pmf * np.clip(-np.expm1(eps_g - loss), 0.0, None)))
        got = optimal_composition_delta(eps, 0.0, k, eps_g)
        assert got == pytest.approx(expected, rel=1e-7, abs=1e-300)


def test_optimal_single_step_closed_form():
    # k = 1: δ(ε_g) = (e^ε − e^{ε_g})/(1 + e^ε), so ε_g = log(e^ε − δ(1 + e^ε)).
    eps, dlt = 1.0, 0.01
    expected = math.log(math.exp(eps) - dlt * (1 + math.exp(eps)))
    assert optimal_composition(eps, 0.0, 1, dlt).epsilon == pytest.approx(expected, rel=1e-9)


def test_optimal_delta_at_extremes():
    assert optimal_composition_delta(0.3, 0.0, 10, 3.0) == 0.0  # ε_g = kε
    assert optimal_composition_delta(0.3, 0.0, 10, 100.0) == 0.0
    tv = optimal_composition_delta(0.3, 0.0, 10, 0.0)  # total variation distance
    assert 0.0 < tv < 1.0
    assert optimal_composition_delta(0.3, 1e-3, 10, 3.0) == pytest.approx(1 - (1 - 1e-3) ** 10)


def test_optimal_is_stable_over_grid():
    """No overflow, NaN or warning for ε ∈ [1e-4, 10], k ≤ 10⁴; δ non-increasing in ε_g."""
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        for eps in np.logspace(-4, 1, 6):
            for k in (1, 2, 7, 100, 1000, 10_000):
                grid = np.concatenate(([0.0], np.logspace(-6, 0, 12) * k * eps))
                values = [optimal_composition_delta(eps, 1e-9, k, float(g)) for g in grid]
                assert all(np.isfinite(values))
                assert all(0.0 <= v <= 1.0 for v in values)
                assert all(a >= b for a, b in itertools.pairwise(values))
                opt = optimal_composition(eps, 0.0, k, 1e-6)
                assert np.isfinite(opt.epsilon)
                assert 0.0 <= opt.epsilon <= k * eps


@SETTINGS
@given(eps=epsilons, k=ks, target=deltas, step=st.sampled_from([0.0, 1e-12, 1e-9]))
def test_optimal_meets_constraint_and_is_minimal(eps, k, target, step):
    floor = -math.expm1(k * math.log1p(-step))
    if floor > target:
        with pytest.raises(PrivacyParameterError, match="no finite total"):
            optimal_composition(eps, step, k, target)
        return
    cost = optimal_composition(eps, step, k, target)
    assert cost.epsilon <= k * eps
    assert cost.delta <= target
    assert optimal_composition_delta(eps, step, k, cost.epsilon) <= target
    if cost.epsilon > 0.0:
        smaller = cost.epsilon * (1 - 1e-9)
        assert optimal_composition_delta(eps, step, k, smaller) > target


def test_optimal_with_step_delta_floor():
    # exactly the floor: only ε_g = kε works
    floor = -math.expm1(10 * math.log1p(-1e-4))
    cost = optimal_composition(0.2, 1e-4, 10, floor)
    assert cost.epsilon == pytest.approx(2.0)
    with pytest.raises(PrivacyParameterError, match="no finite total ε"):
        optimal_composition(0.2, 1e-4, 10, 5e-4)
    # pure steps, δ_total = 0: basic composition is optimal
    assert optimal_composition(0.2, 0.0, 10, 0.0).epsilon == pytest.approx(2.0)


# --------------------------------------------------------------------------- compose / calibrate


def test_compose_methods():
    assert compose(0.05, 0.0, 200, 1e-6, "basic") == pytest.approx((10.0, 0.0))
    assert compose(0.05, 0.0, 200, 1e-6, "advanced").epsilon == pytest.approx(4.2296, abs=1e-4)
    assert compose(0.05, 0.0, 200, 1e-6, "kov").epsilon == pytest.approx(3.9200, abs=1e-4)
    assert compose(0.05, 0.0, 200, 1e-6).epsilon == pytest.approx(3.27634, abs=1e-5)
    # advanced never worse than basic (k = 2: DRV > basic)
    assert compose(0.5, 0.0, 2, 1e-6, "advanced") == basic_composition(0.5, 0.0, 2)
    # no slack left: basic / kε
    assert compose(0.1, 1e-7, 10, 1e-6, "advanced").epsilon == pytest.approx(1.0)
    with pytest.raises(PrivacyParameterError, match="does not fit"):
        compose(0.1, 1e-6, 10, 1e-6, "kov")


def test_calibrate_basic():
    cost = calibrate(1.0, 1e-6, 10, method="basic", step_delta=0.5)  # step_delta ignored
    assert cost == pytest.approx((0.1, 1e-7))
    total = basic_composition(cost.epsilon, cost.delta, 10)
    assert total.epsilon <= 1.0
    assert total.delta <= 1e-6


def test_calibrate_reference_inverse():
    # 200 steps in a (3.92, 1e-6) budget: KOV allows ≈ 0.05 per step.
    assert calibrate(3.919953489885436, 1e-6, 200, method="kov").epsilon == pytest.approx(
        0.05, rel=1e-9
    )
    assert calibrate(3.2763360548, 1e-6, 200).epsilon == pytest.approx(0.05, rel=1e-8)


def test_calibrate_method_ordering():
    per_step = {m: calibrate(2.0, 1e-6, 500, method=m).epsilon for m in METHODS}
    assert per_step["basic"] < per_step["advanced"] < per_step["kov"] < per_step["optimal"]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    total_eps=st.floats(-2.0, 1.5).map(lambda x: 10.0**x),
    total_delta=st.one_of(st.just(0.0), deltas),
    k=ks,
    method=st.sampled_from(METHODS),
    step_delta=st.sampled_from([0.0, 1e-15, 1e-11, 1e-8]),
)
def test_calibrate_round_trip(total_eps, total_delta, k, method, step_delta):
    needed = k * step_delta if method != "basic" else 0.0
    if needed > total_delta:
        with pytest.raises(PrivacyParameterError, match="does not fit"):
            calibrate(total_eps, total_delta, k, method=method, step_delta=step_delta)
        return
    cost = calibrate(total_eps, total_delta, k, method=method, step_delta=step_delta)
    assert cost.epsilon >= total_eps / k * (1 - 1e-15)  # never worse than the basic split
    total = compose(cost.epsilon, cost.delta, k, total_delta, method)
    assert total.epsilon <= total_eps
    assert total.delta <= total_delta
    # Independently, by the public theorem functions.
    if method == "basic":
        assert cost.delta == pytest.approx(total_delta / k)
        assert basic_composition(cost.epsilon, cost.delta, k).epsilon <= total_eps
    elif method == "optimal":
        assert cost.delta == step_delta
        opt = optimal_composition(cost.epsilon, step_delta, k, total_delta)
        assert opt.epsilon <= total_eps
        # ... and it is (nearly) the largest: 1e-6 more no longer fits.
        bigger = optimal_composition(cost.epsilon * (1 + 1e-6), step_delta, k, total_delta)
        assert bigger.epsilon > total_eps or cost.epsilon * (1 + 1e-6) * k > total_eps * 1e6
    elif method == "kov" and total_delta > k * step_delta * 1.01:
        slack = -math.expm1(math.log1p(-total_delta) - k * math.log1p(-step_delta))
        kov = advanced_composition(cost.epsilon, step_delta, k, slack * (1 - 1e-9), "kov")
        assert kov.delta <= total_delta
        assert kov.epsilon <= total_eps * (1 + 1e-8)


@SETTINGS
@given(k=ks, total_eps=st.floats(0.1, 10.0))
def test_calibrate_is_largest_for_kov(k, total_eps):
    cost = calibrate(total_eps, 1e-6, k, method="kov")
    assert compose(cost.epsilon, 0.0, k, 1e-6, "kov").epsilon <= total_eps
    assert compose(cost.epsilon * (1 + 1e-9), 0.0, k, 1e-6, "kov").epsilon > total_eps


@pytest.mark.parametrize("k", [2, 500, 8360])
def test_calibrate_optimal_without_delta_is_basic(k):
    # δ_total = 0: a δ_pure that underflows to 0.0 must not count as fitting.
    cost = calibrate(20.7, 0.0, k)
    assert cost.epsilon == pytest.approx(20.7 / k)
    assert compose(cost.epsilon, 0.0, k, 0.0).epsilon <= 20.7


def test_calibrate_step_delta_too_large():
    with pytest.raises(PrivacyParameterError, match="does not fit"):
        calibrate(1.0, 1e-6, 100, method="optimal", step_delta=1e-7)
    with pytest.raises(PrivacyParameterError, match="does not fit"):
        calibrate(1.0, 1e-6, 100, method="advanced", step_delta=2e-8)
    # exactly filling the budget leaves no slack: basic split
    cost = calibrate(1.0, 1e-6, 100, method="advanced", step_delta=1e-8)
    assert cost.epsilon == pytest.approx(0.01)


# --------------------------------------------------------------------------- bad input


bad_epsilons = st.one_of(
    st.floats(max_value=0.0),
    st.just(math.inf),
    st.just(math.nan),
    st.just(True),
    st.text(max_size=3),
    st.none(),
)
bad_deltas = st.one_of(
    st.floats(max_value=-1e-300),
    st.floats(min_value=1.0),
    st.just(math.nan),
    st.just(False),
    st.none(),
)
bad_ks = st.one_of(st.integers(max_value=0), st.floats(), st.just(True), st.just("3"))


@SETTINGS
@given(eps=bad_epsilons)
def test_bad_epsilon(eps):
    for call in (
        lambda: basic_composition(eps, 0.0, 3),
        lambda: advanced_composition(eps, 0.0, 3, 1e-6),
        lambda: advanced_composition(eps, 0.0, 3, 1e-6, variant="kov"),
        lambda: optimal_composition(eps, 0.0, 3, 1e-6),
        lambda: optimal_composition_delta(eps, 0.0, 3, 1.0),
        lambda: compose(eps, 0.0, 3, 1e-6),
        lambda: calibrate(eps, 1e-6, 3),
    ):
        with pytest.raises(PrivacyParameterError):
            call()


@SETTINGS
@given(dlt=bad_deltas)
def test_bad_delta(dlt):
    for call in (
        lambda: basic_composition(0.1, dlt, 3),
        lambda: advanced_composition(0.1, dlt, 3, 1e-6),
        lambda: advanced_composition(0.1, 0.0, 3, dlt),
        lambda: optimal_composition(0.1, dlt, 3, 1e-6),
        lambda: optimal_composition(0.1, 0.0, 3, dlt),
        lambda: optimal_composition_delta(0.1, dlt, 3, 1.0),
        lambda: compose(0.1, dlt, 3, 1e-6),
        lambda: calibrate(1.0, dlt, 3),
        lambda: calibrate(1.0, 1e-6, 3, step_delta=dlt),
    ):
        with pytest.raises(PrivacyParameterError):
            call()


@SETTINGS
@given(k=bad_ks)
def test_bad_k(k):
    for call in (
        lambda: basic_composition(0.1, 0.0, k),
        lambda: advanced_composition(0.1, 0.0, k, 1e-6),
        lambda: optimal_composition(0.1, 0.0, k, 1e-6),
        lambda: optimal_composition_delta(0.1, 0.0, k, 1.0),
        lambda: calibrate(1.0, 1e-6, k),
    ):
        with pytest.raises(PrivacyParameterError, match="k"):
            call()


def test_bad_options():
    with pytest.raises(PrivacyParameterError, match="delta_slack must be > 0"):
        advanced_composition(0.1, 0.0, 3, 0.0)
    with pytest.raises(PrivacyParameterError, match="variant"):
        advanced_composition(0.1, 0.0, 3, 1e-6, variant="rdp")
    with pytest.raises(PrivacyParameterError, match="method"):
        calibrate(1.0, 1e-6, 3, method="moments")
    with pytest.raises(PrivacyParameterError, match="method"):
        compose(0.1, 0.0, 3, 1e-6, method="gdp")
    with pytest.raises(PrivacyParameterError, match="epsilon_total"):
        optimal_composition_delta(0.1, 0.0, 3, -1.0)
