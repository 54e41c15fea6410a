"""``skdp demo``: each private tool next to its non-private answer, and the budget it spent.

Every row is a small function taking a numpy Generator and the demo's shared
:class:`~skdp.accounting.PrivacyBudget`, spending from it, and returning a dict
with the cells "what", "privacy", "private result" and "non-private" in plain words,
optionally "note" (why a number looks the way it does, e.g. where a learner does not
learn) and "details" (paper-level parameters, shown with ``--verbose``). The
"spent" cell is measured on the ledger around the call. Learners add their own
row to ``DEMO_ROWS`` as they land. The first line of a row's docstring is shown
while it runs if it takes longer than two seconds.
"""

from __future__ import annotations

import threading
import time
import warnings
from typing import Any, TextIO

import numpy as np

from .accounting import PrivacyBudget, calibrate
from .exceptions import BudgetExhaustedError, PrivacyWarning
from .mechanisms import (
    AboveThreshold,
    exponential_mechanism,
    geometric_mechanism,
    laplace_mechanism,
)

WIDTH = 100  # columns: the demo must read on any terminal without wrapping
_PROGRESS_AFTER = 2.0  # seconds before a row says it is still running


def _count_row(rng, budget):
    """Count the malignant tumours in breast_cancer with discrete Laplace noise."""
    from sklearn.datasets import load_breast_cancer

    y = load_breast_cancer().target
    eps = 0.1
    budget.spend(eps, label="malignant count")
    exact = int(np.sum(y == 0))
    noisy = geometric_mechanism(exact, eps, random_state=rng)
    return {
        "what": "How many tumours in breast_cancer are malignant? (a count, discrete Laplace)",
        "privacy": f"ε={eps}",
        "private result": f"{noisy} malignant",
        "non-private": f"{exact} malignant",
    }


def _mean_row(rng, budget):
    """Mean tumour radius with public bounds and Laplace noise."""
    from sklearn.datasets import load_breast_cancer

    radius = load_breast_cancer().data[:, 0]
    low, high = 0.0, 30.0  # public bounds from the dataset's documentation
    eps = 0.1
    budget.spend(eps, label="mean radius")
    clipped = np.clip(radius, low, high)
    # With n public, the clipped sum has sensitivity (high - low).
    noisy = laplace_mechanism(clipped.sum(), eps, sensitivity=high - low, random_state=rng)
    return {
        "what": "Mean tumour radius, clipped to public bounds [0, 30] (Laplace mechanism)",
        "privacy": f"ε={eps}",
        "private result": f"mean radius {noisy / radius.size:.2f}",
        "non-private": f"mean radius {radius.mean():.2f}",
    }


def _stump_row(rng, budget):
    """Pick a one-feature rule with the exponential mechanism."""
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
        "what": "Best one-feature rule 'x_j > t' on 2000 noisy rows (exponential mechanism)",
        "privacy": f"ε={eps}",
        "private result": f"{np.mean(pred == y_test):.1%} accurate on new rows",
        "non-private": f"{tree.score(X_test, y_test):.1%} accurate (sklearn depth-1 tree)",
    }


def _svt_row(rng, budget):
    """Find the first day a daily count passes 1500 with the sparse vector technique."""
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
        "what": "First day of the year a daily count reaches 1500 (sparse vector technique)",
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


def _wrap(text, indent):
    """Greedy word wrap to ``WIDTH``, measured in UTF-8 bytes: ε, δ and ⁵ take two or
    three, so a line fits even where a terminal or a tool counts bytes, not characters."""
    lines, line = [], indent
    for word in text.split():
        if line.strip() and len(f"{line} {word}".encode()) > WIDTH:
            lines.append(line)
            line = indent + "  " + word
        else:
            line = f"{line} {word}" if line.strip() else line + word
    lines.append(line)
    return "\n".join(lines)


def _render_row(number, cells, verbose):
    """One demo row as a few lines of plain words, never wider than ``WIDTH``."""
    lines = [
        _wrap(f"{number}. {cells['what']}", ""),
        _wrap(f"private ({cells['privacy']}): {cells['private result']}", "   "),
        _wrap(f"non-private: {cells['non-private']}", "   "),
    ]
    if cells.get("note"):
        lines.append(_wrap(f"note: {cells['note']}", "   "))
    lines.append(_wrap(f"spent from the shared budget: {cells['spent']}", "   "))
    if verbose and cells.get("details"):
        lines.append(_wrap(f"details: {cells['details']}", "   "))
    return "\n".join(lines)


def _composition_table(total_epsilon, total_delta, k):
    rows = []
    for method in ("basic", "advanced", "kov", "optimal"):
        step = calibrate(total_epsilon, total_delta, k, method=method)
        rows.append(
            {"composition": method, "per-query ε": f"{step.epsilon:.5f}",
             "relative noise": f"{1 / step.epsilon:.1f}"}
        )
    return _table(rows, ("composition", "per-query ε", "relative noise"))


def _run_row(row, rng, budget, out):
    """Run one row; if it takes more than 2 s, say what is running so the wait is explained."""
    title = (row.__doc__ or row.__name__).strip().splitlines()[0]
    timer = threading.Timer(_PROGRESS_AFTER, lambda: print(
        _wrap(f"... still running: {title}", ""), file=out, flush=True))
    timer.start()
    try:
        before = budget.spent
        cells = row(rng, budget)
        after = budget.spent
    finally:
        timer.cancel()
    # Measured on the shared ledger, not reported by the row itself.
    cells["spent"] = f"ε={after.epsilon - before.epsilon:.3g}" + (
        f", δ={after.delta - before.delta:.2g}" if after.delta > before.delta else ""
    )
    return cells


def run_demo(seed: int = 0, out: TextIO | None = None, *, quick: bool = False,
             verbose: bool = False) -> list[dict[str, Any]]:
    """Run the demo rows, print them in plain words (≤ ``WIDTH`` columns) and return them.

    ``quick`` runs only the learners (no mechanism rows, no composition table);
    ``verbose`` adds each row's paper-level details.
    """
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    budget = PrivacyBudget(epsilon=16.0, delta=1e-5)
    print(_wrap(f"skdp demo (seed {seed}): each private answer next to the non-private one. "
                "All rows spend from one shared privacy budget. The rows are seeded so that "
                "their numbers reproduce (skdp.TestingSeed, a testing mode: a model you "
                "publish is fitted with random_state=None).", ""), file=out)
    rows = []
    with warnings.catch_warnings():
        # Said once in the header above instead of once per seeded learner.
        warnings.filterwarnings("ignore", message=r".*random_state is set",
                                category=PrivacyWarning)
        for row in _learner_rows() if quick else DEMO_ROWS:
            cells = _run_row(row, rng, budget, out)
            rows.append(cells)
            print("\n" + _render_row(len(rows), cells, verbose), file=out, flush=True)
    spent = budget.spent
    print("\n" + _wrap(
        f"In all the demo spent ε={spent.epsilon:.3g}, δ={spent.delta:.2g} of {budget!r}. "
        "Each dataset here is separate, so a person in one of them is protected by the "
        "ε of the rows that used their data. ε is a worst case over "
        "every output: the probability of any result changes by at most a factor e^ε "
        "(e^1 ≈ 2.7) whether or not that person took part, plus a chance δ that it does "
        "not hold.", ""), file=out)
    try:
        budget.spend(budget.remaining.epsilon + 0.1, label="one query too many")
    except BudgetExhaustedError as exc:
        print("\n" + _wrap(f"One more query is refused, nothing spent: {exc}", ""), file=out)
    if not quick:
        k = 1000
        print("\n" + _wrap(f"Answering {k} queries within ε=1, δ=1e-6: the per-query ε each "
                           "composition theorem allows (smaller ε, more noise):", ""), file=out)
        print(_composition_table(1.0, 1e-6, k), file=out)
    print(f"\n(done in {time.perf_counter() - start:.1f} s)", file=out)
    return rows
