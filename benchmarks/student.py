"""Private labels for a student model: student vs the predictor answering vs diffprivlib.

Issue 32's "Done means" row for the label service. A private labelled sample (a noisy
halfspace in [-1, 1]^5: P(y = 1 | x) = σ(12·⟨w, x⟩), |w| = 1, so the Bayes accuracy is
≈ 0.93), 5 000 public unlabeled rows from the same distribution, and 5 000 test rows.
At ε ∈ {1, 4} (δ = 10⁻⁶) and three private sample sizes (5 000, 20 000, 100 000), for
each predictor (Yan's :class:`~skdp.prediction.PrivatePredictor`, halfspace teachers; the
:class:`~skdp.prediction.SubsampleAggregatePredictor` baseline), each fitted with
``n_queries=5000`` and its defaults:

* **student**: :func:`skdp.prediction.label_public` labels the 5 000 public rows
  (charged to the predictor's (ε, δ)), then a plain scikit-learn
  ``LogisticRegression`` is trained on them (post-processing) and scored on the test
  rows — as many test queries as one likes, at no further cost;
* **direct**: a second predictor, fitted alike, answers the 5 000 test rows itself
  (those answers are its whole (ε, δ));
* **diffprivlib**: ``diffprivlib.models.LogisticRegression(epsilon=ε,
  data_norm=√5)`` trained on the private rows (side virtualenv,
  ``$SKDP_DIFFPRIVLIB_PYTHON``, default ``/tmp/dpl/bin/python``, through
  ``_side_models.py``; ε-DP, so δ = 0 — the skdp rows use δ = 10⁻⁶);
* the non-private ``LogisticRegression`` on the private rows, for reference.

Test accuracy, mean ± standard deviation over ``--splits`` seeds (default 5), plus the
accuracy of the public labels themselves, the ε the predictor spent and Yan's hard
queries. Run ``PYTHONPATH=. python benchmarks/student.py`` (about 2 min on 2 cores) or
``--quick`` (1 split, one size).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from functools import partial
from pathlib import Path

import numpy as np
from _report import make_parser, output_dir, rng_for, write_report
from sklearn.linear_model import LogisticRegression

from skdp.prediction import (
    PrivatePredictor,
    QueryBudgetExhaustedError,
    SubsampleAggregatePredictor,
    label_public,
)

NAME = "student"
HERE = Path(__file__).resolve().parent
DPL_PYTHON = os.environ.get("SKDP_DIFFPRIVLIB_PYTHON", "/tmp/dpl/bin/python")
D, N_PUBLIC, N_TEST, DELTA, SCALE = 5, 5_000, 5_000, 1e-6, 12.0
EPSILONS = (1.0, 4.0)
PREDICTORS = {"Yan (PrivatePredictor)": PrivatePredictor,
              "subsample-and-aggregate": SubsampleAggregatePredictor}


def make_data(rng, n):
    """Private (X, y), public X (and its true labels, for the label accuracy), test."""
    w = rng.normal(size=D)
    w /= np.linalg.norm(w)

    def sample(m):
        X = rng.uniform(-1.0, 1.0, size=(m, D))
        p = 1.0 / (1.0 + np.exp(-SCALE * (X @ w)))
        return X, (rng.random(m) < p).astype(int)

    return sample(n), sample(N_PUBLIC), sample(N_TEST)


def _predictor(cls, eps, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fixed seed's PrivacyWarning
        return cls(epsilon=eps, delta=DELTA, n_queries=N_PUBLIC, classes=[0, 1],
                   random_state=seed)


def _answer(ask, rows):
    """The answers to ``rows``; if the predictor runs out (Yan's cap of hard queries),
    the answers released before it (a prefix: paid, usable)."""
    try:
        return ask(rows)
    except QueryBudgetExhaustedError as exc:
        return np.asarray(exc.answers, dtype=int)


def _fill(answers, n):
    """``answers`` padded to ``n`` rows with their most common label (post-processing
    of released answers: what a user left without answers can do for free)."""
    if answers.size == n:
        return answers
    fill = np.bincount(answers, minlength=2).argmax() if answers.size else 0
    return np.r_[answers, np.full(n - answers.size, fill)]


def skdp_cells(data, eps, seed):
    """Accuracies of the student and of direct answers for each predictor."""
    (X, y), (Xp, yp), (Xt, yt) = data
    out = {}
    for name, cls in PREDICTORS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            teacher = _predictor(cls, eps, seed).fit(X, y)
            start = time.perf_counter()
            labels = _answer(partial(label_public, teacher), Xp)
            seconds = time.perf_counter() - start
            n_labelled = labels.size
            # A constant labelling leaves LR nothing to fit: the student is that constant.
            student = (LogisticRegression().fit(Xp[:n_labelled], labels)
                       if np.unique(labels).size > 1 else None)
            direct = _predictor(cls, eps, seed + 10_000).fit(X, y)
            answers = _answer(direct.predict, Xt)
            n_direct = answers.size
            answers = _fill(answers, N_TEST)
        out[name] = {
            "student": (student.score(Xt, yt) if student is not None
                        else float(np.mean(yt == _fill(labels, 1)[0]))),
            "direct": float(np.mean(answers == yt)),
            "labels": float(np.mean(labels == yp[:n_labelled])),
            "n_labelled": n_labelled, "n_direct": n_direct,
            "spent": teacher.privacy_spent_.epsilon,
            "hard": getattr(teacher, "n_hard_queries_", None),
            "label_s": seconds,
        }
    return out


def diffprivlib_cells(datasets, seeds):
    """diffprivlib LR test accuracy per (n, ε, split), or (None, reason)."""
    if not Path(DPL_PYTHON).exists():
        return None, f"diffprivlib: no interpreter at {DPL_PYTHON} (not run)"
    result = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n, per_split in datasets.items():
            X = np.concatenate([np.concatenate([d[0][0], d[2][0]]) for d in per_split])
            y = np.concatenate([np.concatenate([d[0][1], d[2][1]]) for d in per_split])
            train = np.empty(len(per_split), dtype=object)
            test = np.empty(len(per_split), dtype=object)
            offset = 0
            for i in range(len(per_split)):
                train[i] = np.arange(offset, offset + n)
                test[i] = np.arange(offset + n, offset + n + N_TEST)
                offset += n + N_TEST
            inp, outp = Path(tmp) / "in.npz", Path(tmp) / "out.json"
            np.savez(inp, X=X, y=y, lower=-np.ones(D), upper=np.ones(D),
                     classes=np.array([0, 1]), delta=DELTA, forest=False, train=train,
                     test=test, eps=np.array(EPSILONS), seeds=np.array(seeds))
            proc = subprocess.run(["nice", DPL_PYTHON, str(HERE / "_side_models.py"), "dpl",
                                   str(inp), str(outp)], capture_output=True, text=True,
                                  timeout=3600)
            if proc.returncode != 0:
                return None, f"diffprivlib failed: {proc.stderr.strip().splitlines()[-1:]}"
            side = json.loads(outp.read_text())
            for key, proba in side["result"].items():
                model, eps, split = key.split("|")
                if model != "LogisticRegression":
                    continue
                yt = per_split[int(split)][2][1]
                acc = (float("nan") if isinstance(proba, str)
                       else float(np.mean(np.argmax(np.asarray(proba), axis=1) == yt)))
                result[(n, float(eps), int(split))] = acc
            version = side["versions"].get("diffprivlib")
    return result, f"diffprivlib {version} (scikit-learn {side['versions']['scikit-learn']})"


def _cell(values):
    values = np.asarray([v for v in values if v is not None], dtype=float)
    if values.size == 0 or np.all(np.isnan(values)):
        return None
    return f"{np.nanmean(values):.3f} ± {np.nanstd(values):.3f}"


def main() -> None:
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=5)
    args = parser.parse_args()
    sizes = (20_000,) if args.quick else (5_000, 20_000, 100_000)
    splits = 1 if args.quick else args.splits
    out = output_dir(args)
    datasets = {n: [make_data(rng_for(args.seed, f"student|{n}|{s}"), n) for s in range(splits)]
                for n in sizes}
    seeds = [1000 * args.seed + s for s in range(splits)]
    dpl, dpl_note = diffprivlib_cells(datasets, seeds)
    rows = []
    for n in sizes:
        for eps in EPSILONS:
            cells = [skdp_cells(datasets[n][s], eps, seeds[s]) for s in range(splits)]
            print(f"n={n} ε={eps:g} done", file=sys.stderr)
            plain = [LogisticRegression().fit(*d[0]).score(*d[2]) for d in datasets[n]]
            row = {"n": n, "epsilon": eps}
            for name in PREDICTORS:
                short = "yan" if name.startswith("Yan") else "sa"
                per = [c[name] for c in cells]
                row[f"{short}_student"] = _cell([p["student"] for p in per])
                row[f"{short}_direct"] = _cell([p["direct"] for p in per])
                row[f"{short}_labels"] = _cell([p["labels"] for p in per])
                row[f"{short}_spent"] = float(np.max([p["spent"] for p in per]))
                if short == "yan":
                    row["yan_hard"] = int(np.max([p["hard"] for p in per]))
                    row["yan_labelled"] = int(np.min([p["n_labelled"] for p in per]))
                    row["yan_answered"] = int(np.min([p["n_direct"] for p in per]))
            row["dpl_lr"] = (None if dpl is None else
                             _cell([dpl.get((n, eps, s)) for s in range(splits)]))
            row["nonprivate_lr"] = _cell(plain)
            rows.append(row)
    columns = {"n": "private rows", "epsilon": "ε",
               "yan_student": "Yan → student LR", "yan_direct": "Yan direct",
               "yan_labels": "Yan label acc.", "yan_hard": "Yan hard queries (max)",
               "yan_labelled": "Yan rows labelled (min)",
               "yan_answered": "Yan test rows answered (min)",
               "sa_student": "S&A → student LR", "sa_direct": "S&A direct",
               "sa_labels": "S&A label acc.", "dpl_lr": "diffprivlib LR",
               "nonprivate_lr": "non-private LR"}
    notes = [
        f"Test accuracy on {N_TEST} rows, mean ± sd over {splits} split(s). Data: "
        f"x ~ U[-1, 1]^{D}, P(y=1|x) = σ({SCALE:g}·⟨w, x⟩), |w| = 1 (Bayes ≈ 0.93).",
        f"Student: LogisticRegression() trained on {N_PUBLIC} public rows labelled by "
        "label_public at the predictor's whole (ε, δ=1e-6); it then answers every test "
        "row for free. Direct: a second predictor of the same kind answers the test rows "
        "(its whole budget). Each predictor: defaults, n_queries=5000. When Yan's "
        "predictor reaches its cap of hard queries inside the set, the student is trained "
        "on the labelled prefix and the direct answers are completed with their most "
        "common label (both free post-processing); the 'rows labelled/answered' columns "
        "show the smallest prefix over the splits.",
        "Max ε spent by a labelling predictor: " + ", ".join(
            f"n={r['n']} ε={r['epsilon']:g}: Yan {r['yan_spent']:.3f}, S&A {r['sa_spent']:.3f}"
            for r in rows) + ".",
        dpl_note + "; LogisticRegression(epsilon=ε, data_norm=√5), trained on the private "
        "rows (ε-DP, δ = 0).",
    ]
    write_report(NAME, rows, columns, out_dir=out,
                 title="Private labels for a student model (PATE pattern)", notes=notes)


if __name__ == "__main__":
    main()
