"""
==========================================================================
Private prediction with a query budget: Yan's predictor vs the √T baseline
==========================================================================

A *private predictor* keeps its labelled training sample secret and answers a
stream of queries; the whole transcript of answers is (ε, δ)-differentially
private. Two ways to do it:

* :class:`~skdp.prediction.SubsampleAggregatePredictor` (Dwork & Feldman): k
  teachers on disjoint blocks, a fresh noisy vote per query. With T planned
  queries each answer gets ε/√T-ish privacy, so its noise grows with T.
* :class:`~skdp.prediction.PrivatePredictor` (Yan, "Private Prediction via
  Shrinkage"): the same teachers, but votes go through BetweenThresholds, which
  only pays for *hard* queries (votes near ½); each hard query gets a random label
  that every teacher must then agree with, so the teachers shrink towards one
  hypothesis and hard queries dry up.

We compare both with a non-private logistic regression, inside a ``Pipeline``
with a public-bounds clipper, and show the query budget (``budget_``) at work.
"""

# %%
# Data: a halfspace in R² with public feature bounds
# --------------------------------------------------
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline

from skdp import PrivacyBudget
from skdp.hypotheses import Halfspaces
from skdp.output import figure_path
from skdp.prediction import (
    PrivatePredictor,
    QueryBudgetExhaustedError,
    SubsampleAggregatePredictor,
    shrinkage_parameters,
)
from skdp.preprocessing import PublicBoundsClipper

rng = np.random.default_rng(0)
w, b = np.array([1.0, -0.7]), 0.2


def sample(n):
    X = rng.uniform(-3, 3, size=(n, 2))
    return X, (X @ w >= b).astype(int)


epsilon, delta, cap = 1.0, 1e-6, 4
k = shrinkage_parameters(epsilon, delta, cap)["min_teachers"]
X, y = sample(30 * k)  # 30 labelled rows per teacher
print(f"{k} teachers (the fewest BetweenThresholds' gap allows), n = {len(y)} rows")

# The clipper's bounds are public (the feature range is known in advance), so the
# pipeline is exactly as private as the predictor.
clipper = PublicBoundsClipper(lower=-3.0, upper=3.0)

# %%
# Fit three predictors on the same labelled sample
# ------------------------------------------------
T = 20_000
Xq, yq = sample(T)

yan = make_pipeline(clipper, PrivatePredictor(Halfspaces(2), epsilon=epsilon, delta=delta,
                                              max_hard_queries=cap, mode="halfspace",
                                              n_teachers=k, n_queries=T,
                                              classes=[0, 1], random_state=0)).fit(X, y)
baseline = make_pipeline(clipper, SubsampleAggregatePredictor(
    Halfspaces(2), epsilon=epsilon, delta=delta, n_queries=T, n_teachers=k, classes=[0, 1],
    random_state=0,
)).fit(X, y)
plain = LogisticRegression().fit(X, y)

# %%
# Answer the stream, 1 000 queries at a time
# ------------------------------------------
# Each call spends from the predictor's own ledger ``budget_``. Yan's predictor
# reserves its whole planned cost at the first answer (the composition over the cap
# of hard queries; a bound for the instances used so far would not be a valid
# running total), then answers until the cap of hard queries without further charge.
checkpoints, acc_yan, acc_base, spent_yan, spent_base = [], [], [], [], []
answers_yan, answers_base = [], []
for start in range(0, T, 1000):
    block = Xq[start : start + 1000]
    answers_yan.append(yan.predict(block))
    answers_base.append(baseline.predict(block))
    done = start + len(block)
    checkpoints.append(done)
    acc_yan.append(np.mean(np.concatenate(answers_yan) == yq[:done]))
    acc_base.append(np.mean(np.concatenate(answers_base) == yq[:done]))
    spent_yan.append(yan[-1].privacy_spent_.epsilon)
    spent_base.append(baseline[-1].privacy_spent_.epsilon)

print(f"Yan:      accuracy {acc_yan[-1]:.3f}, hard queries {yan[-1].n_hard_queries_}, "
      f"ε spent {spent_yan[-1]:.3f}")
print(f"baseline: accuracy {acc_base[-1]:.3f}, ε spent {spent_base[-1]:.3f}")
print(f"non-private logistic regression: accuracy {plain.score(Xq, yq):.3f}")

# %%
# The budget is a hard limit
# --------------------------
# The baseline planned T queries: one more is refused before anything is released.
# (A query asked again is answered from the transcript, free.)
try:
    baseline.predict(sample(1)[0])
except QueryBudgetExhaustedError as exc:
    print("baseline refuses:", str(exc)[:90], "...")

# A user budget shared by several fits is charged the same amounts. The clones
# ``cross_val_score`` (or ``GridSearchCV``) makes deep-copy the budget, so they all
# spend from one ledger, and the search stops with BudgetExhaustedError once it is
# spent. (``random_state=None``: clones with one fixed seed would reuse noise.)
shared = PrivacyBudget(epsilon=4.0, delta=1e-5)
cv_model = make_pipeline(clipper, PrivatePredictor(
    Halfspaces(2), epsilon=epsilon, delta=delta, max_hard_queries=cap, mode="halfspace",
    classes=[0, 1], budget=shared, random_state=None,
))
scores = cross_val_score(cv_model, X, y, cv=3)
print(f"3-fold accuracy {np.round(scores, 3)}; shared budget spent {shared.spent}")

# %%
# Plot: accuracy and privacy spent as the stream grows
# ----------------------------------------------------
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
ax1.plot(checkpoints, acc_yan, label="Yan (shrinkage)")
ax1.plot(checkpoints, acc_base, label=f"subsample-and-aggregate (T={T})")
ax1.axhline(plain.score(Xq, yq), color="grey", ls=":", label="non-private LR")
ax1.set_xlabel("queries answered")
ax1.set_ylabel("accuracy so far")
ax1.legend()
ax2.plot(checkpoints, spent_yan, label="Yan")
ax2.plot(checkpoints, spent_base, label="baseline")
ax2.axhline(epsilon, color="k", lw=0.8, ls="--")
ax2.set_xlabel("queries answered")
ax2.set_ylabel("ε spent (budget_)")
ax2.legend()
fig.savefig(figure_path("plot_private_prediction"), dpi=80)
