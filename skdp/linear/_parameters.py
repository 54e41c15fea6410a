"""DP-Winnow's parameters: the Thm 11–12 fixed point (K ↔ η) and the practical preset.

One function, :func:`solve_dp_winnow_parameters`, turns (ε, δ, ρ, T, d, β) into the
switching bound K, the sample size m, the learning rate η, the sparse-vector budget
ε̂ and the threshold L, and says when no valid setting exists.

Privacy accounting (shared by both presets)
-------------------------------------------
Bun & Fang, Thm 11 (Appendix C, "View 2"): DP-Winnow is a post-processing of an
adaptive sequential composition of at most K AboveThreshold instances, each ε̂-DP,
and mK exponential-mechanism draws, each 4η-bounded-range (see
:mod:`skdp.linear._winnow_accounting`). ``accounting`` picks the composition proof:

* ``"tight"`` (default): one plan through the tight accountant,
  :func:`skdp.accounting.calibrate_plan` on ``[(PureDP, K), (BoundedRange, mK)]``
  with the paper's relative weights — ε̂ and η are the paper's times one factor
  s ≥ 1 (≈ 2 at the same K; the practical fixed point K then drops ≈ 4–5×).
* ``"paper"``: δ split evenly between the two layers, each layer accounted by DRV
  advanced composition (Dwork & Roth 2014, Thm 3.20,
  ``skdp.accounting.calibrate(..., method="advanced")``), whose privacy-loss
  martingale argument holds for a layer interleaved with the other one; the
  ``"theory"`` preset uses Thm 11's closed forms. Reproduces the numbers before the
  tight accountant.

One correction to the paper: a draw j ~ w with w_j ∝ exp(η·S_j), S_j = Σ ŷ x̂_j,
changes by one term ŷx̂_j ∈ [−1, 1] between neighbouring streams, so S_j has
sensitivity Δ = 2 and a draw is 2Δη = **4η**-DP (the paper's Appendix C counts
2η, i.e. Δ = 1, which holds only for {0, 1} features). We calibrate the per-draw
ε_draw and set η = ε_draw / 4, so the guarantee is exactly as stated; the price is
η half as large as the paper's formula.

Presets
-------
``"theory"`` — the paper's constants: m = 2 log(2T/β)/(c²ρ²) (Lemma 13),
L = 8 log(2T/β)/ε̂ (Lemma 10), ε̂ = ε/(4√(2K log(2/δ))) and η from the 4η
accounting above, η = ε/(16√(2mK log(2/δ))) (Thm 11), and K the least integer with
K ≥ 2 log d/(ηρ − η²) (Thm 12). With η = a/√K this fixed point has the closed form
√K = (2 log d + a²)/(aρ), a = ε/(16√(2m log(2/δ))) (with ``accounting="tight"``,
a → s(K)·a, solved by iteration); it is astronomically large for any interesting ρ
(≈10¹¹ for ρ = 0.1, ε = 1), so this preset documents the theorem rather than giving
a learner that updates within 10⁶ rounds.

``"practical"`` — the same accounting with smaller utility constants: m = ⌈1/ρ⌉
rounded up to odd (capped at 63) draws instead of 8 log(2T/β)/ρ², ε̂ and η calibrated
for exactly K and mK mechanisms (by ``accounting``), K the least integer with
K ≥ 2 log d/(ηρ − η²) for *that* η (the Thm 12 fixed point, solved numerically:
η(K) is not closed-form under calibrated composition), and a low threshold
L = 1/ε̂ (one noise scale): AboveThreshold then acts as a private rate limiter
that fires every few mistakes instead of waiting for 8 log(2T/β)/ε̂ of them. K, m
and L can all be overridden. Only utility constants differ
between the presets; the guarantee is (ε, δ)-DP in both.
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass
from typing import Any

from .._validation import check_delta, check_epsilon, check_positive_int
from ..accounting import PureDP, advanced_composition, calibrate
from ..exceptions import PrivacyParameterError
from ._winnow_accounting import (
    ACCOUNTINGS,
    TightScale,
    least_fixed_point,
    plan_events,
    practical_tight_k,
    spent_epsilon,
    tight_least_fixed_point,
)

__all__ = ["DPWinnowParameters", "solve_dp_winnow_parameters"]

#: Largest K (or mK) for which a setting is reported as usable.
MAX_UPDATES = 10**9

PRACTICAL_MAX_SAMPLES = 64


@dataclass(frozen=True)
class DPWinnowParameters:
    """Resolved DP-Winnow constants (Bun & Fang, Alg 3; Thm 11–12).

    Attributes
    ----------
    max_updates : int
        K, the hard cap on AboveThreshold firings / multiplicative updates.
    n_samples : int
        m, the number of exponential-mechanism draws whose empirical distribution
        is released after each update.
    learning_rate : float
        η; each draw is 4η-DP.
    svt_epsilon : float
        ε̂, the budget of each AboveThreshold instance.
    threshold : float
        L, the sparse-vector threshold on the count of mistakes since the last update.
    epsilon_svt_layer, epsilon_em_layer : float
        ε of each layer alone at δ/2 by advanced composition (the paper's view). With
        ``accounting="paper"`` their sum is the guarantee, ≤ ε; with ``"tight"`` the
        layers are accounted jointly (``epsilon_spent``) and their sum may exceed ε.
    feasible : bool
        False when no valid setting exists; then ``reason`` says why and the
        estimator refuses to run.
    reason : str
        Why no valid setting exists; when feasible, empty or a note (e.g. that the
        practical K was capped below the Thm 12 fixed point).
    setting : str
        ``"theory"`` or ``"practical"``.
    accounting : str
        ``"tight"`` or ``"paper"``: the composition proof ε̂ and η were calibrated by.
    epsilon_spent : float
        ε of the whole run at the solver's δ, by that proof: the tight accountant's
        joint bound, or the two layers' sum. ≤ ε. With the guard, its share included.
    guard_epsilon : float
        ε of the guard's private checks (``guard`` of
        :class:`~skdp.linear.DPWinnowClassifier`; 0 without them).
    """

    max_updates: int
    n_samples: int
    learning_rate: float
    svt_epsilon: float
    threshold: float
    epsilon_svt_layer: float
    epsilon_em_layer: float
    feasible: bool
    reason: str
    setting: str
    accounting: str = "paper"
    epsilon_spent: float = 0.0
    guard_epsilon: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """The fields as a dict."""
        return asdict(self)

    @property
    def privacy_events(self) -> tuple[tuple[Any, int], ...]:
        """What the run costs, for :func:`skdp.accounting.account`: K × PureDP(ε̂)
        (AboveThreshold) and mK × BoundedRange(4η) (the draws); with the guard, one
        PureDP(ε_g) item for its checks."""
        events = plan_events(self.svt_epsilon, self.learning_rate, self.max_updates,
                             self.n_samples)
        if self.guard_epsilon > 0:
            events = ((PureDP(self.guard_epsilon), 1), *events)
        return events


def _infeasible(reason, setting, accounting="paper", **known):
    base = dict(max_updates=0, n_samples=0, learning_rate=0.0, svt_epsilon=0.0, threshold=0.0,
                epsilon_svt_layer=0.0, epsilon_em_layer=0.0)
    base.update(known)
    return DPWinnowParameters(**base, feasible=False, reason=reason, setting=setting,
                              accounting=accounting)


def _layer_epsilon(step_epsilon, k, delta_half):
    """ε of k adaptively composed step_epsilon-DP mechanisms with slack δ/2 (DRV, ≤ basic)."""
    basic = k * step_epsilon
    try:
        adv = advanced_composition(step_epsilon, 0.0, k, delta_half).epsilon
    except PrivacyParameterError:  # pragma: no cover - only for degenerate inputs
        adv = math.inf
    return min(basic, adv)


@functools.lru_cache(maxsize=256)
def _solve_cached(*args, **kwargs):
    return _solve(*args, **kwargs)


def solve_dp_winnow_parameters(
    epsilon: float,
    delta: float,
    margin: float,
    n_rounds: int,
    n_features: int,
    *,
    beta: float = 0.05,
    confidence: float = 0.5,
    setting: str = "practical",
    max_updates: int | None = None,
    n_samples: int | None = None,
    threshold: float | None = None,
    accounting: str = "tight",
) -> DPWinnowParameters:
    kwargs = dict(beta=beta, confidence=confidence, setting=setting, max_updates=max_updates,
                  n_samples=n_samples, threshold=threshold, accounting=accounting)
    try:
        return _solve_cached(epsilon, delta, margin, n_rounds, n_features, **kwargs)
    except TypeError:  # unhashable arguments: validate and report without the cache
        return _solve(epsilon, delta, margin, n_rounds, n_features, **kwargs)


def _solve(
    epsilon,
    delta,
    margin,
    n_rounds,
    n_features,
    *,
    beta=0.05,
    confidence=0.5,
    setting="practical",
    max_updates=None,
    n_samples=None,
    threshold=None,
    accounting="tight",
):
    """Solve DP-Winnow's constants for (ε, δ, ρ, T, d); report when none are valid.

    Parameters
    ----------
    epsilon, delta : float
        Target guarantee, ε > 0 and 0 < δ < 1 (advanced composition needs δ > 0).
        ``"theory"`` additionally needs ε < 1, as Thm 11 assumes.
    margin : float
        ρ ∈ (0, 1], the assumed margin of the target halfspace (utility only).
    n_rounds : int
        T, the horizon (utility only: it enters m and L through log(2T/β)).
    n_features : int
        d, the number of Winnow coordinates (after (x, −x) doubling and bias).
    beta : float, default=0.05
        Failure probability of the utility guarantee.
    confidence : float, default=0.5
        c of ConfidentWinnow / Lemma 13 (``"theory"`` only), 0 < c < 1.
    setting : {"practical", "theory"}, default="practical"
        Which constants to use (see the module docstring).
    max_updates, n_samples, threshold : optional
        Override K, m or L. Privacy is recalibrated for the K and m used.
    accounting : {"tight", "paper"}, default="tight"
        The composition proof (see the module docstring): ``"tight"`` calibrates the
        K AboveThreshold instances and mK draws jointly with the tight accountant
        (paper's relative weights, larger ε̂ and η, smaller K); ``"paper"`` reproduces
        the two-layer advanced-composition numbers (Thm 11). Privacy is (ε, δ) in both.

    Returns
    -------
    DPWinnowParameters
        With ``feasible=False`` and a ``reason`` when no valid setting exists
        (e.g. ε ≥ 1 or a fixed point K beyond 10⁹ for ``"theory"``, ρ outside (0, 1]).
        ``"practical"`` caps K at 10⁹ instead and says so in ``reason``.

    Raises
    ------
    PrivacyParameterError
        On invalid ε or δ (δ must be > 0).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0.0:
        raise PrivacyParameterError(
            "delta must be > 0 for DP-Winnow: its accounting uses advanced composition "
            "over K sparse-vector instances and mK exponential-mechanism draws."
        )
    n_rounds = check_positive_int(n_rounds, "n_rounds")
    n_features = check_positive_int(n_features, "n_features")
    if setting not in ("practical", "theory"):
        raise ValueError(f"setting must be 'practical' or 'theory', got {setting!r}.")
    if accounting not in ACCOUNTINGS:
        raise ValueError(f"accounting must be 'tight' or 'paper', got {accounting!r}.")
    if not (0.0 < margin <= 1.0):
        return _infeasible(f"margin ρ must lie in (0, 1], got {margin!r}.", setting, accounting)
    if not (0.0 < beta < 1.0):
        return _infeasible(f"beta must lie in (0, 1), got {beta!r}.", setting, accounting)
    if not (0.0 < confidence < 1.0):
        return _infeasible(f"confidence c must lie in (0, 1), got {confidence!r}.", setting,
                           accounting)
    log_tb = math.log(2.0 * n_rounds / beta)
    log_d = math.log(max(n_features, 2))
    delta_half = delta / 2.0

    def update_bound(eta_k):  # Thm 12: 2 log d/(ηρ − η²), inf while ηρ ≤ η²
        gap = eta_k * margin - eta_k**2
        return 2.0 * log_d / gap if gap > 0 else math.inf

    if setting == "theory":
        if epsilon >= 1.0:
            return _infeasible(
                f"Thm 11 assumes ε < 1, got ε={epsilon:g}; use setting='practical' "
                "(same accounting, user-sized K and m).", setting, accounting)
        m = n_samples or math.ceil(2.0 * log_tb / (confidence**2 * margin**2))
        solved = _theory(epsilon, delta, margin, m, log_d, max_updates, accounting,
                         update_bound)
    else:
        if n_samples is None:
            m = min(math.ceil(1.0 / margin - 1e-9), PRACTICAL_MAX_SAMPLES - 1)
            m += 1 - m % 2  # odd: fewer tied votes
        else:
            m = check_positive_int(n_samples, "n_samples")
        solved = _practical(epsilon, delta, m, max_updates, accounting, update_bound)
    if isinstance(solved, _Refusal):
        known = {} if solved.k is None else dict(max_updates=int(min(solved.k, 2**62)),
                                                 n_samples=m)
        return _infeasible(solved.reason, setting, accounting, **known)
    k, eps_hat, eta, used, note = solved
    if threshold is not None:
        big_l = threshold
    else:
        big_l = 8.0 * log_tb / eps_hat if setting == "theory" else 1.0 / eps_hat
    m = check_positive_int(m, "n_samples")
    eps_svt = _layer_epsilon(eps_hat, k, delta_half)
    eps_em = _layer_epsilon(4.0 * eta, k * m, delta_half)
    spent = (eps_svt + eps_em if used == "paper"
             else spent_epsilon(eps_hat, eta, k, m, delta))
    if spent > epsilon * (1 + 1e-9):  # pragma: no cover - a solver bug guard
        return _infeasible(
            f"accounting check failed: ε spent {spent:g} > ε={epsilon:g}.", setting, used)
    return DPWinnowParameters(
        max_updates=int(k), n_samples=int(m), learning_rate=float(eta),
        svt_epsilon=float(eps_hat), threshold=float(big_l),
        epsilon_svt_layer=float(eps_svt), epsilon_em_layer=float(eps_em),
        feasible=True, reason=note, setting=setting, accounting=used,
        epsilon_spent=float(spent),
    )


class _Refusal:
    """Why a preset has no valid setting (and the K it would have needed, if known)."""

    def __init__(self, reason, k=None):
        self.reason, self.k = reason, k


def _tight_result(k, tight, note):
    eps_hat, eta, _, proof = tight.rates(k)
    return k, eps_hat, eta, proof, note


def _theory(epsilon, delta, margin, m, log_d, max_updates, accounting, update_bound):
    """(K, ε̂, η, accounting used, note) of the theory preset, or the reason it has none."""
    log2d = math.log(2.0 / delta)
    a = epsilon / (16.0 * math.sqrt(2.0 * m * log2d))
    tight = TightScale(epsilon, delta, m, "theory") if accounting == "tight" else None
    if max_updates is not None:
        k = check_positive_int(max_updates, "max_updates")
    elif tight is None:
        root = (2.0 * log_d + a * a) / (a * margin)  # √K at the fixed point
        if root**2 > MAX_UPDATES:
            return _Refusal(
                f"the Thm 12 fixed point K = {root**2:.3g} exceeds {MAX_UPDATES:g} "
                "updates: no usable setting for these (ε, δ, ρ, T, d).", root**2)
        k = max(1, math.ceil(root**2 - 1e-9))
    else:
        def least_for_scale(scale):  # the closed form with a → s·a
            sa = scale * a
            return max(1, math.ceil(((2.0 * log_d + sa * sa) / (sa * margin)) ** 2 - 1e-9))

        def ok_at(k, scale):
            return 0 < update_bound(scale * a / math.sqrt(k)) <= k

        k = tight_least_fixed_point(ok_at, tight.scale, least_for_scale, least_for_scale(1.0))
        if k is None or k > MAX_UPDATES:
            shown = least_for_scale(1.0) if k is None else k
            return _Refusal(
                f"the Thm 12 fixed point K = {shown:.3g} exceeds {MAX_UPDATES:g} "
                "updates: no usable setting for these (ε, δ, ρ, T, d).", shown)
    if tight is not None:
        return _tight_result(k, tight, "")
    eta = a / math.sqrt(k)
    if eta * margin - eta * eta <= 0:  # pragma: no cover - excluded by the closed form
        return _Refusal("ηρ − η² ≤ 0: no K satisfies Thm 12.")
    return k, epsilon / (4.0 * math.sqrt(2.0 * k * log2d)), eta, "paper", ""


def _practical(epsilon, delta, m, max_updates, accounting, update_bound):
    """(K, ε̂, η, accounting used, note) of the practical preset."""
    delta_half = delta / 2.0
    tight = TightScale(epsilon, delta, m, "practical") if accounting == "tight" else None

    def eta_of(k):  # the paper's η(K): the EM layer (ε/2, δ/2) by advanced composition
        return calibrate(epsilon / 2.0, delta_half, k * m, method="advanced").epsilon / 4.0

    note = ""
    if max_updates is not None:
        k = check_positive_int(max_updates, "max_updates")
    else:
        k = least_fixed_point(lambda k: update_bound(eta_of(k)), MAX_UPDATES)
        if tight is not None:
            k = practical_tight_k(k, eta_of, tight, update_bound, MAX_UPDATES)
        if k is None:
            k = MAX_UPDATES
            note = (f"the Thm 12 fixed point exceeds {MAX_UPDATES:g} updates for these "
                    f"(ε, δ, ρ, d): K capped at {MAX_UPDATES:g}; privacy is exact, but "
                    "no mistake bound applies at any practical T.")
    if tight is not None:
        return _tight_result(k, tight, note)
    eps_hat = calibrate(epsilon / 2.0, delta_half, k, method="advanced").epsilon
    return k, eps_hat, eta_of(k), "paper", note


solve_dp_winnow_parameters.__doc__ = _solve.__doc__
