"""The practical DP decision list ("net cover"): its selections, privacy lemma and length.

:class:`~skdp.decision_list.DPDecisionListClassifier` with ``algorithm="net_cover"`` (the
default) runs the greedy cover of :mod:`._greedy_cover` for exactly K rules, each
chosen by the exponential mechanism, then releases the noisy (rule × class) counts of
:mod:`._frequencies` (w·ε̂-DP, w = 1/2, or 1 under the lift score with K ≥ 5 rules;
they label the rows no rule covers):

* a rule step samples (ℓ, b) — ℓ a literal x_f (or ¬x_f with ``negations``) of a
  feature not used yet, b a label — ∝ exp(η·q(ℓ, b)) with
  q(ℓ, b) = #{remaining rows ℓ covers with label b} − λ·#{… with another label},
  λ = ``error_weight`` ≥ 1 and η = ε̂/(1 + λ) (a row of weight w ≤ 1 counts w).

There is no constant-true candidate: the list always has K rules, so the number of
steps, K + 1 with the counts, is fixed before the data is seen.

**Lemma.** Fix the earlier selections. For neighbouring datasets D′ = D ∪ {z}, each
rule step is ε̂-bounded-range (hence ε̂-DP); the release is therefore (ε, δ)-DP for
any (ε, δ) the tight accountant certifies for K adaptively chosen ε̂-bounded-range
mechanisms and the w·ε̂ counts (``PlanItem(BoundedRange, K)``,
``PlanItem(DiscreteLaplace, 1, w)``), and (ε, 0)-DP for ε̂ = ε/(K + w) (basic
composition). w is a function of the parameters and K (public, or chosen from the
released row count below), so it is fixed before the rule steps run.

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
not used; K stays moderate instead (:func:`auto_n_rules`).

**Length (``max_rules=None``).** The release first spends ε·:data:`COUNT_SHARE` on the
class counts (clipped weights rounded to whole rows) with discrete Laplace noise —
sensitivity 1 by the lemma of :mod:`._frequencies` with one region — and the list gets
the rest, (ε·(1 − COUNT_SHARE), δ), by basic composition. Whether δ is charged (tight
accountant or basic composition) is fixed before the data is seen, from the longest
list the count could allow (:data:`MAX_AUTO_RULES`, public). K is then
:func:`auto_n_rules` of the noisy count and public quantities (ε, δ, the number of
candidates, the score's width): post-processing, so the length grows with the data
without reading n. It was K = min(d, max(C − 1, round(2ε))) before issue 27: two rules
at ε = 1 on 200 rows and on 10⁶ alike (a planted 5-rule list: 0.83 where 5 rules reach
0.97).
"""

import math

from ..mechanisms import exponential_mechanism
from . import _greedy_cover

__all__ = ["COUNT_SHARE", "auto_n_rules", "errors_selector",
           "lift_selector", "net_selector", "score_width"]

#: Share of ε spent on the noisy row count that sets the list's length (``max_rules=None``).
COUNT_SHARE = 0.05

#: A rule is worth its step when the rows per rule, n̂/(K + 1), are at least this many
#: times the selection noise, width·ln(#candidates)/ε̂. Measured at ε = 1 with bounds
#: (3-fold × 4, test accuracy / ROC AUC): 4 gives breast_cancer (380 training rows)
#: one rule, 0.88 / 0.88; 2 gives two, 0.90 / 0.90; 1 gives 3.7, 0.86 / 0.89. On the
#: larger tables (fair, a churn-like and a 5 %-positive table, 4,700–5,300 rows) the
#: ROC AUC moves by at most 0.01 between 4 and 2 (K 9–19), and falls at 0.5 (K 35–50).
ROWS_PER_NOISE = 2.0

#: Longest list the automatic length considers (public).
MAX_AUTO_RULES = 64


def score_width(score, error_weight):
    """Width of the interval of score changes one row causes (bounded range): 1 + λ for
    the net score (lemma above), 2 for the lift score (lemma in :func:`lift_selector`)."""
    return 1.0 + float(error_weight) if score == "net" else 2.0 - _greedy_cover.LIFT_MARGIN


def auto_n_rules(n_hat, n_candidates, width, step_epsilon, max_rules, step_floor=None):
    """K: the largest K ≤ ``max_rules`` with n̂/(K + 1) ≥ ROWS_PER_NOISE·width·ln(N)/ε̂(K).

    ``n_hat`` is a *released* noisy row count, ``step_epsilon(K)`` the per-step ε̂ of a
    K-rule release, N the number of candidates: all public or already released, so K
    is post-processing. Returns 0 when not even one rule clears the bar (the caller
    then runs one rule and warns). The condition is monotone in K (ε̂ falls as K
    grows), so a bisection finds K in O(log max_rules) plans.

    ``step_floor(K)``, if given, is a cheap lower bound of ``step_epsilon(K)`` (basic
    composition's split under the tight accountant): where the bar is cleared at the
    floor it is cleared at ε̂(K) too, so the same K comes out without calibrating
    that plan (a calibration is ~40 ms; a stream's first releases met a dozen).
    """
    noise = width * math.log(max(n_candidates, 2))

    def fits(k):
        bar = ROWS_PER_NOISE * (k + 1) * noise
        if step_floor is not None and n_hat >= bar / step_floor(k):
            return True
        return n_hat >= bar / step_epsilon(k)

    lo, hi = 0, int(max_rules)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def lift_selector(step_epsilon, rng):
    """The selection of every rule step under the lift score, ∝ exp(ε̂·q/2).

    **Lemma.** q(ℓ, b) = a_b − p_b·|a| (``rule_scores(score="lift")``: a the covered
    weights of the remaining rows, p_b = R_b/R the rate of b among them, 0 if R = 0).
    Adding a row z of weight w ∈ [0, 1] that remains (else nothing moves) changes
    every candidate's score by Δ = w·(e − p_b)·g, where e = 1 if z has label b,
    g = (R − |a|)/(R + w) if ℓ fires on z and g = −|a|/(R + w) if not. Proof: expand
    q′ − q with R′ = R + w, R′_b = R_b + w·e, |a|′ = |a| + w·f, a′_b = a_b + w·f·e:
    q′ − q = w·f·e − w·(p_b·f·R + (e − p_b)|a| + w·e·f)/(R + w), which is
    w(e − p_b)(R − |a|)/(R + w) for f = 1 and −w(e − p_b)|a|/(R + w) for f = 0.
    Since 0 ≤ |a| ≤ R, |g| < 1 and |e − p_b| ≤ 1, so every Δ lies in (−1, 1): the
    log-ratio (ε̂/2)·Δ_o − log(Z′/Z) spans an interval of width < ε̂, which is
    ε̂-bounded range. Removing a row swaps D and D′. (R = 0 in D: q = 0 in D and
    q′ = w·f·e − e·w·f = 0 in D′.) ∎
    This is :func:`exponential_mechanism` with sensitivity 1, not monotone (scale
    ε̂/(2Δ) = ε̂/2).
    """

    def select(scores, coverage):
        return exponential_mechanism(scores, step_epsilon,
                                     sensitivity=score_width("lift", 1.0) / 2.0,
                                     monotonic=False, random_state=rng)

    return select


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
