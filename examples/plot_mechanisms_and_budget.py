"""
=====================================================
Noise mechanisms, private selection and a budget
=====================================================

This example tours three building blocks of skdp:

1. the continuous Laplace mechanism next to the *exact* discrete Laplace
   (geometric) mechanism that skdp uses for counts;
2. the exponential mechanism, and how sharply it concentrates on the best
   candidate as ε grows (Gumbel-max and permute-and-flip);
3. a :class:`~skdp.accounting.PrivacyBudget` ledger that refuses, atomically,
   the first charge that does not fit.

It runs in a couple of seconds.
"""

# %%
# Continuous Laplace vs exact discrete Laplace
# --------------------------------------------
# A count has sensitivity 1: adding or removing one record changes it by at
# most 1. Adding Laplace(1/ε) noise makes the release ε-DP. For integer outputs
# skdp prefers :func:`~skdp.mechanisms.geometric_mechanism`, which adds exact
# discrete Laplace noise, P(Z = z) ∝ exp(-ε|z|), built from unbiased integer
# draws only (Canonne, Kamath & Steinke 2020): there are no floating-point
# artefacts for an attacker to exploit (Mironov 2012).

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np

from skdp.mechanisms.laplace import geometric_mechanism, laplace_mechanism

true_count = 10
epsilon = 0.5
n_draws = 50_000
rng = np.random.default_rng(0)

continuous = laplace_mechanism(np.full(n_draws, float(true_count)), epsilon, random_state=rng)
discrete = geometric_mechanism(np.full(n_draws, true_count), epsilon, random_state=rng)

support = np.arange(true_count - 15, true_count + 16)
alpha = np.exp(-epsilon)
exact_pmf = (1 - alpha) / (1 + alpha) * alpha ** np.abs(support - true_count)
empirical_pmf = np.array([(discrete == z).mean() for z in support])

fig, ax = plt.subplots(figsize=(7, 4))
ax.hist(
    continuous,
    bins=np.arange(support[0] - 0.5, support[-1] + 1.5),
    density=True,
    alpha=0.4,
    label="Laplace mechanism (float)",
)
ax.plot(support, empirical_pmf, "o", label="geometric mechanism (empirical)")
ax.plot(support, exact_pmf, "k.-", lw=0.8, label="discrete Laplace pmf (exact)")
ax.axvline(true_count, color="grey", ls=":", label="true count")
ax.set_xlabel("released count")
ax.set_ylabel("probability")
ax.set_title(f"Releasing a count of {true_count} with ε = {epsilon}")
ax.legend(fontsize="small")
fig.tight_layout()

print(
    f"mean |error|: Laplace {np.abs(continuous - true_count).mean():.3f}, "
    f"geometric {np.abs(discrete - true_count).mean():.3f}"
)
print("geometric outputs are integers:", discrete.dtype)

# %%
# The exponential mechanism: selection frequencies vs ε
# -----------------------------------------------------
# Five candidates are scored by a count (sensitivity 1, and *monotone*: adding a
# record can only raise counts). The exponential mechanism picks candidate *r*
# with probability ∝ exp(ε·score(r)/Δ) for monotone scores. Small ε spreads the
# choice almost uniformly; large ε nearly always picks the best candidate. Each
# pick below is ε-DP on its own; the *frequencies* come from many independent
# draws, which in a real release would cost ε each.

from skdp.mechanisms.exponential import exponential_mechanism

scores = np.array([10.0, 9.0, 7.0, 3.0, 0.0])
epsilons = [0.1, 0.5, 1.0, 2.0, 5.0]
n_picks = 20_000

frequencies = np.array(
    [
        np.bincount(
            exponential_mechanism(scores, eps, monotonic=True, size=n_picks, random_state=rng),
            minlength=scores.size,
        )
        / n_picks
        for eps in epsilons
    ]
)

# Permute-and-flip (McKenna & Sheldon 2020) has the same ε-DP guarantee and never
# worse expected utility; it draws one index per call.
pf_picks = [
    exponential_mechanism(scores, 1.0, monotonic=True, method="permute_and_flip", random_state=rng)
    for _ in range(5_000)
]
pf_frequencies = np.bincount(pf_picks, minlength=scores.size) / len(pf_picks)

fig, ax = plt.subplots(figsize=(7, 4))
width = 0.8 / (len(epsilons) + 1)
positions = np.arange(scores.size)
for k, (eps, freq) in enumerate(zip(epsilons, frequencies, strict=True)):
    ax.bar(positions + k * width, freq, width, label=f"Gumbel-max, ε = {eps}")
ax.bar(
    positions + len(epsilons) * width,
    pf_frequencies,
    width,
    color="k",
    alpha=0.6,
    label="permute-and-flip, ε = 1",
)
ax.set_xticks(positions + 0.4 - width / 2)
ax.set_xticklabels([f"score {s:g}" for s in scores])
ax.set_ylabel("selection frequency")
ax.set_title("Exponential mechanism: who gets picked")
ax.legend(fontsize="small")
fig.tight_layout()

for eps, freq in zip(epsilons, frequencies, strict=True):
    print(f"ε = {eps:>4}: P(best) ≈ {freq[0]:.3f}")
print(f"permute-and-flip, ε = 1: P(best) ≈ {pf_frequencies[0]:.3f}")

# %%
# Spending a privacy budget until it runs out
# -------------------------------------------
# :class:`~skdp.accounting.PrivacyBudget` is a ledger under basic composition:
# each release charges its ε, and a charge that does not fit raises
# :class:`~skdp.exceptions.BudgetExhaustedError` *without changing anything*.
# A copy of a budget is a second handle on the *same* ledger, so copying can
# never double the privacy loss.

import copy

from skdp.accounting import PrivacyBudget
from skdp.exceptions import BudgetExhaustedError
from skdp.output import figure_path

budget = PrivacyBudget(epsilon=1.0)
alias = copy.deepcopy(budget)  # same ledger, not a fresh budget
per_release = 0.15

released, history = [], []
while True:
    spent_before = budget.spent
    try:
        budget.spend(per_release, label=f"count #{len(released) + 1}")
    except BudgetExhaustedError as exc:
        print(f"refused after {len(released)} releases: {exc}")
        print("the refused charge changed nothing:", budget.spent == spent_before)
        break
    released.append(geometric_mechanism(true_count, per_release, random_state=rng))
    history.append(budget.spent.epsilon)

print("released counts:", released)
print(f"spent ε = {budget.spent.epsilon:.2f}, remaining ε = {budget.remaining.epsilon:.2f}")
print("the deep copy is a handle on the same ledger:", alias.shares_ledger_with(budget))
print(f"and sees the same spending: ε = {alias.spent.epsilon:.2f}")

spent_eps = history
fig, ax = plt.subplots(figsize=(7, 3))
ax.step(np.arange(1, len(spent_eps) + 1), spent_eps, where="post", label="ε spent")
ax.axhline(1.0, color="r", ls="--", label="total budget ε = 1")
ax.set_xlabel("release number")
ax.set_ylabel("ε spent")
ax.set_ylim(0, 1.1)
ax.legend(fontsize="small")
fig.tight_layout()

fig.savefig(figure_path("plot_mechanisms_and_budget"))
plt.show()
