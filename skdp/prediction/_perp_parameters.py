"""The per-phase parameter schedule of Stemmer's RectanglesPERP (Alg. 5, App. B).

The parameter line of Algorithm 5 is garbled in the text; this module reconstructs
it from Appendix B (Definition B.5, Lemmas B.6–B.7) and from the conditions the
mechanisms themselves check (ChallengeBT, Alg. 4; BetweenThresholds, Thm 4.3), in
one function, :func:`perp_parameters`, whose docstring carries the derivation.
One phase's numbers are solved in ``_perp_schedule`` (``"paper"``,
``"practical"``) and ``_perp_sharp`` (``"sharp"``, ``"charged"``).
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_delta, check_epsilon
from ..accounting import DeltaSchedule
from ..exceptions import PrivacyParameterError
from ._perp_schedule import (
    PhaseParameters,
    _calibration,
    delta_schedule,
    first_phase_length,
    phase,
    phase_checks,
)
from ._perp_sharp import SHARP_PRESETS, initial_rows, sharp_checks, solve_initial_copies

__all__ = ["PERPParameters", "PhaseParameters", "perp_parameters"]

PRESETS = ("paper", "practical", *SHARP_PRESETS)

@dataclass(frozen=True)
class PERPParameters:
    """A RectanglesPERP schedule: global settings and the first ``n_phases`` phases.

    Attributes
    ----------
    epsilon, delta, alpha, beta, gamma : float
        The guarantee (ε, δ*) and the utility targets.
    n_features : int
        The dimension d.
    preset : str
        ``"paper"``, ``"practical"``, ``"sharp"`` or ``"charged"``.
    first_phase_length : int
        t_1; phase p has t_p = t_1·3^(p−1) queries.
    initial_sample_size : int
        Labelled rows the first phase needs (base case of Lemma B.7).
    delta_schedule : DeltaSchedule
        Geometric schedule with total δ*/2 over the query stream: δ(i) = δ_p for
        every query i of phase p.
    phases : tuple of PhaseParameters
        Phases 1 … n_phases.
    alpha_p, beta_p, delta_p, m_p, k_p, t_p, Delta_p : ndarray
        The per-phase columns (α_p, β_p, δ_p, m_p, k_p, t_p, Δ_p).
    """

    epsilon: float
    delta: float
    alpha: float
    beta: float
    gamma: float
    n_features: int
    preset: str
    first_phase_length: int
    initial_sample_size: int
    delta_schedule: DeltaSchedule = field(repr=False)
    phases: tuple = field(repr=False)
    overrides: tuple = field(default=(), repr=False)
    #: "sharp" / "charged": the initial sample's own copies (at δ(0) = δ*/4); else None.
    initial_copies: PhaseParameters | None = field(default=None, repr=False)

    @property
    def initial_delta(self) -> float:
        """δ(0): the initial sample's δ (δ_1, or δ*/4 for "sharp" / "charged")."""
        return (self.initial_copies or self.phases[0]).delta

    def _column(self, name, dtype=float):
        return np.array([getattr(q, name) for q in self.phases], dtype=dtype)

    @property
    def alpha_p(self) -> NDArray[Any]:
        return self._column("alpha")

    @property
    def beta_p(self) -> NDArray[Any]:
        return self._column("beta")

    @property
    def delta_p(self) -> NDArray[Any]:
        return self._column("delta")

    @property
    def m_p(self) -> NDArray[Any]:
        return self._column("slice_size", np.int64)

    @property
    def k_p(self) -> NDArray[Any]:
        return self._column("max_hard", np.int64)

    @property
    def t_p(self) -> NDArray[Any]:
        return self._column("length", float)

    @property
    def Delta_p(self) -> NDArray[Any]:
        return self._column("threshold")

    def phase(self, p: int) -> PhaseParameters:
        """Parameters of any phase p ≥ 1 (computed on demand beyond ``n_phases``)."""
        if p <= len(self.phases):
            return self.phases[p - 1]
        return phase(self._key(), self.first_phase_length, p)

    def _key(self):
        return (self.epsilon, self.delta, self.alpha, self.beta, self.gamma, self.n_features,
                self.preset, self.overrides)

    def violations(self) -> list[str]:
        """Every inequality of the reconstruction that the tabulated phases break.

        Returns a list of strings (empty when the schedule is valid). The utility
        inequalities are only checked for phases computed by the preset (explicit
        overrides of m, k, Δ or t_1 are allowed to break them; privacy never
        depends on them).
        """
        out = []
        sched = self.delta_schedule
        total = sum(q.length * q.delta for q in self.phases)
        if not total <= self.delta / 2:
            out.append(f"Σ_p t_p·δ_p = {total:g} > δ*/2")
        if not self.initial_delta + sched.delta_star <= self.delta:
            out.append("δ(0) + Σ_i δ(i) > δ*")
        d, utility = self.n_features, not self.overrides
        for q in self.phases:
            p = q.phase
            checks = [(q.delta <= sched.phase_delta(p, q.length) * (1 + 1e-12),
                       "δ_p ≤ schedule")]
            if self.preset in SHARP_PRESETS:
                checks += sharp_checks(q, self.phase(p + 1), d, self.gamma, utility,
                                       epsilon=self.epsilon)
                init = self.initial_copies
                if p == 1 and init is not None:  # always set by the sharp presets
                    checks += [(ok, f"initial copies: {name}") for ok, name in
                               sharp_checks(init, None, d, self.gamma, utility, restart=q,
                                            epsilon=self.epsilon)]
                    checks.append((init.delta <= self.delta / 4, "δ(0) ≤ δ*/4"))
            else:
                checks += [(math.isclose(q.alpha, self.alpha / 2**p), "α_p = α/2^p"),
                           (math.isclose(q.beta, self.beta / 2**p), "β_p = β/2^p")]
                checks += phase_checks(q, self.phase(p + 1), self.preset, self.epsilon, d,
                                       self.gamma, self.first_phase_length, utility)
            out += [f"phase {p}: {name}" for ok, name in checks if not ok]
        if utility:
            first = self.initial_copies or self.phases[0]
            need = (initial_rows(d, first, self.alpha, self.beta)
                    if self.preset in SHARP_PRESETS
                    else 4 * d * first.slice_size / self.alpha)
            if not self.initial_sample_size >= need * (1 - 1e-12):
                out.append("n ≥ 4d·m_1/α (sharp: (2d)²·(m_1 − t_l + σ)/α_1)")
        return out



def _check_unit(value, name, *, upper_closed=False):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}.")
    value = float(value)
    ok = 0.0 < value <= 1.0 if upper_closed else 0.0 < value < 1.0
    if not ok:
        interval = "(0, 1]" if upper_closed else "(0, 1)"
        raise ValueError(f"{name} must lie in {interval}, got {value!r}.")
    return value


_OVERRIDES = ("slice_size", "max_hard", "threshold", "first_phase_length")


def perp_parameters(epsilon: float, delta: float, alpha: float, beta: float, gamma: float,
                    n_features: int, *, preset: str = "paper", n_phases: int = 5,
                    slice_size: int | None = None, max_hard: int | None = None,
                    threshold: float | None = None,
                    first_phase_length: int | None = None) -> PERPParameters:
    r"""Per-phase parameters (α_p, β_p, δ_p, m_p, k_p, t_p, Δ_p) of RectanglesPERP.

    Parameters
    ----------
    epsilon : float
        ε > 0 of the truly-everlasting guarantee (Def. 3.8).
    delta : float
        δ* ∈ (0, 1): Σ_i δ(i) over the initial sample and every query ever ≤ δ*.
    alpha, beta : float in (0, 1)
        Accuracy and confidence targets of Definition 3.1.
    gamma : float in (0, 1]
        Fraction of queries assumed to come from the distribution (robustness).
    n_features : int
        The dimension d.
    preset : {"paper", "practical", "sharp", "charged"}, default="paper"
        Which constants (see below). ``"sharp"`` also changes the slicing (a
        random partition into 2d parts), the Stopper (svt) and the thresholds
        (margins, t_u = t_l + 4σ); its derivation and privacy lemma are in
        ``skdp.prediction._perp_sharp`` (issue 16), and only the common parts
        below (δ schedule, t_p = t_1·3^{p−1}, the fixed point on t_1) apply to it.
        ``"charged"``: the ``"sharp"`` schedule with each phase's copies
        calibrated by the sharper of Thm 4.3 and the charged lemma
        (``skdp.mechanisms._charged_calibration``; t_u = t_l + 3σ where it is
        used), item 7 of ``_perp_sharp``.
    n_phases : int, default=5
        Phases tabulated (any later phase: :meth:`PERPParameters.phase`).
    slice_size, max_hard, threshold, first_phase_length : optional
        Explicit m, k, Δ (t_l = Δ, t_u = 2Δ) and t_1 for every phase, e.g. for
        audits and fast tests. k and Δ are raised, phase by phase, to the least
        values ChallengeBT's proof covers (k ≥ 4·ln(4/δ_0), the minimum gap; δ_0
        shrinks from phase to phase), so no override can weaken privacy. Utility
        inequalities are then not checked.

    Returns
    -------
    PERPParameters
        With ``initial_sample_size``, the per-phase columns ``alpha_p`` … ``Delta_p``
        and :meth:`~PERPParameters.violations` (empty for a valid schedule).

    Raises
    ------
    ValueError
        For parameters outside their ranges (``PrivacyParameterError`` for ε, δ).

    Notes
    -----
    **Privacy quantities** (both presets). Phase p answers t_p queries; every query
    of phase p is protected with (ε, δ_p) in the sense of Def. 3.8 and the initial
    sample with (ε, δ_1). The δ_p come from a geometric
    :class:`~skdp.accounting.DeltaSchedule` with total δ*/2: phase p gets
    δ*/2^{p+1}, so δ_p = δ*/(2^{p+1}·t_p) and Σ_p t_p·δ_p ≤ δ*/2; with δ_1 ≤ δ*/4
    for the initial sample, the whole infinite stream spends at most 3δ*/4 ≤ δ*.
    In the privacy proof (Thm 4.6) a challenge record is touched by at most (i)
    one RSC execution over 2d slices, or (ii) one Stopper plus one ChallengeBT
    execution. Each ChallengeBT copy gets (ε_0, δ_0) with δ_0 = δ_p/(8d) and

    * ``"paper"``: ε_0 = ε/ln(2/δ_p) — RSC (Thm 4.1, read with constant 1 as in
      :class:`~skdp.mechanisms.ReorderSliceCompute`) with δ̂ = δ_p/2 gives
      (ε_0·ln(1/δ̂), δ̂ + 2·2d·δ_0) = (ε, δ_p);
    * ``"practical"``: ε_0 = ε/min(2d, ln(2/δ_p)). With a fixed ordering per slice
      (Alg. 5 orders by one coordinate), adding or removing one record changes
      every slice by at most one record (the cascade), so every sensitivity-1
      count of every slice moves by at most 1 and basic concurrent composition of
      the 2d copies gives (2d·ε_0, 2d·δ_0) ≤ (ε, δ_p/4) — whichever of the two
      bounds is smaller applies. This is the only privacy-side difference. The 2d
      copies are interactive and their queries interleave (the walk), so the
      composition is concurrent: Lyu 2022 proves basic (indeed optimal) concurrent
      composition for (ε, δ)-DP interactive mechanisms, and Vadhan & Zhang 2023 for
      every f-DP bound. (``"sharp"`` / ``"charged"`` need none: one record reaches
      one copy, the others run on b-free data — F2 in ``_perp_sharp``.)

    Case (ii) costs 2·ε_0 ≤ ε and 2δ_0 ≤ δ_p. ChallengeBT (Alg. 4) itself checks
    k ≥ 4·ln(4/δ_0) and t_u − t_l ≥ max(32/ε_0·√(k·ln(4/δ_0)), 16/ε_0·√(k'·ln(4/δ_0)))
    with k' = k + 8/ε_0·ln(2/δ_0)·ln(T/δ_0) and T = t_p + 1 stopping queries
    (a hard cap: every step poses one stopping query per copy).

    **Accounting.** (For ``"sharp"`` the partition removes the composition of
    the 2d copies altogether: one record reaches one copy.) Unlike the other
    private predictors, PERP's schedule has no
    ``accounting="tight"`` variant, because the numerical accountant
    (:func:`skdp.accounting.calibrate_plan`) cannot soundly improve it: the only
    composition is of 2d (ε_0, δ_0)-DP copies (``"practical"``) at a per-record
    δ_p ≈ 10⁻¹⁵…10⁻²⁰, and at such δ the *exact* optimal composition of 2d
    (ε_0, δ_0) events (Kairouz, Oh & Viswanath 2015) allows no ε_0 above ε/(2d) —
    every accountant, being an upper bound on it, agrees (a test checks each phase).
    RSC (``"paper"``) is a theorem about one mechanism, not a composition; the
    truly-everlasting δ schedule bounds a *sum over records* (Def. 3.8), not the
    composed loss of one record; and DecisionPERP's ε/4 + ε/4 + ε/2 split composes
    three events at δ(0) ≈ 10⁻¹⁷, where pure ε-DP and bounded-range events also
    compose only additively.

    **Utility quantities** (Lemma B.7). With σ_p = 4/ε_0·√(k'·ln(4/δ_0)) the
    actual BetweenThresholds noise scale, b_p = 8·ln(2/δ_0)/ε_0 the Stopper's:

    * α_p = α/2^p, β_p = β/2^p (Alg. 6);
    * m_p ≥ (1/ε_0)·ln(4d/β_p): the 2d geometric slice noises stay below it
      (w.p. 1 − β_p/2) — the paper's (1/ε)·ln(1/δ_p)·ln(4d/β_p) for ε_0 = ε/ln(1/δ_p);
    * Δ_p ≥ σ_p·ln(8d·t_p/β_p): all ≤ 2d·t_p BetweenThresholds noises of the
      phase are below it (w.p. 1 − β_p/4). The paper's Def. B.5 writes
      Δ_p = (4·ln(1/δ_p)/ε)·√(k_p·ln(2d/δ_p))·ln(8d·t_p/β_p) — the Laplace tail
      needs the last log outside the root (Lemma B.6's proof puts it inside) and
      the noise really scales with √k', not √k; the ``"paper"`` preset takes the
      maximum of both, and of the minimum gap;
    * ``"paper"``: m_p ≥ 4Δ_p, k_p ≥ 2Δ_p, k_p ≥ 2m_p (Lemma B.7 as written);
      ``"practical"``: m_p ≥ 2Δ_p + σ_p·ln(8t_p/β_p) (an outside point, count ≥ m̂,
      reads "high") and k_p ≥ m_p + b_p·ln(4(t_p+1)/β_p) (a halted copy has
      collected ≥ m_p boundary points to restart on) — the same two facts the
      paper's constants buy, with the actual noise scales instead of factors 2;
    * t_p ≥ 4d·m_{p+1}/(γ·α_p) and t_p ≥ 8d·ln(2d/β_p)/(γ·α_p) (Chernoff: the γ·t_p
      distribution queries put ≥ 2m_{p+1} points in each strip of weight
      α_{p+1}/d);
    * the initial sample: n ≥ 4d·m_1/α and n ≥ 8d·ln(2d/β)/α (the same with γ = 1).

    **The circularity.** Δ_p depends on k_p (through k'), k_p on m_p, m_p on Δ_p:
    for a fixed t_p, k ↦ k_needed(k) ≈ a·√(k + K) + c is increasing and concave, so
    iterating from k = ⌈4·ln(4/δ_0)⌉ increases to its least fixed point in a few
    steps. And t_p depends on m_{p+1}, which depends (through δ_{p+1}, hence
    logarithmically) on t_{p+1}. Bound first: fix the shape t_p = t_1·3^{p−1}
    (3 > 2 = the rate at which α_p halves), so every δ_p, m_p is a function of t_1
    alone; the requirement is t_1 ≥ sup_p R_p(t_1)/3^{p−1} with R_p the right-hand
    side above. Since m_{p+1} grows only polylogarithmically in t_{p+1} = t_1·3^p,
    R_p/3^{p−1} ∝ (2/3)^p·polylog: the supremum is attained at small p (we scan
    p ≤ 80) and, being logarithmic in t_1, the iteration t_1 ← ⌈sup_p …⌉ from
    t_1 = 1 reaches its least fixed point in a few steps. Every phase, however
    late, then satisfies every inequality, and phases are computed on demand.

    References
    ----------
    U. Stemmer. Private Truly-Everlasting Robust-Prediction. ICML 2024: Alg. 4–5,
    Thm 4.1, 4.3, 4.4, 4.6, Def. B.5, Lemmas B.6–B.7. — E. Cohen, X. Lyu, J. Nelson,
    T. Sarlós, U. Stemmer. Optimal DP learning of thresholds and quasi-concave
    optimization. STOC 2023 (RSC). — X. Lyu. Composition theorems for interactive
    differential privacy. NeurIPS 2022 (concurrent composition). — S. Vadhan,
    W. Zhang. Concurrent composition theorems for differential privacy. STOC 2023.

    Examples
    --------
    >>> from skdp.prediction import perp_parameters
    >>> practical = perp_parameters(100.0, 1e-6, 0.1, 0.05, 1.0, 2, preset="practical")
    >>> practical.violations()
    []
    >>> paper = perp_parameters(100.0, 1e-6, 0.1, 0.05, 1.0, 2, preset="paper")
    >>> bool(paper.initial_sample_size > 100 * practical.initial_sample_size)
    True
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0:
        raise PrivacyParameterError("PERP needs δ* > 0 (ChallengeBT, Stopper and RSC are (ε, δ)).")
    alpha = _check_unit(alpha, "alpha")
    beta = _check_unit(beta, "beta")
    gamma = _check_unit(gamma, "gamma", upper_closed=True)
    if isinstance(n_features, bool) or not isinstance(n_features, numbers.Integral) or (
            n_features < 1):
        raise ValueError(f"n_features must be an integer ≥ 1, got {n_features!r}.")
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {PRESETS}, got {preset!r}.")
    if isinstance(n_phases, bool) or not isinstance(n_phases, numbers.Integral) or n_phases < 1:
        raise ValueError(f"n_phases must be an integer ≥ 1, got {n_phases!r}.")
    given = dict(slice_size=slice_size, max_hard=max_hard, threshold=threshold,
                 first_phase_length=first_phase_length)
    overrides = []
    for name in _OVERRIDES:
        value = given[name]
        if value is None:
            continue
        if name == "threshold":
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (
                    math.isfinite(value) and value > 0):
                raise ValueError(f"threshold must be a finite number > 0, got {value!r}.")
            value = float(value)
        elif isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"{name} must be an integer ≥ 1, got {value!r}.")
        else:
            value = int(value)
        overrides.append((name, value))
    key = (epsilon, delta, alpha, beta, gamma, int(n_features), preset, tuple(overrides))
    try:
        return _build(key, int(n_phases))
    except OverflowError as exc:
        raise ValueError(
            f"PERP schedule overflows at ε = {epsilon:g}, δ* = {delta:g}: the sample and "
            "phase sizes exceed floating-point range. Raise ε (or δ*, α, β, γ)."
        ) from exc


@functools.lru_cache(maxsize=256)
def _build(key, n_phases):
    epsilon, delta, alpha, beta, gamma, d, preset, overrides = key
    t1 = first_phase_length(key)
    phases = tuple(phase(key, t1, p) for p in range(1, n_phases + 1))
    first = initial = None
    if preset in SHARP_PRESETS:
        first = initial = solve_initial_copies(phases[0], delta, dict(overrides), epsilon,
                                               _calibration(preset))
    first = first or phases[0]
    if preset in SHARP_PRESETS:
        need = initial_rows(d, first, alpha, beta)
    else:
        need = max(4 * d * first.slice_size, 8 * d * math.log(2 * d / beta)) / alpha
    return PERPParameters(
        epsilon=epsilon, delta=delta, alpha=alpha, beta=beta, gamma=gamma, n_features=d,
        preset=preset, first_phase_length=t1, initial_sample_size=math.ceil(need),
        delta_schedule=delta_schedule(delta, t1), phases=phases, overrides=overrides,
        initial_copies=initial,
    )
