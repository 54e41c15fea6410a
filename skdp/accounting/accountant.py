"""One tight accountant: the (ε, δ) of a composition of heterogeneous mechanisms, and its inverse.

:func:`account` composes a sequence of privacy events (:mod:`skdp.accounting.events`)
— adaptively, in any order — and reports ε at a δ or δ at an ε. :func:`calibrate_plan`
answers the question every estimator asks: given a plan ("K instances of this, m·K of
that, with these relative weights"), what are the largest per-mechanism parameters
whose composition stays within (ε, δ)?

Methods (each a valid upper bound; ``"tight"`` takes the smallest):

``"pld"``
    Privacy-loss distributions with a pessimistic discretisation
    (:mod:`skdp.accounting._pld`): exact for pure and approximate DP up to one grid
    step per group of equal events; bounded-range events counted as pure ε-DP.
``"rdp"``
    Rényi divergences (:mod:`skdp.accounting._rdp`): bounded-range events as
    ε²/8-zCDP, the sharper choice for many small exponential-mechanism draws.
``"basic"``
    (Σε, Σδ) (Dwork & Roth 2014, Thm 3.16).
``"advanced"``
    Σε(e^ε − 1) + √(2·log(1/δ′)·Σε²) with slack δ′ = δ − Σδ, never worse than basic
    (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014, Thm 3.20, heterogeneous form).
``"tight"`` (default)
    The minimum of the four (of pld and rdp when Gaussian events are present).

Measured (``benchmarks/accounting.py``): 200 × ε = 0.05 at δ = 10⁻⁶ reports 3.2763
(exact: 3.2763); a plan of 10⁴ mechanisms is accounted in well under a second.
"""

import functools
import math
from typing import NamedTuple

from .._validation import check_delta, check_epsilon, check_positive_int
from ..exceptions import PrivacyParameterError
from . import _pld, _rdp
from .composition import _optimal_epsilon, calibrate
from .events import ApproxDP, BoundedRange, DiscreteLaplace, Gaussian, Laplace, PureDP

__all__ = ["Accounting", "Calibration", "PlanItem", "account", "calibrate_plan", "epsilon_of"]

METHODS = ("tight", "pld", "rdp", "basic", "advanced")
_EVENTS = (PureDP, BoundedRange, ApproxDP, Laplace, DiscreteLaplace, Gaussian)
# Up to this many equal events, "tight" also evaluates the exact KOV bound (O(count)).
_EXACT_MAX_COUNT = 10**5
# Calibration stops once the bracket on the scale is this small relative to it.
_SCALE_RTOL = 1e-7


def _check_count(value, name="count"):
    try:
        return check_positive_int(value, name)
    except ValueError as exc:
        raise PrivacyParameterError(f"{exc} It is how many times the mechanism runs.") from None


def _check_method(method):
    if method not in METHODS:
        raise PrivacyParameterError(f"method must be one of {METHODS}, got {method!r}.")
    return method


def _group(items):
    """Validate ``items`` (events or (event, count) pairs) into an ordered dict event → count."""
    groups = {}
    for item in items:
        event, count = (item, 1) if isinstance(item, _EVENTS) else _pair(item)
        groups[event] = groups.get(event, 0) + count
    if not groups:
        raise PrivacyParameterError("Nothing to account: give at least one privacy event.")
    return groups


def _pair(item):
    try:
        event, count = item
    except (TypeError, ValueError):
        raise PrivacyParameterError(
            f"Each item must be a privacy event (PureDP, BoundedRange, ApproxDP, Laplace, "
            f"DiscreteLaplace, Gaussian) or an (event, count) pair, got {type(item).__name__}."
        ) from None
    if not isinstance(event, _EVENTS):
        raise PrivacyParameterError(
            f"Expected a privacy event from skdp.accounting, got {type(event).__name__}."
        )
    return event, _check_count(count)


class Accounting:
    """The privacy of one composition, by one method: ε at a δ, δ at an ε.

    Made by :func:`account`; the privacy-loss distribution and divergences are
    computed once, on first use.
    """

    def __init__(self, groups, method):
        self._groups = groups
        self.method = method
        self._has_gaussian = any(type(e) is Gaussian for e in groups)
        self._own_delta = math.fsum(count * e.delta for e, count in groups.items())

    def __repr__(self):
        n = sum(self._groups.values())
        return f"Accounting({n} events in {len(self._groups)} groups, method={self.method!r})"

    @functools.cached_property
    def _plds(self):
        """The PLD; for noise events, also the PLD with each counted as pure ε-DP.

        Both are valid (Laplace and discrete Laplace are ε-DP). The pure one is exact as a
        binomial, while the noise PLDs are self-composed by FFT, whose rigorously bounded
        rounding error (moved to L = ∞) grows with the count: about 10⁻⁹ for 10⁴ events.
        """
        plds = [_pld.compose(self._groups)]
        noise = (Laplace, DiscreteLaplace)
        if any(type(e) in noise for e in self._groups):
            as_pure = {}
            for event, count in self._groups.items():
                key = PureDP(event.epsilon) if type(event) in noise else event
                as_pure[key] = as_pure.get(key, 0) + count
            plds.append(_pld.compose(as_pure))
        return plds

    def _pld_epsilon(self, delta):
        return min(pld.epsilon(delta) for pld in self._plds)

    @functools.cached_property
    def _divergence(self):
        return _rdp.total_divergence(self._groups)[0]

    def _closed_form_applies(self):
        if self._has_gaussian:
            if self.method in ("basic", "advanced"):
                raise PrivacyParameterError(
                    f"method={self.method!r} has no bound for Gaussian events; "
                    "use 'tight', 'pld' or 'rdp'."
                )
            return False
        return True

    def _basic(self, delta):
        if self._own_delta > delta:
            return math.inf
        return math.fsum(count * e.epsilon for e, count in self._groups.items())

    def _advanced(self, delta):
        basic = self._basic(delta)
        slack = delta - self._own_delta
        if slack <= 0:
            return basic
        groups = self._groups.items()
        drift = math.fsum(count * e.epsilon * math.expm1(e.epsilon) for e, count in groups)
        spread = math.fsum(count * e.epsilon**2 for e, count in groups)
        return min(basic, drift + math.sqrt(2.0 * math.log(1.0 / slack) * spread))

    def _exact_homogeneous(self, delta):
        """The exact optimal k-fold composition (KOV) when every event is the same ε-DP or
        (ε, δ)-DP one: no discretisation at all. ∞ when it does not apply."""
        if len(self._groups) != 1 or self._has_gaussian:
            return math.inf
        (event, count), = self._groups.items()
        if count > _EXACT_MAX_COUNT:
            return math.inf
        result = _optimal_epsilon(event.epsilon, event.delta, count, delta)
        return math.inf if result is None else result[0]

    def _rdp_epsilon(self, delta):
        return _rdp.epsilon(self._divergence, delta - self._own_delta)

    def epsilon(self, delta):
        """The smallest ε (an upper bound, never optimistic) at which the composition is (ε, δ)-DP.

        ``math.inf`` when no ε works at this δ (the events' own δ exceed it).
        """
        delta = check_delta(delta)
        candidates = []
        closed = self._closed_form_applies()
        if self.method in ("tight", "pld"):
            candidates.append(self._pld_epsilon(delta))
        if self.method in ("tight", "rdp"):
            candidates.append(self._rdp_epsilon(delta))
        if closed and self.method in ("tight", "basic"):
            candidates.append(self._basic(delta))
        if closed and self.method in ("tight", "advanced"):
            candidates.append(self._advanced(delta))
        if self.method == "tight":
            candidates.append(self._exact_homogeneous(delta))
        return float(min(candidates))

    def delta(self, epsilon):
        """The smallest δ (an upper bound) at which the composition is (ε, δ)-DP."""
        epsilon = check_epsilon(epsilon, allow_zero=True)
        candidates = []
        if self.method in ("tight", "pld"):
            candidates.append(min(pld.delta(epsilon) for pld in self._plds))
        if self.method in ("tight", "rdp"):
            candidates.append(min(1.0, _rdp.delta(self._divergence, epsilon) + self._own_delta))
        if self._closed_form_applies() and self.method in ("tight", "basic", "advanced"):
            candidates.append(self._closed_form_delta(epsilon))
        return float(min(candidates))

    def _closed_form_delta(self, epsilon):
        """δ(ε) of basic / advanced composition, by bisection on log δ."""
        of = self._basic if self.method == "basic" else self._advanced
        if of(1.0 - 1e-16) > epsilon:
            return 1.0
        lo, hi = math.log(max(self._own_delta, 1e-300)), 0.0
        if of(math.exp(lo)) <= epsilon:
            return math.exp(lo) if self._own_delta > 0 else 0.0
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if of(math.exp(mid)) <= epsilon else (mid, hi)
        return math.exp(hi)

    def epsilon_bounds(self, delta):
        """(lower, upper) bounds on the PLD's ε at δ: the width is its discretisation error.

        ``upper`` is :meth:`epsilon` by the ``"pld"`` method; ``lower`` rounds every loss
        down instead of up, so the exact ε of the composed dominating pairs lies between.
        """
        delta = check_delta(delta)
        lower = _pld.compose(self._groups, pessimistic=False).epsilon(delta)
        return lower, self._pld_epsilon(delta)


def account(items, method="tight"):
    """Account for an adaptive composition of privacy events.

    Parameters
    ----------
    items : iterable
        Privacy events (:class:`PureDP`, :class:`BoundedRange`, :class:`ApproxDP`,
        :class:`Laplace`, :class:`DiscreteLaplace`, :class:`Gaussian`) or
        ``(event, count)`` pairs, in any order.
    method : {"tight", "pld", "rdp", "basic", "advanced"}, default="tight"
        See the module docstring; ``"tight"`` reports the smallest valid bound.

    Returns
    -------
    Accounting
        With ``.epsilon(delta)`` and ``.delta(epsilon)``.

    Privacy
    -------
    Running the events' mechanisms in sequence is (``acc.epsilon(δ)``, δ)-DP for every
    δ, when each mechanism's *input* may depend on the outputs of the earlier ones
    (adaptive composition) and the run may stop early, but the sequence of events —
    which event runs at step i, with which parameters — is fixed before the run. If the
    choice of the next event itself depends on earlier outputs (a privacy filter), only
    ``method="rdp"`` and ``"basic"`` remain valid as stated (Feldman & Zrnic 2021; Rogers
    et al. 2016); the PLD's optimal composition does not carry over.

    Examples
    --------
    >>> from skdp.accounting import PureDP, account
    >>> round(account([(PureDP(0.05), 200)]).epsilon(1e-6), 3)
    3.276
    """
    return _account(tuple(_group(items).items()), _check_method(method))


@functools.lru_cache(maxsize=512)
def _account(groups, method):
    return Accounting(dict(groups), method)


def epsilon_of(items, delta, method="tight"):
    """Shortcut for ``account(items, method).epsilon(delta)``."""
    return account(items, method).epsilon(delta)


class PlanItem(NamedTuple):
    """``count`` runs of ``kind(weight·scale)`` in a plan for :func:`calibrate_plan`.

    ``kind`` is an event class; :class:`ApproxDP` items carry their own ``delta``;
    a :class:`Gaussian` item has σ = 1/(weight·scale).
    """

    kind: type
    count: int = 1
    weight: float = 1.0
    delta: float = 0.0

    def event(self, scale):
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


def _check_plan(plan):
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


def calibrate_plan(plan, epsilon, delta, method="tight"):
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
        ``method`` (checked), and a scale larger by a relative 10⁻⁷ would not be.

    Raises
    ------
    PrivacyParameterError
        On invalid arguments, or when the items' own δ (Σ count·delta) leave no room
        in ``delta``.

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

    def plan_at(scale):
        return [(item.event(scale), item.count) for item in items]

    # ε(s) grows with s under every method, so the largest s under "tight" (the minimum
    # of the methods) is the largest over the methods: cheap closed forms first, then
    # the PLD only where it can still beat them.
    gaussian = any(item.kind is Gaussian for item in items)
    best = _exact_homogeneous_scale(items, epsilon, delta) if method == "tight" else 0.0
    for each in _component_methods(method, gaussian):
        def spent(scale, each=each):
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
        account(events, method).epsilon(delta), delta,
    )


def _exact_homogeneous_scale(items, epsilon, delta):
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


def _component_methods(method, gaussian):
    if method != "tight":
        return (method,)
    return ("rdp", "pld") if gaussian else ("basic", "advanced", "rdp", "pld")


def _largest_scale(spent, epsilon, start):
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
