"""Per-phase numbers of RectanglesPERP's schedule (Alg. 5, App. B): solving one phase.

:func:`~skdp.prediction.perp_parameters` (in ``_perp_parameters``) carries the
derivation; this module holds what it solves: one phase's numbers for the
``"paper"`` and ``"practical"`` presets (the ``"sharp"`` preset's are in
``_perp_sharp``), the geometric δ schedule, the fixed point on t_1, and the
inequalities :meth:`~skdp.prediction.PERPParameters.violations` checks.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

from ..accounting import DeltaSchedule
from ._perp_sharp import SHARP_PRESETS, phase_alpha, rows_needed, solve_sharp_phase

__all__ = [
    "GROWTH",
    "PhaseParameters",
    "delta_schedule",
    "first_phase_length",
    "length_needed",
    "phase",
    "phase_checks",
]

#: Phase lengths grow by this integer factor: t_p = t_1·3^(p−1) (see the derivation).
GROWTH = 3
#: Phases scanned for the fixed point of t_1; R_p/3^(p−1) is decreasing long before.
_SCAN_PHASES = 80

@dataclass(frozen=True)
class PhaseParameters:
    """The numbers of one phase p (see :func:`perp_parameters` for their meaning)."""

    phase: int
    alpha: float
    beta: float
    delta: float
    epsilon_instance: float
    delta_instance: float
    length: int
    slice_size: int
    max_hard: int
    k_prime: int
    threshold: float
    min_gap: float
    bt_noise_scale: float
    stopper_noise_scale: float
    slice_noise_bound: float
    #: t_u of the copies (2Δ for "paper" / "practical", t_l + 4σ for "sharp").
    upper_threshold: float = 0.0
    #: ε of the copies' Stopper ("sharp": the svt Stopper's ε_s; else ε_0).
    stopper_epsilon: float = 0.0
    #: The copies' BetweenThresholds analysis: "stemmer" (Thm 4.3) or "charged"
    #: (the lemma in skdp.mechanisms._charged_calibration; preset "charged" only).
    bt_calibration: str = "stemmer"


def _noise_bound(q, d):
    return q.bt_noise_scale * math.log(8 * d * q.length / q.beta)


def _m_floor(preset, q):
    if preset == "paper":
        return 4 * q.threshold
    # Outside points (count ≥ m̂ ≥ m) must read "high": m − noise > t_h = 2Δ.
    return 2 * q.threshold + q.bt_noise_scale * math.log(8 * q.length / q.beta)


def _k_floor(preset, q):
    if preset == "paper":
        return 2 * q.slice_size
    # At a Stopper halt at least m mediums were collected (Stopper noise bounded).
    return q.slice_size + q.stopper_noise_scale * math.log(4 * (q.length + 1) / q.beta)


def _paper_delta(epsilon, d, q, k):
    """Def. B.5's Δ_p = (4·ln(1/δ_p)/ε)·√(k_p·ln(2d/δ_p))·ln(8d·t_p/β_p)."""
    return (4 * math.log(1 / q.delta) / epsilon * math.sqrt(k * math.log(2 * d / q.delta))
            * math.log(8 * d * q.length / q.beta))


def _instance_privacy(epsilon, delta_p, d, preset):
    """(ε_0, δ_0) of every ChallengeBT copy in a phase with per-record δ_p."""
    rsc_factor = math.log(2.0 / delta_p)  # RSC: ε_0·ln(1/δ̂) with δ̂ = δ_p/2
    factor = rsc_factor if preset == "paper" else min(2.0 * d, rsc_factor)
    return epsilon / factor, delta_p / (8.0 * d)


def _challenge_bt_numbers(eps0, delta0, k, steps):
    """k', the BT noise scale and ChallengeBT's minimum gap (Alg. 4 / Thm 4.3)."""
    ell = math.log(4.0 / delta0)
    k_prime = math.ceil(k + 8.0 / eps0 * math.log(2.0 / delta0) * math.log(steps / delta0))
    sigma = 4.0 / eps0 * math.sqrt(k_prime * ell)
    gap = max(32.0 / eps0 * math.sqrt(k * ell), 16.0 / eps0 * math.sqrt(k_prime * ell))
    return k_prime, sigma, gap


def _solve_phase(key, p, length):
    """Phase p's numbers for a phase of ``length`` queries (inner fixed point on k)."""
    epsilon, delta, alpha, beta, _, d, preset, overrides = key
    over = dict(overrides)
    sched = delta_schedule(delta, 1)
    alpha_p, beta_p = alpha / 2**p, beta / 2**p
    if preset in SHARP_PRESETS:
        alpha_p = phase_alpha(alpha, p)
    delta_p = float(sched.phase_budget(p)) / float(length)
    if preset in SHARP_PRESETS:  # the global ε goes in; the copies' split is made there
        probe = PhaseParameters(p, alpha_p, beta_p, delta_p, epsilon, delta_p, int(length), 0,
                                0, 0, 0.0, 0.0, 0.0, 0.0, 0.0)
        return solve_sharp_phase(probe, over, calibration=_calibration(preset))
    eps0, delta0 = _instance_privacy(epsilon, delta_p, d, preset)
    steps = int(length) + 1  # ChallengeBT's T: one stopping query per step, plus slack
    slice_bound = math.log(4 * d / beta_p) / eps0
    stopper_scale = 8.0 * math.log(2.0 / delta0) / eps0
    k_min = math.ceil(4.0 * math.log(4.0 / delta0))
    probe = PhaseParameters(p, alpha_p, beta_p, delta_p, eps0, delta0, int(length), 0, 0, 0,
                            0.0, 0.0, 0.0, stopper_scale, slice_bound)

    def numbers(k):
        k_prime, sigma, gap = _challenge_bt_numbers(eps0, delta0, k, steps)
        q = replace(probe, bt_noise_scale=sigma, max_hard=k)
        if "threshold" in over:
            threshold = max(float(over["threshold"]), gap)
        else:
            threshold = max(gap, _noise_bound(q, d))
            if preset == "paper":
                threshold = max(threshold, _paper_delta(epsilon, d, q, k))
        q = replace(q, threshold=threshold)
        m = over.get("slice_size") or math.ceil(max(slice_bound, _m_floor(preset, q)))
        q = replace(q, slice_size=int(m))
        k_need = over.get("max_hard") or math.ceil(max(k_min, _k_floor(preset, q),
                                                        2 * threshold if preset == "paper"
                                                        else 0))
        return q, k_prime, gap, int(k_need)

    # k ↦ k_need(k) is increasing and sublinear (≈ a·√(k + K) + c), so {k : k_need(k) ≤ k}
    # is a half-line [k*, ∞): double to bracket k*, then bisect.
    if "max_hard" in over:
        k = max(int(over["max_hard"]), k_min)
    else:
        lo, hi = k_min - 1, k_min
        while numbers(hi)[3] > hi:
            lo, hi = hi, 2 * hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if numbers(mid)[3] <= mid else (mid, hi)
        k = hi
    q, k_prime, gap, _ = numbers(k)
    return replace(q, k_prime=k_prime, min_gap=gap, max_hard=k,
                   upper_threshold=2.0 * q.threshold, stopper_epsilon=eps0)


def _calibration(preset):
    """The copies' BetweenThresholds analysis for a preset of ``_perp_sharp``."""
    return "charged" if preset == "charged" else "stemmer"


@functools.lru_cache(maxsize=256)
def delta_schedule(delta, first_phase_length):
    """The queries' geometric δ schedule: total δ*/2, phase p gets δ*/2^(p+1)."""
    return DeltaSchedule(delta / 2.0, "geometric", first_phase_length=first_phase_length,
                         growth=GROWTH)


@functools.lru_cache(maxsize=4096)
def phase(key, t1, p):
    """Phase p's :class:`PhaseParameters` for the schedule ``key`` with t_1 = ``t1``."""
    length = t1 * GROWTH ** (p - 1)
    return _solve_phase(key, p, length)


def length_needed(key, p, next_phase):
    """R_p = max(4d·m_{p+1}/(γ·α_p), 8d·ln(2d/β_p)/(γ·α_p)) (Lemma B.7, Chernoff)."""
    _, _, alpha, beta, gamma, d, preset, _ = key
    alpha_p, beta_p = alpha / 2**p, beta / 2**p
    if preset in SHARP_PRESETS:  # (2d)²·r_{p+1}/α_{p+1}, see _perp_sharp
        return rows_needed(d, next_phase, phase_alpha(alpha, p), beta_p) / gamma
    return max(4 * d * next_phase.slice_size,
               8 * d * math.log(2 * d / beta_p)) / (gamma * alpha_p)


@functools.lru_cache(maxsize=256)
def first_phase_length(key):
    """The least fixed point t_1 ≥ sup_p R_p(t_1)/3^(p−1) (see ``perp_parameters``)."""
    over = dict(key[-1])
    if "first_phase_length" in over:
        return int(over["first_phase_length"])
    t1 = 1
    for _ in range(200):
        need, falling = 0.0, 0
        for p in range(1, _SCAN_PHASES + 1):
            nxt = _solve_phase(key, p + 1, t1 * GROWTH**p)
            ratio = length_needed(key, p, nxt) / GROWTH ** (p - 1)
            falling = falling + 1 if ratio < need else 0
            need = max(need, ratio)
            if falling >= 8:  # (2/3)^p·polylog: past its maximum for good
                break
        new = max(t1, math.ceil(need * (1 + 1e-12)))
        if new == t1:
            return t1
        t1 = new
    raise RuntimeError("PERP phase-length fixed point did not converge.")  # pragma: no cover



def phase_checks(q, nxt, preset, epsilon, d, gamma, t1, with_utility):
    """(ok, name) pairs of the ``"paper"`` / ``"practical"`` inequalities for phase ``q``.

    ``nxt`` is phase p + 1 (its m sets t_p); ``with_utility``: also the utility
    inequalities (False under explicit overrides; privacy never depends on them).
    """
    p = q.phase
    checks = [
        (q.length == t1 * GROWTH ** (p - 1), "t_p = t_1·3^(p−1)"),
        (q.delta_instance <= q.delta / (8 * d) * (1 + 1e-12), "δ_0 = δ_p/(8d)"),
        (q.max_hard >= 4 * math.log(4 / q.delta_instance), "k_p ≥ 4·ln(4/δ_0)"),
        (q.threshold >= q.min_gap, "Δ_p ≥ ChallengeBT's minimum gap"),
    ]
    if not with_utility:
        return checks
    checks += [
        (q.slice_size >= q.slice_noise_bound, "m_p ≥ (1/ε_0)·ln(4d/β_p)"),
        (q.max_hard >= 2 * q.threshold or preset == "practical", "k_p ≥ 2Δ_p"),
        (q.slice_size >= _m_floor(preset, q),
         "m_p ≥ 4Δ_p (paper) / 2Δ_p + noise bound (practical)"),
        (q.max_hard >= _k_floor(preset, q),
         "k_p ≥ 2m_p (paper) / m_p + Stopper tail (practical)"),
        (q.length * gamma * q.alpha >= 4 * d * nxt.slice_size * (1 - 1e-12),
         "t_p ≥ 4d·m_{p+1}/(γ·α_p)"),
        (q.length * gamma * q.alpha >= 8 * d * math.log(2 * d / q.beta) * (1 - 1e-12),
         "t_p ≥ 8d·ln(2d/β_p)/(γ·α_p)"),
        (q.threshold >= _noise_bound(q, d) * (1 - 1e-12),
         "Δ_p ≥ BT noise tail bound σ_p·ln(8d·t_p/β_p)"),
    ]
    if preset == "paper":
        checks.append((q.threshold >= _paper_delta(epsilon, d, q, q.max_hard) * (1 - 1e-12),
                       "Δ_p ≥ the paper's formula"))
    return checks
