"""The practical DP decision list ("net cover"): its selections, privacy lemma and length.

:class:`~skdp.decision_list.DPDecisionListClassifier` with ``algorithm="net_cover"`` (the
default) runs the greedy cover of :mod:`._greedy_cover` for exactly K rules, each
chosen by the exponential mechanism, then releases the noisy (rule × class) counts of
:mod:`._frequencies` (ε̂/2-DP; they label the rows no rule covers):

* a rule step samples (ℓ, b) — ℓ a literal x_f (or ¬x_f with ``negations``) of a
  feature not used yet, b a label — ∝ exp(η·q(ℓ, b)) with
  q(ℓ, b) = #{remaining rows ℓ covers with label b} − λ·#{… with another label},
  λ = ``error_weight`` ≥ 1 and η = ε̂/(1 + λ) (a row of weight w ≤ 1 counts w).

There is no constant-true candidate: the list always has K rules, so the number of
steps, K + 1 with the counts, is fixed before the data is seen.

**Lemma.** Fix the earlier selections. For neighbouring datasets D′ = D ∪ {z}, each
rule step is ε̂-bounded-range (hence ε̂-DP); the release is therefore (ε, δ)-DP for
any (ε, δ) the tight accountant certifies for K adaptively chosen ε̂-bounded-range
mechanisms and the ε̂/2 counts (``PlanItem(BoundedRange, K)``,
``PlanItem(DiscreteLaplace, 1, 1/2)``), and (ε, 0)-DP for ε̂ = ε/(K + 1/2) (basic
composition).

*Proof.* The remaining rows are the rows no earlier rule fires on; the earlier rules
are the same under D and D′, so the remaining set of D′ is that of D, plus z if no
earlier rule fires on z. If z is not remaining, every score is equal and the step's
output distribution is identical. Otherwise, for a rule candidate (ℓ, b):
q′ − q = +1 if ℓ fires on z and z has label b; −λ if ℓ fires on z and z has another
label; 0 if ℓ does not fire on z. So q′ − q ∈ [−λ, 1] for every candidate, and
log P′(o)/P(o) = η(q′_o − q_o) − log(Z′/Z), with Z = Σ_o exp(η q_o): the log-ratio
ranges over an interval of width at most η(1 + λ) = ε̂, which is ε̂-bounded range
(Durfee & Rogers 2019, Def 3.1); a row of weight w ∈ [0, 1] moves q by w times the
above, inside the same interval. ε̂-bounded range implies ε̂-DP (the interval
contains 0 since both distributions sum to one). The counts: lemma in
:mod:`._frequencies`. Composition over the adaptive steps: Durfee & Rogers (2019) /
Dong, Durfee & Rogers (2020) for bounded range, as
evaluated by :func:`skdp.accounting.calibrate_plan`; basic composition gives
(Σ ε̂, 0). Removing a row is the same argument with D and D′ swapped. ∎

**Why EMCover (Bun & Fang, Lemma 18) is not claimed.** Lemma 18 charges the added
row only at the step whose rule covers it, and its proof needs every score to move
in one direction (down, by at most 1, and only for candidates that fire on the
row). Here a row can *raise* the scores of the candidates with its label, so that
argument does not apply, and its "any number of steps for ε̂·O(log 1/δ)" bound is
not used; K stays small instead (:func:`default_n_rules`).

**Length.** K = min(d, max(C − 1, round(2ε))) rules by default: public quantities
only (ε, the number of features d, the number of classes C), never n. Measured in
``benchmarks/decision_lists.py``: at ε ≤ 1, one or two rules are what the
selection noise allows; at ε = 4 the eight rules of a planted list are found.
"""

import math

from ..mechanisms import exponential_mechanism

__all__ = ["default_n_rules", "errors_selector", "net_selector"]


def default_n_rules(epsilon, n_features, n_classes):
    """K = min(d, max(C − 1, round(2ε))): the default number of rules of the net cover."""
    return int(min(n_features, max(n_classes - 1, math.floor(2.0 * epsilon + 0.5), 1)))


def net_selector(step_epsilon, error_weight, rng):
    """The exponential-mechanism selection of every rule step of the net cover (Lemma above).

    Samples ∝ exp(ε̂·q/(1 + λ)) — :func:`exponential_mechanism` with sensitivity
    (1 + λ)/2, not monotone, whose scale is ε̂/(2Δ) = ε̂/(1 + λ).
    """
    rule_sensitivity = (1.0 + float(error_weight)) / 2.0

    def select(scores, coverage):
        return exponential_mechanism(
            scores, step_epsilon, sensitivity=rule_sensitivity, monotonic=False,
            random_state=rng,
        )

    return select


def errors_selector(step_epsilon, rng):
    """DP-GreedyCover's selection (Bun & Fang, Alg 1): ∝ exp(ε̂·q), q = −errors."""

    def select(scores, coverage):
        return exponential_mechanism(
            scores, step_epsilon, sensitivity=1.0, monotonic=True, random_state=rng
        )

    return select
