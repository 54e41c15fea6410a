"""Audit power: does each privacy audit catch a twin at 2× the claimed ε? (issue 26, item 9)

For every audited mechanism and estimator the table gives its claimed (ε, δ), what its
audit reports on the honest implementation, and what it reports on a twin at 2× the
claimed ε (half the noise, doubled η, every step calibrated for 2ε) — a Clopper–Pearson
lower bound at α = 10⁻⁶ where the audit samples, or the pair's exact ε at the claimed δ
where it is computed instead (BetweenThresholds, AboveThreshold, the Stopper, the
decision list's whole release). "caught" means the twin's value is above the claimed ε.
A twin that is not caught *exactly* is not a privacy violation on that design: the
lemma has that much slack there, and the row after it shows the weakest twin that is.

The rows are defined in ``tests/privacy/_audit_power.py`` and call the tests' own
helpers, so these are the numbers the tests assert on. The docs include the ``.rst``
table written here (``docs/user_guide/audit_power.rst``).

Run ``python benchmarks/audit_power.py`` (full: every row, ≈ 11 min on one core) or
``--quick`` (exact rows only, ≈ 3 min: PrivatePredictor's BSU rows integrate μ on a grid).
"""

import math
import sys
import time
from pathlib import Path

from _report import make_parser, output_dir, write_report  # benchmarks/ is on sys.path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "privacy"))
import _audit_power  # the row definitions live with the tests they call

NAME = "audit_power"
COLUMNS = {
    "mechanism": "Mechanism / estimator",
    "claim": "Claim (ε, δ)",
    "method": "Audit",
    "honest": "Honest",
    "twin": "2× twin",
    "twin_value": "Twin",
    "caught": "Caught",
    "test": "Tests",
}


def _fmt(value):
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else (
        f"{value:.3f}" if math.isfinite(value) else ("∞" if value > 0 else "−∞"))


def run_row(row):
    start = time.perf_counter()
    honest = None if row.honest is None else float(row.honest())
    twin = None if row.twin_value is None else float(row.twin_value())
    caught = "" if twin is None else ("yes" if twin > row.epsilon else "no (exactly ≤ claim)"
                                       if row.method == "exact" else "no")
    claim = "—" if math.isnan(row.epsilon) else f"({row.epsilon:g}, {row.delta:g})"
    return {
        "mechanism": row.mechanism, "claim": claim, "epsilon": row.epsilon, "delta": row.delta,
        "method": row.method if not row.design else f"{row.method}: {row.design}",
        "honest": _fmt(honest), "twin": row.twin, "twin_value": _fmt(twin), "caught": caught,
        "test": row.test, "honest_raw": honest, "twin_raw": twin,
        "seconds": round(time.perf_counter() - start, 1),
    }


def rst_table(rows):
    """The same table as an RST list-table, for the docs (Sphinx has no markdown here)."""
    lines = [".. list-table::", "   :header-rows: 1", "   :widths: 22 9 25 8 18 8 10", ""]
    keys = ["mechanism", "claim", "method", "honest", "twin", "twin_value", "caught"]
    for cells in [[COLUMNS[k] for k in keys]] + [[row[k] for k in keys] for row in rows]:
        lines.append(f"   * - {cells[0] or ' '}")
        lines += [f"     - {cell or ' '}" for cell in cells[1:]]
    return "\n".join(lines) + "\n"


def main():
    parser = make_parser(__doc__.splitlines()[0])
    args = parser.parse_args()
    out = output_dir(args)
    results = []
    for row in _audit_power.rows(include_sampled=not args.quick):
        results.append(run_row(row))
        print(f"{results[-1]['seconds']:7.1f}s  {row.mechanism}: honest "
              f"{results[-1]['honest']}, twin {results[-1]['twin_value']}", file=sys.stderr)
    write_report(
        NAME, results, COLUMNS, out_dir=out, title="Audit power: honest mechanisms and 2× twins",
        notes=["Sampled: Clopper–Pearson lower bound on ε, α = 10⁻⁶ (Bonferroni over the "
               "audit's events); exact: the pair's exact ε at the claimed δ.",
               "Honest values are lower bounds on the true loss on that design only; a twin "
               "value above the claim proves a violation."],
        csv_columns=["mechanism", "epsilon", "delta", "method", "honest_raw", "twin",
                     "twin_raw", "caught", "test", "seconds"])
    (out / f"{NAME}.rst").write_text(rst_table(results), encoding="utf-8")


if __name__ == "__main__":
    main()
