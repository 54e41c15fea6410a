"""Tables and plots of ``online_littlestone.py`` (kept apart: the script stays readable)."""

import numpy as np

CHECKPOINTS = (10**2, 10**3, 10**4, 10**5)

#: The recommendation table of the results page and of docs/online.md. Qualitative on
#: purpose: the numbers behind each line are the measured tables above it.
WHICH_LEARNER = (
    ("Realizable, adaptive adversary, thresholds (binary search or the mistake-seeking "
     "adversary, up to 2¹⁶ points)",
     "DP-SOA (`DPSOAClassifier`, defaults) or Li–Wang–Ye (`AdaptivePrivateOnlineClassifier`, "
     "default consistency release)",
     "DP-SOA makes one release, the target itself: 196 ± 21 mistakes against binary "
     "search, 1,715–2,478 against the mistake-seeking adversary (6 seeds, ε = 1), then "
     "flat; Li–Wang–Ye 422 ± 46 and 991 ± 52, flat after its last of ≤ 12 releases"),
    ("Realizable, adaptive adversary on small finite classes (intervals, rectangles; "
     "mistake-seeking or mistake tree)",
     "Li–Wang–Ye (consistency release)",
     "it learns them (error 0 at T = 10⁴); DP-SOA's copies agree on an intermediate "
     "hypothesis of a small class and its single release keeps it (error 0.17–0.4 "
     "against the mistake-seeking adversary)"),
    ("Realizable, oblivious stream",
     "Li–Wang–Ye (consistency release), or private experts (`PrivateExpertsClassifier`)",
     "Li–Wang–Ye learns thresholds on 2²–2¹² points from T = 10⁴; DP-SOA learns "
     "thresholds on ≤ 2⁸ points (T ≥ 10³ on 4, 10⁴ on 16, 10⁵ on 256 at ε = 1), "
     "intervals and rectangles at T = 10⁴ (one game each), but not 2¹² points at "
     "T ≤ 10⁵ (a copy must see the target's boundary point)"),
    ("Your own mistake-bounded base learner (no class to score)",
     "Li–Wang–Ye with Alg 2's histogram release (`release=\"histogram\"`, chosen "
     "automatically) or DP-SOA",
     "they learn only streams that pin the target within a few examples per copy"),
    ("Not realizable (label noise, agnostic), small domains (tens of points)",
     "Batch-and-sanitize (`BatchSanitizedOnlineClassifier`, Alg 3, default shared copies)",
     "0.16–0.25 × the private experts' regret at N = 16 and 64, T = 10⁵, ε = 1 "
     "(oblivious)"),
    ("Not realizable, larger domains or adaptive adversaries",
     "Private experts; Alg 3",
     "DP-SOA and Li–Wang–Ye assume a realizable stream for their utility (privacy holds "
     "regardless)"),
)


def which_learner():
    head = "| stream | take | why |\n|---|---|---|"
    return "\n".join([head, *(f"| {a} | {b} | {c} |" for a, b, c in WHICH_LEARNER)])


def _fmt(values):
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return ""
    return f"{v.mean():.4g}" if v.size == 1 or v.std() == 0 else \
        f"{v.mean():.4g} ± {v.std(ddof=1):.2g}"


def learner_table(kind, name, horizon, runs):
    """One row of the key table from the runs (curve, info) of one learner."""
    row = {"adversary": kind, "learner": name, "T": horizon}
    for t in CHECKPOINTS:
        if t <= horizon:
            row[f"M_1e{int(np.log10(t))}"] = _fmt([c[t - 1] for c, _ in runs])
    infos = [i for _, i in runs]
    row["forced_phase"] = _fmt([i["forced"] for i in infos])
    row["after_forced"] = _fmt([c[-1] - c[min(i["forced"], horizon - 1)] for c, i in runs])
    row["last_switch"] = _fmt([i["last"] for i in infos])
    row["after_last"] = _fmt([c[-1] - c[min(i["last"], horizon - 1)] for c, i in runs])
    row["firings"] = _fmt([i["firings"] for i in infos])
    row["switches"] = _fmt([i["switches"] for i in infos])
    row["still_initial"] = f"{sum(i['still_initial'] for i in infos)}/{len(infos)}"
    row["stopped"] = f"{sum(i['stopped'] for i in infos)}/{len(infos)}"
    row["s"] = round(float(np.mean([i["seconds"] for i in infos])), 1)
    return row


COLORS = {"SOA": "black", "DP-SOA": "tab:blue", "DP-SOA (SOA trees)": "tab:cyan",
          "Li–Wang–Ye": "tab:green", "Li–Wang–Ye (Alg 2 histogram)": "tab:olive"}
LABELS = {"SOA": "SOA (not private)"}


def plots(path, curves, eps_rows, rows=None):
    """Cumulative mistakes against the round for each adversary, and the forced phase
    against ε. ``curves`` (the games' round-by-round means) when the benchmark just ran;
    ``None`` when redrawn from the CSVs: then the curves are the table's checkpoints
    M(10²)…M(10⁵) (``rows``)."""
    import _plot

    def mean(value):
        return _plot.mean_of(value) if value not in (None, "") else float("nan")

    with _plot.figure(path, 4, ncols=2, panel_height=2.4) as (fig, axes):
        longest = 1
        for ax, kind in zip(axes[:2], ("binary search", "mistake-seeking"), strict=True):
            if curves is not None:
                for (k, name), table in curves.items():
                    if k == kind:
                        t = np.arange(1, table.shape[1] + 1)
                        longest = max(longest, t[-1])
                        ax.plot(t, np.maximum(table.mean(axis=0), 0.5), color=COLORS[name],
                                label=LABELS.get(name, name))
            else:
                for r in rows:
                    if r["adversary"] != kind:
                        continue
                    pts = [(t, mean(r.get(f"M_1e{int(np.log10(t))}"))) for t in CHECKPOINTS
                           if t <= float(r["T"])]
                    pts = [(t, max(m, 0.5)) for t, m in pts if np.isfinite(m)]
                    longest = max([longest, *(t for t, _ in pts)])
                    ax.plot(*zip(*pts, strict=True), "-o", markersize=4,
                            color=COLORS[r["learner"]], label=LABELS.get(r["learner"],
                                                                       r["learner"]))
            t = np.array([1, longest])
            ax.plot(t, t, ls=":", color="grey", label="a mistake every round")
            ax.set(xscale="log", yscale="log", xlabel="round t")
            ax.set_title(f"{kind} adversary")
        axes[0].set_ylabel("cumulative mistakes")
        axes[1].set_ylabel("cumulative mistakes")
        ax = axes[2]
        for name in ("DP-SOA", "Li–Wang–Ye", "Li–Wang–Ye (Alg 2 histogram)"):
            pts = sorted((float(r["epsilon"]), float(r["forced_phase"])) for r in eps_rows
                         if r["learner"] == name)
            ax.plot(*zip(*pts, strict=True), "-o", color=COLORS[name])
        pts = sorted((float(r["epsilon"]), float(r["last_switch"])) for r in eps_rows
                     if r["learner"] == "Li–Wang–Ye")
        ax.plot(*zip(*pts, strict=True), "--s", color=COLORS["Li–Wang–Ye"],
                label="Li–Wang–Ye: last switch (dashed)")
        ax.set_yscale("log")
        _plot.epsilon_axis(ax, sorted({float(r["epsilon"]) for r in eps_rows}))
        ax.set_ylabel("rounds before the first switch")
        ax.set_title("forced phase vs ε (binary search)")
        _plot.legend_in(axes[3], axes[:3])
        fig.suptitle("Thresholds on N = 2¹⁶ points, ε = 1 (left, middle), defaults",
                     fontsize=10)
