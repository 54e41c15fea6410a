"""Agnostic private online learning: regret vs T against the best hypothesis in hindsight.

Class: thresholds on {0, …, 15} (17 hypotheses, Ldim 4). Streams: a random target
threshold; the oblivious adversary draws uniform points, the adaptive one is the
binary-search adversary that sees the released hypothesis (``pinned="seek"``); labels
are then flipped with probability 0, 5 or 20 % (:class:`skdp.online.NoisyLabels`).
Regret = online mistakes − mistakes of the best threshold on the realised noisy stream.

Learners: non-private Hedge (sampled, η = √(8 ln H / T); a few lines below) and SOA
(restart on inconsistency), Alg 3 (:class:`~skdp.online.BatchSanitizedOnlineClassifier`)
at its defaults (B = 2·(2N)/ε capped at √T, AdaHedge copies, projected histogram
sanitizer) and, at ε = 1, at the earlier worst-case preset ("Alg 3 worst-case": B =
⌈(2N/ε)^{2/3}·T^{1/3}/(ln H)^{1/3}⌉, fixed η = √(8 ln H/(T/B)), histogram clipped at 0),
the private experts learner (:class:`~skdp.online.PrivateExpertsClassifier`), and the
realizable private learners (DP-SOA, Li–Wang–Ye) when importable, at ε ∈ {1, 4}, δ =
10⁻⁶. Every learner is tuned to the horizon (``n_rounds=T``). T = 10², 10³, 10⁴, 10⁵;
against the adaptive adversary up to 10⁴; SOA up to 10⁴ (its Python loop runs once per
mistake, i.e. on most noisy rows); the realizable private learners up to 10³ (their own
benchmark, ``online_littlestone.py``, covers them; round-by-round play in Python costs
0.5–2 ms a round); ``--quick``: T ≤ 10³. Two seeds per cell. Slopes: least-squares fit
of log(mean regret) on log T over the T with positive
mean regret (theory: Õ(T^{3/4}) for Alg 3 with the generic sanitizer, Õ(T^{2/3}) with
this histogram sanitizer, Õ(√T) for the experts route).

A second part (``_agnostic_domains.py``) sets Alg 3's default shared copies, the paper's
independent copies and the private experts side by side on 16 and 64 points, T = 10⁵,
ε = 1 (``online_agnostic_domains.*``); ``--domains-only`` runs just that part.

``python benchmarks/online_agnostic.py`` (full: 17 min measured on 2 shared, busy cores) or
``--quick``.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import csv
import math
import time
import warnings

import _agnostic_domains
import numpy as np
from _report import make_parser, output_dir, redraw, rng_for, write_report

from skdp.exceptions import PrivacyWarning
from skdp.hypotheses import threshold_class
from skdp.online import (
    AdaptiveThresholdAdversary,
    BatchSanitizedOnlineClassifier,
    HistogramSanitizer,
    NoisyLabels,
    ObliviousAdversary,
    PrivateExpertsClassifier,
    SOAClassifier,
    run_online,
)

try:
    from skdp.online import DPSOAClassifier
except ImportError:  # pragma: no cover - the realizable learners may not be merged yet
    DPSOAClassifier = None
try:
    from skdp.online import AdaptivePrivateOnlineClassifier
except ImportError:  # pragma: no cover
    AdaptivePrivateOnlineClassifier = None

N_DOMAIN = 16
CLASS = threshold_class(N_DOMAIN)
LABELS = CLASS.label_matrix
EPSILONS = (1.0, 4.0)
DELTA = 1e-6
NOISES = (0.0, 0.05, 0.2)


# ----------------------------------------------------------------- the Hedge baseline
class Hedge:
    """Non-private Hedge over the class, one sampled hypothesis per round.

    Implements the base-learner protocol ``run_online`` plays round by round (every
    round is an update: Hedge is not conservative); oblivious streams use
    :meth:`mistakes`, vectorised.
    """

    def __init__(self, labels, n_rounds, rng):
        self.labels = labels
        self.n_domain = labels.shape[1]
        self.mistake_bound = 0
        self.eta = math.sqrt(8.0 * math.log(labels.shape[0]) / n_rounds)
        self.rng = rng
        self.loss = np.zeros(labels.shape[0])
        self._draw()

    def _draw(self):
        w = np.exp(-self.eta * (self.loss - self.loss.min()))
        self.h = int(self.rng.choice(w.size, p=w / w.sum()))

    def predict_one(self, x):
        return int(self.labels[self.h, x])

    def predict(self, x):
        return self.labels[self.h, np.asarray(x)]

    def update(self, x, y):
        self.loss += self.labels[:, x] != y
        self._draw()
        return True

    def copy(self):  # pragma: no cover - protocol only
        raise NotImplementedError

    def hypothesis_key(self):
        return self.h

    def mistakes(self, x, y):
        losses = (self.labels[:, x] != y).T  # (T, H)
        before = np.vstack([np.zeros((1, losses.shape[1])), np.cumsum(losses, axis=0)[:-1]])
        w = np.exp(-self.eta * (before - before.min(axis=1, keepdims=True)))
        cdf = np.cumsum(w / w.sum(axis=1, keepdims=True), axis=1)
        h = np.minimum(np.count_nonzero(cdf < self.rng.random(len(x))[:, None], axis=1),
                       w.shape[1] - 1)
        return np.cumsum(self.labels[h, x] != y)


# ----------------------------------------------------------------- learners and games
def learners():
    """name → (factory(T, seed), family, ε, (max T oblivious, max T adaptive) or None)."""
    out = {"Hedge": (None, "Hedge (non-private)", None, None),
           "SOA": (lambda T, seed: SOAClassifier(CLASS), "SOA (non-private)", None,
                   (10**4, 10**4))}
    for eps in EPSILONS:
        out[f"Alg 3 ε={eps:g}"] = (
            lambda T, seed, eps=eps: BatchSanitizedOnlineClassifier(
                eps, DELTA, CLASS, n_rounds=T, random_state=seed),
            "Alg 3 (batch sanitized)", eps, None)
        if eps == 1.0:
            out["Alg 3 worst-case ε=1"] = (
                lambda T, seed: BatchSanitizedOnlineClassifier(
                    1.0, DELTA, CLASS, n_rounds=T, batch_size=worst_case_batch(T, 1.0),
                    learning_rate="auto", sanitizer=HistogramSanitizer(post="clip"),
                    random_state=seed),
                "Alg 3, earlier worst-case preset", 1.0, None)
        out[f"Experts ε={eps:g}"] = (
            lambda T, seed, eps=eps: PrivateExpertsClassifier(
                eps, DELTA, CLASS, n_rounds=T, random_state=seed),
            "Private experts", eps, None)
        if DPSOAClassifier is not None:
            out[f"DP-SOA ε={eps:g}"] = (
                lambda T, seed, eps=eps: DPSOAClassifier(eps, DELTA, CLASS, n_rounds=T,
                                                         random_state=seed),
                "DP-SOA (realizable)", eps, (10**3, 10**3))
        if AdaptivePrivateOnlineClassifier is not None:
            out[f"Li–Wang–Ye ε={eps:g}"] = (
                lambda T, seed, eps=eps: AdaptivePrivateOnlineClassifier(
                    eps, DELTA, CLASS, T, random_state=seed),
                "Li–Wang–Ye (realizable)", eps, (10**3, 10**3))
    return out


def worst_case_batch(T, eps):
    """B of the earlier default: balances √(T·B·ln H) against 2N·T/(εB)."""
    b = (2 * N_DOMAIN / eps) ** (2 / 3) * T ** (1 / 3) / math.log(LABELS.shape[0]) ** (1 / 3)
    return int(min(max(math.ceil(b), 1), T))


def adversary(kind, noise):
    inner = (ObliviousAdversary(CLASS) if kind == "oblivious" else
             AdaptiveThresholdAdversary(N_DOMAIN, sees_current=True, pinned="seek"))
    return NoisyLabels(inner, noise)


def play(name, factory, kind, noise, T, seed, rng):
    adv = adversary(kind, noise)
    if name == "Hedge":
        if kind == "oblivious":
            x, y = adv.reset(rng).stream(T)
            curve = Hedge(LABELS, T, rng).mistakes(x, y)
        else:
            curve = run_online(Hedge(LABELS, T, rng), adv, T, random_state=rng)
    else:
        curve = run_online(factory(T, seed), adv, T, random_state=rng)
    x, y = adv.history()
    best = int(np.min(np.count_nonzero(LABELS[:, x] != y, axis=1)))
    return int(curve[-1]), best


def fit_slope(ts, regrets):
    ts, regrets = np.asarray(ts, float), np.asarray(regrets, float)
    ok = regrets > 0
    if ok.sum() < 2:
        return math.nan
    return float(np.polyfit(np.log(ts[ok]), np.log(regrets[ok]), 1)[0])


def ratios(rows, longest):
    """(Alg 3 variant, adversary, noise, T, regret ÷ experts' regret) at equal ε, largest T."""
    by = {(r["learner"], r["adversary"], r["noise"], r["T"]): r["regret"] for r in rows}
    out = []
    for (learner, adv, noise), T in longest.items():
        if not learner.startswith("Alg 3"):
            continue
        eps = learner.rsplit("ε=", 1)[1]
        experts = by.get((f"Experts ε={eps}", adv, noise, T))
        if experts:
            out.append((learner, adv, noise, T, by[(learner, adv, noise, T)] / experts))
    return out


# ----------------------------------------------------------------- the run
# The figure shows the ε = 1 learners (ε = 4 is in the table and the CSV):
# (row's learner, legend label, line style, colour).
FIGURE_SERIES = (
    ("Alg 3 ε=1", "Alg 3 (batch-and-sanitize)", "-o", "tab:red"),
    ("Alg 3 worst-case ε=1", "Alg 3, earlier worst-case preset", "--o", "salmon"),
    ("Experts ε=1", "private experts", "-s", "tab:blue"),
    ("DP-SOA ε=1", "DP-SOA (assumes realizable)", "-^", "tab:purple"),
    ("Li–Wang–Ye ε=1", "Li–Wang–Ye (assumes realizable)", "-v", "tab:green"),
    ("Hedge", "Hedge (not private)", "-", "grey"),
    ("SOA", "SOA (not private)", "-", "black"),
)


def draw_figure(rows, path):
    """Regret against T at ε = 1, one panel per adversary × label noise, from the
    rows (or the CSV): √T and T^(3/4) as references."""
    import _plot

    def val(r, key):
        return float(r[key])

    horizons = np.array(sorted({val(r, "T") for r in rows}))
    panels = [(kind, noise) for kind in ("oblivious", "adaptive") for noise in NOISES]
    with _plot.figure(path, len(panels), ncols=3, panel_height=2.1, sharex=True,
                      sharey=True) as (fig, axes):
        for ax, (kind, noise) in zip(axes, panels, strict=True):
            for learner, label, style, color in FIGURE_SERIES:
                sel = sorted((val(r, "T"), max(val(r, "regret"), 0.5)) for r in rows
                             if r["learner"] == learner and r["adversary"] == kind
                             and val(r, "noise") == noise)
                if sel:
                    ax.plot(*zip(*sel, strict=True), style, color=color, label=label,
                            markersize=4)
            ax.plot(horizons, np.sqrt(horizons), ":", color="grey", lw=1.2,
                    label=r"$\sqrt{T}$")
            ax.plot(horizons, horizons ** 0.75, "-.", color="grey", lw=1.2,
                    label=r"$T^{3/4}$")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"{kind}, noise {noise:.0%}")
        for ax in axes[3:]:
            ax.set_xlabel("rounds T")
        for ax in axes[::3]:
            ax.set_ylabel("regret")
        _plot.legend_below(fig, axes, ncol=3)


def main():
    parser = make_parser(__doc__.splitlines()[0], plot_only=True)
    parser.add_argument("--domains-only", action="store_true",
                        help="run only the 16 / 64-point comparison of Alg 3 and experts")
    args = parser.parse_args()
    out = output_dir(args)
    if args.plot_only:
        return redraw("online_agnostic", draw_figure, out)
    _agnostic_domains.run(out, args.seed, args.quick)
    if args.domains_only:
        return
    horizons = (10**2, 10**3) if args.quick else (10**2, 10**3, 10**4, 10**5)
    adaptive_max = 10**3 if args.quick else 10**4
    n_seeds = 2
    rows, start = [], time.time()
    warnings.simplefilter("ignore", PrivacyWarning)
    for name, (factory, family, eps, max_t) in learners().items():
        for kind in ("oblivious", "adaptive"):
            for noise in NOISES:
                for T in horizons:
                    limit = adaptive_max if kind == "adaptive" else math.inf
                    if max_t:
                        limit = min(limit, max_t[kind == "adaptive"])
                    if limit < T:
                        continue
                    regrets, mistakes, bests, t0 = [], [], [], time.time()
                    for seed in range(n_seeds):
                        rng = rng_for(args.seed, f"{name}/{kind}/{noise}/{T}/{seed}")
                        m, b = play(name, factory, kind, noise, T, seed, rng)
                        mistakes.append(m)
                        bests.append(b)
                        regrets.append(m - b)
                    rows.append({
                        "learner": name, "family": family,
                        "epsilon": "—" if eps is None else eps, "adversary": kind,
                        "noise": noise, "T": T, "mistakes": float(np.mean(mistakes)),
                        "best": float(np.mean(bests)), "regret": float(np.mean(regrets)),
                        "regret_sd": float(np.std(regrets)),
                        "regret_per_T": float(np.mean(regrets)) / T,
                        "seconds": (time.time() - t0) / n_seeds,
                    })
                    print(f"[{time.time() - start:6.0f}s] {name:18s} {kind:9s} "
                          f"noise={noise:<4} T={T:<6} regret={np.mean(regrets):9.1f}",
                          flush=True)

    slopes = []
    for key in dict.fromkeys((r["learner"], r["adversary"], r["noise"]) for r in rows):
        sel = [r for r in rows if (r["learner"], r["adversary"], r["noise"]) == key]
        slope = fit_slope([r["T"] for r in sel], [r["regret"] for r in sel])
        for r in sel:
            r["slope"] = slope
        slopes.append((*key, slope, max(r["T"] for r in sel)))

    columns = {"learner": "learner", "adversary": "adversary", "noise": "noise", "T": "T",
               "mistakes": "mistakes", "best": "best in hindsight", "regret": "regret",
               "regret_sd": "± sd", "regret_per_T": "regret / T",
               "slope": "log-log slope"}
    longest = {}
    for r in rows:
        key = (r["learner"], r["adversary"], r["noise"])
        longest[key] = max(longest.get(key, 0), r["T"])
    big = [r for r in rows if r["T"] == longest[(r["learner"], r["adversary"], r["noise"])]]
    notes = [
        f"{n_seeds} seeds per cell; thresholds on {N_DOMAIN} points; δ = {DELTA:g}. "
        "The table shows the largest T of each curve; the CSV has every T.",
        "Slopes (log mean regret vs log T): " + "; ".join(
            f"{learner} / {adv} / noise {noise:g}: {s:.2f} (T ≤ {tmax:g})"
            for learner, adv, noise, s, tmax in slopes
            if not learner.startswith(("DP-SOA", "Li"))),
        "Alg 3 ÷ private experts (regret at the largest T of each curve): " + "; ".join(
            f"{alg} / {adv} / noise {noise:g} (T = {T:g}): {ratio:.2f}"
            for alg, adv, noise, T, ratio in ratios(rows, longest)),
        "Theory: Alg 3 Õ(T^{3/4}) with the paper's generic sanitizer (Cor 4.3), Õ(T^{2/3}) "
        "with the finite-domain histogram sanitizer and worst-case tuning; with AdaHedge "
        "copies and B ∝ 2N/ε it is about ln H·(B + 2N/ε)/Δ on streams with a gap Δ "
        "(constant in T), √(T·B·ln H) + sanitizer error on any stream; experts Õ(√T) "
        "(Thm 4.4 route); Hedge O(√(T ln H)).",
        f"Total time {time.time() - start:.0f} s.",
    ]

    def plot(path):
        draw_figure(rows, path)

    write_report("online_agnostic", big, columns, out_dir=out,
                 title="Agnostic private online learning: regret vs T", notes=notes,
                 plot=plot)
    # the CSV gets every T, not only the table's rows
    with (out / "online_agnostic.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        for r in rows:
            writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v)
                             for k, v in r.items()})


if __name__ == "__main__":
    main()
