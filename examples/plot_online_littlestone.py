"""
=========================================================
Private online learning of thresholds (Littlestone class)
=========================================================

An online learner sees one reading x ∈ {0, …, 255} per round, predicts its label,
then learns it. The labels come from an unknown threshold ("x ≥ t"), a class of
Littlestone dimension 8: the non-private Standard Optimal Algorithm
(:class:`~skdp.online.SOAClassifier`) never errs more than 8 times, whatever the
order of the rounds. The private learners publish a hypothesis every round that is
(ε, δ)-differentially private with respect to the whole stream:

* :class:`~skdp.online.DPSOAClassifier` (Golowich & Livni 2021), guaranteed against
  *oblivious* streams (fixed in advance);
* :class:`~skdp.online.AdaptivePrivateOnlineClassifier` (Li, Wang & Ye), whose
  O(log T) mistake bound also holds against an *adaptive* adversary, who sees every
  released hypothesis before choosing the next example.

We play both kinds of adversary for 3 000 rounds, then put the private learner in a
``Pipeline`` behind a public-bounds clipper and cross-validate it, with every fit
charged to one shared :class:`~skdp.accounting.PrivacyBudget`.

Runs in about 10 seconds.
"""

# %%
# Two games: an oblivious stream and an adaptive adversary
# --------------------------------------------------------
# The oblivious stream first shows the points a fresh SOA errs on, then uniform
# points. The adaptive adversary binary-searches the released hypothesis, then keeps
# querying the boundary point it gets wrong: every round whose released hypothesis is
# not the target costs a mistake.
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline

from skdp import PrivacyBudget, TestingSeed
from skdp.exceptions import BudgetExhaustedError, PrivacyWarning
from skdp.hypotheses.littlestone import ThresholdVersionSpace
from skdp.online import (
    AdaptivePrivateOnlineClassifier,
    AdaptiveThresholdAdversary,
    DPSOAClassifier,
    ObliviousAdversary,
    SOAClassifier,
    run_online,
)
from skdp.output import figure_path
from skdp.preprocessing import PublicBoundsClipper

n_domain, n_rounds, eps = 256, 3000, 4.0
thresholds = ThresholdVersionSpace(n_domain)
games = {
    "oblivious stream": ObliviousAdversary(thresholds, target=250, order="worst"),
    "adaptive adversary": AdaptiveThresholdAdversary(n_domain, sees_current=True,
                                                     pinned="seek"),
}


def make_learners():
    return {
        "SOA (non-private)": SOAClassifier(thresholds),
        f"DP-SOA ε={eps:g}": DPSOAClassifier(eps, 1e-6, thresholds, classes=[-1, 1],
                                             random_state=0),
        f"Li–Wang–Ye ε={eps:g}": AdaptivePrivateOnlineClassifier(
            eps, 1e-6, thresholds, n_rounds, classes=[-1, 1], random_state=0),
    }


curves = {}
with warnings.catch_warnings():
    warnings.simplefilter("ignore", PrivacyWarning)  # caps are visible in the curves
    for game, adversary in games.items():
        for name, learner in make_learners().items():
            curves[game, name] = run_online(learner, adversary, n_rounds, random_state=1)
            curve = curves[game, name]
            print(f"{game:18s} {name:18s} {curve[-1]:5d} mistakes, "
                  f"{curve[-1] - curve[-501]:3d} in the last 500 rounds")

# %%
# Mistake curves
# --------------
# The SOA stops at Ldim = 8. The private learners pay a start-up cost, the *forced
# phase*: they keep releasing the fresh learner's hypothesis A(∅) until their copies
# agree enough for a *private* switch. Against the adaptive adversary (which pins its
# target where A(∅) is wrong) both then find the target and err no more — DP-SOA after
# about 60 rounds, Li–Wang–Ye after about 70. On the oblivious stream Li–Wang–Ye finds
# the target too (each of its releases scores the class on every row so far), while
# DP-SOA still errs at 3 000 rounds: its copies agree only once most of them have seen
# the target's boundary point, a 1-in-256 draw of the uniform points. On such streams
# the private experts learner is also a good choice (see "Which learner should I
# use?"). The benchmark ``benchmarks/online_littlestone.py`` measures where each
# learner learns.
fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
t = np.arange(1, n_rounds + 1)
for ax, game in zip(axes, games, strict=True):
    for name in make_learners():
        ax.plot(t, curves[game, name], label=name, ls="-" if "SOA (" in name else "--")
    ax.axhline(thresholds.ldim(), color="grey", lw=0.8, ls=":", label="Ldim = 8")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("round T")
    ax.set_title(game)
axes[0].set_ylabel("cumulative mistakes")
axes[0].legend(fontsize=8)
fig.tight_layout()
fig.savefig(figure_path("plot_online_littlestone"), dpi=90)

# %%
# In a pipeline, cross-validated, one budget for every fit
# --------------------------------------------------------
# The readings come from a sensor that sometimes reports out-of-range values (−5,
# 300). The learner needs integer domain indices in [0, 256): the public bounds
# [0, 255] clip them without looking at the data (a fitted scaler would leak).
# ``cross_val_score`` clones the pipeline for each fold; the clones share the one
# budget, which is charged ε = 4 per fit.
rng = np.random.default_rng(0)
x = rng.integers(-20, 276, size=6000).astype(float)
y = (x >= 100).astype(int)
X = x[:, None]
budget = PrivacyBudget(epsilon=12.0, delta=1e-5)
private = make_pipeline(
    PublicBoundsClipper(0, n_domain - 1, scale=False),
    AdaptivePrivateOnlineClassifier(eps, 1e-6, thresholds, classes=[0, 1], budget=budget,
                                    random_state=TestingSeed(0)),
)
baseline = make_pipeline(PublicBoundsClipper(0, n_domain - 1, scale=False),
                         SOAClassifier(thresholds))
with warnings.catch_warnings():
    warnings.simplefilter("ignore", PrivacyWarning)
    private_scores = cross_val_score(private, X, y, cv=3)
baseline_scores = cross_val_score(baseline, X, y, cv=3)
print(f"Li–Wang–Ye pipeline, 3-fold accuracy: {private_scores.round(3)}")
print(f"SOA pipeline,        3-fold accuracy: {baseline_scores.round(3)}")
print(f"The cross-validation spent ε={budget.spent.epsilon:g} of {budget.epsilon:g} "
      "(3 fits × ε = 4).")
try:
    private.fit(X, y)
except BudgetExhaustedError as exc:
    print(f"One more fit is refused before it looks at the data: {exc}")
