"""Private prediction: Yan's shrinkage predictor vs the subsample-and-aggregate baseline.

For each concept class and total ε ∈ {0.5, 1, 2} (δ = 1e-6) both predictors get the
*same* labelled sample (n = k·m rows: k the fewest teachers Yan's BetweenThresholds
gap allows at the class's cap on hard queries, m rows per teacher) and the baseline
uses the same k teachers. They answer a stream of T ∈ {10², 10³, 10⁴, 10⁵} fresh
queries from the data distribution (thresholds also T = 10⁶).

* Yan's predictor answers one stream of 10⁵ queries; accuracy "at T" is on its
  first T answers (its answers on a prefix do not depend on later queries).
* The baseline is refit (same teachers) and planned for exactly T queries, so its
  per-query ε is calibrate(ε, δ, T) by optimal composition.
* Queries a predictor refuses (cap reached) count as coin flips (accuracy ½): a user
  who is refused must guess. ``answered`` reports how many were answered.

Also: breast cancer (569 rows) with logistic-regression teachers — too small for
Yan's gap condition at these ε (reported as such), the baseline runs; and, for
thresholds at ε = 1, T = 10⁵, the labelled n each method needs for 90 % accuracy.

Run ``python benchmarks/private_prediction.py`` (full, < 10 min) or ``--quick``;
``--task 2d`` runs issue 16's realistic-n task instead (``_private_prediction_2d``).
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import make_parser, output_dir, redraw, rng_for, write_report

from skdp.hypotheses import Halfspaces, Rectangles, Thresholds
from skdp.prediction import (
    PrivatePredictor,
    QueryBudgetExhaustedError,
    SubsampleAggregatePredictor,
    shrinkage_parameters,
)

DELTA = 1e-6
T_GRID = (100, 1_000, 10_000, 100_000)
EPSILONS = (0.5, 1.0, 2.0)
W5 = np.array([1.0, -0.8, 0.6, 0.4, -0.3])


def _thresholds(rng, n):
    X = rng.random((n, 1))
    return X, (X[:, 0] >= 0.4).astype(int)


def _rectangles(rng, n):
    X = rng.random((n, 2))
    inside = (X[:, 0] > 0.2) & (X[:, 0] < 0.7) & (X[:, 1] > 0.3) & (X[:, 1] < 0.9)
    return X, inside.astype(int)


def _halfspaces(rng, n):
    X = rng.normal(size=(n, 5))
    return X, (X @ W5 >= 0.3).astype(int)


# name, data, hypotheses, mode, cap on hard queries, rows per teacher, label noise
CASES = [
    ("thresholds", _thresholds, lambda: Thresholds(), "oblivious", 16, 20, 0.0),
    ("rectangles R^2", _rectangles, lambda: Rectangles(2), "oblivious", 24, 40, 0.0),
    ("halfspaces R^5", _halfspaces, lambda: Halfspaces(5), "halfspace", 8, 40, 0.0),
    ("halfspaces R^5, 5% noise", _halfspaces, lambda: Halfspaces(5), "halfspace", 8, 40, 0.05),
]


def _answers(clf, X):
    """Answers to X in order; refused queries are None-padded (via error.answers)."""
    try:
        return clf.predict(X), X.shape[0]
    except QueryBudgetExhaustedError as exc:
        return exc.answers, exc.n_answered


def _accuracy(pred, n_answered, truth):
    correct = np.count_nonzero(pred[:n_answered] == truth[:n_answered])
    return (correct + 0.5 * (truth.size - n_answered)) / truth.size


def run_yan(name, make, hyp, mode, cap, m, noise, eps, t_grid, seed):
    rng = rng_for(seed, f"{name}/{eps}")
    k = shrinkage_parameters(eps, DELTA, cap)["min_teachers"]
    n = k * m
    X, y = make(rng, n)
    if noise:
        y = np.where(rng.random(n) < noise, 1 - y, y)
    Xq, yq = make(rng, max(t_grid))
    start = time.perf_counter()
    clf = PrivatePredictor(hyp(), epsilon=eps, delta=DELTA, max_hard_queries=cap, mode=mode,
                           n_queries=max(t_grid), random_state=seed).fit(X, y)
    k = clf.n_teachers_
    rows, done, preds, answered = [], 0, [], 0
    for T in t_grid:
        if answered == done:  # not yet exhausted
            pred, a = _answers(clf, Xq[done:T])
            preds.append(pred)
            answered += a
        done = T
        full = np.concatenate(preds) if preds else np.empty(0)
        rows.append({
            "T": T, "n": n, "k": k, "cap": cap,
            "yan_acc": _accuracy(full, min(answered, T), yq[:T]),
            "yan_answered": min(answered, T),
            "yan_hard": clf.n_hard_queries_,
            "yan_eps": clf.privacy_spent_.epsilon,
        })
    return rows, (X, y, Xq, yq, k), time.perf_counter() - start


def run_baseline(hyp, eps, T, data, seed, estimator=None, n_teachers=None):
    X, y, Xq, yq, k = data
    clf = SubsampleAggregatePredictor(hyp() if hyp else None, estimator=estimator, epsilon=eps,
                                      delta=DELTA, n_queries=T, n_teachers=n_teachers or k,
                                      random_state=seed).fit(X, y)
    pred = clf.predict(Xq[:T])
    return float(np.mean(pred == yq[:T])), clf.privacy_spent_.epsilon


def n_for_90(eps, T, seed, quick):
    """Smallest labelled n (on a doubling grid) reaching 90 % accuracy, per method."""
    cap = 8
    k = shrinkage_parameters(eps, DELTA, cap)["min_teachers"]
    rng = rng_for(seed, f"n90/{eps}")
    Xq, yq = _thresholds(rng, T)
    yan_n = base_n = None
    for m in (1, 2, 4, 8, 16, 32):
        X, y = _thresholds(rng, k * m)
        clf = PrivatePredictor(Thresholds(), epsilon=eps, delta=DELTA, max_hard_queries=cap,
                               random_state=seed).fit(X, y)
        pred, a = _answers(clf, Xq)
        if _accuracy(pred, a, yq) >= 0.9:
            yan_n = k * m
            break
    for n in (2 ** j for j in range(8, 23)):
        X, y = _thresholds(rng, n)
        best = 0.0
        for per in (1, 2, 4, 8, 16):
            if n // per < 1:
                continue
            acc, _ = run_baseline(lambda: Thresholds(), eps, T, (X, y, Xq, yq, n // per), seed)
            best = max(best, acc)
        if best >= 0.9:
            base_n = n
            break
    return yan_n, base_n


def draw_figure(rows, path):
    """Accuracy and hard queries against T at ε = 1, from the rows (or the CSV): colour
    = the task, solid = Yan's predictor, dashed = subsample-and-aggregate."""
    import _plot

    def num(value):
        try:
            return float(value)
        except (TypeError, ValueError):
            return float("nan")

    def pretty(name):  # "rectangles R^2" → "rectangles in ℝ²"
        return name.replace(" R^2", " in ℝ²").replace(" R^5", " in ℝ⁵")

    names = list(dict.fromkeys(r["case"] for r in rows))
    with _plot.figure(path, 2, panel_height=2.8) as (fig, (ax1, ax2)):
        for k, name in enumerate(names):
            sel = sorted((num(r["T"]), r) for r in rows
                         if r["case"] == name and num(r["epsilon"]) == 1.0)
            if not sel:
                continue
            Ts = [T for T, _ in sel]
            yan = [num(r["yan_acc"]) for _, r in sel]
            color = f"C{k}"
            if not np.isnan(yan[0]):
                ax1.plot(Ts, yan, "-o", color=color, label=pretty(name))
                ax2.plot(Ts, [num(r["yan_hard"]) for _, r in sel], "-o", color=color,
                         label=pretty(name))
            ax1.plot(Ts, [num(r["base_acc"]) for _, r in sel], "--s", color=color,
                     label=pretty(name) if np.isnan(yan[0]) else "_baseline")
        ax1.plot([], [], "-", color="black", label="solid: Yan's shrinkage predictor")
        ax1.plot([], [], "--", color="black", label="dashed: subsample-and-aggregate")
        ax1.set_xscale("log")
        ax1.set_xlabel("queries T")
        ax1.set_ylabel("accuracy")
        ax1.set_title("accuracy at ε = 1")
        Tg = np.array(sorted({num(r["T"]) for r in rows}), dtype=float)
        ax2.plot(Tg, np.log2(Tg), ":", color="grey", label="log₂ T (reference)")
        ax2.set_xscale("log")
        ax2.set_xlabel("queries T")
        ax2.set_ylabel("hard queries used")
        ax2.set_title("hard queries at ε = 1 (Yan)")
        _plot.legend_below(fig, [ax1, ax2], ncol=2)


def main(argv=None):
    parser = make_parser(__doc__.splitlines()[0], plot_only=True)
    parser.add_argument("--task", choices=("classes", "2d"), default="classes")
    parser.add_argument("--seeds-2d", type=int, default=8,
                        help="seeds of the 2-D accuracy curve (--task 2d)")
    args = parser.parse_args(argv)
    if args.plot_only and args.task == "classes":
        return redraw("private_prediction", draw_figure, output_dir(args))
    if args.task == "2d":
        from _private_prediction_2d import main_2d

        return main_2d(args)
    t_grid = (100, 1_000) if args.quick else T_GRID
    epsilons = (1.0,) if args.quick else EPSILONS
    rows = []
    timings = {}
    for name, make, hyp, mode, cap, m, noise in CASES:
        if args.quick:
            cap, m = min(cap, 8), min(m, 10)
        # Thresholds are cheap to vote on (one sort): extend them to T = 10⁶.
        grid = (*t_grid, 1_000_000) if name == "thresholds" and not args.quick else t_grid
        for eps in epsilons:
            yan_rows, data, secs = run_yan(name, make, hyp, mode, cap, m, noise, eps, grid,
                                           args.seed)
            start = time.perf_counter()
            for row in yan_rows:
                acc, spent = run_baseline(hyp, eps, row["T"], data, args.seed)
                row.update(case=name, epsilon=eps, base_acc=acc, base_eps=spent)
                rows.append(row)
            timings[(name, eps)] = (secs, time.perf_counter() - start)
            print(f"{name} ε={eps}: yan {secs:.1f}s, baseline "
                  f"{timings[(name, eps)][1]:.1f}s", file=sys.stderr)

    # Real data: breast cancer with logistic-regression teachers.
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression

    X, y = load_breast_cancer(return_X_y=True)
    rng = rng_for(args.seed, "breast_cancer")
    perm = rng.permutation(len(y))
    train, test = perm[:380], perm[380:]
    for eps in epsilons:
        need = shrinkage_parameters(eps, DELTA, 1)["min_teachers"]
        for T in t_grid:
            q = rng.choice(test, size=T)
            data = (X[train], y[train], X[q], y[q], 19)
            acc, spent = run_baseline(None, eps, T, data, args.seed,
                                      estimator=LogisticRegression(max_iter=2000))
            rows.append({
                "case": "breast cancer, LR teachers", "epsilon": eps, "T": T,
                "n": len(train), "k": 19, "cap": 1,
                "yan_acc": float("nan"), "yan_answered": 0, "yan_hard": 0,
                "yan_eps": 0.0, "base_acc": acc, "base_eps": spent,
                "note": f"Yan infeasible: gap needs ≥ {need} teachers",
            })

    n90 = {1.0: (None, None) if args.quick else n_for_90(1.0, max(t_grid), args.seed, False)}

    columns = {
        "case": "class", "epsilon": "ε", "T": "T", "n": "labelled n", "k": "teachers k",
        "cap": "cap", "yan_acc": "Yan acc", "yan_answered": "answered", "yan_hard": "hard q.",
        "yan_eps": "Yan ε spent", "base_acc": "baseline acc", "base_eps": "baseline ε spent",
    }
    out = output_dir(args)
    yan_n, base_n = n90[1.0]
    notes = [
        f"δ = {DELTA:g}; same labelled n and same k teachers for both predictors; the "
        "baseline's per-query ε = calibrate(ε, δ, T, 'optimal').",
        "Yan: one stream of max T queries, accuracy on its first T answers; refused "
        "queries (cap reached) count ½. 'hard q.' = hard queries (⊤) answered; 'Yan ε "
        "spent' is the whole plan, reserved at the first answer.",
        "breast cancer (569 rows, 380 train): too few rows for Yan's teachers (not run; "
        "it would answer as subsample-and-aggregate with ⌊n/2⌋ teachers) — at cap 1, ε = 1 "
        "the BSU gap t_u − t_l ≥ 12/(ε_bt·k)(ln(10/ε_bt)+ln(1/δ_bt)+1) needs ≥ "
        f"{shrinkage_parameters(1.0, DELTA, 1)['min_teachers']} teachers, the charged "
        f"calibration {shrinkage_parameters(1.0, DELTA, 1, calibration='auto')['min_teachers']}"
        ". Its queries are drawn with replacement from 189 test rows, and a repeated row is "
        "answered from the transcript for free, so the baseline spends less than ε.",
        "the baseline gets Yan's k (clf.n_teachers_, now mostly the charged calibration's, "
        "2–2.5× fewer than BSU's): fewer, larger blocks make its per-query counts noisier, "
        "which is why its accuracy at large T fell from the earlier run.",
        f"thresholds, ε = 1, T = {max(t_grid)}: labelled n for 90 % accuracy — Yan "
        f"{yan_n}, baseline (best of k = n/1…n/16) {base_n}.",
        "timings (s, yan / baseline): " + "; ".join(
            f"{name} ε={eps}: {a:.0f}/{b:.0f}" for (name, eps), (a, b) in timings.items()
        ),
    ]

    def plot(path):
        draw_figure(rows, path)

    write_report(
        "private_prediction", rows, columns, out_dir=out,
        title="Private prediction: Yan's shrinkage predictor vs subsample-and-aggregate",
        notes=notes, plot=plot,
    )


if __name__ == "__main__":
    main()
