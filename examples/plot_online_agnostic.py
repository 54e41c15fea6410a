"""
=========================================================
Private online learning with label noise (agnostic)
=========================================================

A stream of real values x ∈ [0, 1) arrives in blocks of 500; the label is x ≥ 0.6,
flipped with probability 10 % — no threshold is perfect, so the goal is to do nearly as
well as the best one (small regret). Both private learners of Li, Wang & Ye's agnostic
setting work on a finite domain: a public binning (fixed edges, nothing learned from the
data) maps x to one of 16 cells, and the class is the 17 thresholds over the cells.

* :class:`~skdp.online.PrivateExpertsClassifier` — the thresholds as experts, their
  losses from privately counted cells (binary mechanism), Hedge on top;
* :class:`~skdp.online.BatchSanitizedOnlineClassifier` — Alg 3: batches sanitized by a
  private histogram, copies of a non-private learner fed the synthetic rows;
* non-private baselines: scikit-learn's ``SGDClassifier`` on the raw feature, and the
  best threshold in hindsight.

Each learner predicts a block before seeing its labels (prequential evaluation), then
learns from it with ``partial_fit``. Finally a ``GridSearchCV`` over ε inside a
``Pipeline`` charges one shared :class:`~skdp.accounting.PrivacyBudget` for every fit.

Runs in a few seconds.
"""

# %%
# A noisy stream, a public binning and three online learners
# ----------------------------------------------------------
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import SGDClassifier
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skdp import PrivacyBudget, TestingSeed
from skdp.hypotheses import threshold_class
from skdp.online import BatchSanitizedOnlineClassifier, PrivateExpertsClassifier
from skdp.output import figure_path

rng = np.random.default_rng(0)
n_rows, block, n_bins = 30_000, 500, 16
X = rng.random((n_rows, 1))
y = (X[:, 0] >= 0.6).astype(int)
y ^= rng.random(n_rows) < 0.1

EDGES = np.linspace(0.0, 1.0, n_bins + 1)[1:-1]  # public: fixed before seeing any data


def public_bins(X):
    return np.digitize(np.asarray(X, dtype=float)[:, :1], EDGES)


binning = FunctionTransformer(public_bins, validate=True)
thresholds = threshold_class(n_bins)
# (learner, input map): the private learners see the publicly binned feature
learners = {
    "SGDClassifier (non-private)": (SGDClassifier(loss="log_loss", random_state=0), None),
    "private experts, ε = 1": (PrivateExpertsClassifier(
        1.0, experts=thresholds, n_rounds=n_rows, random_state=0), public_bins),
    "Alg 3 batch-sanitized, ε = 1": (BatchSanitizedOnlineClassifier(
        1.0, hypothesis_class=thresholds, n_rounds=n_rows, random_state=0), public_bins),
}
errors = {name: [] for name in learners}
for start in range(0, n_rows, block):
    Xb, yb = X[start:start + block], y[start:start + block]
    for name, (model, to_input) in learners.items():
        Xin = Xb if to_input is None else to_input(Xb)
        if start:
            errors[name].append(np.mean(model.predict(Xin) != yb))
        model.partial_fit(Xin, yb, **({"classes": [0, 1]} if start == 0 else {}))
best = np.mean(y != (X[:, 0] >= 0.6))
for name, errs in errors.items():
    print(f"{name:30s} prequential error {np.mean(errs):.3f}  (best threshold {best:.3f})")

# %%
# Prequential error per block
# ---------------------------
fig, ax = plt.subplots(figsize=(7, 4.4), layout="constrained")
seen = np.arange(block, n_rows, block)
for name, errs in errors.items():
    ax.plot(seen, errs, label=name)
ax.axhline(best, color="gray", linestyle=":", label="best threshold in hindsight")
ax.set_xlabel("rows seen")
ax.set_ylabel("error on the next block")
ax.set_ylim(0, 0.6)
fig.legend(loc="outside lower center", ncol=2, frameon=False)  # under the plot, not over it
fig.savefig(figure_path("plot_online_agnostic"), dpi=90)

# %%
# Model selection charges one shared budget
# -----------------------------------------
# Every fit GridSearchCV makes (3 folds × 2 values of ε, plus the refit) is a new private
# stream and is charged to the same ledger, so the privacy loss of the whole search on
# this dataset is accounted for.
budget = PrivacyBudget(20.0)
pipe = make_pipeline(binning, PrivateExpertsClassifier(experts=thresholds, classes=[0, 1],
                                                       budget=budget, random_state=TestingSeed(0)))
search = GridSearchCV(pipe, {"privateexpertsclassifier__epsilon": [1.0, 4.0]}, cv=3)
search.fit(X[:6000], y[:6000])
print("best ε:", search.best_params_, "accuracy", round(search.best_score_, 3))
print("privacy spent by the search:", budget.spent)
