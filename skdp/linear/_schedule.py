"""DP-Winnow on a public update schedule: its parameters and its learnability guard.

The ``setting="scheduled"`` variant of :class:`~skdp.linear.DPWinnowClassifier`
updates at fixed, public rows — every B rows — instead of where a sparse-vector
instance fires. All of ε goes to the exponential-mechanism draws (and, with an
intercept, one noisy label count), so η is 10–100× larger than under the paper's
split, and each update folds in up to M mistakes of its window instead of one. The
privacy lemma and its proof are in :class:`~skdp.linear.DPWinnowClassifier`.

Sizing (public quantities only: ε, δ, ρ, T, d)
-----------------------------------------------
* m = ⌈9/ρ²⌉ draws per release (odd, ≤ 4095): Hoeffding makes a sampled weight
  vector misclassify a row of margin ρ with probability ≤ exp(−mρ²/2) ≈ 1 %.
* B, the window, minimises the modelled rows-to-learn R(B) over powers of two;
  K = ⌈T/B⌉ windows (one release each) — K is sized to the horizon.
* η: the largest rate with 1 count + mK draws (4η-bounded-range each) (ε, δ)-DP by
  the tight accountant (:func:`skdp.accounting.calibrate_plan`).
* M = ⌊ρ/(2η)⌋ mistakes per window at most: the batched multiplicative-weights
  step then gains ηρ per mistake against a second-order loss ≤ η²M/2 ≤ ηρ/4.

The guard (a model, checked against measurements in ``benchmarks/winnow.py``):
learning needs the target's log-weight to gain Λ = ln(d′) + 3 over the others; a
window gains η·ρ·u with u = min(M, B/4) mistakes (a learner at chance makes ≥ B/4
mistakes in a window of a stream whose minority class is ≥ 1/4 — the model's
assumption), so R(B) = B·⌈Λ/(ηρu)⌉ rows. The learner is said to learn within the
horizon when R ≤ 1.5·T (``LEARN_FACTOR``; calibrated on ``benchmarks/winnow.py``:
the learner forced to run at the four map cells with 1 < R/T ≤ 1.5 made 0.26–0.80×
the best constant's mistakes, late rate ≤ 3.8 %, on balanced and imbalanced
targets; at R/T ≈ 2–3 it learns on balanced targets only slowly); otherwise the
estimator warns at ``fit`` and predicts a privately estimated constant instead (one
noisy count, all of ε).
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass
from typing import Any

from ..accounting import BoundedRange, PlanItem, PureDP, calibrate_plan

__all__ = ["DPWinnowSchedule", "solve_schedule"]

#: Largest m (draws per release).
MAX_SAMPLES = 4095
#: m = ⌈SAMPLE_FACTOR / ρ²⌉ (odd).
SAMPLE_FACTOR = 9.0
#: Smallest window B.
MIN_WINDOW = 32
#: Rows whose labels the private constant is estimated from when the learner does not
#: run: max(CONSTANT_ROWS, CONSTANT_ROWS/ε) — the solver's public default; the estimator
#: counts its first call's rows instead (rows are predicted between calls only).
CONSTANT_ROWS = 64
#: Share of ε spent on the label count that warm-starts a learner with an intercept.
COUNT_SHARE = 0.05
#: The modelled mistake rate of a learner at chance (per row), and the log-weight gap
#: the target needs over the other coordinates beyond ln d′.
CHANCE_RATE, EXTRA_GAP = 0.25, 3.0
#: The learner runs when the modelled rows-to-learn are at most LEARN_FACTOR × T.
LEARN_FACTOR = 1.5


@dataclass(frozen=True)
class DPWinnowSchedule:
    """Resolved constants of scheduled DP-Winnow (a public update schedule).

    Attributes
    ----------
    max_updates : int
        K, the number of windows (= releases, = updates); the hard cap.
    n_samples : int
        m, exponential-mechanism draws per release.
    learning_rate : float
        η; each draw is 4η-bounded-range.
    window : int
        B, rows per window (public: updates at rows B, 2B, …, KB).
    max_batch : int
        M, the most mistakes of one window folded into its update.
    count_epsilon : float
        ε of the one geometric label count (0 without it).
    count_rows : int
        How many leading rows the count covers.
    prior_strength : float
        The warm start: the bias score starts at ±prior_strength/η (the count's sign).
    learns : bool
        The guard's verdict: the modelled rows-to-learn are ≤ LEARN_FACTOR × T.
        When False (and K, m, B were not overridden and there is an intercept) the
        estimator predicts the private constant and makes no draws: ``max_updates``
        is then 0.
    rows_to_learn : float
        The guard's model R(B) (∞ when it cannot learn at all).
    reason : str
        Why the learner does not run, or empty.
    epsilon_spent : float
        ε of the plan at δ by the tight accountant (≤ ε), the guard's share included.
    setting, accounting : str
        ``"scheduled"`` and ``"tight"``.
    guard_epsilon : float
        ε of the guard's private checks (``guard`` of
        :class:`~skdp.linear.DPWinnowClassifier`; 0 without them): one PureDP item,
        the checks being on disjoint calls.
    """

    max_updates: int
    n_samples: int
    learning_rate: float
    window: int
    max_batch: int
    count_epsilon: float
    count_rows: int
    prior_strength: float
    learns: bool
    rows_to_learn: float
    reason: str
    epsilon_spent: float
    setting: str = "scheduled"
    accounting: str = "tight"
    feasible: bool = True
    guard_epsilon: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """The fields as a dict."""
        return asdict(self)

    @property
    def privacy_events(self) -> tuple[tuple[Any, int], ...]:
        """What the run costs: the count (PureDP) and mK BoundedRange(4η) draws.

        The private comparisons with the constant (at windows 2, 4, 8, …) run at the
        count's ε on rows disjoint from the count's and from each other's, so this one
        PureDP(ε_c) item pays for the count and all of them (Lemma C of
        :class:`~skdp.linear.DPWinnowClassifier`); the guard's checks, one on each
        ``partial_fit`` call's rows, are one PureDP(ε_g) item (Lemma G there)."""
        events = [(PureDP(self.guard_epsilon), 1)] if self.guard_epsilon > 0 else []
        if self.count_epsilon > 0:
            events.append((PureDP(self.count_epsilon), 1))
        if self.max_updates > 0:
            events.append((BoundedRange(4.0 * self.learning_rate),
                           self.max_updates * self.n_samples))
        return tuple(events)


def _draw_epsilon(epsilon, delta, draws, count_epsilon):
    plan = [PlanItem(BoundedRange, int(draws))]
    if count_epsilon > 0:
        # The count's ε in units of the draw ε the draws alone would get (a fixed
        # ratio; the joint calibration then shrinks both by the same s ≤ 1).
        alone = calibrate_plan(plan, epsilon, delta).epsilons[0]
        plan.insert(0, PlanItem(PureDP, 1, count_epsilon / alone))
    cal = calibrate_plan(plan, epsilon, delta)
    return cal.epsilons[-1], (cal.epsilons[0] if count_epsilon > 0 else 0.0), cal.epsilon


def _rows_to_learn(eta, margin, window, log_coords):
    batch = max(1, math.floor(margin / (2.0 * eta)))
    useful = min(batch, CHANCE_RATE * window)
    gain = eta * margin * useful
    return window * math.ceil((log_coords + EXTRA_GAP) / gain), batch


@functools.lru_cache(maxsize=256)
def solve_schedule(epsilon: float, delta: float, margin: float, n_rounds: int,
                   n_coords: int, *, fit_intercept: bool = True,
                   max_updates: int | None = None, n_samples: int | None = None,
                   window: int | None = None) -> DPWinnowSchedule:
    """Constants of scheduled DP-Winnow for (ε, δ, ρ, T, d′), and whether it learns.

    Parameters
    ----------
    epsilon, delta : float
        The stream's guarantee (δ > 0: the draws are composed by the tight accountant).
    margin : float
        ρ ∈ (0, 1], the assumed margin (utility only).
    n_rounds : int
        T, the horizon: K = ⌈T/B⌉ windows.
    n_coords : int
        d′, Winnow coordinates (after doubling and the bias).
    fit_intercept : bool, default=True
        With an intercept the learner warm-starts at a privately estimated constant
        (one geometric count, ``COUNT_SHARE`` of ε) and falls back to it when the
        guard says it cannot learn; without one there is no count.
    max_updates, n_samples, window : int, optional
        Override K (then B = ⌈T/K⌉), m or B. An override also bypasses the guard
        (the learner runs as asked; ``learns`` still reports the model's verdict).

    Returns
    -------
    DPWinnowSchedule
    """
    log_coords = math.log(max(n_coords, 2))
    if n_samples is None:
        m = min(math.ceil(SAMPLE_FACTOR / margin**2 - 1e-9), MAX_SAMPLES)
        m += 1 - m % 2
    else:
        m = int(n_samples)
    count_eps = COUNT_SHARE * epsilon if fit_intercept else 0.0
    # Per-draw ε scales as 1/√(number of draws) in this regime (checked at the end
    # by the exact calibration): size B from one Rényi-style constant.
    ref = 10**6
    unit = _draw_epsilon(epsilon, delta, ref, count_eps)[0] * math.sqrt(ref)

    def eta_for(k):
        return unit / math.sqrt(m * k) / 4.0

    if window is not None:
        candidates = [max(1, int(window))]
    elif max_updates is not None:
        candidates = [max(1, math.ceil(n_rounds / int(max_updates)))]
    else:
        candidates = [2**j for j in range(5, 40) if 2**j <= max(n_rounds, MIN_WINDOW)]
    options = []
    for b in candidates:
        k = int(max_updates) if max_updates is not None else math.ceil(n_rounds / b)
        options.append((_rows_to_learn(eta_for(k), margin, b, log_coords)[0], b, k))
    rows, b, k = min(options, key=lambda option: option[0])  # the first of equals
    learns = rows <= LEARN_FACTOR * n_rounds
    forced = window is not None or max_updates is not None
    if not learns and not forced and fit_intercept:
        count_rows = min(n_rounds, math.ceil(CONSTANT_ROWS * max(1.0, 1.0 / epsilon)))
        reason = (f"modelled rows to learn ≈ {rows:.3g} > {LEARN_FACTOR:g} × T = "
                  f"{LEARN_FACTOR * n_rounds:.3g} "
                  f"for ε={epsilon:g}, ρ={margin:.3g}, d′={n_coords}")
        return DPWinnowSchedule(
            max_updates=0, n_samples=m, learning_rate=0.0, window=b, max_batch=0,
            count_epsilon=epsilon, count_rows=count_rows,
            prior_strength=0.0, learns=False, rows_to_learn=float(rows), reason=reason,
            epsilon_spent=epsilon)  # one ε-DP count: pure, no δ used
    eta_draw, count_eps, spent = _draw_epsilon(epsilon, delta, m * k, count_eps)
    eta = eta_draw / 4.0
    _, batch = _rows_to_learn(eta, margin, b, log_coords)
    return DPWinnowSchedule(
        max_updates=k, n_samples=m, learning_rate=eta, window=b, max_batch=batch,
        count_epsilon=count_eps, count_rows=min(b, n_rounds) if count_eps > 0 else 0,
        prior_strength=log_coords + 2.0 if count_eps > 0 else 0.0, learns=learns,
        rows_to_learn=float(rows),
        reason="" if learns else (f"modelled rows to learn ≈ {rows:.3g} > "
                                  f"{LEARN_FACTOR:g} × T; running as configured"),
        epsilon_spent=spent)
