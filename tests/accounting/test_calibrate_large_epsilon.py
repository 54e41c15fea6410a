"""calibrate(..., method="advanced") at huge ε: DRV's e^ε overflowed (issue 15)."""

import math

import pytest

from skdp.accounting import advanced_composition, calibrate
from skdp.accounting.accountant import account
from skdp.accounting.events import PureDP
from skdp.mechanisms.histogram import StableHistogram


@pytest.mark.parametrize("epsilon", [709.0, 710.0, 1e4, 1e6, 1e300])
@pytest.mark.parametrize("k", [1, 10, 10**4])
def test_advanced_calibration_survives_huge_epsilon(epsilon, k):
    step = calibrate(epsilon, 1e-6, k, method="advanced")
    assert math.isfinite(step.epsilon) and step.epsilon * k >= epsilon * (1 - 1e-12)
    if epsilon / k > 50:  # DRV's kε(e^ε − 1) term: basic composition wins
        assert step.epsilon == pytest.approx(epsilon / k, rel=1e-12)


def test_drv_bound_is_infinite_not_an_error_beyond_exp_range():
    assert math.isinf(advanced_composition(1e4, 0.0, 3, 1e-6).epsilon)
    assert math.isfinite(advanced_composition(700.0, 0.0, 1, 1e-6).epsilon)


@pytest.mark.parametrize("epsilon", [700.0, 710.0, 1e4, 1e5])
def test_the_accountants_advanced_bound_survives_huge_epsilon(epsilon):
    # The accountant's own advanced bound raised OverflowError past e^709 (a decision list
    # at ε = 10⁵ failed in calibrate_plan); basic composition is then the bound.
    for method in ("advanced", "tight"):
        spent = account([(PureDP(epsilon), 3), (PureDP(0.1), 2)], method=method).epsilon(1e-6)
        assert spent == pytest.approx(3 * epsilon + 0.2, rel=1e-12)


def test_a_histogram_truncation_survives_underflowed_noise():
    # At ε = 10⁵ DP-SOA's histogram had e^(−1/scale) = 0.0 and took log(0).
    h = StableHistogram(1e5, 1e-6, random_state=0)
    assert h.noise_bound == 1 and h.max_error() == 3
