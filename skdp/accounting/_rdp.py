"""Rényi-DP accounting: per-order divergences add up under composition.

Each event contributes a bound on D_α(P‖Q) at every order α on a fixed grid; the
composition's bound is the sum (Mironov 2017, Prop. 1), converted to (ε, δ) at the
best order by the conversion of Canonne, Kamath & Steinke 2020 (Prop. 12; also
Asoodeh et al. 2021), which is never worse than the classical ρ + log(1/δ)/(α−1).

Per event:

* ε-DP (and discrete Laplace): randomized response's divergence — every ε-DP pair is
  a post-processing of it (Kairouz, Oh & Viswanath 2015), so by data processing its
  D_α is the largest;
* ε-bounded range: min(α·ε²/8, the ε-DP bound) (Cesar & Rogers 2021, Lemma 3.2);
* Laplace(Δ/ε): the exact divergence (Mironov 2017, Table II);
* Gaussian(σ): α/(2σ²) (Mironov 2017, Table II);
* (ε, δ)-DP: δ-approximately the ε-DP bound (an (ε, δ)-DP pair is δ-close to an
  ε-DP pair; approximate divergences compose with the δ's added — Bun & Steinke
  2016, §8), so its δ is added to the total δ before the conversion.
"""

import math

import numpy as np

from .events import BoundedRange, Gaussian, Laplace

#: Orders α > 1 at which divergences are tracked (dense where the optimum usually lies).
ORDERS = np.concatenate(
    [1.0 + np.geomspace(1e-3, 1.0, 40), np.linspace(2.0, 12.0, 41)[1:],
     np.geomspace(12.0, 1e5, 60)[1:]]
)


# Divergences are scaled up by this relative margin, far above their measured rounding
# error (≤ 2·10⁻¹³ for randomized response), so a rounding never makes them optimistic.
_SAFETY = 1e-9


def _log_cosh(x):
    """log cosh x without cancellation: log1p(2 sinh²(x/2)) for small |x|."""
    x = np.abs(x)
    small = x < 20.0
    near = np.log1p(2.0 * np.sinh(np.where(small, x, 0.0) / 2.0) ** 2)
    far = x - math.log(2.0) + np.log1p(np.exp(-2.0 * x))
    return np.where(small, near, far)


def _randomized_response(eps, alpha):
    """D_α of randomized response with e^ε/(1+e^ε).

    log(p^α q^{1−α} + q^α p^{1−α}) = log cosh((α−½)ε) − log cosh(ε/2), which keeps full
    relative precision down to ε = 10⁻¹⁵ (the direct formula loses it below ε ≈ 10⁻⁵
    and turns negative, i.e. optimistic, below 10⁻⁸).
    """
    value = (_log_cosh((alpha - 0.5) * eps) - _log_cosh(0.5 * eps)) / (alpha - 1)
    return value * (1 + _SAFETY)


def _laplace(eps, alpha):
    """D_α of Laplace noise of scale 1/ε on a sensitivity-1 query (Mironov 2017):
    log(α/(2α−1)·e^{(α−1)ε} + (α−1)/(2α−1)·e^{−αε})/(α−1).

    Its first-order terms cancel, leaving a relative rounding error of about
    10⁻¹⁶/((α−1)ε)² (measured against 80-digit arithmetic); below (α−1)ε = 10⁻² the ε-DP
    bound (always valid, and nearly equal there) is used instead.
    """
    a = np.log(alpha / (2 * alpha - 1)) + (alpha - 1) * eps
    b = np.log((alpha - 1) / (2 * alpha - 1)) - alpha * eps
    exact = np.logaddexp(a, b) / (alpha - 1)
    trusted = (alpha - 1) * eps > 1e-2
    return np.where(trusted, exact * (1 + _SAFETY), np.inf)


def _divergences(kind, params):
    """D_α bounds of events of one kind, one row per parameter (ε, or σ for Gaussian)."""
    params = np.asarray(params, dtype=float)[:, None]
    if kind is Gaussian:
        return ORDERS / (2.0 * params**2)
    pure = _randomized_response(params, ORDERS)
    if kind is BoundedRange:
        return np.minimum(pure, ORDERS * params**2 / 8.0)
    if kind is Laplace:
        return np.minimum(pure, _laplace(params, ORDERS))
    return pure


def total_divergence(groups):
    """Σ count·D_α over a dict event → count, and the events' own Σ count·δ.

    Events of one kind are evaluated together (one array operation per kind), so plans
    of thousands of distinct events cost milliseconds.
    """
    by_kind = {}
    for event, count in groups.items():
        param = event.sigma if type(event) is Gaussian else event.epsilon
        by_kind.setdefault(type(event), ([], []))
        by_kind[type(event)][0].append(param)
        by_kind[type(event)][1].append(count)
    rdp = np.zeros_like(ORDERS)
    for kind, (params, counts) in by_kind.items():
        rdp += np.asarray(counts, dtype=float) @ _divergences(kind, params)
    own_delta = math.fsum(count * event.delta for event, count in groups.items())
    return rdp, own_delta


def epsilon(rdp, delta):
    """Smallest ε over the orders such that the divergences give (ε, δ)-DP."""
    if delta <= 0:
        return math.inf
    a = ORDERS
    eps = rdp + np.log1p(-1.0 / a) - (math.log(delta) + np.log(a)) / (a - 1)
    classic = rdp + math.log(1.0 / delta) / (a - 1)
    return max(0.0, float(np.min(np.minimum(eps, classic))))


def delta(rdp, eps):
    """Smallest δ over the orders such that the divergences give (ε, δ)-DP."""
    a = ORDERS
    log_delta = (a - 1) * (rdp - eps) + a * np.log1p(-1.0 / a) - np.log(a - 1)
    return float(min(1.0, math.exp(min(0.0, float(np.min(log_delta))))))
