"""The Bun–Fang learners' per-mechanism parameters: "paper" vs "tight" accounting.

One of the per-area files that ``benchmarks/accounting.py`` aggregates. :func:`rows`
returns, for each estimator and ε, the parameter each accounting gives — the numbers the
estimators actually run with (both columns come from the estimators' own solvers:
:func:`skdp.linear.solve_dp_winnow_parameters` with ``accounting="paper"`` / ``"tight"``,
and the decision list's ``step_plan`` with ``"paper"`` / ``"auto"``). ``factor`` > 1 is
better: tight/paper for ``better="higher"``, paper/tight for ``better="lower"``.

* ``DPWinnowClassifier`` — the AboveThreshold budget ε̂ and the learning rate η (each
  draw is 4η-bounded-range) at fixed K and m, and at the practical preset's default
  (K the Thm 12 fixed point, m = ⌈1/ρ⌉ odd) for ρ ∈ {1/3, 0.1}, d = 202 coordinates.
  The paper splits (ε/2, δ/2) per layer by advanced composition; the tight accountant
  composes K PureDP + mK BoundedRange events at once with the same ε̂ : η ratio:
  ε̂ and η ≈ 2× at fixed K, and the fixed point K ≈ 4–5× smaller (η(K) grows, so
  fewer updates satisfy Thm 12). At ε = 0.5, ρ = 0.1 the paper's K is the 10⁹ cap
  (its fixed point lies beyond), so that row's factor is a lower bound.
* ``OnlineDecisionListClassifier`` — DP-Winnow on the Lemma 15 embedding with its
  default ``max_length=2`` (ρ = 1/5, m = 5), 100 binary features (202 coordinates).
* ``DPDecisionListClassifier`` — the per-step ε̂ of the default ``accounting="auto"``
  at the paper's M = d rules (K = d + 1 selections) for d ∈ {10, 30, 90, 784} (d = 10
  is also ``max_rules=10`` on any d); "paper" is the former auto (the larger of
  EMCover, Lemma 18, and basic composition), "tight" the new auto (adds the accountant
  over K ε̂-bounded-range selections). EMCover does not grow with K and still wins at
  d = 784.
* ``ConjunctionFeatures`` spends no privacy (data-independent map): no row.

Run ``python benchmarks/_accounting_bun_fang.py`` to print the table.
"""

from _report import comparison_row as _row  # benchmarks/ is on sys.path as a script

from skdp.decision_list._accounting import step_plan
from skdp.linear import decision_list_margin, solve_dp_winnow_parameters

FIXED = ((100, 11), (10**4, 11))  # DP-Winnow (K, m) at which ε̂ and η are compared
MARGINS = (1 / 3, 0.1)  # DP-Winnow's ρ for the practical default
N_COORDS = 202  # 100 features, (x, −x) doubling and the bias
HORIZON = 10**6
LIST_FEATURES = (10, 30, 90, 784)  # DP decision lists: d (M = d rules, d + 1 selections)




def _winnow_pair(epsilon, delta, margin, **kwargs):
    return [solve_dp_winnow_parameters(epsilon, delta, margin, HORIZON, N_COORDS,
                                       accounting=a, **kwargs) for a in ("paper", "tight")]


def _winnow_rows(epsilon, delta):
    out, name = [], "DPWinnowClassifier"
    for k, m in FIXED:
        paper, tight = _winnow_pair(epsilon, delta, 0.1, max_updates=k, n_samples=m)
        out += [
            _row(name, f"svt_epsilon (K={k}, m={m})", epsilon, paper.svt_epsilon,
                 tight.svt_epsilon, "higher"),
            _row(name, f"learning_rate eta (K={k}, m={m})", epsilon, paper.learning_rate,
                 tight.learning_rate, "higher"),
        ]
    for margin in MARGINS:
        out += _fixed_point_rows(name, f"rho={margin:.3g}", epsilon, delta, margin)
    return out


def _fixed_point_rows(name, label, epsilon, delta, margin):
    paper, tight = _winnow_pair(epsilon, delta, margin)
    tag = f"practical default, {label}, m={tight.n_samples}, d={N_COORDS}"
    return [
        _row(name, f"max_updates K ({tag})", epsilon, paper.max_updates, tight.max_updates,
             "lower"),
        _row(name, f"svt_epsilon ({tag})", epsilon, paper.svt_epsilon, tight.svt_epsilon,
             "higher"),
        _row(name, f"learning_rate eta ({tag})", epsilon, paper.learning_rate,
             tight.learning_rate, "higher"),
    ]


def _online_list_rows(epsilon, delta):
    margin = decision_list_margin(2)  # the estimator's default max_length=2
    return _fixed_point_rows("OnlineDecisionListClassifier", "max_length=2", epsilon, delta,
                             margin)


def _decision_list_rows(epsilon, delta):
    out, name = [], "DPDecisionListClassifier"
    for label, n_steps in [(f"M=d={d}", d + 1) for d in LIST_FEATURES]:
        paper, paper_proof, _ = step_plan(epsilon, delta, n_steps, "paper")
        tight, tight_proof, _ = step_plan(epsilon, delta, n_steps, "auto")
        out.append(_row(name, f"step_epsilon ({label}, {n_steps} selections; "
                              f"{paper_proof} -> {tight_proof})",
                        epsilon, paper, tight, "higher"))
    return out


def rows(epsilons=(0.5, 1, 4), delta=1e-6):
    """Per estimator, parameter and ε: the paper's and the tight accounting's value.

    Returns
    -------
    list of dict
        Keys ``estimator``, ``parameter``, ``epsilon``, ``paper``, ``tight``,
        ``factor`` (> 1: tight is better) and ``better`` (``"higher"`` for budgets and
        rates, ``"lower"`` for counts such as K).
    """
    out = []
    for epsilon in epsilons:
        out += _winnow_rows(epsilon, delta)
        out += _online_list_rows(epsilon, delta)
        out += _decision_list_rows(epsilon, delta)
    return out


def _main():
    print("| estimator | parameter | ε | paper | tight | factor |")
    print("|---|---|---|---|---|---|")
    for r in rows():
        factor = "—" if r["factor"] is None else f"{r['factor']:.2f}×"
        print(f"| {r['estimator']} | {r['parameter']} | {r['epsilon']:g} | {r['paper']:.4g} "
              f"| {r['tight']:.4g} | {factor} |")


if __name__ == "__main__":
    _main()
