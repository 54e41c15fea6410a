"""How the private online learners split (ε, δ) over the mechanisms they run.

One function per learner, each with two methods:

* ``"paper"`` — today's closed forms, exactly (basic composition, or DRV advanced
  composition for DP-SOA's adaptive variant), kept to reproduce the published numbers;
* ``"tight"`` (default) — :func:`skdp.accounting.calibrate_plan` (privacy-loss
  distributions and Rényi DP, whichever is tighter) on the events the code actually
  runs, with the same relative weights as the paper. Where the mechanisms have a δ of
  their own (stable histograms), a few public splits of δ between their δ and the
  composition's slack are calibrated and the one whose histogram has the smallest noise
  bound is kept; the paper's split is always among the candidates, so "tight" is never
  worse than "paper" for the quantity the learner's utility depends on. Calibrated ε's
  are shaved by a relative 10⁻⁵, a margin over the mechanisms' own noise-scale rounding.

Every function returns a :class:`Split`: the per-mechanism parameters, the events
``((event, count), …)`` they amount to, and the accountant method that certifies that
those events compose within (ε, δ) (``"basic"`` or ``"advanced"`` for a paper split,
``"tight"`` otherwise). Everything here is a function of public parameters.
"""

import math
from dataclasses import dataclass
from functools import lru_cache

from ..accounting import (
    ApproxDP,
    BoundedRange,
    DiscreteLaplace,
    PlanItem,
    PureDP,
    advanced_composition,
    calibrate_plan,
)
from ..mechanisms import HistSparse, StableHistogram

__all__ = [
    "ACCOUNTING",
    "Split",
    "adaptive_split",
    "consistent_split",
    "hist_sparse_split",
    "per_round_histogram_split",
    "tree_counter_split",
]

#: Accounting methods of the online learners.
ACCOUNTING = ("tight", "paper")
# Fractions of δ given to the mechanisms' own δ under "tight" (the rest is the slack of
# the composition); the paper's split (fraction 1, or 1/2 for DP-SOA's adaptive variant)
# is always a candidate too.
_DELTA_SHARES = (0.5, 0.9, 0.99)
# Calibrated ε's are shaved by this relative amount before they reach a mechanism: a
# margin over the rounding in the mechanisms' own noise-scale arithmetic (ε → 1/ε → ε).
_SHAVE = 1e-5
# Plans with more events than this are not calibrated numerically ("tight" keeps the
# paper's split): their per-event ε would be below the noise samplers' limit anyway,
# and each accounting of such a plan takes about a second.
_MAX_EVENTS = 10**9


@dataclass(frozen=True)
class Split:
    """A budget split and what certifies it.

    Attributes
    ----------
    values : tuple of float
        The per-mechanism parameters (documented by the function that returns it).
    events : tuple of (event, count)
        What the learner runs with these parameters (``skdp.accounting`` events).
    method : str
        The :func:`skdp.accounting.account` method under which ``events`` compose to
        at most (ε, δ).
    accounting : str
        ``"paper"`` or ``"tight"``: how the split was obtained.
    """

    values: tuple
    events: tuple
    method: str
    accounting: str


def _check(accounting):
    if accounting not in ACCOUNTING:
        raise ValueError(f"accounting must be one of {ACCOUNTING}, got {accounting!r}.")
    return accounting


def _shave(x):
    return x * (1.0 - _SHAVE)


def _noise_bound(epsilon, delta):
    try:
        return StableHistogram(epsilon, delta, random_state=0).noise_bound
    except ValueError:  # a scale the sampler refuses: unusable
        return math.inf


def _best_by_histogram(candidates, hist_index):
    """The candidate whose histogram (values[hist_index], values[hist_index + 1]) has
    the smallest noise bound A; ties go to the larger ε (then the earlier candidate)."""
    def key(split):
        eps, dlt = split.values[hist_index], split.values[hist_index + 1]
        return (_noise_bound(eps, dlt), -eps)
    return min(candidates, key=key)


def _tight_svt_and_histograms(epsilon, delta, n_hist, svt_share, paper):
    """One pure sparse-vector part and ``n_hist`` (ε_hist, δ_hist) histograms, ε split
    ``svt_share`` : (1 − svt_share)/n_hist as in the paper. Per public δ share, the
    largest common scale within (ε, δ); of those and ``paper``, the split whose
    histogram noise bound is smallest. ``values = (ε_svt, ε_hist, δ_hist)``."""
    candidates = [paper]
    for share in _DELTA_SHARES:
        item_delta = share * delta / n_hist
        plan = [PlanItem(PureDP, weight=svt_share),
                PlanItem(ApproxDP, count=n_hist, weight=(1.0 - svt_share) / n_hist,
                         delta=item_delta)]
        cal = calibrate_plan(plan, epsilon, delta)
        svt_t, hist_t = (_shave(e) for e in cal.epsilons)
        candidates.append(Split(
            (svt_t, hist_t, item_delta),
            ((PureDP(svt_t), 1), (ApproxDP(hist_t, item_delta), n_hist)), "tight", "tight"))
    return _best_by_histogram(candidates, 1)


# --------------------------------------------------------------------------- DP-SOA


@lru_cache(maxsize=256)
def hist_sparse_split(epsilon, delta, max_switches, accounting="tight"):
    """HistSparse's split: ``values = (ε_svt, ε_hist, δ_hist)``.

    The sparse vector (AboveThreshold with cutoff c, ε_svt-DP for any number of
    queries: one :class:`~skdp.accounting.PureDP`) and c stable histograms
    (:class:`~skdp.accounting.ApproxDP` (ε_hist, δ_hist) each). ``"paper"``: Golowich &
    Livni's ratio rescaled to total ε by basic composition, ε_svt = 2ε/3,
    ε_hist = ε/(3c), δ_hist = δ/c (:meth:`HistSparse.budget_split`). ``"tight"``: the
    largest scale s with ε_svt = 2s/3, ε_hist = s/(3c) that composes within (ε, δ).
    """
    c = int(max_switches)
    svt, hist, hist_delta = HistSparse.budget_split(epsilon, delta, c)
    paper = Split((svt, hist, hist_delta), ((PureDP(svt), 1), (ApproxDP(hist, hist_delta), c)),
                  "basic", "paper")
    if _check(accounting) == "paper" or c > _MAX_EVENTS:
        return paper
    return _tight_svt_and_histograms(epsilon, delta, c, 2.0 / 3.0, paper)


@lru_cache(maxsize=256)
def per_round_histogram_split(epsilon, delta, n_rounds, accounting="tight"):
    """DP-SOA's adaptive variant: ``values = (ε′, δ′)`` of each of T per-round histograms.

    T stable histograms, (ε′, δ′)-DP each (:class:`~skdp.accounting.ApproxDP`).
    ``"paper"``: Golowich & Livni's Lemma 5.4, ε′ = ε/(2√(2T ln(1/δ))), δ′ = δ/(2T),
    certified by DRV advanced composition with slack δ/2; raises ValueError when that
    does not compose to (ε, δ) (ε too large for the lemma). ``"tight"``: the largest ε′
    whose T-fold composition is within (ε, δ).
    """
    T = int(n_rounds)
    rel_eps = epsilon / (2.0 * math.sqrt(2.0 * T * math.log(1.0 / delta)))
    rel_delta = delta / (2.0 * T)
    total = advanced_composition(rel_eps, rel_delta, T, delta / 2.0)
    paper_ok = total.epsilon <= epsilon and total.delta <= delta
    paper = Split((rel_eps, rel_delta), ((ApproxDP(rel_eps, rel_delta), T),), "advanced",
                  "paper")
    if _check(accounting) == "paper":
        if not paper_ok:
            raise ValueError(
                f"{T} rounds at ε′ = {rel_eps:.3g} compose to {total}, more than (ε, δ) = "
                f"({epsilon}, {delta}) (Lemma 5.4 needs a small ε); lower epsilon or "
                "n_rounds, or use accounting='tight'.")
        return paper
    candidates = [paper] if paper_ok else []
    for share in _DELTA_SHARES:
        item_delta = share * delta / T
        cal = calibrate_plan([PlanItem(ApproxDP, count=T, delta=item_delta)], epsilon, delta)
        eps_t = _shave(cal.epsilons[0])
        candidates.append(Split((eps_t, item_delta), ((ApproxDP(eps_t, item_delta), T),),
                                "tight", "tight"))
    return _best_by_histogram(candidates, 0)


# --------------------------------------------------------------------------- Li–Wang–Ye


@lru_cache(maxsize=256)
def adaptive_split(epsilon, delta, n_layers, accounting="tight"):
    """Li–Wang–Ye's split: ``values = (ε₀, ε_hist, δ_hist)``.

    The AboveThreshold instances (ε₀-DP each, on disjoint rounds: one
    :class:`~skdp.accounting.PureDP` (ε₀) together) and D PrivateHistograms
    (:class:`~skdp.accounting.ApproxDP` (ε_hist, δ_hist) each). ``"paper"``: ε₀ = ε/2,
    (ε₀/D, δ/D), basic composition. ``"tight"``: the largest s with ε₀ = s/2,
    ε_hist = s/(2D) within (ε, δ).
    """
    D = int(n_layers)
    eps0 = epsilon / 2.0
    hist, hist_delta = eps0 / D, delta / D
    paper = Split((eps0, hist, hist_delta), ((PureDP(eps0), 1), (ApproxDP(hist, hist_delta), D)),
                  "basic", "paper")
    if _check(accounting) == "paper":
        return paper
    return _tight_svt_and_histograms(epsilon, delta, D, 0.5, paper)


@lru_cache(maxsize=256)
def consistent_split(epsilon, delta, max_releases, accounting="tight"):
    """Li–Wang–Ye with the consistency release: ``values = (ε₀, ε_release)``.

    The AboveThreshold instances (ε₀-DP together: disjoint rounds, one
    :class:`~skdp.accounting.PureDP`) and at most c = ``max_releases`` exponential
    mechanisms (:class:`~skdp.accounting.BoundedRange` (ε_release) each; lemma in
    :class:`~skdp.online._consistent_release.ConsistentReleaseCore`). ``"paper"``
    (basic composition): ε₀ = ε/2, ε_release = ε/(2c), pure ε-DP. ``"tight"``: the
    largest s with ε₀ = s/2, ε_release = s/(2c) within (ε, δ) (uses δ when δ > 0).
    """
    c = int(max_releases)
    eps0, rel = epsilon / 2.0, epsilon / (2.0 * c)
    paper = Split((eps0, rel), ((PureDP(eps0), 1), (BoundedRange(rel), c)), "basic", "paper")
    if _check(accounting) == "paper":
        return paper
    cal = calibrate_plan([PlanItem(PureDP, weight=0.5),
                          PlanItem(BoundedRange, count=c, weight=0.5 / c)], epsilon, delta)
    eps0_t, rel_t = (_shave(e) for e in cal.epsilons)
    if rel_t <= rel:
        return paper
    return Split((eps0_t, rel_t), ((PureDP(eps0_t), 1), (BoundedRange(rel_t), c)), "tight",
                 "tight")


# --------------------------------------------------------------------------- experts


@lru_cache(maxsize=1024)
def tree_counter_split(epsilon, delta, n_levels, n_changed, accounting="tight"):
    """Binary-mechanism cell counters: ``values = (ε_cell, δ_spent)``.

    Replacing one row changes ``n_changed`` cell streams at one step; each cell's
    counter (:class:`~skdp.mechanisms.binary_tree.BinaryTreeCounter`, ``discrete=True``,
    ε_cell) adds discrete Laplace noise of scale L/ε_cell to every node, and a step lies
    in at most L = ``n_levels`` nodes, each moved by at most 1: the whole release is
    ``n_changed·L`` :class:`~skdp.accounting.DiscreteLaplace` (ε_cell/L) events.
    ``"paper"``: ε_cell = ε/``n_changed`` (pure ε-DP, δ_spent = 0). ``"tight"``: the
    largest ε_cell within (ε, δ), used only when δ > 0 and it exceeds the paper's (then
    δ_spent = δ; otherwise the paper split, pure ε-DP).
    """
    L, m = int(n_levels), int(n_changed)
    cell = epsilon / m
    paper = Split((cell, 0.0), ((DiscreteLaplace(cell / L), m * L),), "basic", "paper")
    if _check(accounting) == "paper" or delta <= 0.0:
        return paper
    cal = calibrate_plan([PlanItem(DiscreteLaplace, count=m * L)], epsilon, delta)
    node = _shave(cal.epsilons[0])
    if node * L <= cell:
        return paper
    return Split((node * L, float(delta)), ((DiscreteLaplace(node), m * L),), "tight", "tight")
