"""
===========================================================================
Everlasting robust private prediction (Stemmer's PERP) under an adversary
===========================================================================

A *private everlasting predictor* keeps its labelled sample secret and answers
an endless stream of queries. It never runs out of privacy: it works in phases,
and each phase privately labels its own queries to train the next one, with a δ
schedule whose sum stays below δ* however long the stream runs (truly
everlasting privacy, Stemmer 2024, Definition 3.8). It is also *robust*: only a
fraction γ of the queries need come from the data distribution D, the rest may
be chosen by an adversary — who cannot break the predictor's accuracy on D.

Here :class:`~skdp.prediction.RectanglesPERPClassifier` learns an
axis-aligned rectangle inside a ``Pipeline`` with a public-bounds clipper, while
half of its queries come from the adaptive "challenge" adversary of
:class:`~skdp.datasets.RobustPEPStream`, which looks for the edge of the learned
rectangle and aims at the band where the private boundary examples disagree. A
non-private decision tree in the same pipeline is the baseline.

A word on ε: Stemmer's construction needs a large sample at small ε — each
copy's slice must hold m ≈ k points, and its BetweenThresholds noise grows like
c·√(k·ln(1/δ))/ε, so k ∝ c²·polylog(1/δ)/ε². At ε = 1 the practical preset asks
for about 7.5·10⁹ labelled rows in the plane, the ``"sharp"`` preset (slices from
a random partition, the svt Stopper, margin thresholds, the initial sample at
δ(0) = δ*/4; issue 16) for about 2.7·10⁷ (c = 4, Stemmer's Thm 4.3), and the
``"charged"`` preset — the same schedule, with the BetweenThresholds noise
certified by a sharper lemma (c ≈ 2.15) — for about 6.9·10⁶ (6,928,097). We use
``preset="charged"``, the estimators' default since its privacy lemma was
reviewed (issue 26), at ε = 1 (the script takes about 15 s and 0.6 GB).
"""

# %%
# The game: a target rectangle in [0, 1]², D uniform, γ = 0.5
# ------------------------------------------------------------
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle
from sklearn.pipeline import make_pipeline
from sklearn.tree import DecisionTreeClassifier

from skdp.datasets import RobustPEPStream, play_robust_pep
from skdp.output import figure_path
from skdp.prediction import RectanglesPERPClassifier, perp_parameters
from skdp.preprocessing import PublicBoundsClipper

epsilon, delta, alpha, beta, gamma = 1.0, 1e-6, 0.1, 0.05, 0.5
stream = RobustPEPStream(2, gamma=gamma, adversary="challenge", random_state=0)
need = {(eps, preset): perp_parameters(eps, delta, alpha, beta, gamma, 2,
                                       preset=preset).initial_sample_size
        for eps in (epsilon, 4.0) for preset in ("charged", "sharp", "practical")}
print("labelled rows the first phase needs: "
      + ", ".join(f"{preset} at ε={eps:g}: {n:.3g}" for (eps, preset), n in need.items()))
X, y = stream.sample(need[(epsilon, "charged")])

# The feature range [0, 1] is public, so clipping to it costs no privacy; it also
# turns the adversary's far-away queries into points on the box.
clipper = PublicBoundsClipper(lower=0.0, upper=1.0, scale=False)
perp = make_pipeline(clipper, RectanglesPERPClassifier(
    epsilon=epsilon, delta=delta, alpha=alpha, beta=beta, gamma=gamma, preset="charged",
    classes=[0, 1], random_state=0,
)).fit(X, y)
# The non-private baseline needs far fewer rows: the first 200 000 suffice.
tree = make_pipeline(clipper, DecisionTreeClassifier(random_state=0)).fit(X[:200_000],
                                                                         y[:200_000])

# %%
# Answer 300 000 queries, 5 000 at a time
# ---------------------------------------
# The adversary sees the answers to each block before choosing the next one.
phases = []
result = play_robust_pep(perp, stream, 300_000, block_size=5_000,
                         callback=lambda done, model: phases.append((done, model[-1].phase_)))
Q, answers, from_D, truth = (result[k] for k in ("queries", "answers", "from_D", "truth"))
model = perp[-1]
print(f"PERP: error on the D-queries {result['error_D']:.4f} (α = {alpha}); "
      f"phase {model.phase_}, {model.queries_answered_} queries answered, "
      f"privacy spent {model.privacy_spent_}")
tree_wrong = tree.predict(Q) != truth
print(f"non-private tree: error on the D-queries {tree_wrong[from_D].mean():.4f}")

# %%
# Scores: ``predict_proba`` answers the next queries with the copies' own answers
# ---------------------------------------------------------------------------------
# Inside (every copy said "low"), on a boundary band ("medium", P = ½, labelled 0
# as Alg. 5 does) or outside: a score from the same charged answers, so
# ``roc_auc`` and ``CalibratedClassifierCV`` work. Five queries across the left
# edge (the band that reads "outside" is as wide as α_1 allows at this n):
low, high = stream.target_
probe = [[low[0] + dx, (low[1] + high[1]) / 2] for dx in (-0.05, 0.01, 0.02, 0.04, 0.1)]
print("P(inside) across the left edge:", perp.predict_proba(probe)[:, 1].round(3))

# %%
# Plot: what the predictor answers, and its error on D as the stream goes
# -----------------------------------------------------------------------
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7.5, 4.2), layout="constrained")
last = slice(-20_000, None)
Ql, Dl, inside = Q[last], from_D[last], answers[last] == 1
ax1.scatter(*Ql[Dl & ~inside].T, s=1, c="tab:grey", alpha=0.4, label="D-query, answered 0")
ax1.scatter(*Ql[Dl & inside].T, s=1, c="tab:blue", alpha=0.4, label="D-query, answered 1")
ax1.scatter(*Ql[~Dl].T, s=1, c="tab:red", alpha=0.4, label="adversary's query")
lower, upper = stream.target_
ax1.add_patch(Rectangle(lower, *(upper - lower), fill=False, ec="k", lw=1.5, label="target"))
ax1.set_xlim(-0.05, 1.05)
ax1.set_ylim(-0.05, 1.05)
ax1.set_title("last 20 000 queries:\nthe adversary hugs the edge", fontsize=10)
# legends under the panels, never over the points or curves
ax1.legend(loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=2, fontsize=8,
           markerscale=8, frameon=False)

ends = result["block_end"]
wrong = answers != truth
cum_err = [wrong[:e][from_D[:e]].mean() for e in ends]
cum_tree = [tree_wrong[:e][from_D[:e]].mean() for e in ends]
ax2.plot(ends, cum_err, label="PERP (private)")
ax2.plot(ends, cum_tree, label="decision tree (non-private)")
ax2.axhline(alpha, color="k", lw=0.8, ls="--", label="α")
ax2.set_xscale("log")
ax2.set_xlabel("queries answered")
ax2.set_ylabel("error on the D-queries so far")
twin = ax2.twinx()
twin.step(*zip(*phases, strict=True), where="post", color="tab:green", alpha=0.6)
twin.set_ylabel("phase", color="tab:green")
ax2.set_title("error on D as the stream grows", fontsize=10)
ax2.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2, fontsize=8,
           frameon=False)
fig.savefig(figure_path("plot_perp"), dpi=100)
