"""DP-Winnow on a high-dimensional sparse bag-of-words stream, against Perceptron.

Data (simulated): a vocabulary of d = 20 000 words; each document holds 40 word
occurrences drawn from a Zipf(1.1) law over the vocabulary (a few frequent words, a
long tail), stored as a CSR count matrix (≈ 0.2 % non-zero). Label: the document
mentions one of k = 5 topic words picked among the mid-frequency ones (an OR of 5
literals: margin ρ = 1/9 on word-presence features with an intercept; ≈ 20 % positive).
Every learner reads the same CSR blocks: skdp's Winnow family never densifies them
(``bounds=(-1, 1)`` turns counts into word presence, 0 stays 0), and scikit-learn's
Perceptron takes CSR natively. A dense copy of one 1000-row block would take 160 MB.

Learners: Perceptron (not private), Winnow (not private, η = ρ), DP-Winnow with its
defaults (``setting="scheduled"``, ``margin=ρ``, ``n_rounds=T``, δ = 10⁻⁶) at
ε ∈ {0.5, 1, 2, 4, 8}. Prequential: each block of 1000 rows is predicted, then learnt.
Reported per learner: accuracy over the last 20 % of the stream (mean ± sd over seeds),
the majority-label rate for reference, whether DP-Winnow's guard ran the learner or its
private constant, and rows/s of ``partial_fit``. ``python benchmarks/winnow_sparse.py``
(T = 10⁶, 3 seeds, ≈ 10 minutes) or ``--quick`` (T = 2·10⁴, 1 seed).
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import time
import warnings

import numpy as np
import scipy.sparse as sp
from _report import make_parser, output_dir, rng_for, write_report
from sklearn.linear_model import Perceptron

from skdp.linear import DPWinnowClassifier, WinnowClassifier

VOCABULARY = 20_000
WORDS_PER_DOC = 40
TOPIC_WORDS = 5
RHO = 1.0 / (2 * TOPIC_WORDS - 1)
EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
DELTA = 1e-6
BLOCK = 1000
TAIL = 0.2  # accuracy is measured on the last 20 % of the stream


def bag_of_words(n, rng):
    """CSR counts (n × VOCABULARY) and labels: any of TOPIC_WORDS mid-frequency words."""
    ranks = np.arange(1, VOCABULARY + 1)
    p = ranks ** -1.1
    p /= p.sum()
    chunks = []
    for start in range(0, n, 100_000):  # in chunks: a 10⁶-row draw at once needs > 1 GB
        m = min(100_000, n - start)
        words = rng.choice(VOCABULARY, size=(m, WORDS_PER_DOC), p=p).astype(np.int32)
        rows = np.repeat(np.arange(m, dtype=np.int32), WORDS_PER_DOC)
        chunk = sp.csr_matrix((np.ones(rows.size, dtype=np.float32), (rows, words.ravel())),
                              shape=(m, VOCABULARY))
        chunk.sum_duplicates()
        chunks.append(chunk)
    X = sp.vstack(chunks, format="csr")
    # Topic words around rank 100: together in ~20 % of the documents.
    topic = rng.choice(np.arange(50, 150), size=TOPIC_WORDS, replace=False)
    y = (X[:, topic].getnnz(axis=1) > 0).astype(int)
    return X, y


def run(make, X, y):
    """Prequential accuracy on the tail, rows/s of partial_fit, the fitted learner."""
    clf, correct, tail_rows, fit_seconds = make(), 0, 0, 0.0
    tail_start = int(len(y) * (1 - TAIL))
    for s in range(0, len(y), BLOCK):
        Xb, yb = X[s:s + BLOCK], y[s:s + BLOCK]
        if s >= tail_start:
            pred = clf.predict(Xb) if s else np.zeros_like(yb)
            correct += int(np.sum(pred == yb))
            tail_rows += len(yb)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf.partial_fit(Xb, yb, classes=[0, 1])
        fit_seconds += time.perf_counter() - start
    return correct / tail_rows, len(y) / fit_seconds, clf


def learners(n):
    """(name, ε, make(seed)); DP-Winnow's horizon T is the stream's public length n."""
    yield "Perceptron (not private)", None, lambda seed: Perceptron(random_state=seed)
    yield "Winnow (not private)", None, lambda seed: WinnowClassifier(
        learning_rate=RHO, bounds=(-1, 1))
    for eps in EPSILONS:
        yield "DP-Winnow", eps, (lambda seed, eps=eps: DPWinnowClassifier(
            epsilon=eps, delta=DELTA, margin=RHO, n_rounds=n, bounds=(-1, 1),
            classes=[0, 1], random_state=seed))


def main():
    parser = make_parser(__doc__.splitlines()[0])
    args = parser.parse_args()
    n = 20_000 if args.quick else 1_000_000
    seeds = [args.seed] if args.quick else [args.seed + i for i in range(3)]
    # Seeds outer, one stream in memory at a time (10⁶ rows: ≈ 300 MB of float32 CSR).
    results, majority, first = {}, [], None
    for s in seeds:
        X, y = bag_of_words(n, rng_for(s, "winnow_sparse"))
        first = first or (X.nnz, float(np.mean(y)))
        majority.append(float(np.mean(y[int(n * (1 - TAIL)):] == 0)))
        for name, eps, make in learners(n):
            acc, rate, clf = run(lambda s=s, make=make: make(s), X, y)
            entry = results.setdefault((name, eps), {"acc": [], "rate": [], "mode": ""})
            entry["acc"].append(acc)
            entry["rate"].append(rate)
            if eps is not None:
                entry["mode"] = "private constant" if clf.constant_fallback_ else "learner"
        del X, y
    rows = [{"learner": name, "epsilon": eps if eps is not None else "",
             "accuracy": float(np.mean(e["acc"])), "sd": float(np.std(e["acc"])),
             "majority": float(np.mean(majority)), "mode": e["mode"],
             "rows_per_s": float(np.median(e["rate"]))}
            for (name, eps), e in results.items()]
    columns = {"learner": "learner", "epsilon": "ε", "accuracy": "tail accuracy",
               "sd": "sd", "majority": "majority label", "mode": "DP-Winnow ran",
               "rows_per_s": "partial_fit rows/s"}
    nnz, positive = first
    notes = [
        f"T = {n} rows, d = {VOCABULARY}, density {nnz / (n * VOCABULARY):.4f} ({nnz / n:.1f} "
        f"non-zeros a row), {positive:.3f} positive (first seed); {len(seeds)} seed(s); "
        f"blocks of {BLOCK}; accuracy over the last {TAIL:.0%} (prequential).",
        "Every learner reads CSR blocks; none densifies (tests/linear/test_winnow_sparse.py "
        "checks skdp's with toarray/todense patched to fail).",
        "DP-Winnow's guard decides from public quantities (ε, δ, ρ, T, d) whether it can "
        "learn within T rows; 'private constant' means it predicts a noisy majority label.",
    ]
    out = output_dir(args)

    def plot(path):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        dp = [r for r in rows if r["learner"] == "DP-Winnow"]
        fig, ax = plt.subplots(figsize=(6.4, 4.6))
        ax.errorbar([r["epsilon"] for r in dp], [r["accuracy"] for r in dp],
                    yerr=[r["sd"] for r in dp], marker="o", capsize=3, label="DP-Winnow")
        styles = {"Perceptron (not private)": ("--", "tab:orange"),
                  "Winnow (not private)": (":", "tab:green")}
        for r in rows:
            if r["learner"] in styles:
                style, color = styles[r["learner"]]
                ax.axhline(r["accuracy"], linestyle=style, color=color, linewidth=1.5,
                           label=f"{r['learner']}: {r['accuracy']:.3f}")
        ax.axhline(rows[0]["majority"], color="black", linewidth=0.8,
                   label=f"majority label: {rows[0]['majority']:.3f}")
        ax.set_xscale("log", base=2)
        ax.set_xticks(EPSILONS, [f"{e:g}" for e in EPSILONS])
        ax.set_xlabel("ε (δ = 1e-6)")
        ax.set_ylabel(f"accuracy, last {TAIL:.0%} of the stream")
        ax.set_title(f"Sparse bag of words, d = {VOCABULARY}, T = {n}")
        # Below the axes, never over the data (the curves span the whole height).
        fig.legend(loc="lower center", ncol=2, fontsize="small", frameon=False)
        fig.tight_layout(rect=(0, 0.14, 1, 1))
        fig.savefig(path, dpi=120)
        plt.close(fig)

    write_report("winnow_sparse", rows, columns, out_dir=out,
                 title="DP-Winnow on a sparse bag-of-words stream", notes=notes, plot=plot)


if __name__ == "__main__":
    main()
