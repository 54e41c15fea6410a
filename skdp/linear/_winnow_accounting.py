"""DP-Winnow's privacy split: the paper's two-layer accounting and the tight one.

DP-Winnow (Bun & Fang, Alg 3; Thm 11, Appendix C "View 2") is a post-processing of
an adaptive composition of

* at most K AboveThreshold instances (cutoff c = 1, monotone sensitivity-1 queries),
  each **pure ε̂-DP** (Lyu, Su & Li 2017, Thm 2; :class:`~skdp.mechanisms.AboveThreshold`
  puts ε̂/2 on the threshold and Lap(2/ε̂) on each query), and
* at most m·K exponential-mechanism draws j ~ w, w_j ∝ exp(η·S_j), where every score
  S_j moves by at most Δ = 2 between neighbouring streams.
  :func:`~skdp.mechanisms.exponential_mechanism` run at ε = 4η with Δ = 2 samples
  exactly ∝ exp(4η·S/(2Δ)) = exp(η·S); its log-likelihood ratio is
  η(S_j − S′_j) − log(Z/Z′), whose range over j is at most η·2Δ = 4η. A draw is
  therefore **4η-bounded-range** (hence 4η-DP and (4η)²/8-zCDP; Durfee & Rogers 2019,
  Cesar & Rogers 2021).

Two ways to account for that composition:

``"paper"``
    Each layer gets ε/2 and δ/2 and is composed by DRV advanced composition
    (``calibrate(ε/2, δ/2, k, method="advanced")``, never worse than basic); the
    ``"theory"`` preset uses Thm 11's closed forms ε̂ = ε/(4√(2K log(2/δ))) and
    η = ε/(16√(2mK log(2/δ))) instead. Reproduces the numbers before the tight
    accountant.
``"tight"``
    One plan through :func:`skdp.accounting.calibrate_plan`:
    ``[PlanItem(PureDP, K, ε̂_paper), PlanItem(BoundedRange, m·K, 4η_paper)]`` — the
    *same* events with the paper's relative weights (so ε̂/η keeps the paper's ratio),
    scaled by the largest s whose joint composition is (ε, δ)-DP. The whole δ is used
    once instead of δ/2 per layer, the draws are composed as bounded-range
    mechanisms, and the two layers share one privacy-loss bound. s ≥ 1 in every
    case measured (≈ 1.5–2.3 at ε ∈ {0.5, 1, 4}); should it ever fall below 1 the
    paper's parameters are kept and ``accounting`` records ``"paper"``.

    Why the paper's weights: in the zCDP regime, giving the sparse vectors a fraction f
    of the budget makes the fixed point K ∝ 1/(1 − f) and L = 1/ε̂ ∝ √(K/f), so the
    practical mistake count (~K·L) scales like (1 − f)^{−3/2} f^{−1/2}; the paper's
    f ≈ 1/2 is within ~30 % of that crude model's optimum (f = 1/4) — not clearly
    worse, so the paper's split is kept.

Beyond ``PLD_MAX_EVENTS`` mechanisms the plan is calibrated by the Rényi bound alone
(the one that wins there; the privacy-loss distribution costs ~100× more at 10⁹
events); the calibrated scale is shaved by a relative ``SAFETY`` = 10⁻⁵.
"""

import math

from ..accounting import BoundedRange, PlanItem, PureDP, account, calibrate, calibrate_plan

__all__ = ["ACCOUNTINGS", "TightScale", "least_fixed_point", "paper_rates", "plan_events",
           "practical_tight_k", "spent_epsilon", "tight_least_fixed_point", "tight_rates"]

ACCOUNTINGS = ("tight", "paper")

#: Above this many mechanisms in one plan, the Rényi bound alone (see :func:`_method`).
PLD_MAX_EVENTS = 10**8
#: The calibrated scale is shaved by this relative margin, far more than the
#: accountant's floating-point error.
SAFETY = 1e-5


def plan_events(svt_epsilon, learning_rate, k, m):
    """The privacy events DP-Winnow runs: K ε̂-DP AboveThresholds, mK 4η-BR draws."""
    return ((PureDP(svt_epsilon), int(k)), (BoundedRange(4.0 * learning_rate), int(k * m)))


def _method(k, m):
    """The accountant method for K PureDP + mK BoundedRange events: ``"tight"`` (the best
    of the privacy-loss distribution, Rényi and the closed forms) up to PLD_MAX_EVENTS
    events, ``"rdp"`` beyond — the bound that wins there (the PLD counts a draw as pure
    ε-DP), at 1/100 of the cost (0.9 s → 0.01 s per calibration at 10¹⁰ events)."""
    return "tight" if k * (m + 1) <= PLD_MAX_EVENTS else "rdp"


def paper_rates(epsilon, delta, k, m, setting):
    """(ε̂, η) of the paper's accounting for exactly K updates and m draws each.

    ``"practical"``: each layer (ε/2, δ/2) by DRV advanced composition (≤ basic).
    ``"theory"``: Thm 11's closed forms (with the 4η correction for ±1 features).
    """
    if setting == "theory":
        log2d = math.log(2.0 / delta)
        return (epsilon / (4.0 * math.sqrt(2.0 * k * log2d)),
                epsilon / (16.0 * math.sqrt(2.0 * m * k * log2d)))
    half = delta / 2.0
    return (calibrate(epsilon / 2.0, half, k, method="advanced").epsilon,
            calibrate(epsilon / 2.0, half, k * m, method="advanced").epsilon / 4.0)


def tight_rates(epsilon, delta, k, m, setting):
    """(ε̂, η, s, proof): the paper's (ε̂, η) at (K, m) scaled by the accountant's s ≥ 1.

    s is the largest common scale (less a relative SAFETY margin, never below 1) with
    ``account(plan_events(s·ε̂, s·η, K, m)).epsilon(δ) ≤ ε`` by the trusted methods
    (:func:`_method`). If the accountant cannot certify the paper's own split
    (s < 1, never observed) the paper's values are returned with proof ``"paper"``.
    """
    eps_hat, eta = paper_rates(epsilon, delta, k, m, setting)
    plan = [PlanItem(PureDP, int(k), eps_hat), PlanItem(BoundedRange, int(k * m), 4.0 * eta)]
    scale = calibrate_plan(plan, epsilon, delta, method=_method(k, m)).scale
    if scale < 1.0:  # pragma: no cover - the paper's split is always certified
        return eps_hat, eta, 1.0, "paper"
    # Shaved, and rounded down to a multiple of 10⁻⁶ so that s(K) is a step function of K
    # rather than one with bisection noise (it then keeps the fixed point search stable).
    scale = max(1.0, math.floor(scale * (1.0 - SAFETY) * 1e6) / 1e6)
    # 4η is exactly the ε of the plan's draw event (×4 and /4 are exact).
    return eps_hat * scale, (4.0 * eta * scale) / 4.0, scale, "tight"


def spent_epsilon(svt_epsilon, learning_rate, k, m, delta):
    """ε at δ of the run by the tight accountant (the joint bound)."""
    return account(plan_events(svt_epsilon, learning_rate, k, m),
                   method=_method(k, m)).epsilon(delta)


class TightScale:
    """:func:`tight_rates` at fixed (ε, δ, m, setting) as a function of K, cached per K."""

    def __init__(self, epsilon, delta, m, setting):
        self.args = (epsilon, delta, m, setting)
        self.cache = {}

    def rates(self, k):
        """(ε̂, η, s, proof) at K = k."""
        if k not in self.cache:
            epsilon, delta, m, setting = self.args
            self.cache[k] = tight_rates(epsilon, delta, k, m, setting)
        return self.cache[k]

    def scale(self, k):
        """s(k) ≥ 1, the factor over the paper's (ε̂, η) at K = k."""
        return self.rates(k)[2]


def tight_least_fixed_point(ok_at, scale_at, least_for_scale, start):
    """Least K with Thm 12's K ≥ 2 log d/(ηρ − η²) at the tight η(K) = s(K)·η_paper(K).

    Parameters
    ----------
    ok_at : callable (k, s) -> bool
        Whether Thm 12's bound holds at k for η = s·η_paper(k).
    scale_at : callable k -> float
        The tight scale s(k) (one accountant calibration; cached by the caller).
    least_for_scale : callable s -> int or None
        The least k with ``ok_at(k, s)`` for a *fixed* s (cheap: no accountant), None if
        beyond the cap.
    start : int
        A k to start from, e.g. the paper's fixed point.

    Returns
    -------
    int or None
        A k with ``ok_at(k, scale_at(k))`` true and false at k − 1, or None if none
        was found (the caller then caps K or reports infeasibility).

    Notes
    -----
    s(k) varies slowly (it is nearly constant once k is large), so iterating
    k ← least_for_scale(s(k)) converges in a few calibrations; the final check at
    k − 1 makes the answer the least fixed point whenever the bound is monotone in k,
    as the paper's solver also assumes.
    """
    k = start
    if k is None or not ok_at(k, scale_at(k)):
        return None
    for _ in range(32):
        candidate = least_for_scale(scale_at(k))
        if candidate is None or candidate >= k:
            break
        for _ in range(4):  # s(candidate) may sit a rounding below s(k): re-solve there
            if ok_at(candidate, scale_at(candidate)):
                break
            candidate = least_for_scale(scale_at(candidate))
            if candidate is None or candidate >= k:
                break
        if candidate is None or candidate >= k or not ok_at(candidate, scale_at(candidate)):
            break
        k = candidate
    # Least: bisect (k/2, k] on the exact predicate if k − 1 still satisfies the bound.
    lo = k - 1
    if lo < 1 or not ok_at(lo, scale_at(lo)):
        return k
    hi, lo = lo, max(0, lo // 2)
    while lo > 0 and ok_at(lo, scale_at(lo)):  # pragma: no cover - s(K) varies slowly
        hi, lo = lo, lo // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        hi, lo = (mid, lo) if ok_at(mid, scale_at(mid)) else (hi, mid)
    return hi


def least_fixed_point(g, cap):
    """Least integer K ≥ 1 with K ≥ g(K), for g nondecreasing (η(K) decreases in K);
    None if beyond ``cap``. g may return ≤ 0 or inf (ηρ − η² ≤ 0: not yet)."""

    def ok(k):
        value = g(k)
        return 0 < value <= k

    hi = 1
    while not ok(hi):
        hi *= 2
        if hi > cap:
            return None
    lo = hi // 2  # not ok (or 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def practical_tight_k(paper_k, eta_of, tight, update_bound, cap):
    """The practical preset's Thm 12 fixed point at the tight η(K) = s(K)·η_paper(K).

    Starts from the paper's fixed point ``paper_k`` (or ``cap`` when that is None);
    ``eta_of`` is the paper's η(K), ``tight`` a :class:`TightScale`. None if even K =
    ``cap`` does not satisfy the bound (the caller then caps K).
    """
    etas = {}

    def eta_paper(k):
        if k not in etas:
            etas[k] = eta_of(k)
        return etas[k]

    def ok_at(k, scale):
        return 0 < update_bound(scale * eta_paper(k)) <= k

    def least_for_scale(scale):
        return least_fixed_point(lambda k: update_bound(scale * eta_paper(k)), cap)

    start = cap if paper_k is None else paper_k
    return tight_least_fixed_point(ok_at, tight.scale, least_for_scale, start)
