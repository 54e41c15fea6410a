"""The parameter solver of Yan's predictor: BetweenThresholds' (ε_bt, δ_bt) and the teachers.

:func:`shrinkage_parameters` sizes the BetweenThresholds run of a predictor for a cap
of hard queries, in one of two calibrations:

* ``"bsu"`` (Yan, Alg. 2): one BSU instance per hard query, the transcript's (ε, δ)
  split over the cap of instances — by the numerical accountant (``"tight"``) or by
  the earlier closed form (``"paper"``);
* ``"stemmer"``: one instance of Stemmer's calibration (2024, Thm 4.3) with cutoff
  c = max(cap, ⌈4·ln(2/δ)⌉) carries the whole (ε, δ); its gap grows like √c instead
  of the BSU composition's ≈ cap·ln(1/δ_bt).
* ``"charged"``: the same single instance with cutoff c = cap (any cap ≥ 1) and the
  noise certified by the charged lemma (:mod:`skdp.mechanisms._charged_calibration`,
  about half of Stemmer's at c = 59, and no floor on c). Its teacher count is the
  fewest k at which the certified noise is at most a quarter of the gap — Stemmer's
  own ratio (gap 16·…, noise 4·…), so the two are compared at the same noise-to-gap
  ratio — and :func:`false_hard_teachers` raises it further where needed.

Either way it returns the fewest teachers the gap condition allows for the
thresholds, and ``"auto"`` takes the calibration needing fewer.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ..accounting import ApproxDP, PlanItem, account, calibrate, calibrate_plan, compose
from ..exceptions import PrivacyParameterError
from ..mechanisms._charged_calibration import charged_min_gap, charged_noise_scale
from ..mechanisms.between_thresholds import BetweenThresholds

__all__ = ["shrinkage_parameters"]

#: Yan's thresholds (Alg. 2 step (c)): t_l = 1/2 − 1/8, t_u = 1/2 + 1/8.
T_LOWER, T_UPPER = 3.0 / 8.0, 5.0 / 8.0
_BSU_MAX_EPSILON = 0.999  # BetweenThresholds' BSU calibration needs ε < 1
ACCOUNTING = ("tight", "paper")
CALIBRATIONS = ("auto", "bsu", "stemmer", "charged")
#: Noise-to-gap ratio at which the "charged" teacher count is read (Stemmer's 4/16).
_CHARGED_NOISE_RATIO = 0.25
#: Shares f of δ given to the cap instances (δ_bt = f·δ/cap) that "tight" tries. 1/2 is
#: the paper's split and every candidate ε_bt is at least the exact optimal
#: composition's, so "tight" never needs more teachers than "paper". The best f is near
#: 1 for small caps (the slack buys almost nothing), near 0.4 for caps in the hundreds.
_DELTA_FRACTIONS = (0.3, 0.4, 0.5, 0.6, 0.75, 0.9, 0.99)


def stemmer_cutoff(delta, cap):
    """Cutoff of the one Stemmer instance: the cap, raised to Thm 4.3's 4·ln(2/δ)."""
    return max(int(cap), math.ceil(4.0 * math.log(2.0 / delta)))


def _min_teachers(eps_bt, delta_bt, thresholds=(T_LOWER, T_UPPER), **calibration):
    """Fewest teachers k with t_u − t_l ≥ BetweenThresholds' minimum gap at Δ = 1/k."""
    lower, upper = thresholds
    probe = BetweenThresholds(0.0, 1e12, eps_bt, delta_bt, sensitivity=1.0, random_state=0,
                              **calibration)
    k = max(1, math.ceil(probe.min_gap / (upper - lower)))
    while True:  # guard against rounding at the boundary: let the mechanism decide
        try:
            BetweenThresholds(lower, upper, eps_bt, delta_bt, sensitivity=1.0 / k,
                              random_state=0, **calibration)
            return k
        except PrivacyParameterError:
            k += 1


@functools.lru_cache(maxsize=256)
def _tight_epsilon_bt(epsilon, delta, cap, delta_bt):
    """Largest ε_bt with ``cap × ApproxDP(ε_bt, δ_bt)`` within (ε, δ), by the accountant
    (:func:`skdp.accounting.calibrate_plan`; for one group of equal events it evaluates
    the exact optimal composition)."""
    plan = [PlanItem(ApproxDP, count=cap, delta=delta_bt)]
    return calibrate_plan(plan, epsilon, delta).epsilons[0]


def shrinkage_parameters(epsilon: float, delta: float, max_hard_queries: int,
                         accounting: str = "tight", calibration: str = "bsu",
                         thresholds: tuple[float, float] = (T_LOWER, T_UPPER)) -> dict[str, Any]:
    """BetweenThresholds parameters for a cap of ``max_hard_queries`` hard queries.

    Returns a dict with ``calibration`` (``"bsu"``, ``"stemmer"`` or ``"charged"``),
    ``epsilon_bt``, ``delta_bt`` (each instance is (ε_bt, δ_bt)-DP), ``max_hard``
    (cutoff of one instance: 1 for BSU, c = max(cap, ⌈4·ln(2/δ)⌉) for Stemmer, the
    cap for charged), ``min_teachers`` (the fewest teachers the gap condition allows
    between ``thresholds``; charged: at noise ≤ gap/4), ``cumulative_epsilon`` (the
    total ε at total δ of the first 1, 2, …, cap BSU instances by the same
    accounting; for a single instance its ε) and
    ``planned_epsilon`` (the ε of the whole planned run — what a predictor reserves
    at its first answer).

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
        condition. Both cap ε_bt below 1, as BSU needs. Ignored for Stemmer (one
        instance, no composition).
    calibration : {"bsu", "stemmer", "charged", "auto"}, default="bsu"
        ``"stemmer"``: one instance with (ε_bt, δ_bt) = (ε, δ) and cutoff c;
        ``"charged"``: one instance with cutoff c = cap and the charged lemma's noise;
        ``"auto"``: whichever of the three needs fewer teachers (ties: BSU, then
        Stemmer).
    thresholds : (float, float), default=(3/8, 5/8)
        (t_l, t_u) on the vote fraction; the teacher count scales as 1/(t_u − t_l).

    Privacy
    -------
    Each BSU instance is (ε_bt, δ_bt)-DP (Yan, Lemma 1); the accountant (or, for
    ``"paper"``, the exact optimal composition) certifies that ``cap`` of them
    compose to (ε, δ), and ``cumulative_epsilon[i-1]`` is its bound for the first i.
    A Stemmer instance with cutoff c ≥ 4·ln(2/δ) and gap ≥ 16Δ/ε·√(c·ln(2/δ)) is
    (ε, δ)-DP (Stemmer 2024, Thm 4.3); a charged instance is (ε, δ)-DP with the noise
    the mechanism certifies for its gap, sensitivity and cutoff (the charged lemma,
    checked by :class:`~skdp.mechanisms.between_thresholds.BetweenThresholds`).
    Every choice here depends only on (ε, δ, cap, thresholds), never on data.

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
    if calibration not in CALIBRATIONS:
        raise ValueError(f"calibration must be one of {CALIBRATIONS}, got {calibration!r}.")
    lower, upper = (float(t) for t in thresholds)
    if not 0.0 <= lower < upper <= 1.0:
        raise ValueError(f"thresholds must satisfy 0 ≤ t_l < t_u ≤ 1, got {thresholds!r}.")
    args = (float(epsilon), float(delta), int(max_hard_queries))
    options = []
    if calibration in ("auto", "bsu"):
        options.append(_shrinkage_parameters(*args, accounting, (lower, upper)))
    if calibration in ("auto", "stemmer"):
        options.append(_stemmer_parameters(*args, (lower, upper)))
    if calibration in ("auto", "charged"):
        options.append(_charged_parameters(*args, (lower, upper)))
    params = min(options, key=lambda p: p["min_teachers"])
    return {**params, "cumulative_epsilon": params["cumulative_epsilon"].copy(),
            "thresholds": (lower, upper)}


#: Probability that a stream of ``planned_queries`` queries meets any ⊤ on a unanimous
#: vote. Such a ⊤ is harmful: its random label is wrong half the time, and then every
#: teacher must agree with a wrong label far from the boundary.
FALSE_HARD_PROBABILITY = 0.05


def false_hard_teachers(params, thresholds, planned_queries):
    """Fewest teachers for which a unanimous vote (q ∈ {0, 1}) is answered ⊤ with
    probability ≤ β/``planned_queries``, β = ``FALSE_HARD_PROBABILITY`` (a union
    bound over the stream).

    Stemmer: ⊤ on q = 1 needs ν < −(1 − t_u), ν ~ Lap(b₁/k), probability
    ½·exp(−(1 − t_u)·k/b₁). BSU: it needs ν + μ ≤ −(1 − t_u); bounding each of ν
    (scale 6/(ε_bt·k)) and −μ (scale 2/(ε_bt·k)) below half that distance gives at
    most exp(−(1 − t_u)·ε_bt·k/12). Symmetric for q = 0 with t_l.
    """
    a = min(thresholds[0], 1.0 - thresholds[1])
    if a <= 0:
        return math.inf
    per_query = FALSE_HARD_PROBABILITY / planned_queries
    if params["calibration"] == "charged":  # ⊤ on q = 1: ½·exp(−a/b), b = b(k) ↓ in k
        gap, need = thresholds[1] - thresholds[0], a / math.log(0.5 / per_query)
        return _charged_teachers(params["epsilon_bt"], params["delta_bt"], params["max_hard"],
                                 gap, need, params["min_teachers"])
    if params["calibration"] == "stemmer":
        b1 = 4.0 / params["epsilon_bt"] * math.sqrt(params["max_hard"]
                                                    * math.log(2.0 / params["delta_bt"]))
        return math.ceil(b1 * math.log(0.5 / per_query) / a)
    return math.ceil(12.0 * math.log(1.0 / per_query) / (a * params["epsilon_bt"]))


#: Half-widths g of the symmetric bands (½ − g, ½ + g) that ``thresholds="auto"`` tries.
_HALF_WIDTHS = (1 / 32, 3 / 64, 1 / 16, 5 / 64, 3 / 32, 1 / 8, 5 / 32, 3 / 16, 1 / 4)


def design(epsilon, delta, max_hard_queries, accounting, calibration, planned_queries):
    """``thresholds="auto"``: the band and calibration needing the fewest teachers,
    counting both the privacy gap and :func:`false_hard_teachers` (public inputs only).

    Returns :func:`shrinkage_parameters`' dict, with ``min_teachers`` the larger of the
    two requirements and ``thresholds`` the band chosen.
    """
    best = None
    for g in _HALF_WIDTHS:
        band = (0.5 - g, 0.5 + g)
        for cal in CALIBRATIONS[1:] if calibration == "auto" else (calibration,):
            p = shrinkage_parameters(epsilon, delta, max_hard_queries, accounting, cal, band)
            p["min_teachers"] = max(p["min_teachers"],
                                    false_hard_teachers(p, band, planned_queries))
            if best is None or p["min_teachers"] < best["min_teachers"]:
                best = p
    return best


@functools.lru_cache(maxsize=64)
def _stemmer_parameters(epsilon, delta, max_hard_queries, thresholds):
    cutoff = stemmer_cutoff(delta, max_hard_queries)
    k = _min_teachers(epsilon, delta, thresholds, calibration="stemmer", max_hard=cutoff)
    return {
        "calibration": "stemmer",
        "epsilon_bt": epsilon,
        "delta_bt": delta,
        "max_hard": cutoff,
        "min_teachers": k,
        "cumulative_epsilon": np.array([epsilon]),
        "planned_epsilon": epsilon,
    }


@functools.lru_cache(maxsize=4096)
def _charged_noise(epsilon, delta, cap, gap, k):
    """The least noise (in vote units) the charged lemma certifies for k teachers: the
    lemma is invariant under scaling Δ, the gap and b together, so this is the count
    noise for gap·k at Δ = 1, over k (∞ where the gap is below the lemma's minimum)."""
    if gap * k <= charged_min_gap(epsilon, delta, cap) * (1.0 + 1e-9):
        return math.inf
    return charged_noise_scale(epsilon, delta, cap, gap=gap * k) / k


@functools.lru_cache(maxsize=256)
def _charged_teachers(epsilon, delta, cap, gap, max_noise, k_min=1):
    """Fewest k ≥ ``k_min`` whose certified noise is ≤ ``max_noise`` (b(k) decreases)."""
    def ok(k):
        return _charged_noise(epsilon, delta, cap, gap, k) <= max_noise

    lo, hi = k_min - 1, max(k_min, 1)
    while not ok(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


@functools.lru_cache(maxsize=64)
def _charged_parameters(epsilon, delta, max_hard_queries, thresholds):
    cap = int(max_hard_queries)
    gap = thresholds[1] - thresholds[0]
    k = _charged_teachers(epsilon, delta, cap, gap, _CHARGED_NOISE_RATIO * gap)
    return {
        "calibration": "charged",
        "epsilon_bt": epsilon,
        "delta_bt": delta,
        "max_hard": cap,
        "min_teachers": k,
        "cumulative_epsilon": np.array([epsilon]),
        "planned_epsilon": epsilon,
    }


@functools.lru_cache(maxsize=64)
def _bsu_cumulative(eps_bt, delta_bt, cap, delta, accounting):
    """Total ε at δ of the first 1, …, cap BSU instances, by the chosen accounting."""
    if accounting == "paper":
        return np.array([compose(eps_bt, delta_bt, i, delta, method="optimal").epsilon
                         for i in range(1, cap + 1)])
    return np.array([account([(ApproxDP(eps_bt, delta_bt), i)]).epsilon(delta)
                     for i in range(1, cap + 1)])


@functools.lru_cache(maxsize=256)
def _shrinkage_parameters(epsilon, delta, max_hard_queries, accounting="tight",
                          thresholds=(T_LOWER, T_UPPER)):
    cap = int(max_hard_queries)
    if accounting == "paper":
        delta_bt = delta / (2.0 * cap)
        eps_bt = calibrate(epsilon, delta, cap, method="optimal", step_delta=delta_bt).epsilon
        eps_bt = min(eps_bt, _BSU_MAX_EPSILON)
    else:
        best = None
        for fraction in _DELTA_FRACTIONS:
            d_bt = fraction * delta / cap
            e_bt = min(_tight_epsilon_bt(epsilon, delta, cap, d_bt), _BSU_MAX_EPSILON)
            candidate = (_min_teachers(e_bt, d_bt, thresholds), -e_bt, d_bt)
            best = candidate if best is None or candidate < best else best
        eps_bt, delta_bt = -best[1], best[2]
    cumulative = _bsu_cumulative(eps_bt, delta_bt, cap, delta, accounting)
    cumulative = np.minimum(np.maximum.accumulate(cumulative), epsilon)
    return {
        "calibration": "bsu",
        "epsilon_bt": eps_bt,
        "delta_bt": delta_bt,
        "max_hard": 1,
        "min_teachers": _min_teachers(eps_bt, delta_bt, thresholds),
        "cumulative_epsilon": cumulative,
        "planned_epsilon": float(cumulative[-1]),
    }
