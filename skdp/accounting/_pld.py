"""Privacy-loss distributions (PLDs) on a grid: compose by convolution, read off δ(ε).

The privacy loss of a pair (P, Q) is L = log P(o)/Q(o) for o ~ P; the pair is
(ε, δ(ε))-indistinguishable with the *exact* δ(ε) = E[(1 − e^{ε−L})₊] (plus the mass
at L = ∞), and the loss of an adaptive composition is the sum of independent losses
of the dominating pairs, so its distribution is the convolution (Koskela, Jälkö &
Honkela 2020; Meiser & Mohammadi 2018; Google's dp-accounting, whose pessimistic
estimate this reproduces).

Never optimistic. With ``pessimistic=True`` (the default and the only value the
accountant reports) every approximation moves probability mass to a *larger* loss:

* a loss value is rounded **up** to the grid (δ(ε) is increasing in every loss);
* mass in a lower tail below 10⁻³⁰ is moved up to the first kept bin, mass in an
  upper tail is moved to L = ∞;
* the floating-point error of each FFT convolution is bounded (Σ|error| ≤ √n·20·u·
  log₂n·(‖a‖₂‖b‖₁ + ‖b‖₂‖a‖₁), u the unit roundoff) and that much mass is added at L = ∞, which
  dominates it because δ(ε) changes by at most the total variation of the PLD.

``pessimistic=False`` rounds the other way and drops the FFT error: a lower bound
used only to report the discretisation error.

Exactness per event type: randomized-response events (pure / approximate DP,
bounded range counted as pure, discrete Laplace with Δ = 1) are composed exactly as
a binomial — one rounding per group of equal events, not per event. Laplace and
discrete Laplace with Δ > 1 are discretised once on a lattice that holds their atoms
±ε exactly and self-composed there by repeated squaring. Gaussian events compose in
closed form (the loss is N(Σμ, 2Σμ)) and are discretised once.
"""

import math

import numpy as np
from scipy import signal, special, stats

from .events import ApproxDP, BoundedRange, DiscreteLaplace, Gaussian, Laplace, PureDP

# Tail mass below which bins are dropped (moved up, or to infinity).
_TAIL = 1e-30
# The common grid spans the composed loss's mean ± _SPAN standard deviations in _BINS bins.
_BINS = 2**16
_SPAN = 12.0
_UNIT_ROUNDOFF = np.finfo(float).eps
# A PLD with at most this many atoms is convolved by shifted copies instead of an FFT.
_FEW_ATOMS = 64
# Distinct events of one kind composed exactly; more are bucketed (see _bucketed).
_MAX_GROUPS = 64

_RANDOMIZED_RESPONSE = (PureDP, BoundedRange, ApproxDP)


class Grid:
    """A discretised PLD: mass ``p[i]`` at loss ``(start + i)·h``, plus ``inf`` at L = ∞."""

    __slots__ = ("h", "inf", "p", "start")

    def __init__(self, h, start, p, inf):
        self.h, self.start, self.p, self.inf = h, int(start), p, float(inf)

    @property
    def losses(self):
        return (self.start + np.arange(self.p.size)) * self.h

    def delta(self, epsilon):
        """δ(ε) = P(L = ∞) + Σ_{l > ε} p(l)(1 − e^{ε−l}), evaluated stably."""
        losses = self.losses
        above = losses > epsilon
        gain = float(np.sum(self.p[above] * -np.expm1(epsilon - losses[above])))
        return min(1.0, self.inf + gain)

    def epsilon(self, delta):
        """Smallest ε ≥ 0 with δ(ε) ≤ delta (∞ if the infinite-loss mass exceeds it)."""
        if self.inf > delta:
            return math.inf
        if self.delta(0.0) <= delta:
            return 0.0
        losses = self.losses
        keep = losses > 0
        loss, mass = losses[keep], self.p[keep]
        # On [l_{j-1}, l_j): δ(ε) = inf + S0_j − e^{ε−l_j}·U_j with S0_j = Σ_{i≥j} p_i and
        # U_j = Σ_{i≥j} p_i e^{l_j−l_i} ≤ S0_j (kept in log space: losses reach 10³).
        s0 = np.cumsum(mass[::-1])[::-1]
        with np.errstate(divide="ignore", invalid="ignore"):  # empty bins: log 0 = −∞
            shifted = np.log(mass) - loss
            log_u = np.logaddexp.accumulate(shifted[::-1])[::-1] + loss
        u = np.exp(log_u)
        s0_after = np.append(s0[1:], 0.0)
        u_after = np.append(u[1:], 0.0)
        step = np.append(np.diff(loss), 0.0)
        at_grid = self.inf + s0_after - np.exp(-step) * u_after  # δ at ε = l_j
        j = int(np.argmax(at_grid <= delta))  # δ is decreasing; the first grid point that fits
        lower = loss[j - 1] if j > 0 else 0.0
        if u[j] > 0 and self.inf + s0[j] > delta:
            eps = min(max(loss[j] + math.log((self.inf + s0[j] - delta) / u[j]), lower), loss[j])
        else:
            eps = loss[j]
        # Confirm with the stable direct sum; nudge up past any rounding.
        for _ in range(200):
            if self.delta(eps) <= delta:
                return eps
            eps = min(loss[j], eps + max(abs(eps), 1e-300) * 1e-12 * 16)
            if eps == loss[j]:
                return eps
        return float(loss[j])  # pragma: no cover


def _round(values, h, pessimistic):
    idx = values / h
    return (np.ceil(idx) if pessimistic else np.floor(idx)).astype(np.int64)


def _on_grid(values, masses, h, pessimistic):
    """Place atoms (values, masses) on the grid of step h, rounding towards ``pessimistic``."""
    idx = _round(np.asarray(values, dtype=float), h, pessimistic)
    start = int(idx.min())
    return start, np.bincount(idx - start, weights=masses)


def _trim(grid, pessimistic):
    """Drop tails lighter than _TAIL: the lower one moves up to the first kept bin; the
    upper one goes to L = ∞ (pessimistic) or down to the last kept bin (optimistic)."""
    p = np.clip(grid.p, 0.0, None)
    low = np.cumsum(p)
    first = int(np.searchsorted(low, _TAIL, side="right"))
    high = np.cumsum(p[::-1])
    last = p.size - 1 - int(np.searchsorted(high, _TAIL, side="right"))
    first = min(first, last)
    kept = p[first:last + 1].copy()
    kept[0] += low[first - 1] if first > 0 else 0.0
    upper = high[p.size - 2 - last] if last < p.size - 1 else 0.0
    inf = grid.inf
    if pessimistic:
        inf += upper  # moved to infinity
    else:
        kept[-1] += upper
    return Grid(grid.h, grid.start + first, kept, min(inf, 1.0))


def _norm(p):
    # Not np.linalg.norm: its BLAS call is slow under thread contention on a busy machine.
    return math.sqrt(float(np.sum(p * p)))


def convolve(a, b, pessimistic=True):
    """The PLD of the composition of two PLDs on the same grid."""
    if np.count_nonzero(a.p) < np.count_nonzero(b.p):
        a, b = b, a
    inf = 1.0 - (1.0 - a.inf) * (1.0 - b.inf)
    atoms = np.flatnonzero(b.p)
    if atoms.size <= _FEW_ATOMS:  # a few shifted copies: exact up to summation, no FFT error
        p = np.zeros(a.p.size + b.p.size - 1)
        for j in atoms:
            p[j:j + a.p.size] += b.p[j] * a.p
    else:
        p = signal.fftconvolve(a.p, b.p)
    if pessimistic and atoms.size > _FEW_ATOMS:
        # An FFT's rounding error is ‖error‖₂ ≤ c·u·log₂n·‖x‖₂ with c ≈ 7 for radix 2
        # (Higham 2002, Thm 24.2; we use 10). Both forward transforms, the product and the
        # inverse add up to ‖error‖₂ ≤ 10·u·log₂n·(2‖a‖₂‖b‖₁ + ‖b‖₂‖a‖₁) (since
        # ‖Fb‖_∞ ≤ ‖b‖₁ and ‖a∗b‖₂ ≤ ‖a‖₂‖b‖₁), below 20·u·log₂n·(‖a‖₂‖b‖₁ + ‖b‖₂‖a‖₁);
        # Σ|error| ≤ √n·‖error‖₂ is then moved to L = ∞.
        n = p.size
        cross = _norm(a.p) * float(np.sum(b.p)) + _norm(b.p) * float(np.sum(a.p))
        floor = 20.0 * _UNIT_ROUNDOFF * max(math.log2(n), 1.0) * cross
        inf += math.sqrt(n) * floor
        # Tails below ‖error‖₂ are noise: the lower one moves up to the first bin above it,
        # the upper one goes to L = ∞ (a noise floor would keep them above 10⁻³⁰ for ever).
        p = np.clip(p, 0.0, None)
        significant = np.flatnonzero(p > floor)
        if significant.size:
            first, last = significant[0], significant[-1]
            p[first] += float(np.sum(p[:first]))
            inf += float(np.sum(p[last + 1:]))
            p[:first] = 0.0
            p[last + 1:] = 0.0
    return _trim(Grid(a.h, a.start + b.start, p, min(inf, 1.0)), pessimistic)


def _power(base, count, pessimistic):
    """count-fold composition of ``base`` with itself, by repeated squaring."""
    result = None
    while count:
        if count & 1:
            result = base if result is None else convolve(result, base, pessimistic)
        count >>= 1
        if count:
            base = convolve(base, base, pessimistic)
    return result


def _randomized_response_group(event, count, h, pessimistic):
    """count runs of an (ε, δ) randomized-response pair: loss (2j − count)·ε with
    j ~ Binomial(count, e^ε/(1+e^ε)), times (1−δ)^count; the rest at L = ∞."""
    eps = event.epsilon
    log_q = -eps - math.log1p(math.exp(-eps))  # log P(loss = −ε), exact for large ε too
    p_up = -math.expm1(log_q)
    lo, hi = 0, count
    if count > _FEW_ATOMS:  # keep j within the binomial's 10⁻³⁰ tails
        sd = math.sqrt(count * p_up * math.exp(log_q))
        lo = max(0, math.floor(count * p_up - 12.0 * sd) - 64)
        hi = min(count, math.ceil(count * p_up + 12.0 * sd) + 64)
    # (1 − δ)^count without rounding 1 − δ to 1 (δ = 10⁻¹⁹ is not lost).
    log_finite = count * math.log1p(-event.delta)
    finite, inf = math.exp(log_finite), -math.expm1(log_finite)
    if 2.0 * eps < h:  # atoms denser than grid cells: bin from the CDF (fewer cells than atoms)
        start, p, above = _binomial_binned(count, p_up, lo, hi, eps, h, pessimistic)
    else:
        j = np.arange(lo, hi + 1)
        log_pmf = (
            special.gammaln(count + 1) - special.gammaln(j + 1) - special.gammaln(count - j + 1)
            + j * -math.log1p(math.exp(-eps)) + (count - j) * log_q
        )
        mass = np.exp(log_pmf)
        mass[0] += float(_binomial_cdf(lo - 1, count, p_up))
        above = float(_binomial_sf(hi, count, p_up))
        start, p = _on_grid((2 * j - count) * eps, mass, h, pessimistic)
    p = p * finite
    if pessimistic:
        inf += above * finite
    else:
        p[-1] += above * finite
    return Grid(h, start, p, inf)


def _binomial_cdf(j, n, p):
    """P[J ≤ j] for J ~ Binomial(n, p) by the incomplete beta (bdtr fails for n ≥ 2³¹)."""
    j = np.asarray(j, dtype=float)
    inside = np.clip(j, 0, n - 1)
    value = special.betainc(n - inside, inside + 1, 1.0 - p)
    return np.where(j < 0, 0.0, np.where(j >= n, 1.0, value))


def _binomial_sf(j, n, p):
    """P[J > j], accurate in the upper tail."""
    j = np.asarray(j, dtype=float)
    inside = np.clip(j, 0, n - 1)
    value = special.betainc(inside + 1, n - inside, p)
    return np.where(j < 0, 1.0, np.where(j >= n, 0.0, value))


def _binomial_binned(count, p_up, lo, hi, eps, h, pessimistic):
    """The binomial's mass per grid bin, from its CDF, when atoms are denser than bins.

    Atoms with loss in (g_{i−1}, g_i] go to g_i (pessimistic) or g_{i−1}. The lower half
    uses the CDF and the upper half the survival function, so each bin's mass is a
    difference of two accurate small numbers where it matters (the upper tail). Returns
    (start, masses, mass above j = hi).
    """
    first = math.ceil((2 * lo - count) * eps / h)
    last = math.ceil((2 * hi - count) * eps / h)
    edges = np.arange(first - 1, last + 1) * h
    # Largest j with loss (2j − count)·ε ≤ edge.
    j_edge = np.clip(np.floor((edges / eps + count) / 2.0), -1, count)
    cdf = _binomial_cdf(j_edge, count, p_up)
    sf = _binomial_sf(j_edge, count, p_up)
    upper = j_edge >= count * p_up
    mass = np.where(upper[1:], sf[:-1] - sf[1:], cdf[1:] - cdf[:-1])
    mass = np.clip(mass, 0.0, None)
    mass[0] += cdf[0]  # everything at or below the first edge moves up into bin 1
    above = float(sf[-1])
    return (first if pessimistic else first - 1), mass, above


def _lattice(step, h):
    """A lattice step ≤ h that divides ``step`` (so atoms at multiples of it are exact)."""
    return step / max(1, math.ceil(step / h))


def _laplace_base(event, h, pessimistic):
    """One Laplace(Δ/ε) run: atoms ε (mass 1/2) and −ε (mass e^{−ε}/2), and a
    continuous part with P(L ∈ (l, ε)) = (1 − e^{−(ε−l)/2})/2 on (−ε, ε)."""
    eps = event.epsilon
    step = _lattice(eps, h)
    n = round(eps / step)
    edges = np.arange(-n, n + 1) * step  # bins (edges[i], edges[i+1]]
    tail = 0.5 * -np.expm1(-(eps - edges) / 2.0)  # P(L ∈ (edge, ε))
    cont = tail[:-1] - tail[1:]
    p = np.zeros(2 * n + 1)
    p[0] = 0.5 * math.exp(-eps)
    p[-1] = 0.5
    if pessimistic:
        p[1:] += cont
    else:
        p[:-1] += cont
    return Grid(step, -n, p, 0.0)


def _discrete_laplace_base(event, h, pessimistic):
    """One discrete Laplace run, Δ > 1: a = ε/Δ; loss ε for z ≤ 0, −ε for z ≥ Δ and
    a(Δ − 2z) for 0 < z < Δ, with P(z) ∝ e^{−a|z|}."""
    a, sens = event.epsilon / event.sensitivity, event.sensitivity
    z = np.arange(1, sens)
    norm = -math.expm1(-a) / (1.0 + math.exp(-a))
    values = np.concatenate(([event.epsilon], a * (sens - 2 * z), [-event.epsilon]))
    masses = np.concatenate(
        ([1.0 / (1.0 + math.exp(-a))], norm * np.exp(-a * z),
         [math.exp(-a * sens) / (1.0 + math.exp(-a))])
    )
    step = _lattice(a, h)
    idx = np.rint(values / step).astype(np.int64)
    start = int(idx.min())
    return Grid(step, start, np.bincount(idx - start, weights=masses), 0.0)


def _regrid(grid, h, pessimistic):
    """Move a PLD from its own lattice onto the common grid (one rounding)."""
    start, p = _on_grid(grid.losses, grid.p, h, pessimistic)
    return Grid(h, start, p, grid.inf)


def _gaussian_group(mu, h, pessimistic):
    """Loss N(μ, 2μ) for a total μ = Σ 1/(2σ²), discretised by its CDF."""
    sd = math.sqrt(2.0 * mu)
    z = stats.norm.isf(_TAIL)
    lo, hi = math.floor((mu - z * sd) / h), math.ceil((mu + z * sd) / h)
    edges = np.arange(lo - 1, hi + 1) * h
    cdf = stats.norm.cdf(edges, loc=mu, scale=sd)
    mass = np.diff(cdf)
    mass[0] += cdf[0]
    upper = float(stats.norm.sf(edges[-1], loc=mu, scale=sd))
    if pessimistic:  # bin (e_i, e_{i+1}] at its right edge
        return Grid(h, lo, mass, upper)
    mass[-1] += upper
    return Grid(h, lo - 1, mass, 0.0)


def _moments(event):
    """Mean and variance of one event's loss, for sizing the grid (RR bounds all ε-DP)."""
    if isinstance(event, Gaussian):
        mu = 0.5 / event.sigma**2
        return mu, 2.0 * mu
    eps = event.epsilon
    t = math.tanh(eps / 2.0)
    return eps * t, eps * eps * (1.0 - t * t)


def grid_step(groups):
    """The common grid step for ``groups`` (a dict event → count)."""
    mean = var = 0.0
    widest = 0.0
    for event, count in groups.items():
        m, v = _moments(event)
        mean += count * m
        var += count * v
        widest = max(widest, getattr(event, "epsilon", 0.0))
    width = 2.0 * _SPAN * math.sqrt(var) + 2.0 * widest
    return width / _BINS


def _bucketed(groups, pessimistic):
    """At most _MAX_GROUPS distinct events of each kind: beyond that, each event's ε is
    rounded *up* to a geometric ladder (and an ApproxDP's δ up to its bucket's largest;
    down and smallest for the optimistic bound).

    A mechanism with a larger ε (δ) dominates one with a smaller: randomized response
    and discrete Laplace by definition, Laplace because Laplace(Δ/ε) is Laplace(Δ/ε′)
    plus independent noise for ε′ ≥ ε. Each rounding on the common grid costs up to
    one grid step, so thousands of distinct events would otherwise add up; the ladder
    costs a relative (max ε/min ε)^{1/_MAX_GROUPS} − 1 per event instead, and the
    Rényi accountant (exact per event) is the better one for such plans anyway.
    """
    by_kind = {}
    for event, count in groups.items():
        key = (type(event), getattr(event, "sensitivity", 1))
        by_kind.setdefault(key, []).append((event, count))
    merged = {}
    for (kind, sensitivity), members in by_kind.items():
        if kind is Gaussian or len(members) <= _MAX_GROUPS:
            merged.update(members)
            continue
        eps = np.array([e.epsilon for e, _ in members])
        lo, hi = float(eps.min()), float(eps.max())
        ratio = (hi / lo) ** (1.0 / (_MAX_GROUPS - 1))
        rounding, pick, worst = (np.ceil, max, 0.0) if pessimistic else (np.floor, min, math.inf)
        rungs = np.clip(rounding(np.log(eps / lo) / math.log(ratio)), 0, _MAX_GROUPS - 1)
        buckets = {}
        for (event, count), rung in zip(members, rungs, strict=True):
            rung_eps = pick(lo * ratio**rung, event.epsilon)  # never past the event's own ε
            old = buckets.get(rung, (worst, worst, 0))
            buckets[rung] = (pick(old[0], rung_eps), pick(old[1], event.delta), old[2] + count)
        for top, delta, count in buckets.values():
            if kind is ApproxDP:
                event = ApproxDP(top, delta)
            elif kind is DiscreteLaplace:
                event = DiscreteLaplace(top, sensitivity)
            else:
                event = kind(top)
            merged[event] = merged.get(event, 0) + count
    return merged


def compose(groups, pessimistic=True):
    """The discretised PLD of the composition of ``groups`` (a dict event → count)."""
    groups = _bucketed(groups, pessimistic)
    h = grid_step(groups)
    parts = []
    mu_gauss = 0.0
    for event, count in groups.items():
        kind = type(event)
        if kind is Gaussian:
            mu_gauss += count * 0.5 / event.sigma**2
        elif kind in _RANDOMIZED_RESPONSE or (kind is DiscreteLaplace and event.sensitivity == 1):
            parts.append(_randomized_response_group(event, count, h, pessimistic))
        else:
            make_base = _laplace_base if kind is Laplace else _discrete_laplace_base
            base = _trim(make_base(event, h, pessimistic), pessimistic)
            parts.append(_regrid(_power(base, count, pessimistic), h, pessimistic))
    if mu_gauss > 0:
        parts.append(_gaussian_group(mu_gauss, h, pessimistic))
    # A balanced tree of pairwise convolutions, narrowest first: many distinct small
    # events then cost O(n log n) work in all rather than one full-width pass each.
    parts.sort(key=lambda part: part.p.size)
    while len(parts) > 1:
        pairs = zip(parts[::2], parts[1::2], strict=False)
        paired = [convolve(a, b, pessimistic) for a, b in pairs]
        parts = paired + parts[len(paired) * 2:]
    return parts[0]
