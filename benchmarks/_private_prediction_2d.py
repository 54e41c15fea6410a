"""Issue 16's task for ``private_prediction.py --task 2d``: Yan's predictor at realistic n.

X ~ N(0, I₂), y = 1[x₀ + 0.5·x₁ > 0.2], T = 2·10⁴ fresh queries, δ = 10⁻⁶. For each
labelled n, all with ``n_queries=T``:

* ``default``: ``PrivatePredictor(Halfspaces(2))`` (``mode="auto"``: halfspace mode);
* ``oblivious``: the same with ``mode="oblivious"`` (Yan's G_oblivious, cap
  min(⌈VC·ln T⌉, ⌈4 ln(2/δ)⌉) = 30);
* ``sklearn``: ``estimator=LogisticRegression()`` teachers (``mode="auto"``: halfspace);
* ``sklearn_oblivious``: LogisticRegression teachers with ``mode="oblivious"``;
* ``subsample``: subsample-and-aggregate (``Halfspaces(2)`` teachers, planned for T; its
  default ⌊n/10⌋ teachers, at most ⌈4/ε_q⌉);
* ``subsample_n2``: the same with ⌊n/2⌋ teachers (at most ⌈4/ε_q⌉) — the count Yan's
  small-sample fallback uses, shown so the fallback's gain over ``subsample`` is not
  mistaken for Yan's;
* ``nonprivate``: ``LogisticRegression`` on all n rows.

Refused queries count ½. Also: the smallest n on the grid whose mean accuracy reaches 0.9
for ε ∈ {0.5, 1, 2}; each Yan mode's worst margin over subsample-and-aggregate; the
sklearn-teacher mode's fit at n = 2·10⁵ and its batched predict (first stream, with the
hard queries' refits, and a second stream: votes only), each against
``LogisticRegression`` measured in the same run.
"""

import time
import warnings

import numpy as np
from _report import output_dir, rng_for, write_report
from sklearn.linear_model import LogisticRegression

from skdp.hypotheses import Halfspaces
from skdp.prediction import (
    PrivatePredictor,
    QueryBudgetExhaustedError,
    SubsampleAggregatePredictor,
)
from skdp.prediction._small_sample import fallback_teachers
from skdp.prediction.subsample_aggregate import _per_query_epsilon

DELTA = 1e-6
T = 20_000
N_GRID = (1_000, 2_000, 3_000, 5_000, 10_000, 20_000, 50_000, 200_000)
N90_GRID = (1_000, 2_000, 3_000, 5_000, 7_000, 10_000, 20_000, 50_000)
METHODS = ("default", "oblivious", "sklearn", "sklearn_oblivious", "subsample", "subsample_n2",
           "nonprivate")
YAN = METHODS[:4]


def _data(rng, n):
    X = rng.normal(size=(n, 2))
    return X, (X[:, 0] + 0.5 * X[:, 1] > 0.2).astype(int)


def _yan(method, eps, seed, T_planned):
    common = dict(epsilon=eps, delta=DELTA, classes=[0, 1], random_state=seed,
                  n_queries=T_planned)
    if method == "default":
        return PrivatePredictor(Halfspaces(2), **common)
    if method == "oblivious":
        return PrivatePredictor(Halfspaces(2), mode="oblivious", **common)
    if method == "sklearn_oblivious":
        return PrivatePredictor(estimator=LogisticRegression(), mode="oblivious", **common)
    return PrivatePredictor(estimator=LogisticRegression(), **common)


def run_one(method, n, eps, seed, n_queries=T):
    """Accuracy, answered, hard queries, teachers, fit and predict seconds."""
    rng = rng_for(seed, f"2d/{n}/{eps}")
    X, y = _data(rng, n)
    Xq, yq = _data(rng, n_queries)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # too-few-rows / fixed-seed notices
        start = time.perf_counter()
        if method == "nonprivate":
            clf = LogisticRegression().fit(X, y)
        elif method.startswith("subsample"):
            k = "auto"
            if method == "subsample_n2":
                k = fallback_teachers(n, _per_query_epsilon(eps, DELTA, n_queries), True)
            clf = SubsampleAggregatePredictor(Halfspaces(2), epsilon=eps, delta=DELTA,
                                              n_queries=n_queries, classes=[0, 1],
                                              n_teachers=k, random_state=seed).fit(X, y)
        else:
            clf = _yan(method, eps, seed, n_queries).fit(X, y)
        fit_s = time.perf_counter() - start
        start = time.perf_counter()
        try:
            pred = clf.predict(Xq)
        except QueryBudgetExhaustedError as exc:
            pred = exc.answers
        predict_s = time.perf_counter() - start
    m = len(pred)
    acc = (np.count_nonzero(pred == yq[:m]) + 0.5 * (n_queries - m)) / n_queries
    return {
        "acc": float(acc), "answered": m,
        "hard": getattr(clf, "n_hard_queries_", 0) if method in YAN else 0,
        "teachers": getattr(clf, "n_teachers_", 0),
        "fit_s": fit_s, "predict_s": predict_s,
    }


def accuracy_curve(seeds, n_grid):
    rows = []
    for n in n_grid:
        for method in METHODS:
            runs = [run_one(method, n, 1.0, s) for s in seeds]
            acc = np.array([r["acc"] for r in runs])
            rows.append({
                "n": n, "method": method, "acc_mean": float(acc.mean()),
                "acc_sd": float(acc.std()), "acc_min": float(acc.min()),
                "answered": float(np.mean([r["answered"] for r in runs])),
                "hard": float(np.mean([r["hard"] for r in runs])),
                "hard_max": int(max(r["hard"] for r in runs)),
                "teachers": runs[0]["teachers"],
                "fit_s": float(np.mean([r["fit_s"] for r in runs])),
                "predict_s": float(np.mean([r["predict_s"] for r in runs])),
            })
            print(f"n={n} {method}: {acc.mean():.3f} ± {acc.std():.3f}", flush=True)
    return rows


def smallest_n(eps, seeds, grid, methods):
    """Smallest n on ``grid`` whose mean accuracy over ``seeds`` is ≥ 0.9, per method."""
    out = {}
    for method in methods:
        out[method] = None
        for n in grid:
            acc = np.mean([run_one(method, n, eps, s)["acc"] for s in seeds])
            if acc >= 0.9:
                out[method] = n
                break
    return out


def timing(seed):
    """sklearn-teacher mode vs LogisticRegression: fit at n = 2·10⁵, batched predict."""
    rng = rng_for(seed, "2d/timing")
    X, y = _data(rng, 200_000)
    Xq, _ = _data(rng, T)
    lr_fit = min(_timed(lambda: LogisticRegression().fit(X, y)) for _ in range(3))
    lr = LogisticRegression().fit(X, y)
    lr_pred = min(_timed(lambda: lr.predict(Xq)) for _ in range(5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yan_fit = min(_timed(lambda: _yan("sklearn", 1.0, seed, T).fit(X, y)) for _ in range(2))
        clf = _yan("sklearn", 1.0, seed, 5 * T).fit(X, y)
        clf.predict(Xq[:10])  # the stream has started (plan reserved)
        yan_pred = _timed(lambda: clf.predict(Xq))  # includes the hard queries' refits
        hard = clf.n_hard_queries_
        # Later streams of fresh queries: votes only; the best of three, like the baseline.
        streams = [_data(rng, T)[0] for _ in range(3)]
        steady = min(_timed(lambda Q=Q: clf.predict(Q)) for Q in streams)
    return {"lr_fit_s": lr_fit, "yan_fit_s": yan_fit, "fit_ratio": yan_fit / lr_fit,
            "lr_predict_us": 1e6 * lr_pred / T, "yan_predict_us": 1e6 * yan_pred / T,
            "predict_ratio": yan_pred / lr_pred, "hard_in_timed_stream": hard,
            "steady_us": 1e6 * steady / T, "steady_ratio": steady / lr_pred,
            "hard_in_second_stream": clf.n_hard_queries_ - hard}


def _timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _margins(rows, baseline):
    """Each Yan mode's worst (accuracy − baseline's) over the n grid, and where."""
    base = {r["n"]: r["acc_mean"] for r in rows if r["method"] == baseline}
    return {m: min((r["acc_mean"] - base[r["n"]], r["n"]) for r in rows if r["method"] == m)
            for m in YAN}


def main_2d(args):
    quick = args.quick
    # 8 seeds: with 3, a cell's sd (0.006–0.07 at n ≤ 5000) was too coarse to decide the
    # 0.90 target, and the spread between seeds is itself worth reporting (min column).
    seeds = (args.seed,) if quick else tuple(args.seed + i for i in range(args.seeds_2d))
    rows = accuracy_curve(seeds, (1_000, 3_000, 20_000) if quick else N_GRID)
    methods = (*YAN, "subsample")
    # ε = 1: read off the curve (all its seeds); ε = 0.5, 2: scan N90_GRID with 2 seeds.
    n90 = {1.0: {m: min((r["n"] for r in rows if r["method"] == m and r["acc_mean"] >= 0.9),
                        default=None) for m in methods}}
    for eps in () if quick else (0.5, 2.0):
        n90[eps] = smallest_n(eps, seeds[:2], N90_GRID, methods)
        print(f"n for 0.9 at ε={eps}: {n90[eps]}", flush=True)
    margins = {b: _margins(rows, b) for b in ("subsample", "subsample_n2")}
    t = timing(args.seed)
    acc = {(r["method"], r["n"]): r["acc_mean"] for r in rows}

    def reach(method, n_max):
        """Issue 16's target for a mode: mean accuracy ≥ 0.9 at some n ≤ n_max."""
        hit = n90[1.0].get(method)
        at = max(n for m, n in acc if m == method and n <= n_max)
        return (f"{method} ≥ 0.9 at n ≤ {n_max}: "
                + (f"met (n = {hit})" if hit is not None and hit <= n_max
                   else f"NOT met ({acc[(method, at)]:.3f} at n = {at})"))
    columns = {"n": "labelled n", "method": "method", "acc_mean": "acc (mean)",
               "acc_sd": "sd", "acc_min": "min", "answered": "answered",
               "hard": "hard q. (mean)", "hard_max": "hard q. (max)",
               "teachers": "teachers", "fit_s": "fit s", "predict_s": "predict s"}
    notes = [
        f"ε = 1, δ = {DELTA:g}, T = {T} fresh queries, {len(seeds)} seed(s); refused "
        "queries count ½; Yan modes run with n_queries = T.",
        "smallest n on the grid with mean accuracy ≥ 0.9 (ε = 1: the curve above; "
        "ε = 0.5, 2: 2 seeds on " + ", ".join(map(str, N90_GRID)) + "): " + "; ".join(
            f"ε={eps}: " + ", ".join(f"{m} {n}" for m, n in res.items())
            for eps, res in n90.items()),
        "issue 16's targets at ε = 1 (this run, mean of its seeds): " + "; ".join(
            [reach("default", 3_000), reach("sklearn", 5_000), reach("oblivious", 5_000),
             reach("sklearn_oblivious", 5_000)]) + "; ≥ subsample at every n: " + (
            "met" if min(d for d, _ in margins["subsample"].values()) >= 0 else "NOT met"),
        *(f"worst margin over {b} (mean accuracy, over the n grid): " + "; ".join(
            f"{m} {d:+.3f} (n = {n})" for m, (d, n) in res.items())
          for b, res in margins.items()),
        f"sklearn-teacher mode at n = 2·10⁵: fit {t['yan_fit_s']:.3f} s vs "
        f"LogisticRegression.fit {t['lr_fit_s']:.3f} s (× {t['fit_ratio']:.1f}); batched "
        f"predict {t['yan_predict_us']:.2f} µs/query vs {t['lr_predict_us']:.3f} µs/query "
        f"(× {t['predict_ratio']:.0f}; {t['hard_in_timed_stream']} hard queries in the "
        f"timed stream); later streams of {T} fresh queries (best of 3): "
        f"{t['steady_us']:.2f} µs/query (× {t['steady_ratio']:.0f}; "
        f"{t['hard_in_second_stream']} hard queries).",
    ]

    def plot(path):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4.5), layout="constrained")
        for method in METHODS:
            sel = [r for r in rows if r["method"] == method]
            ax.errorbar([r["n"] for r in sel], [r["acc_mean"] for r in sel],
                        yerr=[r["acc_sd"] for r in sel], marker="o", capsize=2, label=method)
        ax.axhline(0.9, color="grey", lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set_xlabel("labelled n")
        ax.set_ylabel(f"accuracy on T = {T} queries")
        ax.set_title("X ~ N(0, I₂), y = 1[x₀ + 0.5x₁ > 0.2], ε = 1", fontsize=10)
        ax.legend(fontsize=8)
        fig.savefig(path, dpi=90)
        plt.close(fig)

    write_report("private_prediction_2d", rows, columns, out_dir=output_dir(args),
                 title="Private prediction at realistic n (issue 16): 2-D halfspace",
                 notes=notes, plot=plot)
