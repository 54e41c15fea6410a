"""
=====================================================================
Compare a private learner against a baseline, privately
=====================================================================

Is a private decision list better, on this data, than a private linear baseline?
Comparing them on the private rows — with ``GridSearchCV`` and exact scores — would
leak: each validation score and the choice of the winner are exact statistics of
the rows. :class:`~skdp.model_selection.PrivateRandomizedSearchCV` makes the
comparison itself private: each trial draws a candidate (a
:class:`~skdp.DPDecisionListClassifier` with some ``max_rules``, or the baseline
:class:`~skdp.DPWinnowClassifier`), fits it privately on 75 % of the rows and
releases a noisy accuracy on the other 25 %; after a random, secret number of
trials only the best is released. The whole comparison costs a fixed total ε —
here 3, so each trial gets ε₀ = 1 (the default geometric stopping law costs 3ε₀) —
however many candidates there are.

We repeat the private comparison 20 times (each with its own budget) to show how
often each family wins and how the chosen models do on held-out test rows; a
non-private logistic regression is shown for reference only.

Runs in about 20 seconds.
"""

# %%
# The candidates and the plan
# ---------------------------
import warnings
from collections import Counter

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline

from skdp import DPDecisionListClassifier, DPWinnowClassifier, PrivacyBudget
from skdp.datasets import breast_cancer_public_bounds
from skdp.model_selection import PrivateRandomizedSearchCV
from skdp.output import figure_path
from skdp.preprocessing import PublicBoundsBinarizer

data = load_breast_cancer()
X_train, X_test, y_train, y_test = train_test_split(
    data.data, data.target, test_size=0.3, random_state=0)
bounds = breast_cancer_public_bounds(data.feature_names)  # published ranges: public

pipe = Pipeline([("bin", PublicBoundsBinarizer(bounds=bounds, n_thresholds=3)),
                 ("clf", DPDecisionListClassifier(classes=[0, 1]))])
candidates = [
    {"clf": [DPDecisionListClassifier(classes=[0, 1])], "clf__max_rules": [1, 2, 4, 8, 16]},
    {"clf": [DPWinnowClassifier(classes=[0, 1])]},  # the baseline
]


def private_comparison(budget):
    return PrivateRandomizedSearchCV(pipe, candidates, epsilon=3.0, delta=1e-5,
                                     budget=budget)  # E[K] = 30 trials on average


print(private_comparison(PrivacyBudget(3.0, 1e-5)).plan())

# %%
# One private comparison
# ----------------------
# The ledger holds one charge for the whole comparison: exactly the plan's total.
warnings.simplefilter("ignore")  # learners' notes on what they can learn at this ε
budget = PrivacyBudget(3.0, 1e-5)
search = private_comparison(budget).fit(X_train, y_train)
winner = type(search.best_params_["clf"]).__name__
print(f"winner: {winner} {search.best_params_.get('clf__max_rules', '')}, "
      f"noisy validation accuracy {search.best_score_:.3f}")
print(f"ledger: {budget.spent} in {len(budget.charges)} charge(s)")

# %%
# Twenty private comparisons, and the reference
# ---------------------------------------------
def family(params):
    if "clf__max_rules" in params:
        return f"decision list, max_rules={params['clf__max_rules']}"
    return "baseline (DP-Winnow)"


wins, accuracy = Counter(), {}
for _ in range(20):
    search = private_comparison(PrivacyBudget(3.0, 1e-5)).fit(X_train, y_train)
    name = family(search.best_params_)
    wins[name] += 1
    accuracy.setdefault(name, []).append(search.score(X_test, y_test))  # public test rows

reference = LogisticRegression(max_iter=5000).fit(X_train, y_train).score(X_test, y_test)
names = ["baseline (DP-Winnow)"] + [f"decision list, max_rules={r}" for r in (1, 2, 4, 8, 16)]
for name in names:
    acc = f"{np.mean(accuracy[name]):.3f}" if name in accuracy else "-"
    print(f"{name:30s} chosen {wins[name]:2d}/20, test accuracy {acc}")
print(f"non-private logistic regression (reference): {reference:.3f}")

fig, ax = plt.subplots(figsize=(7, 3.2), layout="constrained")
means = [np.mean(accuracy.get(n, [0.0])) for n in names]
sds = [np.std(accuracy.get(n, [0.0])) for n in names]
ax.barh(names, means, xerr=sds, color="tab:blue")
for y_pos, n in enumerate(names):
    ax.annotate(f"chosen {wins[n]}/20", (0.02, y_pos), va="center", fontsize=8,
                color="white" if wins[n] else "black")
ax.axvline(reference, color="black", linestyle="--", linewidth=1,
           label="non-private logistic regression")
ax.set_xlim(0, 1)
ax.set_xlabel("test accuracy of the privately chosen model (total ε = 3)")
ax.legend(loc="lower right", fontsize=8)
fig.savefig(figure_path("plot_private_model_selection"), dpi=90)
