"""DP-Winnow: where it learns (the ε × margin map), the issue's streams, throughput.

Map (``winnow_map``): ε ∈ {1, 2, 4, 8, 16} × ρ ∈ {1/11, 1/5, 1/3, 1}, d = 100 ±1
features, two target families with exactly that margin: the majority of k = 1/ρ
features (balanced labels) and the OR of k literals, ρ = 1/(2k − 1) (k = 6, 3, 2,
1: imbalanced labels, the constant predictor errs on 2⁻ᵏ of the rows). DP-Winnow
with default parameters (``setting="scheduled"``) and the true ρ; T = 10⁶ rows
and T = 10⁵ (``--quick``: 2·10⁴). Reported per cell: the guard's verdict (``learns``) and
whether it ran the learner or the private constant, cumulative online mistakes at
T/10 and T, the late mistake rate (last 10 % of rows), growth = (mistakes in the
last 10 %)/(mistakes in the first 10 %) (1 = linear, 0 = stopped), and the best
constant in hindsight (min(#pos, #neg): a stronger baseline than any private one).

Streams (``winnow``): the issue's 500-d OR (T = 10⁵, {0, 1} bits of density 0.05,
label = OR of 5, ρ = 1/11, prequential in blocks of 1000) and the d = 100
disjunction x_a ∨ x_b (ρ = 1/3, T = 10⁶; ``--quick`` 2·10⁴), each with Perceptron,
Winnow (η = ρ), DP-Winnow scheduled and DP-Winnow with the sparse-vector
``setting="practical"`` (before this change's default) side by side.

Throughput: d = 1000, blocks of 1000, 10⁶ rows (10 passes over 10⁵), ``partial_fit``
rows/s relative to Perceptron, BLAS pinned to one thread.

skdp learners' mistakes are exact per-row predict-then-update counts
(``_n_mistakes``, private: an evaluation on synthetic data). ``python
benchmarks/winnow.py`` (full, ≈ 10 min) or ``--quick`` (< 1 min).
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import time
import warnings

import numpy as np
from _report import bar_chart, make_parser, output_dir, redraw, rng_for, write_report
from sklearn.linear_model import Perceptron

from skdp.linear import DPWinnowClassifier, WinnowClassifier

EPSILONS = (1.0, 2.0, 4.0, 8.0, 16.0)
MARGIN_KS = {"1/11": (11, 6), "1/5": (5, 3), "1/3": (3, 2), "1": (1, 1)}  # ρ: (maj k, OR k)
DELTA = 1e-6
BLOCK = 10**4


def planted(kind, k, d, n, rng):
    """int8 ±1 features and {0, 1} labels: majority of k features or OR of k literals."""
    X = (rng.integers(0, 2, size=(n, d), dtype=np.int8) * 2 - 1).astype(np.int8)
    cols = rng.choice(d, size=k, replace=False)
    if kind == "majority":
        y = (X[:, cols].sum(axis=1, dtype=np.int32) > 0).astype(int)
    else:
        y = (X[:, cols] > 0).any(axis=1).astype(int)
    return X, y


def feed(clf, X, y, block, checkpoints=()):
    """Prequential run in blocks; returns {row: cumulative mistakes}, seconds."""
    curve, mistakes, start = {}, 0, time.perf_counter()
    skdp_learner = not isinstance(clf, Perceptron)
    for s in range(0, len(y), block):
        Xb, yb = X[s:s + block].astype(np.float64), y[s:s + block]
        if not skdp_learner:
            mistakes += int(np.sum(clf.predict(Xb) != yb)) if s else int(np.sum(yb != 0))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf.partial_fit(Xb, yb, classes=[0, 1])
        if skdp_learner:
            mistakes = clf._n_mistakes  # an evaluation on synthetic data
        stop = min(len(y), s + block)
        if stop in checkpoints or stop == len(y):
            curve[stop] = mistakes
    return curve, time.perf_counter() - start


def dp_winnow(epsilon, rho, horizon, seed, **kw):
    return DPWinnowClassifier(epsilon=epsilon, delta=DELTA, margin=rho, n_rounds=horizon,
                              bounds=(-1, 1), random_state=seed, **kw)


def map_cell(kind, rho_name, epsilon, t, seed):
    k_maj, k_or = MARGIN_KS[rho_name]
    k = k_maj if kind == "majority" else k_or
    rho = 1.0 / k_maj
    X, y = planted(kind, k, 100, t, rng_for(seed, f"winnow/map/{kind}/{rho_name}"))
    tenth = t // 10
    # the first and last tenth must be block boundaries
    clf = dp_winnow(epsilon, rho, t, seed)
    curve, seconds = feed(clf, X, y, tenth, checkpoints=(tenth, t - tenth))
    first, last = curve[tenth], curve[t] - curve[t - tenth]
    const = int(min(y.sum(), len(y) - y.sum()))
    p = clf.parameters_
    return {"stream": kind, "rho": rho_name, "epsilon": epsilon, "T": t,
            "learns": p.learns, "runs": "constant" if clf.constant_fallback_ else "learner",
            "K": p.max_updates, "B": p.window, "m": p.n_samples,
            "m@T/10": first, "m@T": curve[t], "late_rate": round(last / tenth, 4),
            "growth": round(last / max(first, 1), 3), "constant": const,
            "vs_constant": round(curve[t] / max(const, 1), 3), "seconds": round(seconds, 1)}


def map_experiment(seed, quick):
    rows = []
    for t in (2 * 10**4,) if quick else (10**5, 10**6):
        for kind in ("majority", "or"):
            for rho_name in MARGIN_KS:
                for eps in EPSILONS:
                    row = map_cell(kind, rho_name, eps, t, seed)
                    rows.append(row)
                    print(f"  map T={t} {kind} ρ={rho_name} ε={eps:g}: {row['runs']} late="
                          f"{row['late_rate']} vs constant ×{row['vs_constant']}", flush=True)
    return rows


def stream_experiment(seed, quick):
    rows = []
    cases = [("issue's 500-d OR of 5", 500, 10**5 if not quick else 2 * 10**4, 1 / 11),
             ("d=100 x_a ∨ x_b", 100, 10**6 if not quick else 2 * 10**4, 1 / 3)]
    for name, d, t, rho in cases:
        rng = rng_for(seed, f"winnow/stream/{d}")
        if d == 500:
            X = (rng.random((t, d)) < 0.05).astype(np.int8)
            y = X[:, rng.choice(d, 5, replace=False)].any(axis=1).astype(int)
        else:
            X, y = planted("or", 2, d, t, rng)
        learners = {"Perceptron": Perceptron(random_state=seed),
                    "Winnow (η = ρ)": WinnowClassifier(learning_rate=rho, bounds=(-1, 1))}
        for eps in (1.0, 4.0, 8.0):
            learners[f"DP-Winnow ε={eps:g}"] = dp_winnow(eps, rho, t, seed)
            if eps != 1.0 or d == 500:
                learners[f"DP-Winnow sparse vector ε={eps:g}"] = dp_winnow(
                    eps, rho, t, seed, setting="practical")
        const = int(min(y.sum(), len(y) - y.sum()))
        for lname, clf in learners.items():
            curve, seconds = feed(clf, X, y, 1000, checkpoints=(t - t // 10,))
            late = (curve[t] - curve[t - t // 10]) / (t // 10)
            row = {"stream": name, "T": t, "learner": lname, "mistakes": curve[t],
                   "late_rate": round(late, 4), "constant": const,
                   "vs_constant": round(curve[t] / const, 3), "seconds": round(seconds, 1)}
            if isinstance(clf, DPWinnowClassifier):
                row["runs"] = "constant" if getattr(clf, "constant_fallback_", False) \
                    else "learner"
            rows.append(row)
            print(f"  {name} {lname}: {curve[t]} mistakes (constant {const}), late "
                  f"{late:.4f}, {seconds:.1f} s", flush=True)
    return rows


def throughput(seed, quick):
    d, block = 1000, 1000
    n_stream, passes = (2 * 10**4, 1) if quick else (10**5, 10)
    X, y = planted("or", 2, d, n_stream, rng_for(seed, "winnow/speed"))
    Xf = X.astype(np.float64)
    total = n_stream * passes
    cases = {
        "Perceptron": lambda: Perceptron(random_state=0),
        "Winnow": lambda: WinnowClassifier(learning_rate=1 / 3, bounds=(-1, 1)),
        "DP-Winnow ε=1 (scheduled)": lambda: dp_winnow(1.0, 1 / 3, total, 0),
        "DP-Winnow ε=4 (scheduled)": lambda: dp_winnow(4.0, 1 / 3, total, 0),
        "DP-Winnow ε=1 (sparse vector)": lambda: dp_winnow(1.0, 1 / 3, total, 0,
                                                           setting="practical"),
    }
    rows, base = [], None
    for name, make in cases.items():
        clf = make()
        # the sparse-vector learner is ~10× slower: time it on 2 passes (same horizon)
        n_passes = min(passes, 2) if "sparse" in name else passes
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            for _ in range(n_passes):
                for s in range(0, n_stream, block):
                    clf.partial_fit(Xf[s:s + block], y[s:s + block], classes=[0, 1])
            seconds = time.perf_counter() - start
        rate = n_stream * n_passes / seconds
        base = base or rate
        rows.append({"stream": "throughput d=1000", "learner": name, "T": n_stream * n_passes,
                     "seconds": round(seconds, 2), "rows_per_s": round(rate),
                     "ratio_vs_perceptron": round(rate / base, 3)})
        print(f"  throughput {name}: {rate:,.0f} rows/s ({rate / base:.2f}×)", flush=True)
    return rows


def plot_map(path, rows):
    """ε × margin map at the longest T, one panel per target kind, from the rows (or the
    CSV): colour log₂(mistakes ÷ best constant), text L/C (learner ran / private
    constant) and the late mistake rate."""
    import _plot

    t_max = max(float(r["T"]) for r in rows)
    rows = [r for r in rows if float(r["T"]) == t_max]
    cell = {(r["stream"], r["rho"], float(r["epsilon"])): r for r in rows}
    names = list(MARGIN_KS)
    title = f"DP-Winnow at T = $10^{{{np.log10(t_max):.0f}}}$, d = 100"
    with _plot.figure(path, 2, panel_height=2.9, sharey=True, title=title) as (fig, axes):
        for ax, kind in zip(axes, ("majority", "or"), strict=True):
            grid = np.array([[float(cell[(kind, n, e)]["vs_constant"]) for e in EPSILONS]
                             for n in names])
            im = ax.imshow(np.log2(np.maximum(grid, 1e-3)), cmap="RdYlGn_r", vmin=-6, vmax=1,
                           aspect="auto")
            for i, n in enumerate(names):
                for j, e in enumerate(EPSILONS):
                    r = cell[(kind, n, e)]
                    mark = "L" if r["runs"] == "learner" else "C"
                    ax.text(j, i, f"{mark}\n{float(r['late_rate']):.3f}", ha="center",
                            va="center", fontsize=8)
            ax.set_xticks(range(len(EPSILONS)), [f"{e:g}" for e in EPSILONS])
            ax.set_yticks(range(len(names)), [f"ρ = {n}" for n in names])
            ax.grid(False)
            ax.set_xlabel("ε")
            ax.set_title("majority targets (balanced)" if kind == "majority"
                         else "OR targets (imbalanced)")
        bar = fig.colorbar(im, ax=axes, shrink=0.9, location="bottom", aspect=40)
        bar.set_label("log₂(mistakes ÷ best constant's); L = learner ran, C = private "
                      "constant; text: late mistake rate")


def main():
    args = make_parser(__doc__.splitlines()[0], plot_only=True).parse_args()
    out = output_dir(args)
    if args.plot_only:
        return redraw("winnow_map", lambda rows, path: plot_map(path, rows), out)
    start = time.perf_counter()
    map_rows = map_experiment(args.seed, args.quick)
    learned = [r for r in map_rows if r["runs"] == "learner"]
    write_report(
        "winnow_map", map_rows,
        {"stream": "stream", "rho": "ρ", "epsilon": "ε", "T": "T", "learns": "guard",
         "runs": "ran", "K": "K", "B": "B", "m": "m", "m@T/10": "mistakes T/10",
         "m@T": "mistakes T", "late_rate": "late rate", "growth": "last/first tenth",
         "constant": "best constant", "vs_constant": "÷ constant", "seconds": "s"},
        out_dir=out, title="DP-Winnow map: ε × margin (d = 100, δ = 1e-6)",
        notes=[
            "Majority streams have balanced labels; OR streams are imbalanced "
            "(constant error 2⁻ᵏ).",
            f"Cells where the learner ran: {len(learned)} of {len(map_rows)}; worst "
            f"late rate {max((r['late_rate'] for r in learned), default=float('nan'))}; "
            f"worst growth {max((r['growth'] for r in learned), default=float('nan'))}.",
            "Worst mistakes ÷ best constant over the whole map: "
            f"{max(r['vs_constant'] for r in map_rows)} (> 1: worse than the constant "
            "in hindsight).",
        ],
        plot=lambda path: plot_map(path, map_rows))
    rows = stream_experiment(args.seed, args.quick) + throughput(args.seed, args.quick)
    speed = {r["learner"]: r["ratio_vs_perceptron"] for r in rows if "ratio_vs_perceptron" in r}
    write_report(
        "winnow", rows,
        {"stream": "stream", "T": "T", "learner": "learner", "runs": "ran",
         "mistakes": "mistakes", "late_rate": "late rate", "constant": "best constant",
         "vs_constant": "÷ constant", "rows_per_s": "rows/s",
         "ratio_vs_perceptron": "× Perceptron", "seconds": "s"},
        out_dir=out, title="DP-Winnow on the issue's streams; throughput",
        notes=[
            "Mistakes: skdp learners count exact per-row online mistakes; Perceptron is "
            "prequential per block of 1000 (its first block counted as predicting 0).",
            "DP-Winnow (default, scheduled): (ε, 1e-6)-DP for the whole stream; 'ran' "
            "says whether the guard ran the learner or the private constant.",
            "Throughput × Perceptron: " + ", ".join(f"{k} {v}" for k, v in speed.items()),
            f"Total run time {time.perf_counter() - start:.0f} s.",
        ],
        plot=lambda path: bar_chart(
            path, [f"{r['stream'][:22]} · {r['learner']}" for r in rows if "mistakes" in r],
            [max(r["vs_constant"], 1e-3) for r in rows if "mistakes" in r],
            title="Online mistakes ÷ best constant predictor (< 1 beats it)",
            xlabel="mistakes ÷ constant (log)", log=True, reference=1.0))


if __name__ == "__main__":
    main()
