"""calibrate(..., method="advanced") at huge ε: DRV's e^ε overflowed (issue 15)."""

import math

import pytest

from skdp.accounting import advanced_composition, calibrate


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
