"""
=====================================================
Streaming Winnow, ConfidentWinnow and DP-Winnow
=====================================================

An online stream arrives in blocks of 1 000 rows. Each learner predicts a block
before it sees its labels (prequential evaluation), then learns from it with
``partial_fit``. We compare scikit-learn's :class:`~sklearn.linear_model.Perceptron`
with skdp's :class:`~skdp.linear.WinnowClassifier`,
:class:`~skdp.linear.ConfidentWinnowClassifier` (Bun & Fang, Alg 2) and the
differentially private :class:`~skdp.linear.DPWinnowClassifier` (Alg 3) at two
privacy levels, on a large-margin target: the label is one of 50 ±1 features
(2 % label noise).

Then a pipeline: DP-Winnow needs features in [−1, 1], and the scaling must use
*public* bounds (a fitted scaler would leak the data), so it sits behind
:class:`~skdp.preprocessing.PublicBoundsClipper`; a ``GridSearchCV`` over ε charges
one shared :class:`~skdp.accounting.PrivacyBudget` for every fit it makes.

Runs in about 10 seconds.
"""

# %%
# A stream and four online learners
# ---------------------------------
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import Perceptron
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skdp import PrivacyBudget
from skdp.exceptions import PrivacyWarning
from skdp.linear import ConfidentWinnowClassifier, DPWinnowClassifier, WinnowClassifier
from skdp.output import figure_path

rng = np.random.default_rng(0)
n_rows, d, block = 100_000, 50, 1_000
X = rng.choice([-1.0, 1.0], size=(n_rows, d))
y = (X[:, 7] > 0).astype(int)
y ^= rng.random(n_rows) < 0.02

learners = {
    "Perceptron (sklearn)": Perceptron(random_state=0),
    "Winnow": WinnowClassifier(learning_rate=0.5, bounds=(-1, 1)),
    "ConfidentWinnow": ConfidentWinnowClassifier(learning_rate=0.5, margin=1.0, bounds=(-1, 1)),
    "DP-Winnow ε=1": DPWinnowClassifier(epsilon=1.0, margin=1.0, n_rounds=n_rows, bounds=(-1, 1),
                                        classes=[0, 1], random_state=0),
    "DP-Winnow ε=4": DPWinnowClassifier(epsilon=4.0, margin=1.0, n_rounds=n_rows, bounds=(-1, 1),
                                        classes=[0, 1], random_state=0),
}
curves = {name: [] for name in learners}
with warnings.catch_warnings():
    warnings.simplefilter("ignore", PrivacyWarning)  # reported below instead
    for start in range(0, n_rows, block):
        Xb, yb = X[start:start + block], y[start:start + block]
        for name, clf in learners.items():
            seen = start > 0
            wrong = int(np.sum(clf.predict(Xb) != yb)) if seen else int(0.5 * len(yb))
            curves[name].append((curves[name][-1] if curves[name] else 0) + wrong)
            clf.partial_fit(Xb, yb, classes=[0, 1])

for name, clf in learners.items():
    extra = ""
    if isinstance(clf, DPWinnowClassifier):
        extra = (f"  updates {clf.n_updates_}/{clf.parameters_.max_updates}"
                 f"{' (cap reached)' if clf.updates_exhausted_ else ''}")
    print(f"{name:22s} cumulative mistakes {curves[name][-1]:6d}{extra}")

# %%
# Mistake curves
# --------------
# Winnow's mistakes stop growing after O(log d / ρ²) updates, up to the label
# noise. DP-Winnow (its default ``setting="scheduled"``) updates once per public
# window of rows with a batch of that window's mistakes and a small learning rate
# η (all of ε goes to its exponential-mechanism draws): it pays for privacy with a
# stretch of near-chance predictions at the start, then its curve flattens too. On
# this large-margin stream (ρ = 1) it learns at ε = 1 and ε = 4; the map of where it
# learns is in the :class:`~skdp.linear.DPWinnowClassifier` docstring.
t = np.arange(1, len(curves["Winnow"]) + 1) * block
fig, ax = plt.subplots(figsize=(7, 4))
for name, curve in curves.items():
    ax.plot(t, curve, label=name, ls="--" if "DP" in name else "-")
ax.plot(t, 0.02 * t, color="grey", lw=0.8, label="label noise (2 %)")
ax.set_xscale("log")
ax.set_xlabel("rows seen (T)")
ax.set_ylabel("cumulative mistakes")
ax.set_title("Prequential mistakes, d = 50, target = one feature")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(figure_path("plot_winnow"), dpi=90)

# %%
# In a pipeline with public bounds, and a grid search that pays
# -------------------------------------------------------------
# Raw features on a known scale (here: roughly ±6). ``bounds=(-6, 6)`` clips them to
# that public range and maps it onto [−1, 1] without looking at the data (as a
# PublicBoundsClipper in front of the learner would). The non-private
# baseline may use a fitted ``StandardScaler``; the private pipeline may not.
# Be warned by the numbers: with the assumed margin 0.3 and 10 000 rows per fold,
# DP-Winnow's guard (computed from ε, δ, ρ, T and d only) says it cannot learn
# within the horizon, so it warns and predicts a privately estimated constant.
X_raw = rng.normal(scale=2.0, size=(20_000, 10))
y_raw = (X_raw[:, 2] > 0).astype(int)
# No random_state: with a budget, a seed is refused (its noise would be replayable).
private = make_pipeline(DPWinnowClassifier(margin=0.3, bounds=(-6.0, 6.0), classes=[0, 1]))
baseline = make_pipeline(StandardScaler(), Perceptron(random_state=0))

budget = PrivacyBudget(epsilon=14.0, delta=1e-4)  # 2 × (1 + 4), and a refit at ε = 4
private.set_params(dpwinnowclassifier__budget=budget)
search = GridSearchCV(private, {"dpwinnowclassifier__epsilon": [1.0, 4.0]}, cv=2)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # PrivacyWarning and the guard's UserWarning
    search.fit(X_raw, y_raw)
fallback = search.best_estimator_[-1].constant_fallback_
print(f"DP-Winnow pipeline: best ε={search.best_params_['dpwinnowclassifier__epsilon']}, "
      f"CV accuracy {search.best_score_:.3f}"
      + (" (a private constant: the guard says margin 0.3 cannot be learnt in 10,000 rows)"
         if fallback else ""))
print(f"Perceptron pipeline accuracy: {baseline.fit(X_raw, y_raw).score(X_raw, y_raw):.3f}")
print(f"The grid search spent ε={budget.spent.epsilon:g} of {budget.epsilon:g}: "
      "2 folds × (1 + 4) + the refit")
