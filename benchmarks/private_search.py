"""PrivateRandomizedSearchCV against the other ways to pick hyperparameters (issue 28).

Three development tables, each split 70/30 (seeded) into search rows and test rows:

* ``breast cancer`` (sklearn): public-bounds binarizer (3 thresholds per feature, the
  ranges published in the dataset's DESCR), then the learner;
* ``planted list``: 3000 sparse binary rows labelled by a planted length-6 decision
  list with 10 % label noise (``skdp.datasets.planted_decision_list``);
* ``make_classification``: 3000 rows, 10 Gaussian features (4 informative, 5 % flipped
  labels), binarized at 3 thresholds in the public range [-4, 4] (known from the
  generator, not read from the rows).

The learner is ``DPDecisionListClassifier``; the grid is ``max_rules`` in {1, 2, 4, 8,
16, 32} × ``negations`` in {False, True} (12 candidates). At a total ε of 1, 4 and 8
for *everything* the method does (δ = 1e-5), the test accuracy of:

* ``private search``: ``PrivateRandomizedSearchCV`` with its defaults (geometric
  stopping law, E[K] = 30, validation fraction 0.25, ``refit=False``: ε₀ = ε/3 per
  trial);
* ``grid + private scorer``: ``GridSearchCV(cv=KFold(3))`` with
  ``make_private_scorer``; the ledger composes every fit and score, so each of the
  12·3 fits, 12·3 scores and the refit gets ε/73;
* ``defaults, all ε``: the learner's default parameters, one fit with all of ε;
* ``plain grid (not private)``: ``GridSearchCV(cv=KFold(3))`` with exact scores and
  every fit at ε — the selection is not private; a reference for what selection is
  worth.

Each cell is the mean ± sd over ``--reps`` repetitions (default 20; the noise comes
from OS entropy, so the repetitions differ by noise only). The ledger after every private search is
checked against its plan (exactly). Run ``python benchmarks/private_search.py``
(``--quick`` for a smoke run); writes ``benchmarks/results/private_search.{md,csv,png}``.
"""

import warnings

import numpy as np
from _report import make_parser, output_dir, write_report
from sklearn.datasets import load_breast_cancer, make_classification
from sklearn.metrics import accuracy_score
from sklearn.model_selection import GridSearchCV, KFold, train_test_split
from sklearn.pipeline import Pipeline

from skdp import DPDecisionListClassifier, PrivacyBudget
from skdp.datasets import breast_cancer_public_bounds, planted_decision_list
from skdp.metrics import make_private_scorer
from skdp.model_selection import PrivateRandomizedSearchCV
from skdp.preprocessing import PublicBoundsBinarizer

EPSILONS = (1.0, 4.0, 8.0)
DELTA = 1e-5
GRID = {"clf__max_rules": [1, 2, 4, 8, 16, 32], "clf__negations": [False, True]}
N_CANDIDATES = 12
FOLDS = 3
METHODS = ("private search", "grid + private scorer", "defaults, all ε",
           "plain grid (not private)")


def _tables(seed):
    rng = np.random.default_rng(seed)
    data = load_breast_cancer()
    bc = (data.data, data.target, breast_cancer_public_bounds(data.feature_names))
    X, y, _ = planted_decision_list(rng, 3000, 30, length=6, noise=0.1)
    planted = (X, y, np.tile([0.0, 1.0], (30, 1)))
    X, y = make_classification(3000, 10, n_informative=4, flip_y=0.05, random_state=seed)
    simulated = (X, y, np.tile([-4.0, 4.0], (10, 1)))
    return {"breast cancer": bc, "planted list": planted, "make_classification": simulated}


def _pipe(bounds, epsilon, delta, budget=None):
    thresholds = 1 if np.all(bounds == [0.0, 1.0]) else 3
    return Pipeline([
        ("bin", PublicBoundsBinarizer(bounds=bounds, n_thresholds=thresholds)),
        ("clf", DPDecisionListClassifier(epsilon=epsilon, delta=delta, classes=[0, 1],
                                         budget=budget))])


def _run(method, bounds, X, y, epsilon):
    """Fit by ``method`` at total ε; return (fitted model, ledger ε, its documented ε)."""
    budget = PrivacyBudget(epsilon, DELTA)
    if method == "private search":
        search = PrivateRandomizedSearchCV(
            _pipe(bounds, 1.0, 1e-6), GRID, epsilon=epsilon, delta=DELTA,
            budget=budget).fit(X, y)
        return search.best_estimator_, budget.spent, search.plan_.total
    if method == "grid + private scorer":
        share = epsilon / (2 * N_CANDIDATES * FOLDS + 1)
        fit_delta = DELTA / (N_CANDIDATES * FOLDS + 1)
        scorer = make_private_scorer("accuracy", epsilon=share, budget=budget)
        search = GridSearchCV(_pipe(bounds, share, fit_delta, budget), GRID, cv=KFold(FOLDS),
                              scoring=scorer).fit(X, y)
        return search.best_estimator_, budget.spent, None
    if method == "defaults, all ε":
        return _pipe(bounds, epsilon, DELTA, budget).fit(X, y), budget.spent, None
    search = GridSearchCV(_pipe(bounds, epsilon, DELTA), GRID, cv=KFold(FOLDS)).fit(X, y)
    return search.best_estimator_, None, None


def main():
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    reps = 2 if args.quick else args.reps
    epsilons = EPSILONS[:1] if args.quick else EPSILONS
    rows, ledger_ok = [], True
    warnings.simplefilter("ignore")  # learners' "cannot learn at this ε" notes
    for table, (X, y, bounds) in _tables(args.seed).items():
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=args.seed)
        for epsilon in epsilons:
            for method in METHODS:
                accs = []
                for _ in range(reps):
                    model, spent, plan = _run(method, bounds, X_tr, y_tr, epsilon)
                    accs.append(accuracy_score(y_te, model.predict(X_te)))
                    if plan is not None:
                        ledger_ok &= spent == plan
                rows.append({"table": table, "epsilon": epsilon, "method": method,
                             "reps": reps, "mean": float(np.mean(accs)),
                             "sd": float(np.std(accs, ddof=1)),
                             "se": float(np.std(accs, ddof=1) / np.sqrt(reps))})
                print(rows[-1], flush=True)
    out = output_dir(args)
    notes = [
        f"Ledger after every private search equals its plan exactly: {ledger_ok}.",
        "ε is the total of everything a method does (δ = 1e-5); the plain grid is not "
        "private (every fit at ε, exact scores) and is there as a reference.",
        "The private search uses its defaults, the geometric stopping law (E[K] = 30): "
        "its trials get ε₀ = ε/3 each, on 75 % of the search rows; GridSearchCV with "
        "the private scorer gives each of its 73 releases ε/73.",
    ]
    write_report("private_search", rows,
                 {"table": "table", "epsilon": "ε", "method": "method", "reps": "reps",
                  "mean": "test acc mean", "sd": "sd", "se": "se"},
                 out_dir=out, title="Private model selection: test accuracy at a total ε",
                 notes=notes, plot=lambda path: _plot(path, rows, epsilons))


def _plot(path, rows, epsilons):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tables = list(dict.fromkeys(r["table"] for r in rows))
    fig, axes = plt.subplots(1, len(tables), figsize=(4 * len(tables), 3.4),
                             layout="constrained", sharey=True)
    for ax, table in zip(np.atleast_1d(axes), tables, strict=True):
        for method, style in zip(METHODS, ("o-", "s--", "^:", "k-."), strict=True):
            pts = [r for r in rows if r["table"] == table and r["method"] == method]
            ax.errorbar([r["epsilon"] for r in pts], [r["mean"] for r in pts],
                        yerr=[r["sd"] for r in pts], fmt=style, capsize=3, label=method)
        ax.set_xscale("log", base=2)
        ax.set_xticks(list(epsilons), [f"{e:g}" for e in epsilons])
        ax.set_title(table)
        ax.set_xlabel("total ε of the method")
    np.atleast_1d(axes)[0].set_ylabel("test accuracy (mean ± sd)")
    np.atleast_1d(axes)[-1].legend(fontsize=7, loc="lower right")
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
