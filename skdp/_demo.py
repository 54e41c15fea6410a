"""``skdp demo``: each private tool next to its non-private answer, and the budget it spent.

Every row is a small function taking a numpy Generator and the demo's shared
:class:`~skdp.accounting.PrivacyBudget`, spending from it, and returning a dict
with the cells "what", "privacy", "private result" and "non-private"; the
"spent" cell is measured on the ledger around the call. Learners add their own
row to ``DEMO_ROWS`` as they land.
"""

import time

import numpy as np

from .accounting import PrivacyBudget, calibrate
from .exceptions import BudgetExhaustedError
from .mechanisms import (
    AboveThreshold,
    exponential_mechanism,
    geometric_mechanism,
    laplace_mechanism,
)

_COLUMNS = ("what", "privacy", "spent", "private result", "non-private")


def _count_row(rng, budget):
    from sklearn.datasets import load_breast_cancer

    y = load_breast_cancer().target
    eps = 0.1
    budget.spend(eps, label="malignant count")
    exact = int(np.sum(y == 0))
    noisy = geometric_mechanism(exact, eps, random_state=rng)
    return {
        "what": "count (exact discrete Laplace)",
        "privacy": f"ε={eps}",
        "private result": f"{noisy} malignant",
        "non-private": f"{exact}",
    }


def _mean_row(rng, budget):
    from sklearn.datasets import load_breast_cancer

    radius = load_breast_cancer().data[:, 0]
    low, high = 0.0, 30.0  # public bounds from the dataset's documentation
    eps = 0.1
    budget.spend(eps, label="mean radius")
    clipped = np.clip(radius, low, high)
    # With n public, the clipped sum has sensitivity (high - low).
    noisy = laplace_mechanism(clipped.sum(), eps, sensitivity=high - low, random_state=rng)
    return {
        "what": "mean, public bounds (Laplace)",
        "privacy": f"ε={eps}",
        "private result": f"{noisy / radius.size:.3f}",
        "non-private": f"{radius.mean():.3f}",
    }


def _stump_row(rng, budget):
    from sklearn.tree import DecisionTreeClassifier

    n, d = 2000, 5
    X = rng.random((n, d))
    y = (X[:, 2] > 0.6).astype(int)
    y ^= rng.random(n) < 0.1  # 10 % label noise
    X_test = rng.random((n, d))
    y_test = (X_test[:, 2] > 0.6).astype(int)
    grid = np.linspace(0.05, 0.95, 19)  # public grid: the feature range [0, 1] is public
    # Score of (feature j, threshold t, polarity) = training rows it classifies right:
    # one row changes every score by at most 1.
    above = X[:, :, None] > grid[None, None, :]
    correct = (above == y[:, None, None].astype(bool)).sum(axis=0)
    scores = np.concatenate([correct.ravel(), (n - correct).ravel()])
    eps = 0.5
    budget.spend(eps, label="decision stump")
    pick = exponential_mechanism(scores, eps, random_state=rng)
    flip, rest = divmod(pick, d * grid.size)
    j, t = divmod(rest, grid.size)
    pred = (X_test[:, j] > grid[t]).astype(int) ^ flip
    tree = DecisionTreeClassifier(max_depth=1, random_state=0).fit(X, y)
    return {
        "what": "decision stump (exponential mech.)",
        "privacy": f"ε={eps}",
        "private result": f"acc {np.mean(pred == y_test):.3f}",
        "non-private": f"acc {tree.score(X_test, y_test):.3f}",
    }


def _svt_row(rng, budget):
    days = 365
    # A growing daily count. SVT's error is O(log(days)/ε) in count units, so the
    # counts must be large next to it for the answer to be useful.
    daily = rng.poisson(np.linspace(100, 3000, days))
    threshold = 1500.0
    eps = 0.5
    budget.spend(eps, label="first day above 1500")
    svt = AboveThreshold(threshold, eps, random_state=rng)
    answers = svt.process(daily, stop_after_positive=True)
    found = answers.size - 1 if answers[-1] else None
    exact = int(np.argmax(daily >= threshold))
    return {
        "what": "first day count ≥ 1500 (sparse vector)",
        "privacy": f"ε={eps}",
        "private result": f"day {found}",
        "non-private": f"day {exact}",
    }


def _learner_rows():
    from .decision_list._demo import demo_row as decision_list_row
    from .linear._demo import demo_row as winnow_row
    from .online._agnostic_demo import demo_row as agnostic_row
    from .online._demo import demo_row as online_row
    from .online._demo import dpsoa_demo_row
    from .prediction._demo import demo_row as prediction_row
    from .prediction._demo import perp_demo_row

    return [decision_list_row, winnow_row, prediction_row, perp_demo_row, dpsoa_demo_row,
            online_row, agnostic_row]


DEMO_ROWS = [_count_row, _mean_row, _stump_row, _svt_row, *_learner_rows()]


def _table(rows, columns):
    widths = [max(len(c), *(len(r[c]) for r in rows)) for c in columns]
    line = " | ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))
    rule = "-+-".join("-" * w for w in widths)
    body = [" | ".join(r[c].ljust(w) for c, w in zip(columns, widths, strict=True)) for r in rows]
    return "\n".join([line, rule, *body])


def _composition_table(total_epsilon, total_delta, k):
    rows = []
    for method in ("basic", "advanced", "kov", "optimal"):
        step = calibrate(total_epsilon, total_delta, k, method=method)
        rows.append(
            {"composition": method, "per-query ε": f"{step.epsilon:.5f}",
             "relative noise": f"{1 / step.epsilon:.1f}"}
        )
    return _table(rows, ("composition", "per-query ε", "relative noise"))


def run_demo(seed=0, out=None):
    """Run every demo row, print the tables, and return the rows."""
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    budget = PrivacyBudget(epsilon=16.0, delta=1e-5)
    rows = []
    for row in DEMO_ROWS:
        before = budget.spent
        cells = row(rng, budget)
        after = budget.spent
        # Measured on the shared ledger, not reported by the row itself.
        cells["spent"] = f"ε={after.epsilon - before.epsilon:.3g}" + (
            f", δ={after.delta - before.delta:.2g}" if after.delta > before.delta else ""
        )
        rows.append(cells)
    print(f"skdp demo (seed {seed}): private answers next to non-private ones\n", file=out)
    print(_table(rows, _COLUMNS), file=out)
    print(f"\nAll rows spent from one {budget!r}", file=out)
    try:
        budget.spend(budget.remaining.epsilon + 0.1, label="one query too many")
    except BudgetExhaustedError as exc:
        print(f"One more query is refused, nothing spent: {exc}", file=out)
    k = 1000
    print(f"\nAnswering {k} queries within ε=1, δ=1e-6 — per-query ε by composition theorem:",
          file=out)
    print(_composition_table(1.0, 1e-6, k), file=out)
    print(f"\n(done in {time.perf_counter() - start:.1f} s)", file=out)
    return rows
