"""The ``"charged"`` BetweenThresholds calibration (skdp.mechanisms._charged_calibration).

The lemma's per-step inequality is checked numerically against the *exact* per-step
requirement: for every query value x (grid in noise units), shift s ∈ [−Δ, Δ] and
order λ, the exact least charge c with E_p[r^λ·e^{−c·1[⊤]}] ≤ 1 must not exceed the
lemma's c_λ. The searches are checked to return certified, near-least scales.
"""

import math

import numpy as np
import pytest

from skdp.exceptions import PrivacyParameterError
from skdp.mechanisms._charged_calibration import (
    charge_per_hard,
    charged_epsilon,
    charged_min_gap,
    charged_noise_scale,
)
from skdp.mechanisms.between_thresholds import BetweenThresholds
from skdp.mechanisms.challenge_bt import ChallengeBT


def _log_cdf(z):
    return np.where(z < 0, np.log(0.5) + np.minimum(z, 0),
                    np.log1p(-0.5 * np.exp(-np.maximum(z, 0))))


def _log_probs(y, g):
    """log P(L), log P(⊤), log P(R) with y = (t_l − x)/b and gap g (noise units)."""
    low, high = _log_cdf(y), _log_cdf(-(y + g))
    # P(⊤) = F(y + g) − F(y), in the tails as a difference of exponentials
    top = np.where(y >= 0, np.log(0.5) - y + np.log(-np.expm1(-g)),
                   np.where(y + g <= 0, np.log(0.5) + y + g + np.log(-np.expm1(-g)),
                            np.log(np.maximum(np.exp(_log_cdf(y + g)) - np.exp(low), 1e-300))))
    return low, top, high


def _exact_charge(u, g, lam):
    """sup over x and s of the least c with Σ_a p_a·r_a^λ·w_a ≤ 1 (w_⊤ = e^{−c})."""
    ys = np.linspace(-30 - g, 30, 60_001)
    worst = 0.0
    for s in (-1.0, -0.5, 0.5, 1.0):
        lp, lq = _log_probs(ys, g), _log_probs(ys - s * u, g)
        spare = sum(np.exp(a) * np.expm1(lam * (a - b)) for a, b in zip(lp, lq, strict=True))
        top = np.exp(lp[1] + lam * (lp[1] - lq[1]))
        worst = max(worst, float(np.max(-np.log1p(-np.minimum(spare / top, 1 - 1e-15)))))
    return worst


@pytest.mark.parametrize(("u", "g", "lam"), [(1e-3, 4.0, 50.0), (1e-4, 3.0, 70.0),
                                             (1e-2, 2.0, 10.0), (0.05, 3.0, 5.0),
                                             (0.2, 1.0, 1.0)])
def test_lemma_charge_bounds_the_exact_per_step_charge(u, g, lam):
    exact, lemma = _exact_charge(u, g, lam), charge_per_hard(u, g, lam)
    assert exact <= lemma
    assert lemma <= 2.5 * exact  # and is not vacuous (measured ratios 1.02–2.4)


def test_series_and_closed_form_agree_at_the_switch():
    # I_λ(u) is summed for (λ+1)u < 0.1 and closed-form above: continuous across.
    lam = 99.0
    below, above = charge_per_hard(0.1 / 100 * (1 - 1e-9), 3.0, lam), charge_per_hard(
        0.1 / 100 * (1 + 1e-9), 3.0, lam)
    assert math.isclose(below, above, rel_tol=1e-6)


@pytest.mark.parametrize(("eps", "delta", "k"), [(0.97, 2e-16, 316_314), (1.0, 1e-6, 100),
                                                 (4.0, 0.05, 30), (100.0, 1e-20, 5)])
def test_noise_scale_for_a_ratio_is_certified_and_nearly_least(eps, delta, k):
    b = charged_noise_scale(eps, delta, k, gap_ratio=3.0)
    assert charged_epsilon(b, 3.0 * b, k, delta) <= eps
    assert charged_epsilon(b * (1 - 1e-3), 3.0 * b * (1 - 1e-3), k, delta) > eps


def test_about_half_of_stemmers_noise_at_perp_sizes():
    # Phase 1 of the ε = 1, d = 2 schedule: k' ≈ 3·10⁵, δ_0/2 ≈ 2·10⁻¹⁶.
    k, delta = 316_314, 2e-16
    stemmer = 4 / 0.97 * math.sqrt(k * math.log(2 / delta))
    ratio = charged_noise_scale(0.97, delta, k, gap_ratio=4.0) / stemmer
    assert 0.50 < ratio < 0.52  # measured 0.511


def test_fixed_gap_search_and_min_gap():
    eps, delta, k = 1.0, 5e-7, 120
    floor = charged_min_gap(eps, delta, k)
    assert floor > math.sqrt(k / 2) / (math.sqrt(math.log(1 / delta) + eps)
                                       - math.sqrt(math.log(1 / delta)))
    with pytest.raises(ValueError, match="min_gap"):
        charged_noise_scale(eps, delta, k, gap=floor)
    b = charged_noise_scale(eps, delta, k, gap=4000.0)
    assert charged_epsilon(b, 4000.0, k, delta) <= eps < charged_epsilon(b * 0.999, 4000.0,
                                                                         k, delta)
    with pytest.raises(ValueError, match="exactly one"):
        charged_noise_scale(eps, delta, k)


def test_between_thresholds_charged_refuses_uncertified_noise_and_small_gaps():
    bt = BetweenThresholds(0.0, 500.0, 1.0, 1e-6, calibration="charged", max_hard=60)
    assert charged_epsilon(bt._query_noise_scale, 500.0, 60, 1e-6) <= 1.0
    with pytest.raises(PrivacyParameterError, match="certified only"):
        BetweenThresholds(0.0, 500.0, 1.0, 1e-6, calibration="charged", max_hard=60,
                          noise_scale=10.0)
    with pytest.raises(PrivacyParameterError, match="gap"):
        BetweenThresholds(0.0, 10.0, 1.0, 1e-6, calibration="charged", max_hard=60)
    with pytest.raises(ValueError, match="only for calibration='charged'"):
        BetweenThresholds(0.0, 500.0, 1.0, 1e-6, calibration="stemmer", noise_scale=10.0)


def test_challenge_bt_charged_checks_before_randomness():
    cb = ChallengeBT(0.0, 4000.0, 1.0, 1e-6, 61, 100, stopper="svt", bt_calibration="charged")
    assert charged_epsilon(cb._bt._query_noise_scale, 4000.0, cb.k_prime, 5e-7) <= 1.0
    with pytest.raises(PrivacyParameterError, match="certified only"):
        ChallengeBT(0.0, 4000.0, 1.0, 1e-6, 61, 100, stopper="svt", bt_calibration="charged",
                    bt_noise_scale=10.0)
    with pytest.raises(PrivacyParameterError, match="charged lemma's bound, as b → ∞"):
        ChallengeBT(0.0, 40.0, 1.0, 1e-6, 61, 100, stopper="svt", bt_calibration="charged")
    with pytest.raises(ValueError, match="needs stopper='svt'"):
        ChallengeBT(0.0, 4000.0, 1.0, 1e-6, 61, 100, bt_calibration="charged")
    with pytest.raises(ValueError, match="only for bt_calibration"):
        ChallengeBT(0.0, 4000.0, 1.0, 1e-6, 61, 100, stopper="svt", bt_noise_scale=10.0)
