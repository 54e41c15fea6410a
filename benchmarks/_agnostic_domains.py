"""Alg 3 against the private experts on 16 and 64 points, side by side (issue 17).

Thresholds on N ∈ {16, 64} points, oblivious uniform stream with label noise 0 or 20 %,
ε = 1, δ = 10⁻⁶, T = 10⁵ (``--quick``: 10³), two seeds: Alg 3 with its default shared
copies, Alg 3 with the paper's independent copies (``copies="independent"``, the default
until issue 17), and the private experts. Writes ``online_agnostic_domains.{md,csv,png}``.
Called by ``online_agnostic.py`` (also alone: ``online_agnostic.py --domains-only``).
"""

import csv
import time

import numpy as np
from _report import markdown_table, rng_for

from skdp.hypotheses import threshold_class
from skdp.hypotheses.littlestone import ThresholdVersionSpace
from skdp.online import (
    BatchSanitizedOnlineClassifier,
    NoisyLabels,
    ObliviousAdversary,
    PrivateExpertsClassifier,
    run_online,
)

DOMAINS = (16, 64)
NOISES = (0.0, 0.2)
LEARNERS = ("Alg 3 (shared copies)", "Alg 3 (independent copies)", "Private experts")


def _make(name, cls, T, seed):
    if name == "Private experts":
        return PrivateExpertsClassifier(1.0, 1e-6, cls, n_rounds=T, random_state=seed)
    copies = "shared" if "shared" in name else "independent"
    return BatchSanitizedOnlineClassifier(1.0, 1e-6, cls, n_rounds=T, random_state=seed,
                                          copies=copies)


def run(out, master_seed, quick):
    T = 10**3 if quick else 10**5
    rows, start = [], time.time()
    for n in DOMAINS:
        cls = threshold_class(n)
        labels = cls.label_matrix
        for noise in NOISES:
            by = {}
            for name in LEARNERS:
                regrets = []
                for seed in range(2):
                    rng = rng_for(master_seed, f"domains/{n}/{noise}/{seed}")
                    adv = NoisyLabels(ObliviousAdversary(ThresholdVersionSpace(n)), noise)
                    curve = run_online(_make(name, cls, T, seed), adv, T, random_state=rng)
                    x, y = adv.history()
                    best = int(np.min(np.count_nonzero(labels[:, x] != y, axis=1)))
                    regrets.append(int(curve[-1]) - best)
                by[name] = float(np.mean(regrets))
                rows.append({"N": n, "noise": noise, "learner": name, "T": T,
                             "regret": by[name], "regret_sd": float(np.std(regrets)),
                             "runs": " / ".join(map(str, regrets))})
            for r in rows[-len(LEARNERS):]:
                r["ratio"] = round(r["regret"] / max(by["Private experts"], 1.0), 2)
            print(f"[{time.time() - start:5.0f}s] N={n} noise={noise}: "
                  + ", ".join(f"{k} {v:.0f}" for k, v in by.items()), flush=True)
    columns = {"N": "N", "noise": "label noise", "learner": "learner", "T": "T",
               "regret": "regret", "regret_sd": "± sd", "runs": "per seed",
               "ratio": "÷ private experts"}
    text = "\n".join([
        "# Alg 3 vs private experts on 16 and 64 points (ε = 1)", "",
        markdown_table(rows, columns), "",
        f"- Thresholds on N points, oblivious uniform stream, T = {T}, 2 seeds, δ = 10⁻⁶; "
        "regret against the best threshold on the realised noisy stream.",
        "- Shared copies: one Hedge (AdaHedge) learner fed every synthetic row of each "
        "batch; independent copies: the paper's B learners, one synthetic row each.",
        f"- Run time {time.time() - start:.0f} s.", ""])
    (out / "online_agnostic_domains.md").write_text(text, encoding="utf-8")
    with (out / "online_agnostic_domains.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    _plot(out / "online_agnostic_domains.png", rows)
    print(text)
    return rows


def _plot(path, rows):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(NOISES), figsize=(10, 4), sharey=True)
    width = 0.25
    for ax, noise in zip(axes, NOISES, strict=True):
        for k, name in enumerate(LEARNERS):
            vals = [next(r["regret"] for r in rows if r["N"] == n and r["noise"] == noise
                         and r["learner"] == name) for n in DOMAINS]
            ax.bar(np.arange(len(DOMAINS)) + (k - 1) * width, vals, width, label=name)
        ax.set_xticks(np.arange(len(DOMAINS)), labels=[f"N = {n}" for n in DOMAINS])
        ax.set(title=f"label noise {noise:.0%}, ε = 1", ylabel="regret at T")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
