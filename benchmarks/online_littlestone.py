"""Private online learning of Littlestone classes: mistakes vs T, adaptive vs oblivious.

Learners: the non-private SOA (the ceiling), DP-SOA (Golowich & Livni 2021, Alg 1 +
HistSparse, practical preset), its adaptive re-run variant (``adaptive=True``:
ε' = ε/(2√(2T ln(1/δ))), Õ(√T) mistakes against an adaptive adversary) and the
adaptive-adversary learner of Li, Wang & Ye (2024, Alg 2, O_d(log T) mistakes), each
private one at ε ∈ {1, 4}, δ = 10⁻⁶ (β = 0.05 for Li–Wang–Ye).

Classes (Ldim): thresholds on N = 2⁸ (8) and 2¹⁶ (16) points, point functions on 2¹⁰
points (1), and a random finite class of 32 distinct labellings of 64 points (5).
Adversaries (realizable, target drawn per game):

* oblivious — ``ObliviousAdversary(order="worst")``: the points a fresh SOA errs on,
  one after the other, then uniform points;
* adaptive — thresholds: binary search on the released hypothesis, then the boundary
  point it gets wrong (``AdaptiveThresholdAdversary(sees_current=True, pinned="seek")``:
  every round whose released hypothesis is not the target costs a mistake); points:
  re-query false positives and probe for predicted positives
  (``AdaptivePointAdversary(sees_current=True)``); finite class: the mistake-tree
  adversary (``AdaptiveFiniteAdversary``).

Mistakes vs T: the horizon T is a *parameter* of the re-run variant (its ε') and of
Li–Wang–Ye (thresholds ∝ ln T), so for those M(T) is the total of a separate game of
horizon T (n_rounds = T) for T = 10², 10^2.5, …, 10⁵ (Σ T ≈ 1.5·T_max rounds); the SOA
and DP-SOA do not depend on T, so their longest game gives the whole curve (cumulative
mistakes). Mean ± sd over 3 seeds (seed = learner noise and the game's target).

Time: the adaptive games cost 0.1–1 ms a round (the adversary probes the released
hypothesis; the learner takes one Python step), DP-SOA's forests take seconds to set up,
and 5 other helpers share the 2 cores. So games get longer (10², 10^2.5, …) until the
next one is predicted to overrun a per-(config, learner, seed) wall-clock cap, and the
time goes where the question is: thresholds on 2¹⁶ points against the adaptive adversary
(the log T vs √T question) has fixed caps and may go to 10⁵; the other configurations
share what is left of a 10-minute budget (adaptive games there stop at 10⁴). "T reached"
in the table is the largest horizon played.

Cost: µs per round and tracemalloc peak / retained memory at T = 10³, 10⁴, 10⁵ on the
key configuration (ε = 1 and the SOA; traced games of the first seed).

``nice -n 10 python benchmarks/online_littlestone.py`` (full, ≤ 12 min on 2 shared
cores) or ``--quick`` (T ≤ 10³, one seed).
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import csv
import gc
import math
import time
import tracemalloc
import warnings

import numpy as np
from _report import make_parser, markdown_table, output_dir, rng_for, write_report

from skdp.exceptions import PrivacyWarning
from skdp.hypotheses.littlestone import (
    PointVersionSpace,
    ThresholdVersionSpace,
    littlestone_dimension,
)
from skdp.online import (
    AdaptiveFiniteAdversary,
    AdaptivePointAdversary,
    AdaptiveThresholdAdversary,
    ObliviousAdversary,
    SOAClassifier,
    run_online,
)
from skdp.online._adversaries import random_finite_class

try:
    from skdp.online._dp_soa import DPSOAClassifier
except ImportError:  # written in parallel; the benchmark runs without it and says so
    DPSOAClassifier = None
try:
    from skdp.online._adaptive import AdaptivePrivateOnlineClassifier
except ImportError:
    AdaptivePrivateOnlineClassifier = None

EPSILONS = (1.0, 4.0)
DELTA = 1e-6
BETA = 0.05
FULL_HORIZONS = tuple(round(10 ** (k / 2)) for k in range(4, 11))  # 10² … 10⁵
QUICK_HORIZONS = (100, 316, 1000)
COST_HORIZONS = (10**3, 10**4, 10**5)
#: The adaptive games cost ~100–400 µs a round (the adversary probes the released
#: hypothesis, the learner takes one Python step): only the configuration that answers the
#: log T vs √T question goes to 10⁵; the others stop at 10⁴. Oblivious streams are fed in
#: one vectorised block and all go to 10⁵.
KEY_CONFIG = ("thresholds N=2^16", "adaptive")
ADAPTIVE_T_MAX = 10**4
#: Wall-clock caps (first seed, other seeds) of each learner family on the key
#: configuration (÷ 8 with --quick): the first seed may go to 10⁵, the others give the
#: spread up to where they reach. The other configurations share what is left of
#: --budget, at most MAX_CAP per seed.
KEY_CAPS = {"SOA": (25.0, 8.0), "DP-SOA": (15.0, 5.0), "DP-SOA re-run": (15.0, 6.0),
            "Li–Wang–Ye": (110.0, 15.0)}
MAX_CAP = 8.0


# ----------------------------------------------------------------- configurations
def classes(seed):
    return {
        "thresholds N=2^8": ThresholdVersionSpace(2**8),
        "thresholds N=2^16": ThresholdVersionSpace(2**16),
        "points N=2^10": PointVersionSpace(2**10),
        "random finite 32x64": random_finite_class(32, 64,
                                                   random_state=rng_for(seed, "finite-class")),
    }


def adversary(cls_name, cls, kind):
    if kind == "oblivious":
        return ObliviousAdversary(cls, order="worst")
    if cls_name.startswith("thresholds"):
        return AdaptiveThresholdAdversary(cls.n_domain, sees_current=True, pinned="seek")
    if cls_name.startswith("points"):
        return AdaptivePointAdversary(cls.n_domain, sees_current=True)
    return AdaptiveFiniteAdversary(cls, sees_current=True)


def learners():
    """name → (factory(cls, n_rounds, seed), uses the horizon?, family, ε)."""
    out = {"SOA": (lambda cls, T, seed: SOAClassifier(cls), False, "SOA", None)}
    for eps in EPSILONS:
        if DPSOAClassifier is not None:
            out[f"DP-SOA ε={eps:g}"] = (
                lambda cls, T, seed, eps=eps: DPSOAClassifier(
                    eps, DELTA, cls, n_rounds=T, random_state=seed),
                False, "DP-SOA", eps)
            out[f"DP-SOA re-run ε={eps:g}"] = (
                lambda cls, T, seed, eps=eps: DPSOAClassifier(
                    eps, DELTA, cls, adaptive=True, n_rounds=T, random_state=seed),
                True, "DP-SOA re-run", eps)
        if AdaptivePrivateOnlineClassifier is not None:
            out[f"Li–Wang–Ye ε={eps:g}"] = (
                lambda cls, T, seed, eps=eps: AdaptivePrivateOnlineClassifier(
                    eps, DELTA, cls, T, BETA, random_state=seed),
                True, "Li–Wang–Ye", eps)
    return out


# ----------------------------------------------------------------- playing
class _TimeUp(Exception):
    pass


class _Capped:
    """Adversary proxy that stops a round-by-round game at a wall-clock deadline."""

    def __init__(self, inner, deadline):
        self._inner, self._deadline = inner, deadline
        self.oblivious = inner.oblivious
        self.n_domain = inner.n_domain

    def reset(self, rng):
        self._inner.reset(rng)
        return self

    def stream(self, n_rounds):
        return self._inner.stream(n_rounds)

    def next_round(self, probe=None):
        if time.perf_counter() > self._deadline:
            raise _TimeUp
        return self._inner.next_round(probe)

    def observe(self, x, y, y_hat):
        self._inner.observe(x, y, y_hat)


def play(make, cls, adv, horizon, seed, game_seed, deadline, trace=False):
    """One game of ``horizon`` rounds, or None past the deadline.

    Returns (curve, learner, seconds, memory, warned): ``memory`` is None, or with
    ``trace`` the tracemalloc (peak, retained) bytes of the game — peak minus the 17
    bytes per round of run_online's own arrays (a bool per round, then np.cumsum's int64
    cast and result), retained = learner + adversary after the game; ``warned`` holds
    the learner's UserWarnings (e.g. DP-SOA's "may never switch").
    """
    gc.collect()
    if trace:
        tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0] if trace else 0
    learner = make(cls, horizon, seed)
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            curve = run_online(learner, _Capped(adv, deadline), horizon,
                               random_state=game_seed)
        # caps (PrivacyWarning) are reported in the table; other warnings in the notes
        warned = {str(w.message) for w in caught if not issubclass(w.category,
                                                                   PrivacyWarning)}
    except _TimeUp:
        if trace:
            tracemalloc.stop()
        return None
    seconds = time.perf_counter() - start
    memory = None
    if trace:
        peak = tracemalloc.get_traced_memory()[1] - base - 17 * horizon
        gc.collect()
        memory = (peak, tracemalloc.get_traced_memory()[0] - base - curve.nbytes)
        tracemalloc.stop()
    return curve, learner, seconds, memory, warned


def run_config(cls_name, cls, kind, name, spec, seeds, horizons, caps, trace_at=()):
    """Mistakes M(T) per seed (NaN where not reached), plus per-seed diagnostics.

    Games get longer (a ladder of horizons) until the next one is predicted to overrun
    ``caps[i]`` seconds for seed i — time per game taken as ∝ T, or T^1.5 for DP-SOA's
    re-run variant, whose forest grows with √T — or the cap interrupts an adaptive game
    (oblivious streams are one vectorised call: only the prediction stops them). Learners
    that ignore the horizon play the decades only, and their longest game gives M(T) at
    every T it covers. Horizons in ``trace_at`` are played under tracemalloc for the
    first seed.
    """
    make, uses_horizon, family, _ = spec
    power = 1.5 if family == "DP-SOA re-run" else 1.0
    table = np.full((len(seeds), len(horizons)), np.nan)
    info = {"switches": [], "stopped": 0, "timing": {}, "memory": {}, "warnings": set()}
    decades = [t for t in horizons if math.log10(t).is_integer()] + [horizons[-1]]
    for i, seed in enumerate(seeds):
        adv = adversary(cls_name, cls, kind)
        game_seed = int(rng_for(seed, f"{cls_name}/{kind}/game").integers(2**31))
        deadline = time.perf_counter() + caps[i]
        traced = set(trace_at) if i == 0 else set()
        runs = sorted(set(horizons if uses_horizon else decades) | traced)
        last = learner = None
        for horizon in runs:
            now = time.perf_counter()
            if last is not None and now + last[1] * (horizon / last[0]) ** power > deadline:
                break  # predicted to overrun the cap: keep the horizons already played
            # the shortest game always completes, so every seed gives M(10²)
            got = play(make, cls, adv, horizon, seed, game_seed,
                       math.inf if last is None else deadline, trace=horizon in traced)
            if got is None:
                break
            curve, learner, seconds, memory, warned = got
            info["warnings"] |= warned
            last = (horizon, seconds)
            if memory is not None:  # tracemalloc slows the game ~2.5×: timed apart
                info["memory"][horizon] = (*memory, seconds / horizon)
            else:
                info["timing"].setdefault(horizon, []).append(seconds / horizon)
            if uses_horizon:
                if horizon in horizons:
                    table[i, horizons.index(horizon)] = curve[-1]
            else:
                for j, t in enumerate(horizons):
                    if t <= horizon:
                        table[i, j] = curve[t - 1]
        if learner is not None:
            info["switches"].append(getattr(learner, "n_switches_",
                                            getattr(learner, "n_updates_", np.nan)))
            # the re-run variant stops after its n_rounds releases by design: not a cap
            reason = getattr(learner, "stop_reason_", None) or ""
            info["stopped"] += bool(reason) and not reason.startswith("released its n_rounds")
    return table, info


def cost_rows(results, cost_config):
    """µs per round (median over untraced games) and tracemalloc memory per horizon."""
    rows = []
    for (cls_name, kind, name), (_, info) in results.items():
        if (cls_name, kind) != cost_config:
            continue
        if not info["memory"]:
            continue  # only the smallest ε and the SOA are traced
        for horizon in sorted(set(info["timing"]) | set(info["memory"])):
            row = {"learner": name, "T": horizon}
            if horizon in info["timing"]:
                row["us_per_round"] = round(1e6 * float(np.median(info["timing"][horizon])), 1)
            if horizon in info["memory"]:
                peak, retained, per_round = info["memory"][horizon]
                row["us_per_round_traced"] = round(1e6 * per_round, 1)
                row["peak_kB"] = round(peak / 1024, 1)
                row["retained_kB"] = round(retained / 1024, 1)
            rows.append(row)
    return rows


# ----------------------------------------------------------------- analysis
def fit_growth(horizons, mean):
    """Least-squares slopes of M(T) vs ln T and vs √T, with R² of each fit."""
    t = np.asarray(horizons, dtype=float)
    ok = np.isfinite(mean)
    out = {}
    for label, f in (("log", np.log(t)), ("sqrt", np.sqrt(t))):
        if ok.sum() < 3:
            out[label] = (np.nan, np.nan)
            continue
        A = np.column_stack([np.ones(ok.sum()), f[ok]])
        coef, *_ = np.linalg.lstsq(A, mean[ok], rcond=None)
        resid = mean[ok] - A @ coef
        ss = np.sum((mean[ok] - mean[ok].mean()) ** 2)
        out[label] = (coef[1], 1 - np.sum(resid**2) / ss if ss > 0 else np.nan)
    return out


def crossing(horizons, a, b):
    """Where curve a (Li–Wang–Ye) goes below curve b (re-run), on the T both reached."""
    common = [j for j in range(len(horizons)) if np.isfinite(a[j]) and np.isfinite(b[j])]
    if not common:
        return "no common T"
    d = np.asarray(a)[common] - np.asarray(b)[common]
    t = [horizons[j] for j in common]
    if np.all(d == 0):
        return f"equal at every T ({t[0]}–{t[-1]})"
    if np.all(d <= 0):
        below = t[int(np.flatnonzero(d < 0)[0])]
        return f"LWY ≤ re-run at every T ({t[0]}–{t[-1]}), < from T = {below}"
    if np.all(d > 0):
        return f"LWY > re-run at every T ({t[0]}–{t[-1]})"
    j = int(np.flatnonzero(d > 0)[-1])
    if j + 1 == len(d):
        return f"LWY above again at T={t[-1]}"
    l0, l1 = math.log(t[j]), math.log(t[j + 1])
    cross = math.exp(l0 + (l1 - l0) * d[j] / (d[j] - d[j + 1]))
    return f"LWY < re-run from T ≈ {cross:.3g}"


def growth_rows(results, horizons):
    rows = []
    for (cls_name, kind, name), (table, _) in results.items():
        family = name.split(" ε=")[0]
        if family not in ("Li–Wang–Ye", "DP-SOA re-run"):
            continue
        if np.isfinite(table).any(axis=0).sum() < 3:
            continue  # too few horizons reached for a fit
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns stay NaN
            mean = np.nanmean(table, axis=0)
        fits = fit_growth(horizons, mean)
        row = {"class": cls_name, "adversary": kind, "learner": name,
               "slope_lnT": round(fits["log"][0], 3), "R2_lnT": round(fits["log"][1], 3),
               "slope_sqrtT": round(fits["sqrt"][0], 4), "R2_sqrtT": round(fits["sqrt"][1], 3)}
        finite = np.flatnonzero(np.isfinite(mean))
        j0, j1 = finite[-2], finite[-1]
        # d ln M / d ln T over the last step: ≈ 0 for log T growth (ln T / ln T0 − 1
        # over a step is small), 0.5 for √T, 1 for linear (a mistake every round)
        row["T_range"] = f"{horizons[finite[0]]}–{horizons[j1]}"
        row["local_exponent"] = round(
            math.log(max(mean[j1], 1e-9) / max(mean[j0], 1e-9))
            / math.log(horizons[j1] / horizons[j0]), 3)
        row["M_at_T_max"] = round(float(mean[j1]), 1)
        eps = name.split(" ε=")[1]
        other = results.get((cls_name, kind, f"DP-SOA re-run ε={eps}"))
        if family == "Li–Wang–Ye" and other is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                cross = crossing(horizons, mean, np.nanmean(other[0], axis=0))
            row["crosses_rerun_at_T"] = cross
        rows.append(row)
    return rows


def _regime(exponent):
    if exponent < 0.25:
        return "flat / log-like"
    return "√T-like" if exponent < 0.75 else "linear (a mistake nearly every round)"


def verdict(growth, specs):
    """One sentence per ε on the key configuration: how LWY and the re-run variant grow."""
    lines = []
    for eps in sorted({sp[3] for sp in specs.values() if sp[3] is not None}):
        got = {r["learner"].split(" ε=")[0]: r for r in growth
               if (r["class"], r["adversary"]) == KEY_CONFIG
               and r["learner"].endswith(f"ε={eps:g}")}
        parts = []
        for family in ("Li–Wang–Ye", "DP-SOA re-run"):
            r = got.get(family)
            if r is None:
                parts.append(f"{family}: too few horizons reached to say")
                continue
            parts.append(f"{family}: M = {r['M_at_T_max']:g} at T = {r['T_range'].split('–')[1]}, "
                         f"last-step d ln M/d ln T = {r['local_exponent']:g} "
                         f"({_regime(r['local_exponent'])}); fits M = a + b·ln T "
                         f"(R² {r['R2_lnT']:g}) vs a + b·√T (R² {r['R2_sqrtT']:g})")
        cross = got.get("Li–Wang–Ye", {}).get("crosses_rerun_at_T", "")
        lines.append(f"ε = {eps:g}, {KEY_CONFIG[0]}, {KEY_CONFIG[1]}: " + "; ".join(parts)
                     + (f"; {cross}" if cross else "") + ".")
    return lines


def fmt(values):
    """mean ± sd over the seeds that reached this T (their number if not all did)."""
    v = values[np.isfinite(values)]
    if v.size == 0:
        return ""
    text = f"{v.mean():.4g}" if v.size == 1 else f"{v.mean():.4g} ± {v.std(ddof=1):.2g}"
    return text if v.size == values.size else f"{text} (n={v.size})"


# ----------------------------------------------------------------- plot
def plot(path, results, horizons, ldims, specs):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = sorted({(c, k) for c, k, _ in results}, key=lambda p: (list(ldims).index(p[0]),
                                                                    p[1] != "oblivious"))
    names = list(ldims)
    fig, axes = plt.subplots(len(names), 2, figsize=(10, 3.0 * len(names)), squeeze=False)
    colors = {"SOA": "black", "DP-SOA": "tab:blue", "DP-SOA re-run": "tab:orange",
              "Li–Wang–Ye": "tab:green"}
    markers = {"SOA": "o", "DP-SOA": "s", "DP-SOA re-run": "^", "Li–Wang–Ye": "D"}
    t = np.asarray(horizons, dtype=float)
    for cls_name, kind in panels:
        ax = axes[names.index(cls_name), 0 if kind == "oblivious" else 1]
        for (c, k, name), (table, _) in results.items():
            if (c, k) != (cls_name, kind):
                continue
            _, _, family, eps = specs[name]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # unreached T: NaN
                mean = np.nanmean(table, axis=0)
                sd = np.nanstd(table, axis=0)
            ls = "-" if eps in (None, EPSILONS[-1]) else "--"
            # private learners often coincide (a mistake every round): markers tell them apart
            ax.plot(t, mean, ls=ls, marker=markers[family], ms=4, mfc="none", alpha=0.85,
                    color=colors[family], label=name)
            ax.fill_between(t, np.maximum(mean - sd, 0.5), mean + sd, color=colors[family],
                            alpha=0.12, lw=0)
        ax.axhline(ldims[cls_name], color="grey", ls=":", lw=0.8, label="Ldim(C)")
        ax.plot(t, np.log(t), color="grey", ls="-.", lw=0.8, label="ln T (Ω(log T) shape)")
        ax.plot(t, t, color="silver", ls="-", lw=0.6, label="T (a mistake every round)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{cls_name}, {kind} adversary", fontsize=9)
        ax.set_xlabel("T (rounds)")
        ax.set_ylabel("mistakes")
        ax.grid(alpha=0.3, which="both")
    handles, labels = axes[0, 1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=7)
    fig.suptitle("Private online learning of Littlestone classes: mistakes vs T "
                 f"(δ = {DELTA:g}; solid ε = {EPSILONS[-1]:g}, dashed ε = {EPSILONS[0]:g})",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 0.98))
    fig.savefig(path, dpi=90)
    plt.close(fig)


# ----------------------------------------------------------------- main
def main():
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=None, help="seeds per config")
    parser.add_argument("--budget", type=float, default=None,
                        help="wall-clock budget of the mistake runs, seconds "
                        "(default 600, --quick 20)")
    args = parser.parse_args()
    out = output_dir(args)
    start = time.perf_counter()
    horizons = QUICK_HORIZONS if args.quick else FULL_HORIZONS
    n_seeds = args.seeds or (1 if args.quick else 3)
    budget_end = start + (args.budget or (20.0 if args.quick else 600.0))
    seeds = [args.seed + i for i in range(n_seeds)]
    specs = learners()
    cls_map = classes(args.seed)
    if args.quick:  # smoke run: thresholds only, the larger ε only
        specs = {n: sp for n, sp in specs.items() if sp[3] in (None, EPSILONS[-1])}
        cls_map = {n: c for n, c in cls_map.items() if n.startswith("thresholds")}
    ldims = {name: littlestone_dimension(cls) for name, cls in cls_map.items()}

    traced_eps = min((sp[3] for sp in specs.values() if sp[3] is not None), default=None)
    plan = [(c, k, n) for c in cls_map for k in ("oblivious", "adaptive") for n in specs]
    plan.sort(key=lambda p: (p[0], p[1]) != KEY_CONFIG)  # the key question first
    results, rows = {}, []
    for done, (cls_name, kind, name) in enumerate(plan):
        cls, spec = cls_map[cls_name], specs[name]
        t_max = horizons[-1]
        if kind == "adaptive" and (cls_name, kind) != KEY_CONFIG:
            t_max = min(t_max, ADAPTIVE_T_MAX)
        if (cls_name, kind) == KEY_CONFIG:
            first, other = KEY_CAPS[spec[2]]
            caps = [(first if i == 0 else other) / (8 if args.quick else 1)
                    for i in range(len(seeds))]
        else:  # share what is left of the budget evenly over the remaining games
            left = (len(plan) - done) * len(seeds)
            caps = [float(np.clip((budget_end - time.perf_counter()) / left, 0.5,
                                  MAX_CAP))] * len(seeds)
        t0 = time.perf_counter()
        trace_at = ()
        if (cls_name, kind) == KEY_CONFIG and spec[3] in (None, traced_eps):
            trace_at = [t for t in (QUICK_HORIZONS[1:] if args.quick else
                                    COST_HORIZONS) if t <= t_max]
        table, info = run_config(cls_name, cls, kind, name, spec, seeds,
                                 [t for t in horizons if t <= t_max], caps, trace_at)
        table = np.pad(table, ((0, 0), (0, len(horizons) - table.shape[1])),
                       constant_values=np.nan)
        results[(cls_name, kind, name)] = (table, info)
        reached = [t for j, t in enumerate(horizons) if np.isfinite(table[:, j]).any()]
        row = {"class": cls_name, "Ldim": ldims[cls_name], "adversary": kind,
               "learner": name, "T_reached": reached[-1] if reached else 0}
        for j, t in enumerate(horizons):
            if t in (100, 1000, 10**4, 10**5):
                row[f"T={t:.0e}"] = fmt(table[:, j])
                row[f"mean@{t}"] = float(np.nanmean(table[:, j])) \
                    if np.isfinite(table[:, j]).any() else ""
                row[f"sd@{t}"] = float(np.nanstd(table[:, j], ddof=1)) \
                    if np.isfinite(table[:, j]).sum() > 1 else ""
        sw = [s for s in info["switches"] if s is not None and np.isfinite(s)]
        row["switches"] = f"{np.mean(sw):.3g}" if sw else ""
        row["stopped"] = f"{info['stopped']}/{len(seeds)}" if spec[3] else ""
        row["seconds"] = round(time.perf_counter() - t0, 1)
        rows.append(row)
        print(f"  {cls_name} {kind} {name}: " + ", ".join(
            f"T={t}: {fmt(table[:, j])}" for j, t in enumerate(horizons)
            if np.isfinite(table[:, j]).any()) + f" ({row['seconds']} s)", flush=True)

    order = {key: i for i, key in enumerate(
        (c, k, n) for c in cls_map for k in ("oblivious", "adaptive") for n in specs)}
    rows.sort(key=lambda r: order[(r["class"], r["adversary"], r["learner"])])
    growth = growth_rows(results, horizons)
    costs = cost_rows(results, KEY_CONFIG)

    columns = {"class": "class", "Ldim": "Ldim", "adversary": "adversary",
               "learner": "learner"}
    for t in horizons:
        if t in (100, 1000, 10**4, 10**5):
            columns[f"T={t:.0e}"] = f"M(T=10{'²³⁴⁵'[round(math.log10(t)) - 2]})"
    columns.update({"T_reached": "T reached", "switches": "switches",
                    "stopped": "cap hit", "seconds": "s"})
    missing = [n for n, c in (("DPSOAClassifier", DPSOAClassifier),
                              ("AdaptivePrivateOnlineClassifier",
                               AdaptivePrivateOnlineClassifier)) if c is None]
    notes = [
        f"Mean ± sd over {len(seeds)} seeds (seed = learner noise and the game's target). "
        "M(T) for the re-run variant and Li–Wang–Ye is the total of a game of horizon T "
        "(n_rounds = T); for the SOA and DP-SOA the cumulative mistakes of one game.",
        "Reference lines in the plot: Ldim(C) (every deterministic learner concedes it to "
        "the adaptive adversary; the SOA meets it) and ln T — the *shape* of the Ω(log T) "
        "lower bound for private online learners (Cohen et al. 2024; Dmitriev, Szabó & "
        "Sanyal 2024) drawn with constant 1: those theorems give no usable constants.",
        f"Adaptive games stop at T = 10⁴ except on {KEY_CONFIG[0]} (to 10⁵). Wall-clock "
        "caps per (config, learner, seed): on that configuration (first seed / others) "
        + ", ".join(f"{k} {a:g}/{b:g} s" for k, (a, b) in KEY_CAPS.items())
        + f"; elsewhere what is left of the budget, shared evenly (0.5 to {MAX_CAP:g} s). "
        "A game predicted to overrun its cap is skipped: 'T reached' is the largest "
        "horizon played.",
    ]
    if missing:
        notes.append("Not run (not available when the benchmark ran): " + ", ".join(missing))
    warned = {}
    for (_, _, name), (_, info) in results.items():
        for message in info["warnings"]:
            warned.setdefault(name.split(" ε=")[0], set()).add(message)
    for family, messages in warned.items():
        notes.append(f"{family} warned in {len(messages)} distinct ways, e.g. "
                     f"“{sorted(messages)[0]}”")
    notes += verdict(growth, specs)
    notes.append(f"Total run time {time.perf_counter() - start:.0f} s.")
    paths = write_report("online_littlestone", rows, columns, out_dir=out,
                         title="Private online learning of Littlestone classes: mistakes vs T",
                         notes=notes, plot=lambda p: plot(p, results, horizons, ldims, specs))
    growth_cols = {"class": "class", "adversary": "adversary", "learner": "learner",
                   "slope_lnT": "slope vs ln T", "R2_lnT": "R² (ln T)",
                   "slope_sqrtT": "slope vs √T", "R2_sqrtT": "R² (√T)",
                   "T_range": "T", "M_at_T_max": "M(T_max)",
                   "local_exponent": "d ln M / d ln T (last step)",
                   "crosses_rerun_at_T": "LWY vs re-run"}
    cost_cols = {"learner": "learner", "T": "T",
                 "us_per_round": "µs / round (median over seeds)",
                 "us_per_round_traced": "µs / round under tracemalloc (seed 0)",
                 "peak_kB": "peak kB (tracemalloc, minus harness 17 B/round)",
                 "retained_kB": "retained kB after the game"}
    extra = ["", "## log T or √T?", "", markdown_table(growth, growth_cols), "",
             f"## Cost per round and memory vs T ({KEY_CONFIG[1]} {KEY_CONFIG[0]}, "
             f"ε = {traced_eps})", "",
             markdown_table(costs, cost_cols), ""]
    print("\n".join(extra))
    md = next(p for p in paths if p.suffix == ".md")
    md.write_text(md.read_text(encoding="utf-8") + "\n".join(extra), encoding="utf-8")
    with (out / "online_littlestone_cost.csv").open("w", newline="", encoding="utf-8") as fh:
        keys = list(dict.fromkeys(k for r in growth + costs for k in r))
        writer = csv.DictWriter(fh, fieldnames=["section", *keys])
        writer.writeheader()
        for section, rs in (("growth", growth), ("cost", costs)):
            for r in rs:
                writer.writerow({"section": section, **r})


if __name__ == "__main__":
    main()
