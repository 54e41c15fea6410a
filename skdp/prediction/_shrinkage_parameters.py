"""The parameter solver of Yan's predictor: BetweenThresholds' (ε_bt, δ_bt) and the teachers.

:func:`shrinkage_parameters` splits the transcript's (ε, δ) over the cap of
BetweenThresholds instances — by the numerical accountant (``"tight"``) or by the
earlier closed form (``"paper"``) — and finds the fewest teachers the BSU gap
condition then allows.
"""

import functools
import math

import numpy as np

from ..accounting import ApproxDP, PlanItem, account, calibrate, calibrate_plan, compose
from ..exceptions import PrivacyParameterError
from ..mechanisms.between_thresholds import BetweenThresholds

__all__ = ["shrinkage_parameters"]

#: Yan's thresholds (Alg. 2 step (c)): t_l = 1/2 − 1/8, t_u = 1/2 + 1/8.
T_LOWER, T_UPPER = 3.0 / 8.0, 5.0 / 8.0
_BSU_MAX_EPSILON = 0.999  # BetweenThresholds' BSU calibration needs ε < 1
ACCOUNTING = ("tight", "paper")
#: Shares f of δ given to the cap instances (δ_bt = f·δ/cap) that "tight" tries. 1/2 is
#: the paper's split and every candidate ε_bt is at least the exact optimal
#: composition's, so "tight" never needs more teachers than "paper". The best f is near
#: 1 for small caps (the slack buys almost nothing), near 0.4 for caps in the hundreds.
_DELTA_FRACTIONS = (0.3, 0.4, 0.5, 0.6, 0.75, 0.9, 0.99)


def _min_teachers(eps_bt, delta_bt):
    """Fewest teachers k with t_u − t_l ≥ BetweenThresholds' BSU minimum gap at Δ = 1/k."""
    probe = BetweenThresholds(0.0, 1e12, eps_bt, delta_bt, sensitivity=1.0, random_state=0)
    k = max(1, math.ceil(probe.min_gap / (T_UPPER - T_LOWER)))
    while True:  # guard against rounding at the boundary: let the mechanism decide
        try:
            BetweenThresholds(T_LOWER, T_UPPER, eps_bt, delta_bt, sensitivity=1.0 / k,
                              random_state=0)
            return k
        except PrivacyParameterError:
            k += 1


def _tight_epsilon_bt(epsilon, delta, cap, delta_bt):
    """Largest ε_bt with ``cap × ApproxDP(ε_bt, δ_bt)`` within (ε, δ), by the accountant
    (:func:`skdp.accounting.calibrate_plan`; for one group of equal events it evaluates
    the exact optimal composition)."""
    plan = [PlanItem(ApproxDP, count=cap, delta=delta_bt)]
    return calibrate_plan(plan, epsilon, delta).epsilons[0]


def shrinkage_parameters(epsilon, delta, max_hard_queries, accounting="tight"):
    """Per-instance BetweenThresholds parameters for a cap of ``max_hard_queries``.

    Returns a dict with ``epsilon_bt``, ``delta_bt`` (each instance is
    (ε_bt, δ_bt)-DP), ``min_teachers`` (the fewest teachers the BSU gap condition
    allows with t_u − t_l = 1/4) and ``cumulative_epsilon`` (the total ε at total δ
    of the first 1, 2, …, cap instances, by the same accounting).

    Parameters
    ----------
    epsilon, delta : float
        Total (ε, δ) of the whole transcript (δ > 0).
    max_hard_queries : int
        The cap v on BetweenThresholds instances.
    accounting : {"tight", "paper"}, default="tight"
        ``"paper"`` (the earlier calibration): δ_bt = δ/(2·cap) and ε_bt the largest ε whose
        cap-fold exact optimal composition (:func:`skdp.accounting.calibrate`,
        Kairouz, Oh & Viswanath 2015) stays within (ε, δ). ``"tight"``: every
        instance is an :class:`~skdp.accounting.ApproxDP` (ε_bt, δ_bt) event and the
        plan ``cap × ApproxDP`` goes through :func:`skdp.accounting.calibrate_plan`;
        the share of δ given to the instances (δ_bt = f·δ/cap, the rest being the
        composition's slack) is chosen among a fixed grid of f to minimise the
        teacher count, which depends on ε_bt and ln(1/δ_bt) through the gap
        condition. Both cap ε_bt below 1, as BSU needs.

    Privacy
    -------
    Each BetweenThresholds instance is (ε_bt, δ_bt)-DP (Yan, Lemma 1); the
    accountant (or, for ``"paper"``, the exact optimal composition) certifies that
    ``cap`` of them compose to (ε, δ), and ``cumulative_epsilon[i-1]`` is its
    bound for the first i. The choice of f depends only on (ε, δ, cap).

    Examples
    --------
    >>> from skdp.prediction import shrinkage_parameters
    >>> p = shrinkage_parameters(1.0, 1e-6, 8, accounting="paper")
    >>> round(p["epsilon_bt"], 3), p["min_teachers"]
    (0.125, 8436)
    >>> shrinkage_parameters(1.0, 1e-6, 8)["min_teachers"] < 8436
    True
    """
    if accounting not in ACCOUNTING:
        raise ValueError(f"accounting must be one of {ACCOUNTING}, got {accounting!r}.")
    params = _shrinkage_parameters(float(epsilon), float(delta), int(max_hard_queries),
                                   accounting)
    return {**params, "cumulative_epsilon": params["cumulative_epsilon"].copy()}


@functools.lru_cache(maxsize=64)
def _shrinkage_parameters(epsilon, delta, max_hard_queries, accounting="tight"):
    cap = int(max_hard_queries)
    if accounting == "paper":
        delta_bt = delta / (2.0 * cap)
        eps_bt = calibrate(epsilon, delta, cap, method="optimal", step_delta=delta_bt).epsilon
        eps_bt = min(eps_bt, _BSU_MAX_EPSILON)
        cumulative = np.array([compose(eps_bt, delta_bt, i, delta, method="optimal").epsilon
                               for i in range(1, cap + 1)])
    else:
        best = None
        for fraction in _DELTA_FRACTIONS:
            d_bt = fraction * delta / cap
            e_bt = min(_tight_epsilon_bt(epsilon, delta, cap, d_bt), _BSU_MAX_EPSILON)
            candidate = (_min_teachers(e_bt, d_bt), -e_bt, d_bt)
            best = candidate if best is None or candidate < best else best
        eps_bt, delta_bt = -best[1], best[2]
        cumulative = np.array([account([(ApproxDP(eps_bt, delta_bt), i)]).epsilon(delta)
                               for i in range(1, cap + 1)])
    cumulative = np.minimum(np.maximum.accumulate(cumulative), epsilon)
    return {
        "epsilon_bt": eps_bt,
        "delta_bt": delta_bt,
        "min_teachers": _min_teachers(eps_bt, delta_bt),
        "cumulative_epsilon": cumulative,
    }
