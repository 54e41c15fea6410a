"""DP-SOA's parameters: the paper's constants (``preset="theory"``) and the practical
preset, resolved from public inputs only (no data, no randomness)."""

import math
import warnings
from dataclasses import dataclass

from ..mechanisms import StableHistogram, stable_histogram_min_size
from ._budget_split import hist_sparse_split, per_round_histogram_split
from ._competitor_sparse import competitor_threshold

__all__ = ["DPSOAParameters", "resolve_dp_soa_parameters"]

#: Horizon T assumed by the "theory" preset when ``n_rounds`` is None (utility only).
DEFAULT_THEORY_HORIZON = 10**6
#: Horizon T of the competitor query's noise margin when ``n_rounds`` is None (utility only).
DEFAULT_PRACTICAL_HORIZON = 10**5
#: Refuse forests with more vertex slots than this (each slot holds a few words).
MAX_FOREST_SLOTS = 2**24
#: Cap of the default ``n_trees`` (the histogram's sample size can be astronomical).
MAX_AUTO_TREES = 2**15
#: Practical preset: k₁ = the paper's 2^{d+1} up to this Ldim d, else
#: ``PRACTICAL_LEAVES`` (see ``DPSOAClassifier``'s Notes for the measurements).
PRACTICAL_MAX_PAPER_LDIM = 5
PRACTICAL_LEAVES = 4
#: Practical preset: the cutoff c (one real switch; the competitor query wastes none).
PRACTICAL_SWITCHES = 1
#: Practical preset, k₂ in units of the trees R that the competitor query's first firing
#: needs (half its threshold): the SOA's tournament trees (fires once 2/3 agree) and the
#: anchored learner's flat trees (a copy needs one informative row, so more, emptier
#: trees reach R sooner; see ``DPSOAClassifier``'s Notes for the measurements).
PRACTICAL_TREES_PER_RELEASE = {"soa": 3.0, "anchored": 8.0}
#: Practical preset: η for the frequency query; with the competitor query η only raises
#: the histogram's threshold max(A + 2, ⌈ηk₂/2⌉), so it defaults to min(this, 2(A+2)/k₂).
PRACTICAL_ETA = 0.25


@dataclass(frozen=True)
class DPSOAParameters:
    """The resolved parameters of one DP-SOA stream.

    Attributes
    ----------
    n_trees, n_leaves, max_switches : int
        k₂, k₁ and the HistSparse cutoff c.
    eta, threshold : float
        η and the sparse-vector threshold: θ = 1 − 3η/32 (``query="frequency"``) or
        ``threshold_count``/k₂ (``"competitor"``).
    svt_epsilon, hist_epsilon, hist_delta : float
        HistSparse's budget split (``adaptive=False``).
    release_epsilon, release_delta : float
        Per-round histogram (ε′, δ′) (``adaptive=True``; else 0).
    n_rounds : int or None
        The horizon T (a hard cap on rounds with ``adaptive=True``).
    adaptive : bool
    preset : str
    accounting : str
        ``"tight"`` or ``"paper"``: how the split was calibrated.
    query : str
        ``"competitor"`` or ``"frequency"`` (Alg. 2's).
    threshold_count : float
        The competitor query's threshold in trees (0 for ``"frequency"``).
    on_inconsistent : str
        What the SOA base learner does with an example contradicting its version space:
        ``"skip"`` it or become ``"bottom"`` (⊥).
    base_learner : str
        ``"anchored"`` (:class:`~skdp.online._dp_soa_anchored.AnchoredLearner`) or
        ``"soa"``; ``"given"`` for a user's MistakeBoundedLearner.
    """

    n_trees: int
    n_leaves: int
    max_switches: int
    eta: float
    threshold: float
    svt_epsilon: float
    hist_epsilon: float
    hist_delta: float
    release_epsilon: float
    release_delta: float
    n_rounds: int | None
    adaptive: bool
    preset: str
    accounting: str = "tight"
    query: str = "frequency"
    threshold_count: float = 0.0
    on_inconsistent: str = "bottom"
    base_learner: str = "soa"


def _theory_sizes(ldim, epsilon, delta, horizon):
    """k₁, η, c and log₂ k₂ of Golowich & Livni, Alg. 1 and Lemma A.3 (with β = 1/T)."""
    k1 = 1 << max(math.ceil(math.log2(max(2 ** (ldim + 1), 20))), 1)
    log2_eta = -4 * k1 - math.log2(4 * k1)
    log2_c = math.log2(4 * k1) - log2_eta
    # Θ₍₆₎ = 2^{8k₁+6} k₁² log(5T log k₁ / β) dominates Θ₍₄₎ = Õ(c ln(T/βδ)/(ηε))
    log2_theta6 = 8 * k1 + 6 + 2 * math.log2(k1) + math.log2(
        math.log(5 * horizon * math.log(k1) * horizon))
    log2_theta4 = log2_c - log2_eta + math.log2(8 * math.log(2 * horizon**2 / delta) / epsilon)
    return k1, log2_eta, log2_c, max(log2_theta6, log2_theta4)


def _theory(name, ldim, epsilon, delta, horizon, k1, k2, eta, c):
    t_k1, log2_eta, log2_c, log2_k2 = _theory_sizes(ldim, epsilon, delta, horizon)
    k1 = t_k1 if k1 is None else k1
    if k2 is None and log2_k2 + math.log2(2 * k1) > math.log2(MAX_FOREST_SLOTS):
        raise ValueError(
            f"{name}(preset='theory'): Golowich & Livni's constants for Ldim {ldim} need "
            f"k₁ = {t_k1} leaves, η = 2^{log2_eta:.0f}, c = 2^{log2_c:.0f} switches and k₂ ≈ "
            f"2^{log2_k2:.0f} trees — far beyond memory (limit {MAX_FOREST_SLOTS} "
            "vertices). Use preset='practical', or pass n_trees and n_leaves.")
    eta = 2.0**log2_eta if eta is None else eta
    c = math.ceil(2.0**log2_c) if c is None else c
    k2 = math.ceil(2.0**log2_k2) if k2 is None else k2
    return k1, k2, eta, c


def resolve_base_learner(base_learner, preset, given):
    """``"given"`` for a user's learner, else the parameter or the preset's default
    (``"anchored"`` practical, ``"soa"`` theory)."""
    if given:
        return "given"
    return base_learner or ("soa" if preset == "theory" else "anchored")


def resolve_dp_soa_parameters(name, ldim, epsilon, delta, *, n_trees, n_leaves,
                              max_switches, eta, adaptive, n_rounds, preset, accounting,
                              query, on_inconsistent, base_learner="soa"):
    """Resolve DP-SOA's parameters (see :class:`~skdp.online.DPSOAClassifier`).

    Refuses (ValueError) unusable combinations before anything is charged.
    """
    if adaptive and n_rounds is None:
        raise ValueError(f"{name}(adaptive=True) needs n_rounds: its privacy is a "
                         "composition over T rounds.")
    theory = preset == "theory"
    query = query or ("frequency" if theory else "competitor")
    on_inconsistent = on_inconsistent or ("bottom" if theory else "skip")
    k1, k2, eta, c = n_leaves, n_trees, eta, max_switches
    if theory:
        k1, k2, eta, c = _theory(name, max(ldim, 0), epsilon, delta,
                                 n_rounds or DEFAULT_THEORY_HORIZON, k1, k2, eta, c)
    if k1 is None and base_learner == "anchored":
        k1 = 1  # flat trees: the anchored copies agree without a tournament
    if k1 is None:
        d = max(ldim, 1)
        k1 = 2 ** (d + 1) if d <= PRACTICAL_MAX_PAPER_LDIM else PRACTICAL_LEAVES
    auto_eta = eta is None and query == "competitor" and not adaptive
    eta = PRACTICAL_ETA if eta is None else float(eta)
    c = PRACTICAL_SWITCHES if c is None else c
    if k1 & (k1 - 1):
        raise ValueError(f"n_leaves must be a power of two (full binary trees), got {k1}.")
    if adaptive:
        try:
            split = per_round_histogram_split(epsilon, delta, n_rounds, accounting)
        except ValueError as exc:
            raise ValueError(f"{name}(adaptive=True): {exc}") from None
        rel_eps, rel_delta = split.values
        hist_eps, hist_delta, svt_eps = rel_eps, rel_delta, 0.0
    else:
        svt_eps, hist_eps, hist_delta = hist_sparse_split(epsilon, delta, c, accounting).values
        rel_eps = rel_delta = 0.0
    # refuses unusable noise scales now, before the charge (no randomness is used)
    hist = StableHistogram(hist_eps, hist_delta, eta=eta, random_state=0)
    count = 0.0
    if query == "competitor" and not adaptive:
        count = competitor_threshold(hist.noise_bound, hist.noise_scale, svt_eps, c,
                                     n_rounds or DEFAULT_PRACTICAL_HORIZON)
    if k2 is None:
        if count:
            per = PRACTICAL_TREES_PER_RELEASE["anchored" if k1 == 1 else "soa"]
            k2 = max(64, math.ceil(per * count / 2.0))
        else:
            k2 = max(64, stable_histogram_min_size(eta, hist_eps, hist_delta))
        if k2 > MAX_AUTO_TREES:
            warnings.warn(
                f"{name}: the stable histogram at (ε, δ) = ({hist_eps:.3g}, {hist_delta:.3g}) "
                f"needs about {k2} trees to release a hypothesis; n_trees is capped at "
                f"{MAX_AUTO_TREES}, so the learner may never switch from its initial "
                "hypothesis (pass n_trees to choose).", UserWarning, stacklevel=5)
            k2 = MAX_AUTO_TREES
    if k2 * 2 * k1 > MAX_FOREST_SLOTS:
        raise ValueError(f"{name}: a forest of {k2} trees × {k1} leaves exceeds the memory "
                         f"limit of {MAX_FOREST_SLOTS} vertices; pass a smaller n_trees or "
                         "n_leaves.")
    if auto_eta:
        eta = min(eta, 2.0 * (hist.noise_bound + 2) / k2)
    threshold = count / k2 if count else 1.0 - 3.0 * eta / 32.0
    return DPSOAParameters(
        n_trees=int(k2), n_leaves=int(k1), max_switches=int(c), eta=eta,
        threshold=threshold, svt_epsilon=svt_eps, hist_epsilon=hist_eps,
        hist_delta=hist_delta, release_epsilon=rel_eps, release_delta=rel_delta,
        n_rounds=n_rounds, adaptive=bool(adaptive), preset=preset, accounting=accounting,
        query=query, threshold_count=float(count), on_inconsistent=on_inconsistent,
        base_learner=base_learner)
