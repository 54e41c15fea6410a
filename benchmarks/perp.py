"""Stemmer's private truly-everlasting robust prediction (PERP) against adversarial streams.

Every run plants a target in [0, 1]^d with :class:`skdp.datasets.RobustPEPStream`,
fits the predictor on exactly the labelled sample its first phase needs
(``initial_sample_size_``, practical preset, no overrides) drawn from D, and
answers one stream of queries in blocks (1 000 queries, growing to 5 % of the
stream so far, at most 50 000); each query is from D with probability γ,
otherwise from the adversary, which sees the answers to the previous block.
Utility is the error on the D-queries only (Definition 3.1). δ* = 1e-6, α = 0.1,
β = 0.05 throughout.

* ε: at ε = 1 even the practical preset needs ≈ 7.5·10⁹ labelled rows (d = 2),
  so its runs use ε ∈ {100, 1000}; the sample-size table shows every ε.
* ``preset="sharp"`` (issue 16: partitioned slices, svt Stopper, margin
  thresholds, initial sample at δ(0) = δ*/4, α_1 = 3α/4) side by side: ε = 4,
  d = 2 (≈ 1.7·10⁶ rows) for γ ∈ {1, 0.5} up to T = 10⁶; ε = 1, d = 1
  (≈ 5.3·10⁶ rows, γ = 0.5); ε = 1, d = 2 (≈ 2.7·10⁷ rows, γ = 0.5, T ≤ 10⁶);
  ε = 100, d = 2 next to the practical rows, and on the practical preset's n
  (``preset = "sharp (n of practical)"``, T = 10⁵). S&A only where it finishes in
  seconds (ε ≥ 4, γ = 0.5 / ε = 100), so the full run stays near 10 minutes.
* rectangles, d = 2: error on D vs the number of queries T ∈ {10³, …, 10⁶}
  (``--quick``: 10³, 10⁴, ε = 1000 only) for γ ∈ {1, 0.5, 0.1} (γ < 1: the
  adaptive "challenge" adversary), the phase reached and the privacy the ledger
  shows; next to the non-private ERM rectangle (tightest box around the
  labelled positives) and to :class:`~skdp.prediction.SubsampleAggregatePredictor`
  (Rectangles teachers) at the same (ε, δ*) on the same sample, planned for
  exactly T queries and answering the same first T queries.
* the other adversaries (far, boundary, repeat) at γ = 0.5, T = 10⁵.
* decision stumps (d = 5, 20; ε = 2000) with ``DecisionStumpPERPClassifier``,
  against sklearn's depth-1 tree.
* ``preset="charged"`` (issue 16: the sharp schedule with the copies'
  BetweenThresholds calibrated by the sharper of Thm 4.3 and the charged lemma):
  ε = 1, d = 2 (≈ 6.9·10⁶ rows) and d = 1, ε = 4 and 16 (d = 2), ε = 100 (equal
  to sharp there), γ = 0.5 (and 1 at ε = 4), T up to 10⁶, no S&A.
  ``--charged`` runs only these, sharp at ε ∈ {1, 4}, d = 2 side by side, and the
  sample-size table, into ``perp_charged.*`` (a few minutes; the full run is not
  needed to compare the presets).
* the labelled sample the first phase needs (``perp_parameters``): the paper's
  constants vs the practical, sharp and charged presets, ε ∈ {1, 4, 16, 100} ×
  d ∈ {1, 2, 5} (γ = 0.5), plus the older ε ∈ {10, 1000}, d = 10 cases.
* throughput: queries per second inside ``predict`` (stream generation
  excluded), on blocks of 10⁵; target ≥ 10⁵ for d = 2.

Run ``nice -n 10 python benchmarks/perp.py`` (full, < 10 min) or ``--quick``.
"""

import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import (
    format_rate,
    make_parser,
    markdown_table,
    output_dir,
    redraw,
    rng_for,
    write_report,
)

from skdp.datasets import RobustPEPStream, play_robust_pep
from skdp.exceptions import PrivacyWarning
from skdp.hypotheses import Rectangles
from skdp.prediction import (
    DecisionStumpPERPClassifier,
    RectanglesPERPClassifier,
    SubsampleAggregatePredictor,
    perp_parameters,
)

DELTA, ALPHA, BETA = 1e-6, 0.1, 0.05
EPSILONS = (100.0, 1000.0)
EPS_STUMP = 2000.0
GAMMAS = (1.0, 0.5, 0.1)
T_GRID = (1_000, 10_000, 100_000, 1_000_000)
#: (ε, d, γ) of the charged preset's runs; SHARP_SIDE: sharp on the same streams.
CHARGED_RUNS = ((1.0, 2, 0.5), (1.0, 1, 0.5), (4.0, 2, 0.5), (4.0, 2, 1.0), (16.0, 2, 0.5),
                (100.0, 2, 0.5))
SHARP_SIDE = ((1.0, 2, 0.5), (4.0, 2, 0.5))
PRESETS = ("paper", "practical", "sharp", "charged")
OTHER_ADVERSARIES = ("far", "boundary", "repeat")


def _block(done):
    """Blocks of 1 000 queries, growing with the stream (≤ 50 000)."""
    return min(50_000, max(1_000, done // 20))


class _Timed:
    """Wraps a predictor: counts the seconds spent inside ``predict`` only."""

    def __init__(self, clf):
        self.clf, self.seconds = clf, 0.0

    def predict(self, X):
        start = time.perf_counter()
        try:
            return self.clf.predict(X)
        finally:
            self.seconds += time.perf_counter() - start


def _error(pred, truth, mask):
    return float(np.mean(pred[mask] != truth[mask])) if mask.any() else float("nan")


def _need(clf, d):
    """The estimator's own initial_sample_size_ (a probe fit spends nothing)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)  # the probe is below the need
        return clf.fit(np.eye(2, d), [0, 1]).initial_sample_size_


def _erm_box(X, y):
    """Non-private ERM: the tightest box around the positive examples."""
    return Rectangles(X.shape[1]).fit_blocks(X, 2 * y - 1, np.zeros(len(y), dtype=int), 1)


def _sa_error(eps, X, y, queries, truth, from_D, seed):
    """Subsample-and-aggregate at the same (ε, δ*), planned for exactly these queries."""
    clf = SubsampleAggregatePredictor(Rectangles(X.shape[1]), epsilon=eps, delta=DELTA,
                                      n_queries=len(queries), random_state=seed).fit(X, y)
    return _error(clf.predict(queries), truth, from_D)


def run_stream(cls, eps, gamma, adversary, d, t_grid, seed, *, concept="rectangle",
               preset="practical", baseline_sa=True, rows_of=None):
    """Fit on the first phase's need, answer one stream of max(t_grid) queries.

    ``rows_of``: fit on the need of that preset instead (same-n comparisons).

    Returns one row per checkpoint T and the phase curve [(queries done, phase)].
    """
    adversary = adversary if gamma < 1 else "none"
    name = f"{cls.__name__}/{concept}/d={d}/ε={eps}/γ={gamma}/{adversary}"
    if preset != "practical":
        name += f"/{preset}"
    stream = RobustPEPStream(d, gamma=gamma, adversary=adversary, concept=concept,
                             random_state=rng_for(seed, name))
    clf = cls(epsilon=eps, delta=DELTA, alpha=ALPHA, beta=BETA, gamma=gamma, preset=preset,
              random_state=seed)
    n = _need(clf.set_params(preset=rows_of) if rows_of else clf, d)
    X, y = stream.sample(n)
    clf.set_params(preset=preset).fit(X, y)
    timed, state = _Timed(clf), {}

    def record(done, _):
        state[done] = (clf.phase_, clf.queries_answered_, clf.privacy_spent_,
                       clf.n_reexecutions_)

    result = play_robust_pep(timed, stream, max(t_grid), block_size=_block, callback=record)
    answers, from_D, truth = result["answers"], result["from_D"], result["truth"]
    if concept == "rectangle":
        box = _erm_box(X, y)

        def baseline(Q):
            return (Rectangles(d).predict_blocks(box, Q)[0] > 0).astype(int)
    else:
        from sklearn.tree import DecisionTreeClassifier

        baseline = DecisionTreeClassifier(max_depth=1, random_state=0).fit(X, y).predict
    rows = []
    for T in t_grid:
        done = min(T, result["n_answered"])
        # The predictor's own counters at the end of the block holding query T.
        phase, answered, spent, restarts = state[min(e for e in state if e >= done)]
        mask, recent = from_D[:done], slice(done // 10, done)
        queries = result["queries"][:done]
        row = {
            "estimator": cls.__name__.replace("Classifier", ""),
            "preset": preset + (f" (n of {rows_of})" if rows_of else ""), "d": d,
            "epsilon": int(eps),
            "gamma": gamma, "adversary": adversary, "T": T, "n": len(y),
            "t1": clf.parameters_.first_phase_length, "answered": answered, "phase": phase,
            "restarts": restarts, "eps_spent": spent.epsilon, "delta_spent": spent.delta,
            "err_D": _error(answers[:done], truth[:done], mask),
            "err_D_recent": _error(answers[recent], truth[recent], from_D[recent]),
            "erm_err_D": _error(baseline(queries), truth[:done], mask),
            "qps": result["n_answered"] / max(timed.seconds, 1e-9),
        }
        if concept == "rectangle" and baseline_sa:
            row["sa_err_D"] = _sa_error(eps, X, y, queries, truth[:done], mask, seed)
        rows.append(row)
    curve = sorted((done, s[0]) for done, s in state.items())
    return rows, curve


def throughput(d, eps, gamma, seed, n_queries):
    """Queries/s of ``predict`` alone, on blocks of 10⁵ (the vectorised path)."""
    adversary = "challenge" if gamma < 1 else "none"
    stream = RobustPEPStream(d, gamma=gamma, adversary=adversary,
                             random_state=rng_for(seed, f"qps/{d}/{eps}/{gamma}"))
    clf = RectanglesPERPClassifier(epsilon=eps, delta=DELTA, alpha=ALPHA, beta=BETA,
                                   gamma=gamma, random_state=seed)
    clf.fit(*stream.sample(_need(clf, d)))
    timed = _Timed(clf)
    play_robust_pep(timed, stream, n_queries, block_size=100_000)
    return n_queries / timed.seconds, clf.phase_


COLUMNS = {
    "estimator": "estimator", "preset": "preset", "d": "d", "epsilon": "ε", "gamma": "γ",
    "adversary": "adversary", "T": "T", "n": "labelled n", "t1": "t₁", "phase": "phase",
    "restarts": "restarts", "eps_spent": "ε spent", "delta_spent": "δ spent",
    "err_D": "err on D", "err_D_recent": "err on D (last 90 %)",
    "erm_err_D": "non-private err", "sa_err_D": "S&A err", "qps": "queries/s",
}
COMMON_NOTES = (
    f"δ* = {DELTA:g}, α = {ALPHA}, β = {BETA}; labelled n = the first phase's need "
    "(the row's preset, no overrides); t₁ = phase-1 length (phase p: t₁·3^(p−1) "
    "queries); queries in blocks of 1000 growing to 5 % of the stream so far (≤ 50 000), "
    "the adversary sees the answers to the previous block; γ = 1: no adversary.",
    "err on D: error rate on the D-queries among the first T (Definition 3.1 asks ≤ α "
    "at all times w.p. 1 − β); 'last 90 %' drops the first tenth of the stream. "
    "restarts: ChallengeBT copies re-executed after their Stopper halted.",
    "ε spent / δ spent: the ledger budget_.spent — ε per record (not summed), δ = "
    "δ(0) + Σ over answered queries of δ(i), ≤ δ* however long the stream.",
)


def sample_sizes(cases):
    rows = []
    for eps, d, gamma in cases:
        got = {p: perp_parameters(eps, DELTA, ALPHA, BETA, gamma, d, preset=p) for p in PRESETS}
        n = {p: got[p].initial_sample_size for p in PRESETS}
        rows.append({
            "epsilon": int(eps), "d": d, "gamma": gamma,
            **{f"n_{p}": n[p] for p in PRESETS},
            "ratio": n["paper"] / n["practical"], "ratio_sharp": n["practical"] / n["sharp"],
            "ratio_charged": n["sharp"] / n["charged"],
            **{f"t1_{p}": got[p].first_phase_length for p in PRESETS},
        })
    return rows


SIZE_COLUMNS = {
    "epsilon": "ε", "d": "d", "gamma": "γ", "n_paper": "n (paper)",
    "n_practical": "n (practical)", "n_sharp": "n (sharp)", "n_charged": "n (charged)",
    "ratio": "paper / practical", "ratio_sharp": "practical / sharp",
    "ratio_charged": "sharp / charged", "t1_paper": "t₁ (paper)",
    "t1_practical": "t₁ (practical)", "t1_sharp": "t₁ (sharp)", "t1_charged": "t₁ (charged)",
}


def _plot(path, rows, curves, sizes):
    """The docs figure (``curves`` — the phase steps — are in the table's phase column)."""
    draw_figure(rows, sizes, path)


def _num(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def draw_figure(rows, sizes, path):
    """Error on the query distribution against T, one panel per adversary (γ), and
    the labelled sample the first phase needs per preset, from the rows (or the CSVs)."""
    import _plot

    rect = [r for r in rows if r["estimator"] == "RectanglesPERP" and _num(r["d"]) == 2
            and r["adversary"] in ("challenge", "none")]
    eps_practical = max(_num(r["epsilon"]) for r in rect if r["preset"] == "practical")
    series = (  # (preset, ε, column, label, style, colour)
        ("practical", eps_practical, "err_D", f"PERP practical, ε={eps_practical:g}", "-o",
         "tab:blue"),
        ("practical", eps_practical, "sa_err_D", f"subsample-and-aggregate, ε={eps_practical:g}",
         "--s", "tab:blue"),
        ("sharp", 4.0, "err_D", "PERP sharp, ε=4", "-^", "tab:orange"),
        ("sharp", 4.0, "sa_err_D", "subsample-and-aggregate, ε=4", "--s", "tab:orange"),
        ("practical", eps_practical, "erm_err_D", "non-private ERM", ":", "black"),
    )
    titles = {1.0: "no adversary (γ = 1)", 0.5: "challenge adversary, γ = 0.5",
              0.1: "challenge adversary, γ = 0.1"}
    with _plot.figure(path, len(GAMMAS) + 1, ncols=2, panel_height=2.3) as (fig, axes):
        for ax, gamma in zip(axes, GAMMAS, strict=False):
            for preset, eps, column, label, style, color in series:
                pts = sorted((_num(r["T"]), _num(r[column])) for r in rect
                             if r["preset"] == preset and _num(r["epsilon"]) == eps
                             and _num(r["gamma"]) == gamma and np.isfinite(_num(r[column])))
                if pts:
                    ax.plot(*zip(*pts, strict=True), style, color=color, label=label)
            ax.axhline(ALPHA, color="grey", lw=1, ls="-.", label=f"target error α = {ALPHA}")
            ax.set_xscale("log")
            ax.set_ylim(0, 0.16)
            ax.set_xlabel("queries T")
            ax.set_ylabel("error on D (first T queries)")
            ax.set_title(titles.get(gamma, f"γ = {gamma}"))
        ax = axes[-1]
        sel = sorted((_num(r["epsilon"]), r) for r in sizes
                     if _num(r["d"]) == 2 and _num(r["gamma"]) == 0.5)
        eps_sizes = [e for e, _ in sel]
        for preset, style, color in (("paper", "-o", "tab:grey"), ("practical", "-o", "tab:blue"),
                                     ("sharp", "-^", "tab:orange")):
            ax.plot(eps_sizes, [_num(r[f"n_{preset}"]) for _, r in sel], style, color=color,
                    label=f"rows for phase 1: {preset}")
        ax.set_yscale("log")
        _plot.epsilon_axis(ax, eps_sizes)
        ax.set_ylabel("labelled rows (d = 2, γ = 0.5)")
        ax.set_title("sample the first phase needs")
        _plot.legend_below(fig, axes, ncol=2)


def _redraw(rows, path):
    from _report import read_csv

    draw_figure(rows, read_csv("perp_sample_sizes"), path)


def _plot_charged(path, rows, sizes):
    """Error on D vs T for the charged (and side-by-side sharp) runs; n vs d per preset."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.8), layout="constrained")
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    runs = sorted({(r["preset"], r["epsilon"], r["d"], r["gamma"]) for r in rows})
    for (preset, eps, d, gamma), color in zip(runs, palette * 3, strict=False):
        sel = [r for r in rows if (r["preset"], r["epsilon"], r["d"], r["gamma"])
               == (preset, eps, d, gamma)]
        ax1.plot([r["T"] for r in sel], [r["err_D"] for r in sel],
                 "v-" if preset == "charged" else "^:", color=color,
                 label=f"{preset} ε={eps:g} d={d} γ={gamma} (n={sel[0]['n']:.3g})")
    ax1.axhline(ALPHA, color="k", lw=0.8, ls="--", label="α")
    ax1.set_xscale("log")
    ax1.set_xlabel("queries T")
    ax1.set_ylabel("error on the D-queries (first T)")
    ax1.set_title("rectangles: error on D vs T (challenge adversary if γ < 1)", fontsize=10)
    ax1.legend(fontsize=6)
    for eps_s, color in zip(sorted({r["epsilon"] for r in sizes}), palette, strict=False):
        sel = [r for r in sizes if r["epsilon"] == eps_s and r["gamma"] == 0.5
               and r["d"] in (1, 2, 5)]
        for preset, marker in (("paper", "o-"), ("practical", "s--"), ("sharp", "^:"),
                               ("charged", "v-.")):
            ax2.plot([r["d"] for r in sel], [r[f"n_{preset}"] for r in sel], marker,
                     color=color, label=f"{preset}, ε={eps_s:g}")
    ax2.axhline(1e7, color="k", lw=0.8, ls="--")
    ax2.set_yscale("log")
    ax2.set_xscale("log")
    ax2.set_xlabel("dimension d")
    ax2.set_ylabel("labelled rows for phase 1")
    ax2.set_title("first-phase sample, γ=0.5 (dashed: 10⁷)", fontsize=10)
    ax2.legend(fontsize=5, ncol=2)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv=None):
    parser = make_parser(__doc__.splitlines()[0], plot_only=True)
    parser.add_argument("--charged", action="store_true",
                        help="only the charged preset's runs, sharp side by side and the "
                             "sample-size table (perp_charged.*)")
    args = parser.parse_args(argv)
    if args.plot_only and not args.charged:
        return redraw("perp", _redraw, output_dir(args))
    if args.charged:
        return main_charged(args)
    quick, seed = args.quick, args.seed
    t_grid = T_GRID[:2] if quick else T_GRID
    t_single = (10_000,) if quick else (100_000,)
    epsilons = EPSILONS[1:] if quick else EPSILONS
    rows, curves, timings = [], {}, {}

    def section(label, fn):
        start = time.perf_counter()
        out = fn()
        timings[label] = time.perf_counter() - start
        print(f"{label}: {timings[label]:.1f} s", file=sys.stderr)
        return out

    for eps in epsilons:
        for gamma in GAMMAS:
            got, curves[(eps, gamma, "practical")] = section(
                f"rect ε={eps:g} γ={gamma}",
                lambda e=eps, g=gamma: run_stream(RectanglesPERPClassifier, e, g, "challenge",
                                                  2, t_grid, seed))
            rows += got
    for adversary in OTHER_ADVERSARIES:
        rows += section(
            f"rect {adversary}",
            lambda a=adversary: run_stream(RectanglesPERPClassifier, 1000.0, 0.5, a, 2,
                                           t_single, seed))[0]
    for d in (5, 20):
        for gamma in (1.0, 0.5):
            rows += section(
                f"stumps d={d} γ={gamma}",
                lambda d=d, g=gamma: run_stream(DecisionStumpPERPClassifier, EPS_STUMP, g,
                                                "challenge", d, t_single, seed,
                                                concept="stump"))[0]
    sharp_runs = [(4.0, 2, 0.5, True), (100.0, 2, 0.5, True), (100.0, 2, 1.0, True)]
    if not quick:
        sharp_runs += [(4.0, 2, 1.0, False), (1.0, 1, 0.5, False), (1.0, 2, 0.5, False)]
    for eps, d, gamma, with_sa in sharp_runs:
        got, curves[(eps, gamma, "sharp")] = section(
            f"sharp ε={eps:g} d={d} γ={gamma}",
            lambda e=eps, d=d, g=gamma, sa=with_sa: run_stream(
                RectanglesPERPClassifier, e, g, "challenge", d, t_grid, seed, preset="sharp",
                baseline_sa=sa))
        rows += got
    for eps, d, gamma in (CHARGED_RUNS if not quick else CHARGED_RUNS[2:3]):
        rows += section(f"charged ε={eps:g} d={d} γ={gamma}",
                        lambda e=eps, d=d, g=gamma: run_stream(
                            RectanglesPERPClassifier, e, g, "challenge", d, t_grid, seed,
                            preset="charged", baseline_sa=False))[0]
    # Same n: sharp on the practical preset's sample (is sharp better at equal rows?).
    for gamma in (1.0, 0.5):
        rows += section(
            f"sharp at practical's n, γ={gamma}",
            lambda g=gamma: run_stream(RectanglesPERPClassifier, 100.0, g, "challenge", 2,
                                       t_single, seed, preset="sharp", baseline_sa=False,
                                       rows_of="practical"))[0]
    n_qps = 200_000 if quick else 1_000_000
    qps = {key: section(f"qps {key}", lambda k=key: throughput(*k, seed, n_qps))
           for key in ((2, 1000.0, 1.0), (2, 1000.0, 0.5), (2, 100.0, 1.0), (5, 1000.0, 1.0))}
    size_cases = [(e, d, 0.5) for e in (1.0, 4.0, 16.0, 100.0) for d in (1, 2, 5)]
    size_cases += [(e, d, 0.5) for e in (10.0, 1000.0) for d in (2, 10)]
    size_cases += [(e, 2, g) for e in (1.0, 1000.0) for g in (1.0, 0.1)]
    if quick:
        size_cases = [c for c in size_cases if c[0] in (4.0, 1000.0)]
    sizes = section("sample sizes", lambda: sample_sizes(size_cases))

    notes = [
        *COMMON_NOTES,
        "non-private: the tightest box around the labelled positives (stumps: sklearn's "
        "depth-1 tree), answering the same queries. S&A: SubsampleAggregatePredictor"
        "(Rectangles) at the same (ε, δ*) on the same sample, planned for exactly T "
        "queries, answering the same first T queries (adversarial ones included).",
        "queries/s in the table: inside predict over the whole stream. On blocks of 10⁵: "
        + "; ".join(f"d={d}, ε={e:g}, γ={g}: {format_rate(r)} q/s (phase {p})"
                    for (d, e, g), (r, p) in qps.items()) + ".",
        "timings (s): " + "; ".join(f"{k}: {v:.0f}" for k, v in timings.items()),
    ]
    out = output_dir(args)
    write_report("perp", rows, COLUMNS, out_dir=out,
                 title="PERP: private truly-everlasting robust prediction (Stemmer)",
                 notes=notes, plot=lambda path: _plot(path, rows, curves, sizes))
    _write_sizes(out, "perp", sizes)


def _write_sizes(out, name, sizes):
    """Append the sample-size table to ``<name>.md``; write ``<name>_sample_sizes.csv``."""
    text = ("\n## Labelled sample the first phase needs (perp_parameters)\n\n"
            f"δ* = {DELTA:g}, α = {ALPHA}, β = {BETA}; rows needed before the first "
            "data-dependent answer, and the first phase's length.\n\n"
            + markdown_table([{k: f"{v:.3g}" if isinstance(v, int) and v >= 10**5 else v
                               for k, v in r.items()} for r in sizes], SIZE_COLUMNS) + "\n")
    print(text)
    with (out / f"{name}.md").open("a", encoding="utf-8") as handle:
        handle.write(text)
    with (out / f"{name}_sample_sizes.csv").open("w", encoding="utf-8") as handle:
        handle.write(",".join(SIZE_COLUMNS) + "\n")
        for r in sizes:
            handle.write(",".join(f"{r[k]:.6g}" if isinstance(r[k], float) else str(r[k])
                                  for k in SIZE_COLUMNS) + "\n")


def main_charged(args):
    """``--charged``: the charged preset's runs, sharp side by side, the size table."""
    t_grid = T_GRID[:2] if args.quick else T_GRID
    runs = [("charged", *r) for r in CHARGED_RUNS] + [("sharp", *r) for r in SHARP_SIDE]
    if args.quick:
        runs = [("charged", 16.0, 2, 0.5), ("sharp", 16.0, 2, 0.5)]
    rows, timings = [], {}
    for preset, eps, d, gamma in runs:
        label, start = f"{preset} ε={eps:g} d={d} γ={gamma}", time.perf_counter()
        rows += run_stream(RectanglesPERPClassifier, eps, gamma, "challenge", d, t_grid,
                           args.seed, preset=preset, baseline_sa=False)[0]
        timings[label] = time.perf_counter() - start
        print(f"{label}: {timings[label]:.1f} s", file=sys.stderr)
    start = time.perf_counter()
    cases = [(e, d, 0.5) for e in (1.0, 4.0, 16.0, 100.0) for d in (1, 2, 5)]
    sizes = sample_sizes(cases[:3] if args.quick else cases)
    timings["sample sizes"] = time.perf_counter() - start
    notes = [*COMMON_NOTES,
             "sharp / charged rows: the same streams (seeded by the run's name) at each "
             "preset's own first-phase need; no S&A (it does not finish at these n).",
             "timings (s): " + "; ".join(f"{k}: {v:.0f}" for k, v in timings.items())]
    out = output_dir(args)
    write_report("perp_charged", rows, COLUMNS, out_dir=out,
                 title="PERP preset='charged' (issue 16) next to 'sharp'", notes=notes,
                 plot=lambda path: _plot_charged(path, rows, sizes))
    _write_sizes(out, "perp_charged", sizes)


if __name__ == "__main__":
    main()
