"""Private prediction's per-mechanism parameters: "paper" vs "tight" accounting.

One of the per-area files that ``benchmarks/accounting.py`` aggregates. :func:`rows`
returns, for each estimator and ε, the parameter each accounting gives (the numbers
the estimators actually run with ``accounting="paper"`` / ``"tight"``):

* Yan's ``PrivatePredictor`` — per-instance ε_bt, δ_bt of the ``cap`` BetweenThresholds
  instances and the teacher count k the BSU gap condition then needs (caps 8, 16).
  "paper" was already the exact optimal composition of ApproxDP steps, which no
  accountant can beat for black-box (ε, δ) events; "tight" gains by choosing the
  share of δ given to the instances (k depends on ln(1/δ_bt)).
* ``SubsampleAggregatePredictor`` — per-query ε_q for T ∈ {100, 1000, 10000} planned
  queries, and the automatic teacher count ⌈4/ε_q⌉. Each answer is a discrete Laplace
  count of sensitivity 1, whose privacy-loss distribution *is* randomized response:
  "paper" (exact optimal composition of pure steps) was already tight, factor ≈ 1.
* PERP (``RectanglesPERPClassifier`` d = 2, ``DecisionStumpPERPClassifier``'s inner
  d = 1 run) — per-copy ε_0 of phase 1 (``preset="practical"``). Unchanged by
  design: it is the 2d-fold composition of (ε_0, δ_0) events at δ_p ≈ 10⁻¹⁷, where
  the exact optimal composition equals basic composition to machine precision
  (tests/prediction/test_accounting_prediction.py checks it), and the truly
  everlasting δ schedule is a per-record sum, not a composition. Both columns are
  the schedule PERP runs.

Run ``python benchmarks/_accounting_prediction.py`` to print the table.
"""

import math

from _report import comparison_row as _row  # benchmarks/ is on sys.path as a script

from skdp.prediction import perp_parameters, shrinkage_parameters
from skdp.prediction.subsample_aggregate import _per_query_epsilon

CAPS = (8, 16)
QUERY_BUDGETS = (100, 1000, 10_000)
#: PERP's utility targets for the table (the estimators' defaults).
PERP_ALPHA, PERP_BETA, PERP_GAMMA = 0.1, 0.05, 0.5




def _yan_rows(epsilon, delta):
    out = []
    for cap in CAPS:
        paper = shrinkage_parameters(epsilon, delta, cap, accounting="paper")
        tight = shrinkage_parameters(epsilon, delta, cap, accounting="tight")
        name = "PrivatePredictor (Yan)"
        out += [
            _row(name, f"epsilon_bt per BetweenThresholds (cap={cap})", epsilon,
                 paper["epsilon_bt"], tight["epsilon_bt"], "higher"),
            _row(name, f"delta_bt per BetweenThresholds (cap={cap})", epsilon,
                 paper["delta_bt"], tight["delta_bt"], "higher"),
            _row(name, f"teachers k (cap={cap})", epsilon,
                 paper["min_teachers"], tight["min_teachers"], "lower"),
        ]
    return out


def _subsample_rows(epsilon, delta):
    out = []
    name = "SubsampleAggregatePredictor"
    for n_queries in QUERY_BUDGETS:
        paper = _per_query_epsilon(epsilon, delta, n_queries, "paper")
        tight = _per_query_epsilon(epsilon, delta, n_queries, "tight")
        out += [
            _row(name, f"epsilon_q per answer (T={n_queries})", epsilon, paper, tight,
                 "higher"),
            _row(name, f"teachers k = ceil(4/epsilon_q) (T={n_queries})", epsilon,
                 math.ceil(4.0 / paper), math.ceil(4.0 / tight), "lower"),
        ]
    return out


def _perp_rows(epsilon, delta):
    out = []
    cases = (
        ("RectanglesPERPClassifier", epsilon, delta, PERP_ALPHA, PERP_BETA, 2),
        # DecisionStumpPERPClassifier(preset="practical") runs a 1-D RectanglesPERP at
        # (ε/2, δ*/2, α/2, β/2) after its ε/4 selection and ε/4 count.
        ("DecisionStumpPERPClassifier", epsilon / 2, delta / 2, PERP_ALPHA / 2,
         PERP_BETA / 2, 1),
    )
    for name, eps, dlt, alpha, beta, d in cases:
        params = perp_parameters(eps, dlt, alpha, beta, PERP_GAMMA, d, preset="practical",
                                 n_phases=1)
        first = params.phases[0]
        # No accounting mode changes PERP (see the module docstring): both columns are
        # what runs.
        out += [
            _row(name, "epsilon_0 per ChallengeBT copy (phase 1)", epsilon,
                 first.epsilon_instance, first.epsilon_instance, "higher"),
            _row(name, "initial sample size", epsilon, params.initial_sample_size,
                 params.initial_sample_size, "lower"),
        ]
    return out


def rows(epsilons=(0.5, 1, 4), delta=1e-6):
    """Per-mechanism parameters of the private predictors under both accountings.

    Returns
    -------
    list of dict
        Keys ``estimator``, ``parameter``, ``epsilon``, ``paper``, ``tight``,
        ``factor`` (the improvement: tight/paper when higher is better, paper/tight
        when lower is better; > 1 means "tight" is better) and ``better``.
    """
    out = []
    for epsilon in epsilons:
        epsilon = float(epsilon)
        out += _yan_rows(epsilon, delta)
        out += _subsample_rows(epsilon, delta)
        out += _perp_rows(epsilon, delta)
    return out


def main():
    table = rows()
    print(f"{'estimator':30s} {'parameter':52s} {'ε':>4s} {'paper':>12s} {'tight':>12s} "
          f"{'factor':>8s}")
    for r in table:
        print(f"{r['estimator']:30s} {r['parameter']:52s} {r['epsilon']:4g} "
              f"{r['paper']:12.6g} {r['tight']:12.6g} {r['factor']:8.4f}")


if __name__ == "__main__":
    main()
