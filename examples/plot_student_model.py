"""
=====================================================================
A private student model: label public rows once, then predict freely
=====================================================================

A private predictor (:class:`~skdp.prediction.PrivatePredictor`) keeps its labelled
sample secret and pays privacy for every *new* query it answers. When many queries
are coming, label a public, unlabeled set once with
:func:`~skdp.prediction.label_public` and train any scikit-learn model — the
*student* — on those labels. The student is a function of public rows and of the
predictor's private answers, so it is exactly as private as the answers
(post-processing: the teacher–student pattern of PATE), and it answers every later
query for free.

Here the student (a plain ``LogisticRegression``) is compared, at ε = 1 and ε = 4,
with the predictor answering the test queries itself. On the command line the same
labelling is ``skdp label MODEL.pkl PUBLIC.csv --out LABELS.csv``.
"""

# %%
# Data: a private labelled sample, public unlabeled rows, test rows
# -----------------------------------------------------------------
# A noisy halfspace in [-1, 1]^5 (the best possible accuracy is about 0.93). The
# public rows come from the same distribution but are not the private sample: the
# student publishes the rows it is trained on, so they must be public.
import matplotlib

matplotlib.use("Agg")

import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LogisticRegression

from skdp.output import figure_path
from skdp.prediction import PrivatePredictor, label_public

rng = np.random.default_rng(0)
d = 5
w = rng.normal(size=d)
w /= np.linalg.norm(w)


def sample(n):
    X = rng.uniform(-1, 1, size=(n, d))
    return X, (rng.random(n) < 1 / (1 + np.exp(-12 * X @ w))).astype(int)


X_private, y_private = sample(20_000)
X_public, _ = sample(5_000)  # no labels: only the predictor's answers will be used
X_test, y_test = sample(5_000)

# %%
# Label the public rows privately, train the student
# --------------------------------------------------
# Each predictor plans for 5 000 queries and spends its whole (ε, δ) on them. A seed
# makes the example reproducible; it is a testing mode (skdp warns about it).
warnings.filterwarnings("ignore", message=".*random_state.*")


def predictor(epsilon, seed):
    return PrivatePredictor(epsilon=epsilon, delta=1e-6, n_queries=5_000, classes=[0, 1],
                            random_state=seed).fit(X_private, y_private)


results = {}
for epsilon in (1.0, 4.0):
    teacher = predictor(epsilon, seed=1)
    labels = label_public(teacher, X_public)
    student = LogisticRegression().fit(X_public, labels)
    # The predictor answering the test rows itself (a second predictor, same ε).
    direct = predictor(epsilon, seed=2)
    results[epsilon] = {
        "student": student.score(X_test, y_test),
        "direct": direct.score(X_test, y_test),
    }
    print(f"ε = {epsilon:g}: {teacher.n_teachers_} teachers, "
          f"{teacher.n_hard_queries_} hard queries, labelling spent ε = "
          f"{teacher.privacy_spent_.epsilon:.3f}; student accuracy "
          f"{results[epsilon]['student']:.3f}, predictor answering directly "
          f"{results[epsilon]['direct']:.3f}")

plain = LogisticRegression().fit(X_private, y_private).score(X_test, y_test)
print(f"non-private LogisticRegression on the private rows: {plain:.3f}")

# %%
# What the student buys
# ---------------------
# The predictor answering directly has spent its budget on these 5 000 test rows: a
# new row would need more budget (rows asked before are free), and at most
# ``n_queries`` rows were planned. The student answers any number of rows, at no
# cost, with about the same accuracy: the labelling's noise mostly flips labels near
# the boundary, which a logistic regression averages out. Its price is that the
# public rows are needed, and that the whole (ε, δ) was spent on them up front.
# ``benchmarks/student.py`` repeats this over five seeds and three private sample
# sizes, next to diffprivlib's ``LogisticRegression`` trained at the same ε.

fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
eps = list(results)
pos = np.arange(len(eps))
ax.bar(pos - 0.2, [results[e]["student"] for e in eps], 0.4, label="student LR (free queries)")
ax.bar(pos + 0.2, [results[e]["direct"] for e in eps], 0.4, label="predictor answering")
ax.axhline(plain, color="grey", ls=":", label="non-private LR")
ax.set_xticks(pos, [f"ε = {e:g}" for e in eps])
ax.set_ylim(0.5, 1.0)
ax.set_ylabel("test accuracy")
ax.legend(loc="lower right")
fig.savefig(figure_path("plot_student_model"), dpi=80)
