"""skdp's tight accountant against Google's dp-accounting 0.6 (the reference PLD accountant).

For each composition (homogeneous and mixed, counts up to 10⁴) the reference brackets the
true ε(δ) of the worst-case composition with two dp-accounting privacy-loss distributions:

* ``hi`` — dp-accounting's *pessimistic* estimate: ``from_privacy_parameters`` (ceil
  rounding of the randomized-response dominating pair, with δ at infinity) for pure and
  (ε, δ)-DP events; the connect-the-dots pessimistic PLD (dp-accounting's default) for
  Laplace and Gaussian noise; privacy buckets rounded up for discrete Laplace. An upper
  bound on the true ε.
* ``lo`` — the same dominating pairs discretised the *optimistic* way (floor rounding,
  privacy buckets, truncated tails dropped): a lower bound on the true ε. ``hi − lo`` is
  dp-accounting's own discretisation error, so "never smaller than the pessimistic
  estimate minus its discretisation error" is ``skdp ≥ lo`` (``lo`` read at
  δ + 1e-12, the size of dp-accounting's own FFT round-off in δ).

Every method that claims an upper bound ("tight" = min of "pld" and "rdp", and "pld")
must therefore report ε ≥ lo; and it must stay within 2 % of ``hi``. BoundedRange has no
dp-accounting equivalent except as pure ε-DP: its "pld" value (counted as pure) is
compared like PureDP, its "tight" value (which may use ε²/8-zCDP and go lower, legally)
only from above.

Gaussian groups are merged before discretising (k runs of N(0, σ²) on sensitivity-1
queries are one run at σ/√k, exactly), as dp-accounting's PLDAccountant does for a
self-composed GaussianDpEvent. ``test_reference_matches_pld_accountant`` checks these
hand-built PLDs against dp-accounting's own ``PLDAccountant`` with ``DpEvent`` objects.
"""

import functools
import math
from collections import defaultdict

import pytest
from dp_accounting import dp_event
from dp_accounting.pld import common, pld_privacy_accountant
from dp_accounting.pld import privacy_loss_distribution as pld_lib

from skdp.accounting import (
    ApproxDP,
    BoundedRange,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    PureDP,
    account,
)

DELTAS = (1e-5, 1e-6, 1e-9)
INTERVAL = 1e-4  # dp-accounting's value_discretization_interval (its default)
# The reference's own bracket must be this tight for the 2 % comparison to mean something.
MAX_REFERENCE_GAP = 0.005
WITHIN = 0.02  # skdp's ε may exceed dp-accounting's pessimistic ε by at most 2 %
# dp-accounting's FFT convolutions carry round-off: against the exact optimal composition
# (60-digit arithmetic) its δ(ε) is off by up to 3.6e-13 either way (10⁴ events; 4e-14
# for 10³), e.g. at δ = 1e-9 its "optimistic" ε for 1000 × (0.05, 1e-14) is 1e-6 above the
# exact one. Its optimistic bound is therefore read at δ + FFT_DELTA_SLACK.
FFT_DELTA_SLACK = 1e-12

# A composition is a tuple of (kind, parameters, count):
#   ("pure", ε) ("br", ε) ("approx", ε, δ) ("laplace", ε) ("dlap", ε, Δ) ("gauss", σ)
COMPOSITIONS = {
    # homogeneous
    "pure 200x0.05": (("pure", (0.05,), 200),),
    "pure 1000x0.1": (("pure", (0.1,), 1000),),
    "pure 10^4x0.01": (("pure", (0.01,), 10_000),),
    "pure 10x1.0": (("pure", (1.0,), 10),),
    "pure 1x0.5": (("pure", (0.5,), 1),),
    "pure 100x0.3": (("pure", (0.3,), 100),),
    "approx 100x(0.1,1e-13)": (("approx", (0.1, 1e-13), 100),),
    "approx 1000x(0.05,1e-14)": (("approx", (0.05, 1e-14), 1000),),
    "laplace 100x0.1": (("laplace", (0.1,), 100),),
    "laplace 10^4x0.01": (("laplace", (0.01,), 10_000),),
    "laplace 5x1.0": (("laplace", (1.0,), 5),),
    "dlap 100x0.1 (Δ=1)": (("dlap", (0.1, 1), 100),),
    "dlap 50x0.5 (Δ=3)": (("dlap", (0.5, 3), 50),),
    "gauss 1x1.0": (("gauss", (1.0,), 1),),
    "gauss 100x5.0": (("gauss", (5.0,), 100),),
    "gauss 10^4x40": (("gauss", (40.0,), 10_000),),
    "br-as-pure 10^4x0.02": (("br", (0.02,), 10_000),),
    # mixed
    "br 100x0.05 + pure 10x0.1": (("br", (0.05,), 100), ("pure", (0.1,), 10)),
    "pure 500x0.05 + laplace 100x0.1": (("pure", (0.05,), 500), ("laplace", (0.1,), 100)),
    "pure 20x0.2 + approx 50x(0.1,1e-12) + laplace 200x0.05": (
        ("pure", (0.2,), 20),
        ("approx", (0.1, 1e-12), 50),
        ("laplace", (0.05,), 200),
    ),
    "gauss 100x5 + pure 50x0.1": (("gauss", (5.0,), 100), ("pure", (0.1,), 50)),
    "pure 5000x0.01 + 50x0.1 + 2x1.0": (
        ("pure", (0.01,), 5000),
        ("pure", (0.1,), 50),
        ("pure", (1.0,), 2),
    ),
    "laplace 20x0.5 + gauss 20x3": (("laplace", (0.5,), 20), ("gauss", (3.0,), 20)),
    "approx 20x(0.5,2e-9) + pure 1000x0.05": (
        ("approx", (0.5, 2e-9), 20),
        ("pure", (0.05,), 1000),
    ),
    "everything": (
        ("pure", (0.1,), 30),
        ("br", (0.05,), 300),
        ("approx", (0.2, 1e-12), 10),
        ("laplace", (0.1,), 40),
        ("dlap", (0.2, 2), 25),
        ("gauss", (8.0,), 60),
    ),
}


def _deltas(spec):
    """The targets among DELTAS that exceed the events' own δ (Σ count·δ_i) tenfold."""
    own = sum(c * p[1] for kind, p, c in spec if kind == "approx")
    return [d for d in DELTAS if d > 10 * own]


CASES = [(name, d) for name, spec in COMPOSITIONS.items() for d in _deltas(spec)]


def skdp_items(spec):
    """The composition as skdp (event, count) pairs."""
    make = {
        "pure": PureDP,
        "br": BoundedRange,
        "approx": ApproxDP,
        "laplace": Laplace,
        "dlap": DiscreteLaplace,
        "gauss": Gaussian,
    }
    return [(make[kind](*params), count) for kind, params, count in spec]


# --------------------------------------------------------------------------- reference


def _single_pld(kind, params, pessimistic):
    """dp-accounting's PLD of one event, rounded up (pessimistic) or down (optimistic)."""
    iv = INTERVAL
    if kind in ("pure", "br", "approx"):
        eps, delta = params[0], (params[1] if kind == "approx" else 0.0)
        if pessimistic:
            return pld_lib.from_privacy_parameters(
                common.DifferentialPrivacyParameters(eps, delta), value_discretization_interval=iv
            )
        # The same dominating pair (δ at +∞, randomized response on the rest), floor-rounded.
        pmf = defaultdict(float)
        pmf[math.floor(eps / iv)] += (1 - delta) / (1 + math.exp(-eps))
        pmf[math.floor(-eps / iv)] += (1 - delta) / (1 + math.exp(eps))
        return pld_lib.PrivacyLossDistribution.create_from_rounded_probability(
            dict(pmf), delta, iv, pessimistic_estimate=False
        )
    if kind == "laplace":  # Laplace noise of scale 1/ε on a sensitivity-1 query
        return pld_lib.from_laplace_mechanism(
            1.0 / params[0],
            value_discretization_interval=iv,
            pessimistic_estimate=pessimistic,
            use_connect_dots=pessimistic,
        )
    if kind == "dlap":  # P(z) ∝ exp(−(ε/Δ)|z|) on a sensitivity-Δ integer query
        eps, sens = params
        return pld_lib.from_discrete_laplace_mechanism(
            eps / sens,
            sensitivity=sens,
            value_discretization_interval=iv,
            pessimistic_estimate=pessimistic,
            use_connect_dots=False,
        )
    if kind == "gauss":
        return pld_lib.from_gaussian_mechanism(
            params[0],
            value_discretization_interval=iv,
            pessimistic_estimate=pessimistic,
            use_connect_dots=pessimistic,
        )
    raise AssertionError(kind)


def _composed_pld(spec, pessimistic):
    groups = [(kind, params, count) for kind, params, count in spec if kind != "gauss"]
    gauss = [(params[0], count) for kind, params, count in spec if kind == "gauss"]
    if gauss:  # k runs at σ compose to one run at σ/√k; several groups add their μ's
        groups.append(("gauss", (sum(c / s**2 for s, c in gauss) ** -0.5,), 1))
    total = None
    for kind, params, count in groups:
        pld = _single_pld(kind, params, pessimistic)
        if count > 1:
            pld = pld.self_compose(count)
        total = pld if total is None else total.compose(pld)
    return total


@functools.cache
def reference(name):
    """(optimistic PLD, pessimistic PLD) of a composition, computed once per session."""
    spec = COMPOSITIONS[name]
    return _composed_pld(spec, pessimistic=False), _composed_pld(spec, pessimistic=True)


@functools.cache
def bounded_range_lower(name):
    """Optimistic PLD with each BoundedRange(ε) replaced by randomized response at ε/2.

    Randomized response at ε/2 has losses ±ε/2, a range of ε: it *is* ε-BR, so this
    composition's ε is a lower bound on the worst case of the original one.
    """
    spec = tuple(
        ("pure", (params[0] / 2,), count) if kind == "br" else (kind, params, count)
        for kind, params, count in COMPOSITIONS[name]
    )
    return _composed_pld(spec, pessimistic=False)


def reference_epsilons(name, delta):
    lo_pld, hi_pld = reference(name)
    return lo_pld.get_epsilon_for_delta(delta + FFT_DELTA_SLACK), hi_pld.get_epsilon_for_delta(
        delta
    )


# --------------------------------------------------------------------------- the reference itself


def hi_at(name, delta):
    return reference(name)[1].get_epsilon_for_delta(delta)


@pytest.mark.parametrize(("name", "delta"), CASES)
def test_reference_bracket_is_tight(name, delta):
    """dp-accounting's optimistic and pessimistic ε bracket the truth within 0.5 %."""
    lo, hi = reference_epsilons(name, delta)
    assert 0 < lo <= hi
    assert hi - lo <= MAX_REFERENCE_GAP * hi, (name, delta, lo, hi)


@pytest.mark.parametrize(
    ("event", "count", "name"),
    [
        (dp_event.LaplaceDpEvent(noise_multiplier=10.0), 100, "laplace 100x0.1"),
        (dp_event.GaussianDpEvent(noise_multiplier=5.0), 100, "gauss 100x5.0"),
        (
            dp_event.DiscreteLaplaceDpEvent(noise_parameter=0.5 / 3, sensitivity=3),
            50,
            "dlap 50x0.5 (Δ=3)",
        ),
    ],
)
def test_reference_matches_pld_accountant(event, count, name):
    """The hand-built pessimistic PLDs are dp-accounting's own PLDAccountant results."""
    accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=INTERVAL)
    accountant.compose(dp_event.SelfComposedDpEvent(event, count))
    for delta in DELTAS:
        assert reference_epsilons(name, delta)[1] == pytest.approx(
            accountant.get_epsilon(delta), rel=1e-7
        )


# --------------------------------------------------------------------------- skdp vs reference


def _check(value, lo, hi, what):
    assert value >= lo, f"{what}: skdp ε = {value!r} < dp-accounting's lower bound {lo!r}"
    assert value <= (1 + WITHIN) * hi, (
        f"{what}: skdp ε = {value!r} > 1.02 × dp-accounting's pessimistic ε {hi!r}"
    )


@pytest.mark.parametrize(("name", "delta"), CASES)
def test_epsilon_vs_dp_accounting(name, delta):
    spec = COMPOSITIONS[name]
    lo, hi = reference_epsilons(name, delta)
    items = skdp_items(spec)
    has_br = any(kind == "br" for kind, _, _ in spec)
    pld_eps = account(items, method="pld").epsilon(delta)
    tight_eps = account(items, method="tight").epsilon(delta)
    what = f"{name} at δ={delta:g} (dp-accounting [{lo:.6f}, {hi:.6f}])"
    # "pld" counts BoundedRange as pure ε-DP, exactly what dp-accounting can express.
    _check(pld_eps, lo, hi, what + ', method="pld"')
    if has_br:  # ε²/8-zCDP may legally beat the pure-DP reference, not RR at ε/2
        br_lo = bounded_range_lower(name).get_epsilon_for_delta(delta + FFT_DELTA_SLACK)
        assert br_lo <= tight_eps <= (1 + WITHIN) * hi, (what, br_lo, tight_eps)
    else:
        _check(tight_eps, lo, hi, what + ', method="tight"')
    assert tight_eps <= pld_eps * (1 + 1e-12), (what, tight_eps, pld_eps)
    # skdp's own discretisation bracket: its lower end is below the true ε ≤ hi
    own_lo, own_hi = account(items, method="pld").epsilon_bounds(delta)
    assert own_hi == pld_eps
    assert own_lo <= hi_at(name, delta - FFT_DELTA_SLACK), (what, own_lo)


@pytest.mark.parametrize(
    "name",
    ["pure 200x0.05", "laplace 100x0.1", "gauss 100x5.0", "everything", "dlap 50x0.5 (Δ=3)"],
)
def test_delta_vs_dp_accounting(name):
    """δ at a given ε is never below dp-accounting's optimistic δ (a lower bound)."""
    lo_pld, hi_pld = reference(name)
    acc = account(skdp_items(COMPOSITIONS[name]), method="pld")
    for delta in DELTAS:
        eps = hi_pld.get_epsilon_for_delta(delta)
        reference_lo = lo_pld.get_delta_for_epsilon(eps) - FFT_DELTA_SLACK
        assert acc.delta(eps) >= reference_lo, (name, eps, acc.delta(eps), reference_lo)
        # and skdp's own round trip is conservative (a finite ε is test_epsilon_vs_dp_accounting's)
        own = acc.epsilon(delta)
        if math.isfinite(own):
            assert acc.delta(own) <= delta * (1 + 1e-9), (name, delta, own)
