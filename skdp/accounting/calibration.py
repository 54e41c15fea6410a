"""Calibration: the largest per-mechanism parameters whose composition fits in (ε, δ).

The question every estimator asks of the accountant (:mod:`skdp.accounting.accountant`):
given a plan — "K instances of this, m·K of that, with these relative weights" — what
common scale s makes the whole composition (ε, δ)-DP, as large as possible?
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from .._validation import check_delta, check_epsilon
from ..exceptions import PrivacyError, PrivacyParameterError
from .accountant import _EVENTS, _EXACT_MAX_COUNT, _check_count, _check_method, account
from .composition import calibrate
from .events import ApproxDP, Gaussian, PrivacyEvent

__all__ = ["Calibration", "PlanItem", "calibrate_plan"]


class CalibrationError(PrivacyError, RuntimeError):
    """Internal error: a calibrated plan re-accounts to more than its target.

    :func:`calibrate_plan` re-accounts every result through the same accountant before
    returning it, so a bug in the search (or an accountant that is not monotone where
    the search assumes it) surfaces as this error instead of as parameters that
    overspend. Seeing it is a bug in skdp: please report it with the plan.
    """

# Calibration stops once the bracket on the scale is this small relative to it.
_SCALE_RTOL = 1e-7


class PlanItem(NamedTuple):
    """``count`` runs of ``kind(weight·scale)`` in a plan for :func:`calibrate_plan`.

    ``kind`` is an event class; :class:`ApproxDP` items carry their own ``delta``;
    a :class:`Gaussian` item has σ = 1/(weight·scale).
    """

    kind: type
    # The public field name shadows tuple.count, which mypy reports; the name stays.
    count: int = 1  # type: ignore[assignment]
    weight: float = 1.0
    delta: float = 0.0

    def event(self, scale: float) -> PrivacyEvent:
        eps = self.weight * scale
        if self.kind is Gaussian:
            return Gaussian(1.0 / eps)
        if self.kind is ApproxDP:
            return ApproxDP(eps, self.delta)
        return self.kind(eps)


class Calibration(NamedTuple):
    """The result of :func:`calibrate_plan`.

    Attributes
    ----------
    scale : float
        The largest common scale s found.
    epsilons : tuple of float
        Per plan item, its ε = weight·s (for a Gaussian item, 1/σ).
    events : tuple of (event, count)
        The calibrated plan, ready for :func:`account`.
    epsilon, delta : float
        What the calibrated plan spends: ε at δ, by the calibration's method.
    """

    scale: float
    epsilons: tuple
    events: tuple
    epsilon: float
    delta: float


def _check_plan(plan: Iterable[Any]) -> list[PlanItem]:
    items = []
    for item in plan:
        item = item if isinstance(item, PlanItem) else PlanItem(*item)
        if item.kind not in _EVENTS:
            raise PrivacyParameterError(f"PlanItem.kind must be an event class, got {item.kind!r}.")
        _check_count(item.count)
        check_epsilon(item.weight, name="weight")
        check_delta(item.delta, name="PlanItem.delta")
        items.append(item)
    if not items:
        raise PrivacyParameterError("The plan is empty: give at least one PlanItem.")
    return items


def calibrate_plan(plan: Sequence[PlanItem], epsilon: float, delta: float,
                   method: str = "tight") -> Calibration:
    """The largest per-mechanism parameters whose composition fits in (ε, δ).

    Parameters
    ----------
    plan : sequence of PlanItem
        ``PlanItem(kind, count, weight, delta)``: ``count`` runs of ``kind(weight·s)``
        for a common scale s; weights fix the relative split.
    epsilon : float
        Total ε > 0.
    delta : float
        Total δ ∈ [0, 1), including the plan items' own δ.
    method : str, default="tight"
        Accounting method (see :func:`account`); ``"basic"`` reproduces an even split.

    Returns
    -------
    Calibration
        The scale, per-item ε and the events; their composition is (ε, δ)-DP by
        ``method`` — re-accounted through :func:`account` with the same ``method``
        before returning, so ``result.epsilon ≤ epsilon`` is checked, not assumed —
        and a scale larger by a relative 10⁻⁷ would not be.

    Raises
    ------
    PrivacyParameterError
        On invalid arguments, or when the items' own δ (Σ count·delta) leave no room
        in ``delta``.
    CalibrationError
        Internal error: the result re-accounts to more than ``epsilon`` (a bug in
        skdp; never raised by a correct search, and raised before anything is spent).

    Examples
    --------
    >>> from skdp.accounting import BoundedRange, PlanItem, PureDP, calibrate_plan
    >>> cal = calibrate_plan([PlanItem(PureDP, 10), PlanItem(BoundedRange, 100)], 1.0, 1e-6)
    >>> cal.epsilons[0] > 1.0 / 110
    True
    """
    items = _check_plan(plan)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    method = _check_method(method)
    own = math.fsum(item.count * item.delta for item in items if item.kind is ApproxDP)
    if own > delta:
        raise PrivacyParameterError(
            f"The plan's own δ (Σ count·delta = {own:.3g}) exceeds the total delta={delta!r}; "
            "give its mechanisms a smaller δ or raise delta."
        )

    def plan_at(scale: float) -> list[tuple[PrivacyEvent, int]]:
        return [(item.event(scale), item.count) for item in items]

    # ε(s) grows with s under every method, so the largest s under "tight" (the minimum
    # of the methods) is the largest over the methods: cheap closed forms first, then
    # the PLD only where it can still beat them.
    gaussian = any(item.kind is Gaussian for item in items)
    best = _exact_homogeneous_scale(items, epsilon, delta) if method == "tight" else 0.0
    for each in _component_methods(method, gaussian):
        def spent(scale: float, each: str = each) -> float:
            return account(plan_at(scale), each).epsilon(delta)

        if best > 0 and spent(best * (1.0 + _SCALE_RTOL)) > epsilon:
            continue
        even = epsilon / math.fsum(item.count * item.weight for item in items)
        best = max(best, _largest_scale(spent, epsilon, max(best, even)))
    if best == 0.0:
        raise PrivacyParameterError(
            f"No parameters fit in (ε={epsilon!r}, δ={delta!r}) for this plan by method={method!r}."
        )
    events = tuple(plan_at(best))
    return Calibration(
        best, tuple(item.weight * best for item in items), events,
        _reaccounted(events, method, epsilon, delta), delta,
    )


def _reaccounted(events: tuple, method: str, epsilon: float, delta: float) -> float:
    """ε of the calibrated ``events`` at ``delta`` by ``method``, checked to be ≤ ``epsilon``.

    Every estimator spends what :func:`calibrate_plan` returns, so its result is
    re-accounted here, through the very accountant and method a caller would use,
    rather than trusted: the search is correct only if ε(s) is monotone and each
    candidate scale was tested by the method that reports it (the exact KOV scale is
    computed by :func:`~skdp.accounting.calibrate`, not by :func:`account`).
    """
    spent = account(events, method).epsilon(delta)
    if not spent <= epsilon:  # also catches NaN
        raise CalibrationError(
            f"Internal error in calibrate_plan: the calibrated plan re-accounts to "
            f"ε = {spent!r} > the target {epsilon!r} at δ = {delta!r} (method={method!r}). "
            "No privacy was spent; please report this as a bug in skdp."
        )
    return spent


def _exact_homogeneous_scale(items: Sequence[PlanItem], epsilon: float, delta: float) -> float:
    """The scale from the exact KOV calibration when the plan is one group of equal
    ε-DP or (ε, δ)-DP events (what "tight" accounting then reports); else 0."""
    if len(items) != 1 or items[0].kind is Gaussian or items[0].count > _EXACT_MAX_COUNT:
        return 0.0
    (item,) = items
    own = item.delta if item.kind is ApproxDP else 0.0
    try:
        step = calibrate(epsilon, delta, item.count, method="optimal", step_delta=own).epsilon
    except PrivacyParameterError:
        return 0.0
    return step / item.weight


def _component_methods(method: str, gaussian: bool) -> tuple[str, ...]:
    if method != "tight":
        return (method,)
    return ("rdp", "pld") if gaussian else ("basic", "advanced", "rdp", "pld")


def _largest_scale(spent: Callable[[float], float], epsilon: float, start: float) -> float:
    """Largest s with spent(s) ≤ epsilon (spent increasing) to a relative _SCALE_RTOL; else 0."""
    lo = start
    for _ in range(64):
        if spent(lo) <= epsilon:
            break
        lo *= 0.5
    else:
        return 0.0
    hi = 2.0 * lo
    while spent(hi) <= epsilon:
        lo, hi = hi, 2.0 * hi
    while hi - lo > _SCALE_RTOL * lo:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if spent(mid) <= epsilon else (lo, mid)
    return lo
