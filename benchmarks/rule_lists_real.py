"""Benchmark (issue 27): private rule lists on real-valued tables vs the private models users pick.

``python benchmarks/rule_lists_real.py`` (full: 6 tables × ε ∈ {0.5, 1, 2, 4, 8} × 5 seeds)
or ``--quick`` (2 seeds, ε ∈ {1, 4}, smaller digits; a few minutes). Writes
``benchmarks/results/rule_lists_real.{csv,md,png}`` (+ ``rule_lists_real_speed.csv`` and
``rule_lists_real.rst``, the ε = 1 table the "which learner" page includes).

Tables: :mod:`_dev_tables` (breast_cancer, statsmodels' fair, a simulated imbalanced
table whose label is a threshold on a skewed feature, a simulated churn-like table with
a dominant binary feature + categoricals + missing values, the planted 5-rule list, and
10-class digits), each with public bounds from its documented meaning.

Methods, all fitted on the same stratified 70/30 split per seed, side by side:

* ``skdp binarizer → DP list``: the README pipeline with defaults,
  ``PublicBoundsBinarizer(bounds=…)`` → ``DPDecisionListClassifier(epsilon=ε, delta=δ,
  classes=…)``; missing values filled with the column's public lower bound and flagged by
  a 0/1 column (the columns that may be missing are documented, so the flags are public).
* ``skdp DP list bounds=``: ``DPDecisionListClassifier(epsilon=ε, delta=δ, classes=…,
  bounds=(lower, upper))`` on the raw matrix (NaN kept), when the imported skdp has it.
* ``diffprivlib best``: the best of diffprivlib 0.6's LogisticRegression / GaussianNB /
  RandomForest per table and ε, chosen by mean test ROC AUC (optimistic for it), on the
  filled matrix scaled to [0, 1] by the public bounds, in a side virtualenv
  (``$SKDP_DIFFPRIVLIB_PYTHON``, default ``/tmp/dpl/bin/python``; diffprivlib needs
  scikit-learn < 1.6: ``python -m venv /tmp/dpl && /tmp/dpl/bin/pip install
  diffprivlib==0.6.6 scikit-learn==1.5.2 pandas``).
* ``DP-EBM``: InterpretML's ``DPExplainableBoostingClassifier(epsilon=ε, delta=δ,
  privacy_bounds=…)`` (binary only; it refuses NaN and multiclass), same matrix, in a
  second side virtualenv (``$SKDP_EBM_PYTHON``, default ``/tmp/ebm/bin/python``;
  interpret-core needs scikit-learn ≥ 1.6).
* non-private references: scikit-learn's LogisticRegression (standardised) and
  DecisionTree(max_depth=6), and skdp's GreedyDecisionListClassifier on the binarizer's bits
  and (when it takes ``bounds=``) on the raw matrix with the private list's own cut grid.

Metrics: ROC AUC (one-vs-rest macro for multiclass), average precision (macro over
classes for multiclass), accuracy; mean ± sd over seeds. Side-virtualenv results do not
depend on skdp and are cached (``--cache``), so re-running against another skdp tree
(``--skdp-path /work/wt-rulelist`` or ``$SKDP_PATH``; ``$SKDP_LABEL`` names it in the
report when it is not a git checkout) only refits skdp.
``--notes FILE`` appends the ε = 1 summary (per table: skdp vs diffprivlib best vs
DP-EBM vs non-private LR) to FILE. The speed case times the fit at 10⁵ × 100 numeric
features against DecisionTree(max_depth=10).
"""

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path


def _skdp_path_from_argv():
    """``--skdp-path`` must act before skdp is imported, so it is read here by hand."""
    path = os.environ.get("SKDP_PATH")
    for i, arg in enumerate(sys.argv):
        if arg == "--skdp-path" and i + 1 < len(sys.argv):
            path = sys.argv[i + 1]
        elif arg.startswith("--skdp-path="):
            path = arg.split("=", 1)[1]
    return Path(path).resolve() if path else Path(__file__).resolve().parents[1]


SKDP_PATH = _skdp_path_from_argv()
sys.path.insert(0, str(SKDP_PATH))

import numpy as np  # noqa: E402
from _dev_tables import dev_tables, numeric_matrix  # noqa: E402
from _report import make_parser, markdown_table, output_dir, redraw, write_report  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.metrics import average_precision_score, roc_auc_score  # noqa: E402
from sklearn.model_selection import StratifiedShuffleSplit  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler, label_binarize  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

import skdp  # noqa: E402
from skdp.decision_list import (  # noqa: E402
    DPDecisionListClassifier,
    GreedyDecisionListClassifier,
)
from skdp.preprocessing import PublicBoundsBinarizer  # noqa: E402

EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
QUICK_EPSILONS = (1.0, 4.0)
DELTA = 1e-6
HERE = Path(__file__).resolve().parent
SIDE = {"dpl": os.environ.get("SKDP_DIFFPRIVLIB_PYTHON", "/tmp/dpl/bin/python"),
        "ebm": os.environ.get("SKDP_EBM_PYTHON", "/tmp/ebm/bin/python")}
M_BIN = "skdp binarizer → DP list"
M_BOUNDS = "skdp DP list bounds="
M_DPL = "diffprivlib best"
M_EBM = "DP-EBM (interpret)"
M_LR = "LogisticRegression (non-private)"
M_TREE = "DecisionTree depth 6 (non-private)"
M_GREEDY = "greedy list on bits (non-private)"
M_GREEDY_BOUNDS = "greedy list bounds= (non-private)"
HAS_BOUNDS = "bounds" in DPDecisionListClassifier().get_params()
# The non-private list on the private list's own cut grid (like with like), when it has one.
HAS_GREEDY_BOUNDS = "bounds" in GreedyDecisionListClassifier().get_params()


# ------------------------------------------------------------------ data preparation
def public_fill(X, lower, missing):
    """NaN → the column's public lower bound, plus a 0/1 "was missing" column for every
    column documented as possibly missing (always added, so no data decides the shape;
    sklearn's ``MissingIndicator(features="missing-only")`` would release which columns
    had NaN, and ``SimpleImputer(strategy="median")`` a median)."""
    filled = np.where(np.isnan(X), lower, X)
    flags = np.isnan(X[:, missing]).astype(float)
    return np.hstack([filled, flags])


def prepare(table):
    X, lower, upper, missing, names = numeric_matrix(table)
    k = int(missing.sum())
    filled = public_fill(X, lower, missing)
    lo = np.concatenate([lower, np.zeros(k)])
    hi = np.concatenate([upper, np.ones(k)])
    scaled = np.clip((filled - lo) / (hi - lo), 0.0, 1.0)
    return {"raw": X, "lower": lower, "upper": upper, "filled": filled, "lo": lo, "hi": hi,
            "scaled": scaled, "names": names}


def splits(y, n_seeds):
    out = []
    for seed in range(n_seeds):
        sss = StratifiedShuffleSplit(1, test_size=0.3, random_state=seed)
        tr, te = next(sss.split(np.zeros(len(y)), y))
        out.append((seed, tr, te))
    return out


# ------------------------------------------------------------------ metrics
def scores(y_true, proba, classes):
    """ROC AUC, average precision, accuracy from class-probability columns."""
    proba = np.asarray(proba, dtype=float)
    pred = np.asarray(classes)[np.argmax(proba, axis=1)]
    acc = float(np.mean(pred == y_true))
    if len(classes) == 2:
        auc = roc_auc_score(y_true, proba[:, 1])
        ap = average_precision_score(y_true, proba[:, 1])
    else:
        onehot = label_binarize(y_true, classes=list(classes))
        auc = roc_auc_score(onehot, proba, average="macro")
        ap = average_precision_score(onehot, proba, average="macro")
    return {"auc": float(auc), "ap": float(ap), "acc": acc}


def _proba_in_class_order(model, X, classes):
    proba = np.asarray(model.predict_proba(X), dtype=float)
    full = np.zeros((X.shape[0], len(classes)))
    for j, c in enumerate(model.classes_):
        full[:, list(classes).index(c)] = proba[:, j]
    return full


# ------------------------------------------------------------------ skdp + references
def skdp_models(prep, classes, eps, seed):
    """The skdp candidates at ``eps`` with defaults (only ε, δ, classes, public bounds)."""
    common = {"epsilon": eps, "delta": DELTA, "classes": list(classes),
              "random_state": 1000 * seed + 7}
    bounds_bin = np.column_stack([prep["lo"], prep["hi"]])
    out = {M_BIN: ("filled", lambda: make_pipeline(
        PublicBoundsBinarizer(bounds=bounds_bin), DPDecisionListClassifier(**common)))}
    if HAS_BOUNDS:
        out[M_BOUNDS] = ("raw", lambda: DPDecisionListClassifier(
            bounds=(prep["lower"], prep["upper"]), **common))
    return out


def reference_models(prep):
    bounds_bin = np.column_stack([prep["lo"], prep["hi"]])
    return {
        M_LR: ("filled", lambda: make_pipeline(StandardScaler(),
                                               LogisticRegression(max_iter=2000))),
        M_TREE: ("filled", lambda: DecisionTreeClassifier(max_depth=6, random_state=0)),
        M_GREEDY: ("filled", lambda: make_pipeline(PublicBoundsBinarizer(bounds=bounds_bin),
                                                   GreedyDecisionListClassifier())),
        **({M_GREEDY_BOUNDS: ("raw", lambda: GreedyDecisionListClassifier(
            bounds=(prep["lower"], prep["upper"])))} if HAS_GREEDY_BOUNDS else {}),
    }


def _warning_text(w):
    text = str(w.message)
    return None if "random_state is set" in text else f"{w.category.__name__}: {text[:160]}"


def fit_score(make, X, y, tr, te, classes, fit_warnings):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        try:
            model = make().fit(X[tr], y[tr])
        except Exception as exc:  # a method failing on a table is a result to report
            return {"error": f"{type(exc).__name__}: {str(exc)[:160]}"}
        fit_s = time.perf_counter() - t0
    for w in caught:
        text = _warning_text(w)
        if text:
            fit_warnings.add(text)
    res = scores(y[te], _proba_in_class_order(model, X[te], classes), classes)
    res["fit_s"] = fit_s
    final = model[-1] if hasattr(model, "steps") else model
    if hasattr(final, "rules_"):
        res["n_rules"] = len(final.rules_)
    return res


# ------------------------------------------------------------------ side virtualenvs
def run_side(kind, prep, y, classes, split_list, epsilons, cache_dir, forest=True):
    """{model: {eps: [per-split proba or error]}}, versions — cached on the inputs' hash."""
    python = SIDE[kind]
    X = prep["scaled"]
    digest = hashlib.sha256()
    for part in (X, y, np.array(epsilons), *(te for _, _, te in split_list)):
        digest.update(np.ascontiguousarray(part).tobytes())
    digest.update(f"{kind}|{forest}|{DELTA}|{[s for s, _, _ in split_list]}".encode())
    cache = Path(cache_dir) / f"{kind}-{digest.hexdigest()[:20]}.json"
    if cache.exists():
        out = json.loads(cache.read_text())
    elif not Path(python).exists():
        return None, f"{kind}: no interpreter at {python} (not run)"
    else:
        with tempfile.TemporaryDirectory() as tmp:
            inp, outp = Path(tmp) / "in.npz", Path(tmp) / "out.json"
            train = np.empty(len(split_list), dtype=object)
            test = np.empty(len(split_list), dtype=object)
            for i, (_, tr, te) in enumerate(split_list):
                train[i], test[i] = tr, te
            np.savez(inp, X=X, y=y, lower=np.zeros(X.shape[1]), upper=np.ones(X.shape[1]),
                     classes=np.asarray(classes), delta=DELTA, forest=forest,
                     train=train, test=test, eps=np.array(epsilons),
                     seeds=np.array([1000 * s + 7 for s, _, _ in split_list]))
            proc = subprocess.run(["nice", python, str(HERE / "_side_models.py"), kind,
                                   str(inp), str(outp)], capture_output=True, text=True,
                                  timeout=3600)
            if proc.returncode != 0:
                return None, f"{kind} failed: {proc.stderr.strip().splitlines()[-1:]}"
            out = json.loads(outp.read_text())
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(out))
    results = {}
    for key, value in out["result"].items():
        model, eps, _ = key.split("|")
        results.setdefault(model, {}).setdefault(float(eps), []).append(value)
    return results, out["versions"]


def side_scores(side, y, classes, split_list):
    """Per-model, per-ε lists of score dicts (or an error string)."""
    out = {}
    for model, per_eps in side.items():
        for eps, probas in per_eps.items():
            cell = []
            for (_, _, te), proba in zip(split_list, probas, strict=True):
                cell.append({"error": proba} if isinstance(proba, str)
                            else scores(y[te], proba, classes))
            out.setdefault(model, {})[eps] = cell
    return out


# ------------------------------------------------------------------ one table
def run_table(table, n_seeds, epsilons, cache_dir, use_side):
    prep = prepare(table)
    y, classes = table.y, table.classes
    split_list = splits(y, n_seeds)
    cells = {}  # (method, eps or None) -> list of score dicts
    fit_warnings = {}
    t0 = time.perf_counter()
    for seed, tr, te in split_list:
        for eps in epsilons:
            for m, (which, make) in skdp_models(prep, classes, eps, seed).items():
                cells.setdefault((m, eps), []).append(
                    fit_score(make, prep[which], y, tr, te, classes,
                              fit_warnings.setdefault(m, set())))
        for m, (which, make) in reference_models(prep).items():
            cells.setdefault((m, None), []).append(
                fit_score(make, prep[which], y, tr, te, classes, set()))
    print(f"  {table.name}: skdp + references {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    notes = []
    if use_side:
        binary = len(classes) == 2
        for kind in ("dpl", "ebm"):
            if kind == "ebm" and not binary:
                notes.append(f"{table.name}: DP-EBM not run (multiclass is refused by "
                             "interpret's DP-EBM)")
                continue
            t1 = time.perf_counter()
            side, versions = run_side(kind, prep, y, classes, split_list, epsilons, cache_dir,
                                      forest=prep["scaled"].shape[1] <= 100)
            if side is None:
                notes.append(versions)
                continue
            notes.append(", ".join(f"{k} {v}" for k, v in versions.items())
                         + f" ({kind} side virtualenv)")
            per_model = side_scores(side, y, classes, split_list)
            if kind == "ebm":
                for eps, cell in per_model["DP-EBM"].items():
                    cells[(M_EBM, eps)] = cell
            else:
                for model, per_eps in per_model.items():
                    for eps, cell in per_eps.items():
                        cells[(f"diffprivlib {model}", eps)] = cell
                for eps in epsilons:
                    best = max(per_model, key=lambda k, e=eps: _mean(per_model[k][e], "auc"))
                    cells[(M_DPL, eps)] = [dict(c, pick=best) for c in per_model[best][eps]]
            print(f"  {table.name}: {kind} {time.perf_counter() - t1:.0f} s", file=sys.stderr)
    return cells, fit_warnings, notes


def _mean(cell, metric):
    vals = [c[metric] for c in cell if metric in c]
    return float(np.mean(vals)) if vals else float("nan")


def _sd(cell, metric):
    vals = [c[metric] for c in cell if metric in c]
    return float(np.std(vals)) if vals else float("nan")


# ------------------------------------------------------------------ report
ORDER = [M_BIN, M_BOUNDS, M_DPL, M_EBM, "diffprivlib LogisticRegression",
         "diffprivlib GaussianNB", "diffprivlib RandomForest", M_LR, M_TREE, M_GREEDY,
         M_GREEDY_BOUNDS]


def long_rows(all_cells, table_info):
    rows = []
    for name, cells in all_cells.items():
        for (m, eps), cell in sorted(cells.items(), key=lambda kv: (
                ORDER.index(kv[0][0]) if kv[0][0] in ORDER else 99, kv[0][1] or 0)):
            errors = sorted({c["error"] for c in cell if "error" in c})
            row = {"table": name, **table_info[name], "method": m,
                   "epsilon": "" if eps is None else eps, "n_seeds": len(cell)}
            for metric in ("auc", "ap", "acc", "fit_s", "n_rules"):
                row[f"{metric}_mean"] = _mean(cell, metric)
                row[f"{metric}_sd"] = _sd(cell, metric)
            picks = sorted({c["pick"] for c in cell if "pick" in c})
            row["note"] = "; ".join(errors + [f"picked {p}" for p in picks])
            rows.append(row)
    return rows


def wide_rows(rows, metric, epsilons):
    out, index = [], {}
    for r in rows:
        key = (r["table"], r["method"])
        if key not in index:
            index[key] = {"table": r["table"], "method": r["method"]}
            out.append(index[key])
        v = r[f"{metric}_mean"]
        text = "—" if np.isnan(v) else f"{v:.1f}" if metric == "n_rules" else f"{v:.3f}"
        if r["method"] == M_DPL and r["note"]:
            text += f" ({r['note'].removeprefix('picked ')[:2]})"
        col = "non-private" if r["epsilon"] == "" else f"eps={r['epsilon']:g}"
        index[key][col] = text
    return out


def wide_columns(epsilons):
    return {"table": "table", "method": "method",
            **{f"eps={e:g}": f"ε={e:g}" for e in epsilons}, "non-private": "non-private"}


# (method, legend label, line style, colour); the non-private ones are dashed lines.
FIGURE_SERIES = (
    (M_BOUNDS, "skdp DP list, bounds= (raw columns)", "-s", "tab:orange"),
    (M_BIN, "skdp binarizer → DP list", "-o", "tab:red"),
    (M_DPL, "diffprivlib, best model per ε", "-^", "tab:blue"),
    (M_EBM, "DP-EBM (InterpretML)", "-D", "tab:green"),
    (M_LR, "logistic regression (not private)", ":", "grey"),
    (M_GREEDY, "greedy list on bits (not private)", "--", "black"),
)


def _number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def draw_figure(rows, path):
    """Test ROC AUC against ε, one panel per table, from the long rows (or the CSV)."""
    import _plot

    tables = list(dict.fromkeys(r["table"] for r in rows))
    epsilons = sorted({e for r in rows if np.isfinite(e := _number(r["epsilon"]))})
    with _plot.figure(path, len(tables), ncols=3, panel_height=2.0) as (fig, axes):
        for ax, name in zip(axes, tables, strict=True):
            mine = [r for r in rows if r["table"] == name]
            for method, label, style, color in FIGURE_SERIES:
                pts = sorted((_number(r["epsilon"]), _number(r["auc_mean"]))
                             for r in mine if r["method"] == method)
                if not pts:
                    continue
                if np.isfinite(pts[0][0]):
                    ax.plot(*zip(*pts, strict=True), style, color=color, label=label)
                else:
                    ax.axhline(pts[0][1], ls=style, lw=1.3, color=color, label=label)
            _plot.epsilon_axis(ax, epsilons)
            ax.set_title(name)
        for ax in axes[::3]:
            ax.set_ylabel("test ROC AUC")
        _plot.legend_below(fig, axes, ncol=2)


def plot_auc(rows, epsilons):
    return lambda path: draw_figure(rows, path)


def summary_lines(rows, eps=1.0):
    """Per table at ``eps``: skdp (both paths) vs diffprivlib best vs DP-EBM vs LR, AUC/acc."""
    def get(name, m, e):
        for r in rows:
            if r["table"] == name and r["method"] == m and (r["epsilon"] == e):
                return r
        return None

    lines = []
    for name in dict.fromkeys(r["table"] for r in rows):
        parts = []
        for label, m, e in (("bin", M_BIN, eps), ("bounds=", M_BOUNDS, eps),
                            ("dpl", M_DPL, eps), ("EBM", M_EBM, eps), ("LR", M_LR, "")):
            r = get(name, m, e)
            if r is None:
                continue
            if np.isnan(r["auc_mean"]):
                parts.append(f"{label} error")
                continue
            parts.append(f"{label} {r['auc_mean']:.3f}/{r['acc_mean']:.3f}")
        lines.append(f"{name}: " + ", ".join(parts))
    return lines


def criteria_lines(rows, info):
    """Issue 27's "done means" at ε = 1 (and 4 for digits), per skdp method: PASS/FAIL."""
    def val(name, m, e, metric):
        for r in rows:
            if r["table"] == name and r["method"] == m and r["epsilon"] == e:
                return r[f"{metric}_mean"]
        return float("nan")

    tables = list(dict.fromkeys(r["table"] for r in rows))
    binary = [t for t in tables if info[t]["classes"] == 2]
    lines, info_lines = [], []
    for m in (M_BIN, M_BOUNDS):
        if not any(r["method"] == m for r in rows):
            continue
        checks = []
        for t in binary:
            own, dpl = val(t, m, 1.0, "auc"), val(t, M_DPL, 1.0, "auc")
            if not np.isnan(dpl):
                checks.append((own >= dpl - 0.02, f"{t}: AUC {own:.3f} ≥ diffprivlib "
                                                  f"{dpl:.3f} − 0.02"))
            lr = val(t, M_LR, "", "auc")
            if lr >= 0.75:
                checks.append((own > 0.55, f"{t}: not constant (AUC {own:.3f} > 0.55; LR "
                                           f"{lr:.3f})"))
            pos = info[t]["positive_rate"]
            if pos and float(pos) <= 0.10 and lr >= 0.9:
                checks.append((own >= 0.85, f"{t}: imbalanced AUC {own:.3f} ≥ 0.85"))
        for t in tables:
            low, high = val(t, m, min(EPSILONS), "acc"), val(t, m, max(EPSILONS), "acc")
            ref = val(t, M_GREEDY, "", "acc")
            if not np.isnan(low + high) and ref > low + 0.01:
                checks.append((high > low, f"{t}: accuracy rises with ε ({low:.3f} at "
                                           f"{min(EPSILONS):g} → {high:.3f} at "
                                           f"{max(EPSILONS):g}; non-private list {ref:.3f})"))
        means = {k: np.nanmean([val(t, k, 1.0, "auc") for t in binary])
                 for k in (m, M_DPL, M_EBM)}
        if not np.isnan(means[M_DPL]):
            checks.append((means[m] > means[M_DPL], f"mean binary AUC {means[m]:.3f} > "
                                                    f"diffprivlib's {means[M_DPL]:.3f}"))
        if not np.isnan(means[M_EBM]):
            checks.append((means[m] >= means[M_EBM] - 0.03, f"mean binary AUC "
                           f"{means[m]:.3f} ≥ DP-EBM's {means[M_EBM]:.3f} − 0.03"))
        if "planted-5-rules" in tables:
            own = val("planted-5-rules", m, 1.0, "acc")
            ref = val("planted-5-rules", M_GREEDY, "", "acc")
            checks.append((own >= ref - 0.02, f"planted: accuracy {own:.3f} ≥ non-private "
                                              f"list {ref:.3f} − 0.02"))
            same = val("planted-5-rules", M_GREEDY_BOUNDS, "", "acc")
            if m == M_BOUNDS and not np.isnan(same):
                # information, not one of the targets (its reference is the list on bits)
                info_lines.append(f"(information) planted: `bounds=` accuracy {own:.3f} vs "
                                  f"{same:.3f} for the non-private list on the same cut grid")
        if "breast_cancer" in tables:
            own = val("breast_cancer", m, 1.0, "acc")
            checks.append((own >= 0.90, f"breast_cancer: accuracy {own:.3f} ≥ 0.90"))
        if "digits" in tables and not np.isnan(val("digits", m, 4.0, "acc")):
            own = val("digits", m, 4.0, "acc")
            checks.append((own > 0.5, f"digits: accuracy {own:.3f} > 0.5 at ε = 4"))
        # a check whose numbers were not measured in this run (a subset of ε) is left out
        checks = [(ok, text) for ok, text in checks if "nan" not in text]
        passed = sum(ok for ok, _ in checks)
        lines.append(f"**{m}**: {passed} of {len(checks)} pass. " + "; ".join(
            f"{'PASS' if ok else 'FAIL'} {text}" for ok, text in checks))
    return lines + info_lines


def rst_table(rows, info, eps=1.0):
    """The ε = 1 comparison as an RST list-table, included by docs/user_guide/choosing.rst."""
    private = [M_BOUNDS, M_BIN, M_DPL, M_EBM]
    short = {M_BOUNDS: "list, bounds=", M_BIN: "list, binarizer", M_DPL: "diffprivlib best",
             M_EBM: "DP-EBM"}
    present = [m for m in private if any(r["method"] == m for r in rows)]
    head = ["Table", *[short[m] for m in present], "non-private LR", "best private"]

    def get(name, m, e):
        for r in rows:
            if r["table"] == name and r["method"] == m and r["epsilon"] == e:
                return r
        return None

    lines = [".. list-table::", "   :header-rows: 1", ""]
    lines += [f"   {'*' if i == 0 else ' '} - {h}" for i, h in enumerate(head)]
    for name in dict.fromkeys(r["table"] for r in rows):
        cells, best = [], {}
        for m in present:
            r = get(name, m, eps)
            if r is None or np.isnan(r["auc_mean"]):
                cells.append("—")
                continue
            cells.append(f"{r['auc_mean']:.3f} / {r['acc_mean']:.3f}")
            best[m] = r
        lr = get(name, M_LR, "")
        cells.append(f"{lr['auc_mean']:.3f} / {lr['acc_mean']:.3f}" if lr else "—")
        if best:
            by_auc = max(best, key=lambda m: best[m]["auc_mean"])
            by_acc = max(best, key=lambda m: best[m]["acc_mean"])
            cells.append(f"AUC: {short[by_auc]}; accuracy: {short[by_acc]}")
        else:
            cells.append("—")
        rows_text = f"{name} ({info[name]['rows']:,} rows"
        rows_text += f", {info[name]['classes']} classes)" if info[name]["classes"] > 2 else ")"
        lines.append(f"   * - {rows_text}")
        lines += [f"     - {c}" for c in cells]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ speed
def speed_rows(quick):
    n, d = (20_000, 100) if quick else (100_000, 100)
    rng = np.random.default_rng(0)
    X = rng.random((n, d))
    y = ((X[:, 0] > 0.3) & (X[:, 1] < 0.7)).astype(int)
    flip = rng.random(n) < 0.05
    y[flip] = 1 - y[flip]
    bounds = np.column_stack([np.zeros(d), np.ones(d)])
    models = {
        "DecisionTree max_depth=10": lambda: DecisionTreeClassifier(max_depth=10,
                                                                    random_state=0),
        M_BIN + " (ε=1)": lambda: make_pipeline(
            PublicBoundsBinarizer(bounds=bounds),
            DPDecisionListClassifier(epsilon=1.0, delta=DELTA, classes=[0, 1])),
    }
    if HAS_BOUNDS:
        for eps in (1.0, 8.0):
            models[M_BOUNDS + f" (ε={eps:g})"] = lambda e=eps: DPDecisionListClassifier(
                epsilon=e, delta=DELTA, classes=[0, 1], bounds=(np.zeros(d), np.ones(d)))
    times = {}
    for m, make in models.items():
        best = np.inf
        for _ in range(1 if quick else 2):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                make().fit(X, y)
                best = min(best, time.perf_counter() - t0)
        times[m] = best
    ref = times["DecisionTree max_depth=10"]
    return [{"data": f"{n:.0e} x {d} numeric", "method": m, "fit_s": round(t, 3),
             "vs_tree_depth10": round(t / ref, 3)} for m, t in times.items()]


# ------------------------------------------------------------------ main
def skdp_version_note():
    label = os.environ.get("SKDP_LABEL")  # e.g. "branch rulelist at efbac3e" for an export
    if label:
        return f"skdp {skdp.__version__} from {label}; bounds= path: {HAS_BOUNDS}"
    try:
        commit = subprocess.run(["git", "-C", str(SKDP_PATH), "log", "-1", "--format=%h %s"],
                                capture_output=True, text=True).stdout.strip()[:60]
        dirty = subprocess.run(["git", "-C", str(SKDP_PATH), "status", "--porcelain", "skdp"],
                               capture_output=True, text=True).stdout.strip()
        if dirty:
            commit += f" + uncommitted changes in {len(dirty.splitlines())} skdp files"
    except OSError:
        commit = "?"
    return f"skdp {skdp.__version__} from {SKDP_PATH} ({commit}); bounds= path: {HAS_BOUNDS}"


def main():
    parser = make_parser(__doc__.splitlines()[0], plot_only=True)
    parser.add_argument("--skdp-path", default=None,
                        help="import skdp from this tree (also $SKDP_PATH)")
    parser.add_argument("--seeds", type=int, default=None, help="splits (default 5; quick 2)")
    parser.add_argument("--epsilons", type=float, nargs="+", default=None)
    parser.add_argument("--tables", nargs="+", default=None, help="subset of table names")
    parser.add_argument("--no-side", action="store_true", help="skip diffprivlib and DP-EBM")
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir())
                                              / "skdp-rule-lists-real-cache"))
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--speed-only", action="store_true",
                        help="only the fit-time case (prints it; writes the speed CSV)")
    parser.add_argument("--notes", default=None,
                        help="append the ε = 1 summary to this file (e.g. coord notes)")
    args = parser.parse_args()
    out = output_dir(args)
    if args.plot_only:
        return redraw("rule_lists_real", draw_figure, out)
    if args.speed_only:
        return write_speed(out, speed_rows(args.quick))
    n_seeds = args.seeds or (2 if args.quick else 5)
    epsilons = tuple(args.epsilons or (QUICK_EPSILONS if args.quick else EPSILONS))
    t0 = time.perf_counter()
    all_cells, info, notes, fit_warnings = {}, {}, [skdp_version_note()], {}
    for table in dev_tables(quick=args.quick, seed=args.seed, only=args.tables):
        X, *_ = numeric_matrix(table)
        pos = f"{np.mean(table.y == table.classes[-1]):.3f}" if len(table.classes) == 2 else ""
        info[table.name] = {"rows": X.shape[0], "columns": X.shape[1],
                            "classes": len(table.classes), "positive_rate": pos}
        cells, warned, side_notes = run_table(table, n_seeds, epsilons, args.cache,
                                              not args.no_side)
        all_cells[table.name] = cells
        fit_warnings[table.name] = warned
        notes += [n for n in side_notes if n not in notes]
        notes.append(f"{table.name}: {X.shape[0]} rows × {X.shape[1]} columns, "
                     f"{len(table.classes)} classes{', positives ' + pos if pos else ''}; "
                     f"bounds: {table.source}")
    rows = long_rows(all_cells, info)
    for name, warned in fit_warnings.items():
        for m, texts in warned.items():
            # one line per kind of warning (the figures in it vary from fit to fit)
            kinds = {}
            for text in sorted(texts):
                kinds.setdefault(re.sub(r"[0-9.]+", "#", text), []).append(text)
            for same in kinds.values():
                more = f" (and {len(same) - 1} more like it)" if len(same) > 1 else ""
                notes.append(f"warning at fit ({name}, {m}): {same[0]}{more}")
    notes += [
        f"mean over {n_seeds} stratified 70/30 splits; δ = {DELTA:g} for every private "
        "model; the diffprivlib cell is the best of its LR / GaussianNB / RandomForest per "
        "table and ε by mean test ROC AUC (optimistic for it; (Lo)/(Ga)/(Ra) = the pick); "
        "each of the three is in the CSV",
        "missing values: filled with the column's public lower bound + a 0/1 flag column for "
        "each column documented as possibly missing (all methods but skdp bounds=, which "
        "gets the NaN)",
    ]
    cols = wide_columns(epsilons)
    write_report("rule_lists_real", wide_rows(rows, "auc", epsilons), cols, out_dir=out,
                 title="Private rule lists on real-valued tables: test ROC AUC vs ε",
                 notes=notes, plot=plot_auc(rows, epsilons))
    extra = []
    for metric, title in (("ap", "average precision"), ("acc", "accuracy")):
        extra.append(f"\n## Test {title} vs ε\n\n"
                     + markdown_table(wide_rows(rows, metric, epsilons), cols) + "\n")
    listed = [r for r in rows if not np.isnan(r["n_rules_mean"])]
    extra.append("\n## Rules in the fitted list (mean over splits)\n\n"
                 + markdown_table(wide_rows(listed, "n_rules", epsilons), cols) + "\n")
    extra.append("\n## Summary at ε = 1 (ROC AUC / accuracy)\n\n"
                 + "\n".join(f"- {line}" for line in summary_lines(rows)) + "\n")
    criteria = criteria_lines(rows, info)
    extra.append("\n## Issue 27's targets at ε = 1 (ROC AUC and accuracy from the tables "
                 "above)\n\n" + "\n".join(f"- {line}" for line in criteria) + "\n")
    if not args.skip_speed:
        extra.append(write_speed(out, speed_rows(args.quick)))
    (out / "rule_lists_real.rst").write_text(rst_table(rows, info), encoding="utf-8")
    text = "".join(extra)
    print(text)
    with (out / "rule_lists_real.md").open("a", encoding="utf-8") as fh:
        fh.write(text)
    # the CSV holds the long rows (every method, ε and metric), not the wide AUC table
    write_csv(out / "rule_lists_real.csv", rows)
    if args.notes:
        stamp = time.strftime("%H:%M", time.gmtime())
        with open(args.notes, "a", encoding="utf-8") as fh:
            fh.write(f"- rulebench ({stamp}): rule_lists_real.py vs {skdp_version_note()}; "
                     f"ε=1 test ROC AUC/accuracy, mean of {n_seeds} splits — "
                     + "; ".join(summary_lines(rows)) + ". Targets: "
                     + " ".join(criteria) + "\n")
    print(f"total {time.perf_counter() - t0:.0f} s", file=sys.stderr)


def write_speed(out, speed):
    """Write ``rule_lists_real_speed.csv``; return (and print) its markdown section."""
    scols = {"data": "data", "method": "method", "fit_s": "fit (s)",
             "vs_tree_depth10": "× tree(depth 10)"}
    write_csv(out / "rule_lists_real_speed.csv", speed)
    text = ("\n## Fit time (dense numeric, best of runs; the machine is shared)\n\n"
            + markdown_table(speed, scols) + "\n")
    print(text)
    return text


def write_csv(path, rows):
    import csv

    keys = list(dict.fromkeys(k for r in rows for k in r))
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})


if __name__ == "__main__":
    main()
