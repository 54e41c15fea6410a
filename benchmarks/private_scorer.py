"""GridSearchCV with the private scorer vs plain GridSearchCV (issue 28, item 2).

Breast cancer (sklearn), the README's pipeline (public-bounds binarizer, 3 thresholds,
then ``DPDecisionListClassifier(epsilon=0.5)``), a 70/30 split (seeded), and a grid of
four ``max_rules`` values with ``cv=KFold(3)``. Each setting is run ``REPS`` times
(the learners' and the scorer's noise come from OS entropy, so the rows differ by
noise only). Reported per setting: the ``max_rules`` chosen (counts), the mean and sd
of the test accuracy of ``best_estimator_`` (test rows are never scored privately:
``accuracy_score`` on its predictions, the model is already released), and the ledger
after the search under ``n_jobs=1`` and ``n_jobs=2`` (loky) against the documented
cost ``(C·k + 1)·ε_fit + C·k·ε_score``.

"plain" scores with scikit-learn's default: its ledger covers the fits only, and its
choice is not private (research mode). Run ``python benchmarks/private_scorer.py``;
writes ``benchmarks/results/private_scorer.{md,csv}``.
"""

import csv
import sys
from collections import Counter
from pathlib import Path

import numpy as np
from joblib import parallel_backend
from sklearn.datasets import load_breast_cancer
from sklearn.metrics import accuracy_score
from sklearn.model_selection import GridSearchCV, KFold, train_test_split
from sklearn.pipeline import make_pipeline

from skdp import DPDecisionListClassifier, PrivacyBudget
from skdp.datasets import breast_cancer_public_bounds
from skdp.metrics import make_private_scorer
from skdp.preprocessing import PublicBoundsBinarizer

FIT_EPS = 0.5
SCORE_EPS = (None, 0.0625, 0.25, 1.0)  # None: plain GridSearchCV (not private)
GRID = {"dpdecisionlistclassifier__max_rules": [1, 3, 10, 30]}
K = 3
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 10
OUT = Path(__file__).resolve().parent / "results"


def _search(X, y, score_eps, n_jobs):
    bounds = breast_cancer_public_bounds(load_breast_cancer().feature_names)
    budget = PrivacyBudget(1000.0, 1e-3)
    model = make_pipeline(
        PublicBoundsBinarizer(bounds=bounds, n_thresholds=3),
        DPDecisionListClassifier(epsilon=FIT_EPS, delta=1e-6, classes=[0, 1], budget=budget))
    scoring = None if score_eps is None else make_private_scorer(
        "accuracy", epsilon=score_eps, budget=budget)
    search = GridSearchCV(model, GRID, cv=KFold(K), scoring=scoring, n_jobs=n_jobs)
    if n_jobs == 1:
        search.fit(X, y)
    else:
        with parallel_backend("loky", n_jobs=n_jobs):
            search.fit(X, y)
    n_cand = len(next(iter(GRID.values())))
    cost = (n_cand * K + 1) * FIT_EPS
    if scoring is not None:
        cost += scoring.cost(n_cand, KFold(K)).epsilon
    return search, budget.spent.epsilon, cost


def main():
    data = load_breast_cancer()
    X_tr, X_te, y_tr, y_te = train_test_split(data.data, data.target, test_size=0.3,
                                              random_state=0, stratify=data.target)
    rows = []
    for score_eps in SCORE_EPS:
        for n_jobs in (1, 2):
            chosen, accs, spent = Counter(), [], set()
            for _ in range(REPS if n_jobs == 1 else 2):
                search, total, cost = _search(X_tr, y_tr, score_eps, n_jobs)
                chosen[search.best_params_["dpdecisionlistclassifier__max_rules"]] += 1
                accs.append(accuracy_score(y_te, search.best_estimator_.predict(X_te)))
                spent.add(total)
            rows.append({
                "scoring": "plain (not private)" if score_eps is None
                else f"private, eps={score_eps:g}/fold",
                "n_jobs": n_jobs, "reps": len(accs),
                "max_rules chosen": " ".join(f"{k}:{v}" for k, v in sorted(chosen.items())),
                "test acc mean": f"{np.mean(accs):.3f}", "test acc sd": f"{np.std(accs):.3f}",
                "ledger eps": " ".join(f"{s:g}" for s in sorted(spent)),
                "documented cost": f"{cost:g}",
                "equal": all(s == cost for s in spent),
            })
            print(rows[-1], flush=True)
    OUT.mkdir(exist_ok=True)
    with open(OUT / "private_scorer.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with open(OUT / "private_scorer.md", "w") as fh:
        fh.write("| " + " | ".join(rows[0]) + " |\n|" + "---|" * len(rows[0]) + "\n")
        for r in rows:
            fh.write("| " + " | ".join(str(v) for v in r.values()) + " |\n")


if __name__ == "__main__":
    main()
