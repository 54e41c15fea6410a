"""BetweenThresholds' ``"charged"`` calibration: a Rényi-moment bound charged to ⊤ answers.

Stemmer's Thm 4.3 (after Bun, Steinke & Ullman 2017 and Cohen & Lyu 2023) calibrates
BetweenThresholds with noise b = (4Δ/ε)·√(k·ln(2/δ)) and a gap 4b. This module proves,
for the *same* algorithm (fixed thresholds, fresh Lap(b) per query, halt at the k-th
⊤), a bound that is about half that noise at large k — b ≈ (2.1Δ/ε)·√(k·ln(1/δ))
at a gap of 3–4 b — and computes it. RectanglesPERP's ``"charged"`` schedule (issue
16) uses it; its sample size is ∝ b², so this is where its factor ≈ 4 comes from.

*Lemma (charged BetweenThresholds).* Let b > 0, G = t_u − t_l > 0, u = Δ/b, g = G/b,
and for a real λ ≥ 1

    K(g) = coth(g/2) + 1/(1 − e^{−g})²,
    I_λ(u) = e^{(λ+1)u} − 1 − (λ+1)(e^u − 1) = Σ_{j≥2} ((λ+1)^j − (λ+1))·u^j/j!,
    c_λ = −ln(1 − K(g)·I_λ(u)·e^{(λ+1)u})      (c_λ = ∞ if the argument is ≤ 0).

Then BetweenThresholds with Lap(b) query noise, thresholds t_l < t_u and cutoff k is
(ε, δ)-DP for sensitivity-Δ queries chosen adaptively, for every ε ≥
min_{λ≥1} (c_λ·k + ln(1/δ))/λ.

*Proof.* Fix neighbours D, D′ and an adversary (condition on its coins; DP is closed
under mixtures). Query i has values x = f_i(D), x′ = f_i(D′), |x − x′| ≤ Δ; write
p_a, q_a (a ∈ {L, ⊤, R}) for the answer's probabilities under D and D′ given the past,
and r_a = p_a/q_a. The transcript's privacy loss is ℒ = Σ_i ln r_{a_i}; N counts the ⊤
answers. (1) *Per-step bound.* Φ := E_p[r_a^λ·e^{−c·1[a=⊤]}] = Σ_a q_a·r_a^{λ+1}·w_a
with w_⊤ = e^{−c}, w_L = w_R = 1. Each of p_L, p_R, 1 − p_L, 1 − p_R, p_⊤ is the mass
of an interval (or half-line) under a Laplace density shifted by ≤ Δ, so every ratio
lies in [e^{−u}, e^u]; with η_a = r_a − 1 ∈ [e^{−u} − 1, e^u − 1],
(1 + η)^{λ+1} − 1 − (λ+1)η = η²·h(η), h(η) = λ(λ+1)∫₀¹(1 − t)(1 + tη)^{λ−1}dt
non-decreasing (λ ≥ 1), so E_q[r^{λ+1}] = 1 + Σ_a q_a·η_a²·h(η_a) ≤ 1 + h(e^u − 1)·χ²
with χ² = Σ_a (p_a − q_a)²/q_a and h(e^u − 1)·(e^u − 1)² = I_λ(u). (2) *χ² ≤
K(g)·(e^u − 1)²·q_⊤.* Let m_L = min(q_L, 1 − q_L), m_R likewise. From the ratio bounds
|p_L − q_L| ≤ (e^u − 1)·m_L, so (p_L − q_L)²/q_L ≤ (e^u − 1)²·m_L; the same for R. A
shift moves mass from one outer cell to ⊤ and from ⊤ to the other, so p_L − q_L and
p_R − q_R have opposite signs and |p_⊤ − q_⊤| ≤ max(|p_L − q_L|, |p_R − q_R|). In noise
units put a = (t_l − x′)/b: for a ≥ 0 (and symmetrically a ≤ −g) m_L + m_R =
½e^{−a}(1 + e^{−g}) and q_⊤ = ½e^{−a}(1 − e^{−g}); for −g < a < 0, m_L + m_R = q_L + q_R
is convex in a, largest at the ends — so (m_L + m_R)/q_⊤ ≤ coth(g/2) everywhere, and
likewise max(m_L, m_R)/q_⊤ ≤ 1/(1 − e^{−g}) (for −g < a < 0, q_L/q_⊤ = v²/(2v − v² −
e^{−g}) with v = e^a is increasing in v). Hence χ² ≤ (e^u − 1)²·q_⊤·(coth(g/2) +
1/(1 − e^{−g})²). (3) With r_⊤ ≥ e^{−u}: Φ ≤ 1 + q_⊤·(K·I_λ(u) − (1 − e^{−c})·e^{−(λ+1)u})
≤ 1 for c = c_λ. (4) *Supermartingale.* By (1)–(3) M_t = exp(λ·ℒ_t − c_λ·N_t) is a
non-negative supermartingale under D (the queries are functions of the past), and the
mechanism halts at N = k, so N ≤ k throughout; for any horizon, P_D[ℒ ≥ ε] ≤
P[M ≥ e^{λε − c_λ k}] ≤ e^{c_λ k − λε} ≤ δ for ε ≥ (c_λ k + ln(1/δ))/λ. (5) For every
event S, P_D[S] ≤ P_D[S, ℒ < ε] + δ ≤ e^ε·P_{D′}[S] + δ; (1)–(4) are symmetric in
D, D′. ∎

The argument is the moments accountant's (Abadi et al. 2016; Rényi DP, Mironov 2017)
with Cohen & Lyu's idea of charging only the target answers, proved here for this one
mechanism rather than quoted: it is not a published theorem, and it is listed for a
second review. Audit and broken twin (half the noise):
``tests/privacy/test_charged_between_thresholds_audit.py``. No gap is "free": as
b → ∞ at a fixed G the bound decreases to min_λ (−ln(1 − λ(λ+1)Δ²/(2G²))·k +
ln(1/δ))/λ ≈ Δ·√(2k·ln(1/δ))/G, so the gap must exceed :func:`charged_min_gap`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

__all__ = ["charge_per_hard", "charged_epsilon", "charged_min_gap", "charged_noise_scale"]

#: Relative float safety added to every charge (the series has no cancellation).
_SAFETY = 1e-9
#: Golden-section steps of the searches over λ (any λ ≥ 1 is valid; these only tighten).
_GOLDEN_STEPS = 24
_PHI = (math.sqrt(5.0) - 1.0) / 2.0


def _series(u: float, lam: float) -> float:
    """I_λ(u) = Σ_{j≥2} ((λ+1)^j − (λ+1))·u^j/j!.

    Summed term by term (positive terms, no cancellation) where x = (λ+1)·u < 0.1;
    above, e^x − 1 − (λ+1)(e^u − 1) in closed form loses at most ~2 of 16 digits.
    """
    x = (lam + 1.0) * u
    if x >= 0.1:
        return math.expm1(x) - (lam + 1.0) * math.expm1(u)
    power_x, power_u, total = x, u, 0.0
    for j in range(2, 40):
        power_x *= x / j
        power_u *= u / j
        term = power_x - (lam + 1.0) * power_u
        total += term
        if term <= 1e-17 * total:
            break
    return total


def _k_of_g(g: float) -> float:
    return 1.0 / math.tanh(g / 2.0) + 1.0 / (-math.expm1(-g)) ** 2


def charge_per_hard(u: float, g: float, order: float) -> float:
    """c_λ of the lemma: the charge per ⊤ answer at order λ (∞ where undefined).

    ``u`` = Δ/b (sensitivity over noise scale), ``g`` = G/b (gap in noise units),
    ``order`` = λ ≥ 1.
    """
    x = (order + 1.0) * u
    if x > 50.0:
        return math.inf
    val = _k_of_g(g) * _series(u, order) * math.exp(x) * (1.0 + _SAFETY)
    return -math.log1p(-val) if val < 1.0 else math.inf


def _golden_min(f: Callable[[float], float], lo: float, hi: float,
                steps: int = _GOLDEN_STEPS) -> tuple[float, float]:
    """min f over [lo, hi] by golden section on log λ; returns (f, λ) of the best point."""
    a, b = math.log(lo), math.log(hi)
    c, d = b - _PHI * (b - a), a + _PHI * (b - a)
    fc, fd = f(math.exp(c)), f(math.exp(d))
    best = min((fc, math.exp(c)), (fd, math.exp(d)), (f(lo), lo), (f(hi), hi))
    for _ in range(steps):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - _PHI * (b - a)
            fc = f(math.exp(c))
            best = min(best, (fc, math.exp(c)))
        else:
            a, c, fc = c, d, fd
            d = a + _PHI * (b - a)
            fd = f(math.exp(d))
            best = min(best, (fd, math.exp(d)))
    return best


def _epsilon_at(u: float, g: float, max_hard: int, ell: float, lam: float) -> float:
    return (charge_per_hard(u, g, lam) * max_hard + ell) / lam


@functools.lru_cache(maxsize=4096)
def charged_epsilon(noise_scale: float, gap: float, max_hard: int, delta: float,
                    sensitivity: float = 1.0) -> float:
    """The lemma's ε for Lap(``noise_scale``) noise, gap G and cutoff k (∞ if none).

    Minimises (c_λ·k + ln(1/δ))/λ over λ ∈ [1, 50/u − 1] by a coarse geometric scan
    and a golden-section refinement; every λ evaluated gives a valid bound, so the
    search only decides how tight the returned one is.
    """
    u, g = sensitivity / noise_scale, gap / noise_scale
    ell = math.log(1.0 / delta)
    top = 50.0 / u - 1.0
    if top < 1.0:
        return math.inf
    scan = [math.exp(math.log(top) * i / 40) for i in range(41)]
    values = [_epsilon_at(u, g, max_hard, ell, lam) for lam in scan]
    i = min(range(41), key=values.__getitem__)
    if not math.isfinite(values[i]):
        return math.inf
    fine, _ = _golden_min(lambda lam: _epsilon_at(u, g, max_hard, ell, lam),
                          scan[max(i - 1, 0)], scan[min(i + 1, 40)])
    return min(values[i], fine)


def _limit_epsilon(gap: float, max_hard: int, ell: float, sensitivity: float) -> float:
    """The bound's limit as b → ∞ at a fixed gap: c_λ → −ln(1 − λ(λ+1)Δ²/(2G²))."""
    top = math.sqrt(2.0) * gap / sensitivity  # v = λ(λ+1)Δ²/(2G²) < 1 needs λ below it

    def bound(lam: float) -> float:
        v = lam * (lam + 1.0) * sensitivity**2 / (2.0 * gap * gap)
        return (-math.log1p(-v) * max_hard + ell) / lam if v < 1.0 else math.inf

    if top <= 1.0:
        return math.inf
    return _golden_min(bound, 1.0, top)[0]


def charged_min_gap(epsilon: float, delta: float, max_hard: int,
                    sensitivity: float = 1.0) -> float:
    """The gap G at which the lemma's bound, in its limit b → ∞, reaches ε.

    At a fixed gap the bound falls, as the noise grows, to min_λ (−ln(1 − λ(λ+1)Δ²/
    (2G²))·k + ln(1/δ))/λ; below the G where that equals ε no noise scale is
    certified. (Since −ln(1 − v) ≥ v it is at least √(k/2)·Δ/(√(ln(1/δ) + ε) −
    √ln(1/δ)) ≈ Δ·√(2k·ln(1/δ))/ε, where the search starts.)
    """
    ell = math.log(1.0 / delta)
    lo = sensitivity * math.sqrt(max_hard / 2.0) / (math.sqrt(ell + epsilon) - math.sqrt(ell))
    hi = 2.0 * lo
    while _limit_epsilon(hi, max_hard, ell, sensitivity) > epsilon:
        lo, hi = hi, 2.0 * hi
    while hi - lo > 1e-9 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if _limit_epsilon(mid, max_hard, ell, sensitivity) <= epsilon else (
            mid, hi)
    return lo


def _u_at_order(lam: float, target: float, k_g: float) -> float:
    """The largest u with K·I_λ(u)·e^{(λ+1)u}·(1 + safety) ≤ target (Newton, then bisect)."""
    log_target = math.log(target / (k_g * (1.0 + _SAFETY)))
    u = math.sqrt(2.0 * target / (k_g * lam * (lam + 1.0)))  # I_λ(u) ≈ λ(λ+1)u²/2
    lo, hi = 0.0, 50.0 / (lam + 1.0)
    for _ in range(100):
        series, x = _series(u, lam), (lam + 1.0) * u
        f = math.log(series) + x - log_target
        if f <= 0.0:
            lo = u
            if f > -1e-12:
                return u
        else:
            hi = u
        slope = (lam + 1.0) * ((math.exp(x) - math.exp(u)) / series + 1.0)
        step = u - f / slope
        u = step if lo < step < hi else 0.5 * (lo + hi)
        if hi - lo <= 1e-15 * hi:
            break
    return lo


@functools.lru_cache(maxsize=65536)
def _scale_for_ratio(epsilon: float, delta: float, max_hard: int, ratio: float,
                     sensitivity: float) -> float:
    """The least b with G = ratio·b, searched over λ: at order λ the bound equals ε
    exactly when c_λ = (λε − ln(1/δ))/k, i.e. K·I_λ(u)·e^{(λ+1)u} = 1 − e^{−c_λ}."""
    ell = math.log(1.0 / delta)
    k_g = _k_of_g(ratio)

    def minus_u(lam: float) -> float:
        charge = (lam * epsilon - ell) / max_hard
        return -_u_at_order(lam, -math.expm1(-charge), k_g) if charge > 0 else 0.0

    # At leading order (λu → 0) the best λ is 2·ln(1/δ)/ε; the bracket leaves room for
    # the corrections at small k.
    low = max(1.0, ell / epsilon * (1.0 + 1e-9))
    best_u, lam = _golden_min(minus_u, low, max(8.0 * low, low + 8.0), steps=16)
    b = sensitivity / -best_u
    for _ in range(60):  # certify at the λ found (float rounding: nudge b up)
        if _epsilon_at(sensitivity / b, ratio, max_hard, ell, lam) <= epsilon:
            return b
        b *= 1.0 + 1e-9
    raise ValueError("no noise scale meets ε")  # pragma: no cover


def charged_noise_scale(epsilon: float, delta: float, max_hard: int, *,
                        gap: float | None = None, gap_ratio: float | None = None,
                        sensitivity: float = 1.0) -> float:
    """The least noise scale b (to ~10⁻⁷ relative) that the lemma certifies.

    Give exactly one of ``gap`` (G fixed; needs G > :func:`charged_min_gap`) or
    ``gap_ratio`` (G = ratio·b, as the PERP schedule designs it). The returned b
    always satisfies :func:`charged_epsilon` ≤ ε at some λ (checked); raises
    ValueError when no b does.
    """
    if (gap is None) == (gap_ratio is None):
        raise ValueError("give exactly one of gap and gap_ratio")
    if gap_ratio is not None:
        return _scale_for_ratio(float(epsilon), float(delta), int(max_hard), float(gap_ratio),
                                float(sensitivity))
    return _scale_for_gap(float(epsilon), float(delta), int(max_hard),
                          float(gap),  # type: ignore[arg-type]  # not None: checked above
                          float(sensitivity))


@functools.lru_cache(maxsize=4096)
def _scale_for_gap(epsilon: float, delta: float, max_hard: int, fixed: float,
                   sensitivity: float) -> float:
    """The least b certified at the fixed gap G (memoised: every BetweenThresholds
    instance of a fitted predictor asks for the same one)."""
    if fixed <= charged_min_gap(epsilon, delta, max_hard, sensitivity):
        raise ValueError("the gap is at or below charged_min_gap: no noise scale meets ε")

    def eps_at(b: float) -> float:
        return charged_epsilon(b, fixed, max_hard, delta, sensitivity)

    # eps_at is non-increasing in b and close to ∝ 1/b: step b ← b·ε(b)/ε inside a
    # bracket lo (infeasible) < hi (feasible), bisecting when a step leaves it.
    lo, hi = 0.0, math.inf
    b = 2.1 * sensitivity * math.sqrt(max_hard * math.log(1.0 / delta)) / epsilon
    for _ in range(300):
        e = eps_at(b)
        if e <= epsilon:
            hi = b
            if e >= epsilon * (1.0 - 1e-7) or hi - lo <= 1e-7 * hi:
                return hi
        else:
            lo = b
        step = b * e / epsilon * (1.0 + 1e-9) if math.isfinite(e) else 2.0 * b
        if math.isinf(hi):
            step = max(step, 2.0 * b)
        elif not lo < step < hi:
            step = math.sqrt(max(lo, 1e-3 * hi) * hi)
        b = step
    if math.isinf(hi):
        raise ValueError("no noise scale meets ε for this gap")
    return hi
