"""Yan's predictor with random-forest teachers: teacher_update="refit" vs "leaf" (issue 32).

A hard query (x, s) changes the teachers that disagree with its random label s.
``"refit"`` fits each of them again on its block plus every hard query (≈ half of k
``RandomForestClassifier.fit`` calls); ``"leaf"`` gives the leaf x reaches in each of
their trees the class fractions of s, in place. Both are private (Lemma 3 of
``skdp.prediction._shrinkage_answering``); they answer differently. Measured on the
same fitted teachers (same seed: same partition, same forests, same BetweenThresholds
noise until the two runs first differ), on the data of ``private_prediction.py``
(rectangles in ℝ², halfspaces in ℝ⁵, each with 5 % label noise) and of
``predictor_speed.py`` (x ~ U[0, 1]⁴, y = [x₀ + x₁² > 0.8]):

* accuracy on a stream of fresh queries from the data distribution against the
  noiseless concept, refused queries (cap reached) counted as coin flips (½), as in
  ``private_prediction.py``;
* accuracy on the answers it gave, and on the prefix of the stream both rules answered
  (before either reached the cap);
* hard queries used, queries answered, and the CPU seconds spent in hard queries.

ε = 2, δ = 10⁻⁶, a cap of 10 hard queries and ``RandomForestClassifier(n_estimators=10)``
(fully grown trees) keep k ≈ 600 teachers, so the refit runs finish in minutes.
``PYTHONPATH=. python benchmarks/teacher_update.py`` (``--quick``: one data set, one seed).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from _report import make_parser, output_dir, rng_for, write_report
from sklearn.ensemble import RandomForestClassifier

from skdp.prediction import PrivatePredictor, QueryBudgetExhaustedError

NAME = "teacher_update"
EPSILON, DELTA, CAP = 2.0, 1e-6, 10
W5 = np.array([1.0, -0.8, 0.6, 0.4, -0.3])


def _rectangles(rng, n):
    X = rng.random((n, 2))
    return X, (X[:, 0] > 0.2) & (X[:, 0] < 0.7) & (X[:, 1] > 0.3) & (X[:, 1] < 0.9)


def _halfspaces(rng, n):
    X = rng.normal(size=(n, 5))
    return X, X @ W5 > 0.1


def _speed(rng, n):
    X = rng.random((n, 4))
    return X, X[:, 0] + X[:, 1] ** 2 > 0.8


TASKS = {"rectangles R^2": _rectangles, "halfspaces R^5": _halfspaces,
         "predictor_speed R^4": _speed}


def run(update, X, y, Xq, truth, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = PrivatePredictor(estimator=RandomForestClassifier(n_estimators=10, random_state=0),
                               epsilon=EPSILON, delta=DELTA, max_hard_queries=CAP,
                               n_queries=Xq.shape[0], classes=[0, 1], teacher_update=update,
                               random_state=seed).fit(X, y)
    hard_cpu = 0.0
    original = clf._hard_query

    def timed(x, label):  # the hard queries' own cost, apart from the votes
        nonlocal hard_cpu
        start = time.process_time()
        original(x, label)
        hard_cpu += time.process_time() - start

    clf._hard_query = timed
    start = time.process_time()
    try:
        pred = clf.predict(Xq)
    except QueryBudgetExhaustedError as exc:
        pred = np.asarray(exc.answers)
    total_cpu = time.process_time() - start
    n = pred.size
    correct = np.sum(pred == truth[:n]) + 0.5 * (truth.size - n)
    return {"k": clf.n_teachers_, "accuracy": correct / truth.size, "answered": n,
            "hard": clf.n_hard_queries_, "hard_cpu_s": hard_cpu, "answer_cpu_s": total_cpu,
            "pred": pred}


def main() -> None:
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--rows-per-teacher", type=int, default=50)
    parser.add_argument("--queries", type=int, default=2000)
    args = parser.parse_args()
    tasks = dict(list(TASKS.items())[-1:]) if args.quick else TASKS
    seeds = 1 if args.quick else args.seeds
    out = output_dir(args)
    rows = []
    for name, make in tasks.items():
        for s in range(seeds):
            rng = rng_for(args.seed + s, f"{NAME} {name}")
            k_guess = PrivatePredictor(epsilon=EPSILON, delta=DELTA, max_hard_queries=CAP,
                                       n_queries=args.queries)
            k = k_guess._plan_for(EPSILON, DELTA, 1)[-1]
            X, concept = make(rng, k * args.rows_per_teacher)
            y = np.where(rng.random(concept.size) < 0.05, ~concept, concept).astype(int)
            Xq, truth = make(rng, args.queries)
            runs = {u: run(u, X, y, Xq, truth.astype(int), args.seed + s)
                    for u in ("refit", "none")}
            # Accuracy on the prefix both rules answered (before either hit the cap).
            common = min(r["answered"] for r in runs.values())
            for update, r in runs.items():
                pred = r.pop("pred")
                r["accuracy_answered"] = float(np.mean(pred == truth[: pred.size]))
                r["accuracy_common"] = float(np.mean(pred[:common] == truth[:common]))
                r["common"] = common
                rows.append({"task": name, "seed": s, "update": update, **r})
                print(rows[-1], flush=True)
    summary = []
    for name in tasks:
        for update in ("refit", "none"):
            sel = [r for r in rows if r["task"] == name and r["update"] == update]
            summary.append({
                "task": name, "update": update, "k": sel[0]["k"], "runs": len(sel),
                "accuracy": np.mean([r["accuracy"] for r in sel]),
                "accuracy_answered": np.mean([r["accuracy_answered"] for r in sel]),
                "accuracy_common": np.mean([r["accuracy_common"] for r in sel]),
                "common": np.mean([r["common"] for r in sel]),
                "answered": np.mean([r["answered"] for r in sel]),
                "hard": np.mean([r["hard"] for r in sel]),
                "hard_cpu_s": np.mean([r["hard_cpu_s"] for r in sel]),
                "per_hard_s": (np.sum([r["hard_cpu_s"] for r in sel])
                               / max(1, np.sum([r["hard"] for r in sel]))),
            })
    columns = {"task": "data", "update": "teacher_update", "k": "teachers k", "runs": "seeds",
               "accuracy": "accuracy (refused = ½)",
               "accuracy_answered": "accuracy on its answers",
               "accuracy_common": "accuracy on the prefix both answered",
               "common": "that prefix", "answered": "answered",
               "hard": "hard queries", "hard_cpu_s": "CPU s in hard queries",
               "per_hard_s": "CPU s per hard query"}
    write_report(NAME, summary, columns, out_dir=out,
                 title="Yan's predictor, random-forest teachers: refit vs no teacher update",
                 notes=[f"ε = {EPSILON:g}, δ = {DELTA:g}, cap {CAP} hard queries, "
                        f"{args.rows_per_teacher} rows per teacher, 5 % label noise, "
                        f"{args.queries} fresh queries per run; means over seeds.",
                        "Same seed for both rules: same partition, forests and noise until "
                        "the runs first differ."])


if __name__ == "__main__":
    main()
