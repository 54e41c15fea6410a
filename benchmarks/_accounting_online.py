"""The online learners' per-mechanism parameters: "paper" vs "tight" accounting.

One of the per-area files that ``benchmarks/accounting.py`` aggregates. :func:`rows`
returns, for each estimator and ε, the parameter each accounting gives — the numbers the
estimators actually run with ``accounting="paper"`` / ``"tight"`` (both come from
``skdp/online/_budget_split.py``, which the estimators call). ``factor`` > 1 is better.

* ``DPSOAClassifier`` — HistSparse's sparse-vector ε_svt, each histogram's (ε_hist,
  δ_hist), the histogram's noise bound A and the default tree count k₂ (η = 1/4) it
  implies, at the default c = 8 switches and at c = 64. With one pure sparse vector and
  8 small histograms the exact composition at δ = 10⁻⁶ is basic composition (the
  all-worst-case outcome is far likelier than δ): no gain, and "tight" keeps the
  paper's split. At c = 64 the accountant gains ≈ 1.2×.
* ``DPSOAClassifier(adaptive=True)`` — the per-round histogram's ε′ (δ′ = δ/(2T) in
  both) for T = 10³ and 10⁴ rounds, its noise bound and k₂. Lemma 5.4's
  ε/(2√(2T ln(1/δ))) leaves a factor 2–2.5 on the table against the PLD / Rényi
  composition of T (ε′, δ′) events.
* ``AdaptivePrivateOnlineClassifier`` (Li–Wang–Ye, practical D = 2 layers) — ε₀ of
  the AboveThreshold instances and (ε_hist, δ_hist) per histogram: one pure part and
  two histograms compose to basic composition at δ = 10⁻⁶ — no gain, unchanged.
* ``PrivateExpertsClassifier`` — each cell counter's ε_cell for a bucket of
  T ∈ {10³, 10⁶} rounds (L = ⌊log₂ T⌋ + 1 levels): a row moves 2 cells × L node sums,
  each a discrete Laplace event; their PLD composition at δ = 10⁻⁶ beats the pure
  ε_cell = ε/2 by 1.1–1.6× (the learner then charges δ).
* ``BatchSanitizedOnlineClassifier`` — the histogram sanitizer's per-cell discrete
  Laplace ε (scale 2/ε, two cells move): two events, exact composition = basic; the
  sanitizer is pure ε-DP and unchanged (both columns are what it runs).

Run ``python benchmarks/_accounting_online.py`` to print the table.
"""

from _report import comparison_row as _row  # benchmarks/ is on sys.path as a script

from skdp.mechanisms import StableHistogram, stable_histogram_min_size
from skdp.online._budget_split import (
    adaptive_split,
    hist_sparse_split,
    per_round_histogram_split,
    tree_counter_split,
)

SWITCHES = (8, 64)  # DP-SOA's c: the default, and a longer run
ROUNDS = (1000, 10_000)  # DP-SOA adaptive horizons T
BUCKETS = (1000, 10**6)  # experts' bucket horizons
ETA = 0.25  # DP-SOA's default η
LAYERS = 2  # Li–Wang–Ye's practical D for classes of Littlestone dimension ≥ 2




def _noise_bound(epsilon, delta):
    return StableHistogram(epsilon, delta, random_state=0).noise_bound


def _dp_soa_rows(epsilon, delta):
    out, name = [], "DPSOAClassifier"
    for c in SWITCHES:
        paper, tight = (hist_sparse_split(epsilon, delta, c, a).values
                        for a in ("paper", "tight"))
        out += [
            _row(name, f"epsilon_svt sparse vector (c={c})", epsilon, paper[0], tight[0],
                 "higher"),
            _row(name, f"epsilon_hist per histogram (c={c})", epsilon, paper[1], tight[1],
                 "higher"),
            _row(name, f"delta_hist per histogram (c={c})", epsilon, paper[2], tight[2],
                 "higher"),
            _row(name, f"histogram noise bound A (c={c})", epsilon,
                 _noise_bound(*paper[1:]), _noise_bound(*tight[1:]), "lower"),
            _row(name, f"default n_trees k2 (c={c}, eta={ETA})", epsilon,
                 stable_histogram_min_size(ETA, *paper[1:]),
                 stable_histogram_min_size(ETA, *tight[1:]), "lower"),
        ]
    name = "DPSOAClassifier(adaptive=True)"
    for T in ROUNDS:
        paper, tight = (per_round_histogram_split(epsilon, delta, T, a).values
                        for a in ("paper", "tight"))
        out += [
            _row(name, f"epsilon' per-round histogram (T={T})", epsilon, paper[0], tight[0],
                 "higher"),
            _row(name, f"delta' per-round histogram (T={T})", epsilon, paper[1], tight[1],
                 "higher"),
            _row(name, f"histogram noise bound A (T={T})", epsilon, _noise_bound(*paper),
                 _noise_bound(*tight), "lower"),
            _row(name, f"n_trees k2 for eta={ETA} (T={T})", epsilon,
                 stable_histogram_min_size(ETA, *paper),
                 stable_histogram_min_size(ETA, *tight), "lower"),
        ]
    return out


def _adaptive_rows(epsilon, delta):
    name = "AdaptivePrivateOnlineClassifier (Li-Wang-Ye)"
    paper, tight = (adaptive_split(epsilon, delta, LAYERS, a).values
                    for a in ("paper", "tight"))
    return [
        _row(name, f"epsilon_0 AboveThreshold (D={LAYERS})", epsilon, paper[0], tight[0],
             "higher"),
        _row(name, f"epsilon_hist per histogram (D={LAYERS})", epsilon, paper[1], tight[1],
             "higher"),
        _row(name, f"delta_hist per histogram (D={LAYERS})", epsilon, paper[2], tight[2],
             "higher"),
    ]


def _experts_rows(epsilon, delta):
    out, name = [], "PrivateExpertsClassifier"
    for T in BUCKETS:
        levels = T.bit_length()
        paper, tight = (tree_counter_split(epsilon, delta, levels, 2, a).values
                        for a in ("paper", "tight"))
        out += [
            _row(name, f"epsilon_cell per cell counter (T={T}, L={levels})", epsilon,
                 paper[0], tight[0], "higher"),
            _row(name, f"delta charged (T={T})", epsilon, paper[1], tight[1], "lower"),
        ]
    name = "BatchSanitizedOnlineClassifier"
    out.append(_row(name, "histogram sanitizer epsilon per cell (unchanged)", epsilon,
                    epsilon / 2.0, epsilon / 2.0, "higher"))
    return out


def rows(epsilons=(0.5, 1, 4), delta=1e-6):
    """Rows {"estimator", "parameter", "epsilon", "paper", "tight", "factor", "better"}."""
    out = []
    for epsilon in epsilons:
        epsilon = float(epsilon)
        out += _dp_soa_rows(epsilon, delta)
        out += _adaptive_rows(epsilon, delta)
        out += _experts_rows(epsilon, delta)
    return out


if __name__ == "__main__":
    for r in rows():
        print(f"{r['estimator']:<46} {r['parameter']:<48} ε={r['epsilon']:<4g} "
              f"paper={r['paper']:<12.5g} tight={r['tight']:<12.5g} "
              f"×{r['factor'] or float('nan'):.3f} ({r['better']} is better)")
