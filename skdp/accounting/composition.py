"""Composition theorems for (ε, δ)-differential privacy.

Running ``k`` differentially private mechanisms on the same data (adaptively:
each may depend on the outputs of the earlier ones) is again differentially
private, with parameters given by a *composition theorem*. This module provides,
from loosest to tightest for homogeneous composition (every step (ε, δ)-DP):

* :func:`basic_composition` — (kε, kδ) (Dwork, McSherry, Nissim & Smith 2006;
  Dwork & Roth 2014, Thm 3.16), also heterogeneous via
  :func:`basic_composition_sequence`;
* :func:`advanced_composition` — the advanced composition theorem of Dwork,
  Rothblum & Vadhan 2010 (Dwork & Roth 2014, Thm 3.20), ``variant="drv"``, and the
  closed-form improvement of Kairouz, Oh & Viswanath 2015 (Thm 3.5),
  ``variant="kov"``;
* :func:`optimal_composition` — the *exact* optimal bound (Kairouz, Oh & Viswanath
  2015, Thm 3.3; Murtagh & Vadhan 2016, Thm 1.5): no smaller ε is valid for every
  k-tuple of (ε, δ)-DP mechanisms, so it is the best any theorem of this form can
  give;
* :func:`calibrate` — the inverse problem: the largest per-step ε such that ``k``
  steps fit in a total (ε, δ) budget, by any of the above; and :func:`compose`,
  its forward counterpart (the total cost of ``k`` steps under a δ budget).

All functions are pure numpy/scipy. The optimal bound is evaluated in log space
(log-binomials by ``gammaln``, ``log1p``/``expm1`` and log-sum-exp), so it is
stable (no overflow, no NaN) for k up to 10⁴ and more and ε from 10⁻⁴ to 10.

Reference numbers (k = 200 steps of pure ε = 0.05, δ' = 10⁻⁶):

====================  ========
bound                  total ε
====================  ========
basic                  10.0
advanced, DRV          ≈ 4.230
advanced, KOV          ≈ 3.920
optimal                ≈ 3.276
====================  ========

"≈ 3.92 by advanced composition", as sometimes quoted for this setting, is the
KOV closed form (Thm 3.5); the classical DRV bound gives ≈ 4.23.

References
----------
.. [DMNS06] C. Dwork, F. McSherry, K. Nissim, A. Smith. "Calibrating Noise to
   Sensitivity in Private Data Analysis". TCC 2006.
.. [DRV10] C. Dwork, G. N. Rothblum, S. Vadhan. "Boosting and Differential
   Privacy". FOCS 2010.
.. [DR14] C. Dwork, A. Roth. "The Algorithmic Foundations of Differential
   Privacy". Foundations and Trends in TCS 9(3–4), 2014. Thms 3.16 and 3.20.
.. [KOV15] P. Kairouz, S. Oh, P. Viswanath. "The Composition Theorem for
   Differential Privacy". ICML 2015 (journal version IEEE Trans. Inf. Theory
   63(6), 2017). Thms 3.3 and 3.5.
.. [MV16] J. Murtagh, S. Vadhan. "The Complexity of Computing the Optimal
   Composition of Differential Privacy". TCC 2016. Thm 1.5.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np
from scipy.special import gammaln

from .._validation import check_delta, check_epsilon, check_positive_int
from ..exceptions import PrivacyParameterError

__all__ = [
    "PrivacyCost",
    "advanced_composition",
    "basic_composition",
    "basic_composition_sequence",
    "calibrate",
    "compose",
    "optimal_composition",
    "optimal_composition_delta",
]

#: Composition methods understood by :func:`compose` and :func:`calibrate`.
METHODS = ("basic", "advanced", "kov", "optimal")

# Bisections stop once the bracket is this small relative to its upper end (or
# after _MAX_BISECT steps); the end that satisfies the constraint is returned.
_BISECT_RTOL = 1e-12
_MAX_BISECT = 200

# The log-space δ_pure is multiplied by e^{_LOG_SAFETY} (a relative 10⁻⁹) so that the
# reported δ is an upper bound despite floating-point error (measured against
# 60-digit arithmetic: ≲ 10⁻¹² relative for k ≤ 10⁴, in either direction).
_LOG_SAFETY = 1e-9


class PrivacyCost(NamedTuple):
    """A privacy cost (ε, δ): "(ε, δ)-differentially private".

    Attributes
    ----------
    epsilon : float
        The privacy-loss bound ε ≥ 0.
    delta : float
        The failure probability δ ∈ [0, 1].
    """

    epsilon: float
    delta: float


# --------------------------------------------------------------------------- helpers


def _check_k(k):
    try:
        return check_positive_int(k, "k")
    except ValueError as exc:
        raise PrivacyParameterError(
            f"{exc} k is the number of composed mechanisms (steps)."
        ) from None


def _check_slack(delta_slack):
    slack = check_delta(delta_slack, name="delta_slack")
    if slack == 0.0:
        raise PrivacyParameterError(
            "delta_slack must be > 0: advanced composition trades a small extra failure "
            "probability δ' for a much smaller ε (the bound grows like sqrt(ln(1/δ'))); "
            "with δ' = 0 use basic_composition."
        )
    return slack


def _check_method(method):
    if method not in METHODS:
        raise PrivacyParameterError(f"method must be one of {METHODS}, got {method!r}.")
    return method


def _down(x):
    """The largest float strictly below ``x`` (for x > 0), else ``x``."""
    return math.nextafter(x, 0.0) if x > 0 else x


def _kov_total_delta(delta, k, delta_slack):
    """1 − (1 − δ)^k (1 − δ'), computed without cancellation."""
    return float(-math.expm1(k * math.log1p(-delta) + math.log1p(-delta_slack)))


def _pure_part_delta(delta, k):
    """1 − (1 − δ)^k: the δ that k (ε, δ)-DP steps cost even at ε_g = kε."""
    return float(-math.expm1(k * math.log1p(-delta)))


def _largest_slack(total_delta, delta, k, variant):
    """The largest δ' > 0 such that the composed δ with slack δ' is ≤ ``total_delta``.

    Returns 0.0 when there is no room left for a slack.
    """
    if variant == "drv":
        slack = total_delta - k * delta

        def composed(s):
            return k * delta + s
    else:  # "kov" and "optimal": 1 − (1−δ)^k (1 − δ')
        slack = -math.expm1(math.log1p(-total_delta) - k * math.log1p(-delta))

        def composed(s):
            return _kov_total_delta(delta, k, s)

    slack = min(slack, _down(1.0))
    # Rounding may push the composed δ one ulp over the budget: step down until it fits.
    for _ in range(64):
        if slack <= 0.0:
            return 0.0
        if composed(slack) <= total_delta:
            return float(slack)
        slack = slack * (1.0 - 2.0**-40) if slack > 1e-300 else 0.0
    return 0.0  # pragma: no cover - unreachable in practice


def _bisect_largest(feasible, lo, hi):
    """Largest x in [lo, hi] with ``feasible(x)``, assuming feasible(lo) and monotonicity.

    Returns an x for which ``feasible(x)`` was actually evaluated to True.
    """
    if feasible(hi):
        return hi
    for _ in range(_MAX_BISECT):
        if hi - lo <= _BISECT_RTOL * hi:
            break
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if feasible(mid):
            lo = mid
        else:
            hi = mid
    return lo


def _bisect_smallest(feasible, lo, hi):
    """Smallest x in [lo, hi] with ``feasible(x)``, assuming feasible(hi) and monotonicity.

    Returns the upper end of the final bracket, for which ``feasible`` was True.
    """
    if feasible(lo):
        return lo
    for _ in range(_MAX_BISECT):
        if hi - lo <= _BISECT_RTOL * hi:
            break
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if feasible(mid):
            hi = mid
        else:
            lo = mid
    return hi


# --------------------------------------------------------------------------- basic


def basic_composition(epsilon: float, delta: float, k: int) -> PrivacyCost:
    """Basic composition of ``k`` (ε, δ)-DP mechanisms: (kε, kδ).

    Parameters
    ----------
    epsilon : float
        Per-step ε > 0.
    delta : float
        Per-step δ ∈ [0, 1).
    k : int
        Number of (adaptively) composed mechanisms, k ≥ 1.

    Returns
    -------
    PrivacyCost
        ``(k·ε, min(k·δ, 1))``. A δ of 1 is a vacuous (but true) guarantee.

    Privacy
    -------
    The adaptive k-fold composition of (ε, δ)-DP mechanisms is (kε, kδ)-DP
    (Dwork, McSherry, Nissim & Smith 2006; Dwork & Roth 2014, Thm 3.16 and
    Thm B.1 for adaptive composition).

    References
    ----------
    Dwork & Roth, "The Algorithmic Foundations of Differential Privacy", 2014.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    k = _check_k(k)
    return PrivacyCost(k * epsilon, min(k * delta, 1.0))


def basic_composition_sequence(costs: Iterable[tuple[float, float]]) -> PrivacyCost:
    """Basic composition of heterogeneous mechanisms: (Σ ε_i, Σ δ_i).

    Parameters
    ----------
    costs : iterable of (epsilon, delta) pairs or PrivacyCost
        The per-mechanism costs; at least one. Each ε_i > 0, δ_i ∈ [0, 1).

    Returns
    -------
    PrivacyCost
        ``(Σ ε_i, min(Σ δ_i, 1))``.

    Privacy
    -------
    Dwork & Roth 2014, Thm 3.16 (holds for adaptive composition).
    """
    if not isinstance(costs, Iterable):
        raise PrivacyParameterError(
            f"costs must be an iterable of (epsilon, delta) pairs, got {costs!r}."
        )
    total_eps = 0.0
    total_delta = 0.0
    n = 0
    for i, cost in enumerate(costs):
        try:
            eps, dlt = cost
        except (TypeError, ValueError):
            raise PrivacyParameterError(
                f"costs[{i}] must be an (epsilon, delta) pair, got {cost!r}."
            ) from None
        total_eps += check_epsilon(eps, name=f"costs[{i}].epsilon")
        total_delta += check_delta(dlt, name=f"costs[{i}].delta")
        n += 1
    if n == 0:
        raise PrivacyParameterError("costs is empty: there is nothing to compose.")
    return PrivacyCost(total_eps, min(total_delta, 1.0))


# --------------------------------------------------------------------------- advanced

#: Largest x with math.expm1(x) finite.
_EXP_MAX = math.log(float.fromhex("0x1.fffffffffffffp+1023"))


def _drv_epsilon(epsilon, k, delta_slack):
    if epsilon > _EXP_MAX:  # e^ε overflows: the DRV bound is +∞ (basic wins by far)
        return math.inf
    return math.sqrt(2.0 * k * math.log(1.0 / delta_slack)) * epsilon + k * epsilon * math.expm1(
        epsilon
    )


def _kov_epsilon(epsilon, k, delta_slack):
    # (e^ε − 1)/(e^ε + 1) = tanh(ε/2)
    drift = k * epsilon * math.tanh(epsilon / 2.0)
    second = drift + epsilon * math.sqrt(
        2.0 * k * math.log(math.e + math.sqrt(k * epsilon * epsilon) / delta_slack)
    )
    third = drift + epsilon * math.sqrt(2.0 * k * math.log(1.0 / delta_slack))
    return min(k * epsilon, second, third)


def advanced_composition(epsilon: float, delta: float, k: int, delta_slack: float,
                         variant: str = "drv") -> PrivacyCost:
    """Advanced composition of ``k`` (ε, δ)-DP mechanisms.

    Parameters
    ----------
    epsilon : float
        Per-step ε > 0.
    delta : float
        Per-step δ ∈ [0, 1).
    k : int
        Number of (adaptively) composed mechanisms, k ≥ 1.
    delta_slack : float
        The extra failure probability δ' ∈ (0, 1) traded for a smaller ε.
    variant : {"drv", "kov"}
        ``"drv"``: Dwork–Rothblum–Vadhan (Dwork & Roth 2014, Thm 3.20)::

            ε' = sqrt(2k ln(1/δ'))·ε + kε(e^ε − 1),   δ_total = kδ + δ'.

        ``"kov"``: the closed form of Kairouz–Oh–Viswanath 2015, Thm 3.5::

            ε' = min{ kε,
                      kε·(e^ε−1)/(e^ε+1) + ε·sqrt(2k·ln(e + sqrt(kε²)/δ')),
                      kε·(e^ε−1)/(e^ε+1) + ε·sqrt(2k·ln(1/δ')) },
            δ_total = 1 − (1−δ)^k (1−δ').

        KOV is never larger than kε and is below DRV in the usual regime.

    Returns
    -------
    PrivacyCost
        ``(ε', δ_total)``. ``"drv"`` returns the theorem's ε' as is, even where it
        exceeds basic composition's kε (use :func:`compose` with
        ``method="advanced"`` for the better of the two).

    Privacy
    -------
    The adaptive k-fold composition of (ε, δ)-DP mechanisms is
    (ε', δ_total)-DP, by Dwork, Rothblum & Vadhan 2010 (Dwork & Roth 2014,
    Thm 3.20) for ``"drv"`` and Kairouz, Oh & Viswanath 2015 (Thm 3.5) for
    ``"kov"``.

    Examples
    --------
    200 steps of pure ε = 0.05 at δ' = 10⁻⁶: DRV gives ≈ 4.23, KOV ≈ 3.92 (the
    "≈ 3.92 by advanced composition" figure is the KOV closed form).

    >>> round(advanced_composition(0.05, 0.0, 200, 1e-6).epsilon, 2)
    4.23
    >>> round(advanced_composition(0.05, 0.0, 200, 1e-6, variant="kov").epsilon, 2)
    3.92

    References
    ----------
    Dwork, Rothblum & Vadhan, "Boosting and Differential Privacy", FOCS 2010.
    Kairouz, Oh & Viswanath, "The Composition Theorem for Differential Privacy",
    ICML 2015.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    k = _check_k(k)
    delta_slack = _check_slack(delta_slack)
    if variant == "drv":
        return PrivacyCost(_drv_epsilon(epsilon, k, delta_slack), min(k * delta + delta_slack, 1.0))
    if variant == "kov":
        return PrivacyCost(
            _kov_epsilon(epsilon, k, delta_slack), _kov_total_delta(delta, k, delta_slack)
        )
    raise PrivacyParameterError(f"variant must be 'drv' or 'kov', got {variant!r}.")


# --------------------------------------------------------------------------- optimal


class _RRComposition:
    """Log-space evaluator of δ_pure(ε_g) for the k-fold randomized-response pair.

    δ_pure(ε_g) = Σ_l C(k,l) · max(0, e^{(k−l)ε} − e^{ε_g + lε}) / (1+e^ε)^k.

    The l-th term is non-zero iff (k − 2l)ε > ε_g. In logs it is
    ``base[l] + log(−expm1(ε_g − (k − 2l)ε))`` with
    ``base[l] = log C(k,l) + (k−l)ε − k·log(1+e^ε)``.
    """

    def __init__(self, epsilon, k, log_binom=None):
        self.epsilon = epsilon
        self.k = k
        ell = np.arange(k + 1, dtype=float)
        if log_binom is None:
            log_binom = _log_binomials(k)
        # Privacy loss of outcome l, (k − 2l)ε, decreasing in l; stored negated
        # (increasing) for searchsorted.
        self.neg_loss = (2.0 * ell - k) * epsilon
        self.base = log_binom + (k - ell) * epsilon - k * np.logaddexp(0.0, epsilon)

    def log_delta_pure(self, eps_g):
        # Terms with loss > ε_g, i.e. l < (k − ε_g/ε)/2: a prefix of the arrays.
        n = int(np.searchsorted(self.neg_loss, -eps_g, side="left"))
        if n == 0:
            return -math.inf
        gap = eps_g + self.neg_loss[:n]  # < 0
        terms = self.base[:n] + np.log(-np.expm1(gap))
        return _logsumexp(terms) + _LOG_SAFETY


def _logsumexp(x):
    # scipy.special.logsumexp is ~5× slower on these small 1-d arrays.
    m = float(np.max(x))
    if m == -math.inf:
        return -math.inf
    with np.errstate(under="ignore"):  # negligible terms underflowing to 0 is fine
        return m + math.log(float(np.sum(np.exp(x - m))))


def _log_binomials(k):
    ell = np.arange(k + 1, dtype=float)
    return gammaln(k + 1.0) - gammaln(ell + 1.0) - gammaln(k - ell + 1.0)


def _total_from_log_pure(log_pure, delta, k):
    """1 − (1−δ)^k (1 − δ_pure), given log δ_pure; stable for tiny and large values."""
    if log_pure == -math.inf:
        return _pure_part_delta(delta, k)
    pure = math.exp(log_pure)
    if pure >= 1.0:
        return 1.0
    return min(1.0, float(-math.expm1(k * math.log1p(-delta) + math.log1p(-pure))))


def _log_pure_target(delta_total, delta, k):
    """log of the largest δ_pure with 1 − (1−δ)^k (1 − δ_pure) ≤ delta_total (−inf if 0)."""
    target_pure = -math.expm1(math.log1p(-delta_total) - k * math.log1p(-delta))
    return math.log(target_pure) if target_pure > 0.0 else -math.inf


def _fits(rr, eps_g, log_target, delta, k, delta_total):
    """δ_total(ε_g) if it is ≤ delta_total, else None.

    δ_pure is compared in logs first, so a δ_pure that would underflow to 0.0 is
    never mistaken for one that fits a budget with no room for it.
    """
    log_pure = rr.log_delta_pure(eps_g)
    if log_pure > log_target:
        return None
    total = _total_from_log_pure(log_pure, delta, k)
    return total if total <= delta_total else None


def optimal_composition_delta(epsilon: float, delta: float, k: int, epsilon_total: float) -> float:
    """Exact δ of the optimal k-fold composition of (ε, δ)-DP at total ε_g.

    Parameters
    ----------
    epsilon : float
        Per-step ε > 0.
    delta : float
        Per-step δ ∈ [0, 1).
    k : int
        Number of (adaptively) composed mechanisms, k ≥ 1.
    epsilon_total : float
        The total ε_g ≥ 0 at which to evaluate δ.

    Returns
    -------
    float
        δ_total(ε_g) = 1 − (1−δ)^k · (1 − δ_pure(ε_g)), where

            δ_pure(ε_g) = Σ_{l=0}^{k} C(k,l) · max(0, e^{(k−l)ε} − e^{ε_g + lε}) / (1+e^ε)^k

        is the hockey-stick divergence, at e^{ε_g}, of the k-fold product of the
        randomized-response pair (e^ε, 1)/(1+e^ε) vs (1, e^ε)/(1+e^ε), which
        dominates every (ε, 0)-DP mechanism. Evaluated in log space, then
        δ_pure is rounded *up* by a relative 10⁻⁹, far more than the floating-point
        error (≲ 10⁻¹² relative for k ≤ 10⁴), so the value returned is an upper
        bound on the exact one.

    Privacy
    -------
    Every adaptive k-fold composition of (ε, δ)-DP mechanisms is
    (ε_g, δ_total(ε_g))-DP, and no smaller δ holds for all of them (Kairouz, Oh &
    Viswanath 2015, Thm 3.3; Murtagh & Vadhan 2016, Thm 1.5).

    References
    ----------
    Kairouz, Oh & Viswanath, ICML 2015; Murtagh & Vadhan, TCC 2016.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    k = _check_k(k)
    eps_g = check_epsilon(epsilon_total, name="epsilon_total", allow_zero=True)
    rr = _RRComposition(epsilon, k)
    return _total_from_log_pure(rr.log_delta_pure(eps_g), delta, k)


def _optimal_epsilon(epsilon, delta, k, delta_total, log_binom=None):
    """Smallest ε_g ≤ kε with δ_total(ε_g) ≤ delta_total, or None if none exists.

    Returns the pair (ε_g, δ_total(ε_g)); the δ was evaluated and is ≤ delta_total.
    """
    floor = _pure_part_delta(delta, k)
    if floor > delta_total:
        return None
    basic = k * epsilon
    rr = _RRComposition(epsilon, k, log_binom)
    log_target = _log_pure_target(delta_total, delta, k)
    if log_target == -math.inf:
        return basic, floor
    cache = {}

    def feasible(eps_g):
        total = _fits(rr, eps_g, log_target, delta, k, delta_total)
        if total is None:
            return False
        cache[eps_g] = total
        return True

    eps_g = _bisect_smallest(feasible, 0.0, basic)
    if eps_g not in cache:  # only when ε_g == basic and feasible(basic) never ran
        feasible(eps_g)
    return eps_g, cache.get(eps_g, floor)


def optimal_composition(epsilon: float, delta: float, k: int, delta_total: float) -> PrivacyCost:
    """Exact optimal k-fold composition of (ε, δ)-DP mechanisms at a total δ.

    Parameters
    ----------
    epsilon : float
        Per-step ε > 0.
    delta : float
        Per-step δ ∈ [0, 1).
    k : int
        Number of (adaptively) composed mechanisms, k ≥ 1.
    delta_total : float
        The total δ ∈ [0, 1) allowed for the composition; must be at least
        1 − (1−δ)^k (≈ kδ), which even ε_g = kε costs.

    Returns
    -------
    PrivacyCost
        ``(ε_g, δ_g)``: ε_g is the smallest total ε (to a relative 10⁻¹², rounded
        *up*) such that :func:`optimal_composition_delta` ``(ε, δ, k, ε_g)`` ≤
        ``delta_total``, never more than basic composition's kε; δ_g ≤
        ``delta_total`` is the exact δ at that ε_g.

    Raises
    ------
    PrivacyParameterError
        If ``delta_total`` < 1 − (1−δ)^k: then no finite total ε is valid, because
        each step may fail outright with probability δ.

    Privacy
    -------
    Every adaptive k-fold composition of (ε, δ)-DP mechanisms is (ε_g, δ_g)-DP,
    and this is optimal: for any smaller ε some k-tuple of (ε, δ)-DP mechanisms
    violates it (Kairouz, Oh & Viswanath 2015, Thm 3.3; Murtagh & Vadhan 2016,
    Thm 1.5). It is therefore never worse than :func:`basic_composition` or
    :func:`advanced_composition`.

    Examples
    --------
    >>> round(optimal_composition(0.05, 0.0, 200, 1e-6).epsilon, 3)
    3.276

    References
    ----------
    Kairouz, Oh & Viswanath, "The Composition Theorem for Differential Privacy",
    ICML 2015. Murtagh & Vadhan, "The Complexity of Computing the Optimal
    Composition of Differential Privacy", TCC 2016.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    k = _check_k(k)
    delta_total = check_delta(delta_total, name="delta_total")
    result = _optimal_epsilon(epsilon, delta, k, delta_total)
    if result is None:
        raise PrivacyParameterError(
            f"delta_total={delta_total!r} is below 1 − (1−δ)^k = "
            f"{_pure_part_delta(delta, k):.6g} for δ={delta!r}, k={k}: each of the k steps "
            "may fail outright with probability δ, so no finite total ε is valid. "
            "Increase delta_total or use steps with a smaller δ."
        )
    return PrivacyCost(*result)


# --------------------------------------------------------------------------- compose / calibrate


def compose(epsilon: float, delta: float, k: int, total_delta: float,
            method: str = "optimal") -> PrivacyCost:
    """Total cost of ``k`` (ε, δ)-DP steps within a total δ budget, by ``method``.

    Parameters
    ----------
    epsilon : float
        Per-step ε > 0.
    delta : float
        Per-step δ ∈ [0, 1).
    k : int
        Number of steps, k ≥ 1.
    total_delta : float
        The total δ ∈ [0, 1) available. Any part not needed for the steps' own δ
        is used as the slack δ' of the advanced / optimal theorems.
    method : {"basic", "advanced", "kov", "optimal"}
        ``"basic"``: (kε, kδ). ``"advanced"``: the better of basic and DRV
        advanced composition (slack δ' = total_delta − kδ). ``"kov"``: the KOV
        closed form (slack from 1 − (1−δ)^k (1−δ') = total_delta; kε when there is
        no slack). ``"optimal"``: :func:`optimal_composition`.

    Returns
    -------
    PrivacyCost
        The total (ε, δ); δ ≤ ``total_delta``.

    Raises
    ------
    PrivacyParameterError
        If the steps' own δ does not fit in ``total_delta``.

    Privacy
    -------
    As in the theorem selected by ``method``; see :func:`basic_composition`,
    :func:`advanced_composition` and :func:`optimal_composition`.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    k = _check_k(k)
    total_delta = check_delta(total_delta, name="total_delta")
    method = _check_method(method)
    _check_step_delta_fits(delta, k, total_delta, method)
    return _compose(epsilon, delta, k, total_delta, method)


def _check_step_delta_fits(step_delta, k, total_delta, method):
    if method in ("basic", "advanced"):
        needed = k * step_delta
        how = "k·δ"
    else:
        needed = _pure_part_delta(step_delta, k)
        how = "1 − (1−δ)^k"
    if needed > total_delta:
        raise PrivacyParameterError(
            f"The steps' own δ does not fit: {how} = {needed:.6g} for δ={step_delta!r}, "
            f"k={k} exceeds total_delta={total_delta!r}. Use steps with a smaller δ "
            "(e.g. pure ε-DP steps, δ = 0) or a larger total δ."
        )


def _compose(epsilon, delta, k, total_delta, method, log_binom=None):
    """:func:`compose` on validated arguments (the steps' δ known to fit)."""
    basic = PrivacyCost(k * epsilon, min(k * delta, 1.0))
    if method == "basic":
        return basic
    if method == "optimal":
        return PrivacyCost(*_optimal_epsilon(epsilon, delta, k, total_delta, log_binom))
    variant = "drv" if method == "advanced" else "kov"
    slack = _largest_slack(total_delta, delta, k, variant)
    if variant == "drv":
        if slack <= 0.0:
            return basic
        eps = _drv_epsilon(epsilon, k, slack)
        return basic if basic.epsilon <= eps else PrivacyCost(eps, k * delta + slack)
    if slack <= 0.0:
        # KOV's first term, kε, at δ' → 0: 1 − (1−δ)^k ≤ kδ.
        return PrivacyCost(k * epsilon, _pure_part_delta(delta, k))
    return PrivacyCost(_kov_epsilon(epsilon, k, slack), _kov_total_delta(delta, k, slack))


def calibrate(total_epsilon: float, total_delta: float, k: int, method: str = "optimal",
              step_delta: float = 0.0) -> PrivacyCost:
    """Largest per-step ε such that ``k`` steps fit in a total (ε, δ) budget.

    Parameters
    ----------
    total_epsilon : float
        Total ε > 0 available for the k steps.
    total_delta : float
        Total δ ∈ [0, 1) available for the k steps.
    k : int
        Number of steps, k ≥ 1.
    method : {"basic", "advanced", "kov", "optimal"}, default="optimal"
        Composition theorem used to account for the k steps (see :func:`compose`).
        ``"advanced"`` is DRV advanced composition but never worse than basic.
    step_delta : float, default=0.0
        Per-step δ ∈ [0, 1) of the mechanisms to be run (0: pure ε-DP steps). The
        rest of ``total_delta`` is the slack of the advanced / optimal theorems.
        **Ignored for** ``method="basic"``, which splits the budget evenly and
        returns per-step δ = total_delta / k (basic composition's ε does not
        depend on δ, so the steps may as well have all of it).

    Returns
    -------
    PrivacyCost
        ``(per_step_epsilon, per_step_delta)``. Composing k steps with these
        parameters by ``method`` (:func:`compose` ``(ε, δ, k, total_delta,
        method)``) costs at most ``(total_epsilon, total_delta)`` — checked in
        floating point. The ε is the largest such to a relative 10⁻¹² (found by
        monotone bisection, rounded *down*) and never smaller than total_epsilon/k.

    Raises
    ------
    PrivacyParameterError
        On invalid parameters, or if the steps' own δ already exceeds the budget:
        k·step_delta > total_delta (basic/advanced) or 1 − (1−step_delta)^k >
        total_delta (kov/optimal).

    Privacy
    -------
    Running k (ε, δ)-DP mechanisms with the returned parameters is
    (total_epsilon, total_delta)-DP by the selected theorem: basic composition
    (Dwork & Roth 2014, Thm 3.16), DRV advanced composition (Dwork & Roth 2014,
    Thm 3.20), KOV closed form (Kairouz, Oh & Viswanath 2015, Thm 3.5) or the
    exact optimal composition (KOV 2015, Thm 3.3; Murtagh & Vadhan 2016).

    Examples
    --------
    >>> round(calibrate(1.0, 1e-6, 100, method="basic").epsilon, 4)
    0.01
    >>> calibrate(1.0, 1e-6, 100).epsilon > calibrate(1.0, 1e-6, 100, method="kov").epsilon
    True
    """
    total_epsilon = check_epsilon(total_epsilon, name="total_epsilon")
    total_delta = check_delta(total_delta, name="total_delta")
    k = _check_k(k)
    method = _check_method(method)
    step_delta = check_delta(step_delta, name="step_delta")

    if method == "basic":
        eps = total_epsilon / k
        while k * eps > total_epsilon:
            eps = _down(eps)
        dlt = total_delta / k
        while min(k * dlt, 1.0) > total_delta:
            dlt = _down(dlt)
        return PrivacyCost(eps, dlt)

    _check_step_delta_fits(step_delta, k, total_delta, method)
    log_binom = _log_binomials(k) if method == "optimal" else None

    def composes(eps):
        return _compose(eps, step_delta, k, total_delta, method, log_binom).epsilon <= total_epsilon

    if method == "optimal":
        # δ_total(ε_g) is non-increasing in ε_g, so "optimal ε_g ≤ total ε" iff
        # δ_total(total ε) ≤ total δ: one O(k) evaluation instead of a bisection.
        # Evaluating a hair below total ε leaves room for compose's own bisection.
        eps_g = total_epsilon * (1.0 - 16 * _BISECT_RTOL)
        log_target = _log_pure_target(total_delta, step_delta, k)

        def feasible(eps):
            rr = _RRComposition(eps, k, log_binom)
            return _fits(rr, eps_g, log_target, step_delta, k, total_delta) is not None

    else:
        feasible = composes

    # Basic composition's split always fits (every method is at least as good).
    basic = total_epsilon / k
    while k * basic > total_epsilon:
        basic = _down(basic)
    lo = basic
    if not feasible(lo):
        return PrivacyCost(basic, step_delta)
    # An upper end that does not fit: every bound is ≥ ε for one step (k ≥ 1) and,
    # for "optimal", δ_pure → 1 as ε → ∞. Double until infeasible.
    hi = max(2.0 * lo, total_epsilon)
    for _ in range(64):
        if not feasible(hi):
            break
        lo = hi
        hi *= 2.0
    else:  # pragma: no cover - δ_pure → 1 long before this
        hi = lo
    eps = _bisect_largest(feasible, lo, hi)
    # Confirm the round trip through compose() exactly as a caller would run it;
    # shrink (rarely, by a relative 10⁻¹⁰ a step) if rounding says otherwise.
    for _ in range(64):
        if eps <= basic or composes(eps):
            break
        eps = max(basic, eps * (1.0 - 1e-10))
    return PrivacyCost(max(eps, basic), step_delta)
