"""DP-GreedyCover's per-step ε: EMCover (Lemma 18), basic composition, or the tight accountant.

Every selection of DP-GreedyCover (Bun & Fang, Alg 1) is one run of
:func:`~skdp.mechanisms.exponential_mechanism` with ``monotonic=True`` and
sensitivity 1 at ε̂: it samples ∝ exp(ε̂·q), q(f, b) = −#{remaining rows with
f(x) = 1 and label ≠ b}. Adding a row lowers the scores of the candidates that fire
on it by at most 1 and leaves the others unchanged (given the earlier selections, the
remaining rows differ by that row only), so the log-likelihood ratio of any outcome,
ε̂·(q′ − q) − log(Z′/Z), ranges over an interval of width ≤ ε̂: each step is
**ε̂-bounded-range** (hence ε̂-DP). A release runs at most
K = min(max_rules, n_features) selections, whatever the data, then releases the
(rule × class) histogram with discrete Laplace noise at w·ε̂ (w·ε̂-DP, lemma in
:mod:`._frequencies`; w = :data:`HISTOGRAM_WEIGHT` = 1/2, or
:data:`LIFT_HISTOGRAM_WEIGHT` = 1 under the lift score) in place of the paper's
default step: K + 1 steps in all. Every function below takes w as
``histogram_weight`` (public: it depends on the score asked for only).

Three proofs, each giving (ε, δ) for the whole release:

* ``"basic"`` — ε̂ = ε/(K + w), pure (ε, 0)-DP (Dwork & Roth 2014, Thm 3.16);
* ``"emcover"`` — Lemma 18 for the selections, whatever their number, plus the
  histogram by basic composition: ε̂ = ε/(2(ln(1/δ) + 3/2) + w);
* ``"tight"`` — ``[PlanItem(BoundedRange, K), PlanItem(DiscreteLaplace, 1, w)]`` through
  :func:`skdp.accounting.calibrate_plan` (ε̂-BR composes as ε̂²/8-zCDP, and as
  ε̂-DP by privacy-loss distributions; the accountant takes the better).

EMCover does not grow with K, the others do: the tight accountant wins for short
lists (up to a few hundred steps at δ = 10⁻⁶), EMCover for long ones.
"""

from __future__ import annotations

import functools
import math

from ..accounting import BoundedRange, DiscreteLaplace, PlanItem, calibrate_plan

__all__ = [
    "ACCOUNTINGS",
    "HISTOGRAM_WEIGHT",
    "LIFT_HISTOGRAM_WEIGHT",
    "basic_step_epsilon",
    "emcover_histogram_step_epsilon",
    "emcover_step_epsilon",
    "net_step_plan",
    "release_events",
    "step_plan",
    "tight_step_epsilon",
]

#: Values of ``DPDecisionListClassifier(accounting=...)``.
ACCOUNTINGS = ("auto", "tight", "emcover", "basic", "paper")

# Largest per-step ε for which Lemma 18's step 1 + (e^ε − 1)x ≤ e^{2εx} (x ∈ [0, 1])
# holds: the root of e^ε − 1 = 2ε, rounded down.
_EMCOVER_MAX_STEP_EPSILON = 1.2564312

# "auto" keeps pure (ε, 0)-DP unless an (ε, δ) proof gives at least 1 % more per step
# (e.g. 4 steps at δ = 10⁻⁶: the accountant's ε̂ exceeds ε/4 by a relative 2·10⁻⁵).
_AUTO_MIN_GAIN = 1.01
_SAFETY = 1e-5

#: ε of the noisy histogram, as a multiple of the selections' ε̂. One half: an ε-DP
#: event costs about as much as an ε-bounded-range one of twice its ε (ε²/2 against
#: (2ε)²/8 zCDP), so the selections keep about the ε̂ they had when the default was
#: an exponential-mechanism step, and the histogram's noise (scale 2/ε̂) stays a few
#: rows where ε̂ is a few tenths (breast_cancer at ε = 4: ε̂ ≈ 0.5).
HISTOGRAM_WEIGHT = 0.5

#: The histogram's weight under the lift score. Its rules are labelled by the noisy
#: counts alone (no prior, ``DPDecisionListClassifier._label_prior``) and its regions
#: are small (a rule isolating a rare class), so the counts carry the ranking of
#: ``predict_proba``: there the counts' noise costs more than a slightly noisier rule
#: step. Measured in ``DPDecisionListClassifier``'s docstring.
LIFT_HISTOGRAM_WEIGHT = 1.0


def emcover_step_epsilon(epsilon: float, delta: float) -> float:
    """Per-step ε̂ of DP-GreedyCover by EMCover (Bun & Fang, Lemma 18 / Thm 7).

    Lemma 18: EMCover whose exponential mechanism samples ∝ exp(ε̂·q) is
    (2ε̂(ln(1/δ) + 3/2), δ)-DP for any number of steps, so
    ε̂ = ε / (2(ln(1/δ) + 3/2)) gives (ε, δ). Its proof uses
    1 + (e^ε̂ − 1)x ≤ e^{2ε̂x}, true only for ε̂ ≤ 1.2564; larger values are capped
    (the release is then more private than claimed). Needs δ > 0.
    """
    if not delta > 0:
        raise ValueError("EMCover (Lemma 18) needs δ > 0.")
    return min(epsilon / (2.0 * (math.log(1.0 / delta) + 1.5)), _EMCOVER_MAX_STEP_EPSILON)


def release_events(step: float, n_steps: int, histogram_weight: float = HISTOGRAM_WEIGHT
                   ) -> list[tuple[object, int]]:
    """The events of one release: n_steps − 1 ε̂-BR selections, the w·ε̂ histogram."""
    events: list[tuple[object, int]] = [(DiscreteLaplace(histogram_weight * step), 1)]
    if n_steps > 1:
        events.insert(0, (BoundedRange(step), int(n_steps) - 1))
    return events


def emcover_histogram_step_epsilon(epsilon: float, delta: float,
                                   histogram_weight: float = HISTOGRAM_WEIGHT) -> float:
    """ε̂ for EMCover's selections plus the w·ε̂ noisy histogram, by basic composition.

    Lemma 18 makes the selections (2ε̂(ln(1/δ) + 3/2), δ)-DP whatever their number;
    the histogram adds w·ε̂, so ε̂ = ε/(2(ln(1/δ) + 3/2) + w) (capped as in
    :func:`emcover_step_epsilon`).
    """
    if not delta > 0:
        raise ValueError("EMCover (Lemma 18) needs δ > 0.")
    return min(epsilon / (2.0 * (math.log(1.0 / delta) + 1.5) + histogram_weight),
               _EMCOVER_MAX_STEP_EPSILON)


@functools.lru_cache(maxsize=256)
def tight_step_epsilon(epsilon: float, delta: float, n_steps: int,
                       histogram_weight: float = HISTOGRAM_WEIGHT) -> float:
    """Largest ε̂ such that a release of ``n_steps`` steps at ε̂ each is (ε, δ)-DP.

    The steps are n_steps − 1 ε̂-bounded-range selections and the w·ε̂ discrete-Laplace
    histogram of :mod:`._frequencies` (:func:`release_events`), by the tight
    accountant (:func:`skdp.accounting.calibrate_plan`), less a relative 10⁻⁵ (more
    than its floating-point error), never below basic composition's split.
    """
    plan = [PlanItem(DiscreteLaplace, 1, histogram_weight)]
    if n_steps > 1:
        plan.insert(0, PlanItem(BoundedRange, int(n_steps) - 1))
    step = calibrate_plan(plan, epsilon, delta).scale * (1.0 - _SAFETY)
    # basic's split is exact
    return max(step, basic_step_epsilon(epsilon, n_steps, histogram_weight))


def basic_step_epsilon(epsilon: float, n_steps: int,
                       histogram_weight: float = HISTOGRAM_WEIGHT) -> float:
    """ε̂ = ε/(n_steps − 1 + w): basic composition of the selections and histogram."""
    return epsilon / (n_steps - 1 + histogram_weight)


def step_plan(epsilon: float, delta: float, n_steps: int, accounting: str, *,
              emcover: bool = True, histogram_weight: float = HISTOGRAM_WEIGHT
              ) -> tuple[float, str, float]:
    """(ε̂, proof, δ charged) for a release of at most ``n_steps`` selections.

    Parameters
    ----------
    epsilon, delta : float
        The release's budget; δ = 0 allows only basic composition.
    n_steps : int
        K + 1: at most K selections (K = min(max_rules, n_features)) and the noisy
        histogram of :mod:`._frequencies`, which takes the default step's place.
    accounting : {"auto", "tight", "emcover", "basic", "paper"}
        ``"auto"``: the largest ε̂ of the three proofs (two if not ``emcover``), but
        basic (no δ charged) unless another gives at least 1 % more.
        ``"paper"``: the larger of EMCover and basic — the choice before the tight
        accountant (was ``"auto"``). The others: that proof (``"tight"`` falls back to
        basic where basic is at least as large, e.g. K = 1).
    emcover : bool, default=True
        Whether Lemma 18 applies to the score (``"auto"`` then considers it).
    histogram_weight : float, default=HISTOGRAM_WEIGHT
        w: the histogram runs at w·ε̂ (public, fixed by the score).

    Returns
    -------
    step : float
        ε̂, the multiplier of q in every selection.
    proof : {"tight", "emcover", "basic"}
        The theorem the guarantee rests on.
    charged_delta : float
        δ of the release (0 under basic composition).
    """
    w = histogram_weight
    basic = basic_step_epsilon(epsilon, n_steps, w)
    if delta == 0 or accounting == "basic":
        return basic, "basic", 0.0
    if accounting in ("emcover", "paper"):
        lemma18 = emcover_histogram_step_epsilon(epsilon, delta, w)
        if accounting == "emcover" or lemma18 >= basic:  # the pre-accountant rule, exactly
            return lemma18, "emcover", delta
        return basic, "basic", 0.0
    candidates = [(tight_step_epsilon(epsilon, delta, n_steps, w), "tight", delta)]
    if accounting == "auto" and emcover:
        candidates.append((emcover_histogram_step_epsilon(epsilon, delta, w), "emcover", delta))
    best = max(candidates, key=lambda c: c[0])
    # Pure DP unless an (ε, δ) proof gives a real gain ("tight": any gain at all).
    margin = _AUTO_MIN_GAIN if accounting == "auto" else 1.0
    return best if best[0] > margin * basic else (basic, "basic", 0.0)


def net_step_plan(epsilon: float, delta: float, n_steps: int, accounting: str,
                  histogram_weight: float = HISTOGRAM_WEIGHT) -> tuple[float, str, float]:
    """:func:`step_plan` for the net-coverage score, to which Lemma 18 does not apply.

    ``"auto"`` and ``"tight"``: the tight accountant over ``n_steps`` ε̂-bounded-range
    steps, or basic composition where that is as good (``"auto"``: within 1 %);
    ``"basic"`` and ``"paper"`` (the prototype's accounting): ε̂ = ε/(n_steps − 1 + w),
    pure DP.
    ``"emcover"`` raises ``ValueError``: EMCover's proof needs scores that only move
    down when a row is added (:mod:`._net_cover`).
    """
    if accounting == "emcover":
        raise ValueError(
            "accounting='emcover' (Bun & Fang, Lemma 18) is proved for algorithm='greedy_cover' "
            "only: the net-coverage score can rise when a row is added. Use "
            "accounting='auto', 'tight' or 'basic', or algorithm='greedy_cover'."
        )
    if accounting == "paper":
        accounting = "basic"
    return step_plan(epsilon, delta, n_steps, accounting, emcover=False,
                     histogram_weight=histogram_weight)
