"""Stable (sparse) histograms over unbounded domains.

One mechanism, :class:`StableHistogram`, with two documented entry points:

* :func:`stable_histogram` — ``hist_{ε,δ,η}`` of Golowich & Livni (2021), Thm 5.1
  (citing Bun, Nissim & Stemmer, Prop. 2.20), as used by HistSparse (their Alg. 2)
  with parameters ``(ε/(2c), δ/c, η)``;
* :func:`private_histogram` — ``PrivateHistogram`` of Li, Wang & Ye, Thm 2.6 (citing
  Aliakbarpour et al. 2024), as used by their Alg. 2 with ``(ε₀/d, δ/d)``: an error
  bound that holds with probability 1.

The mechanism
-------------
Count the items; to every item x *present* in the data add truncated discrete
Laplace noise Z_x ~ DLap(b) conditioned on |Z_x| ≤ A, with b = 2/ε (two counts
move by one each when one record is replaced); release x with its noisy count iff
c(x) + Z_x ≥ τ, where the threshold τ ≥ A + 2. Everything else reads as 0.

* A is the smallest integer with 2·p^A / N_A ≤ δ, where p = exp(−1/b) and
  N_A = Σ_{|z|≤A} p^{|z|} = 1 + 2p(1 − p^A)/(1 − p) (closed forms:
  :func:`truncated_discrete_laplace_edge_mass`). p^A/N_A is the mass of the noise
  at one edge of its support: the only part of the output distribution that a
  shift of one count by 1 does not reproduce.
* Because |Z| ≤ A < τ − 1, an item whose count is 1 (or 0) is *never* released: the
  "item with count 1 appears only if its noise exceeds the threshold" event of the
  untruncated stable histogram (Korolova et al. 2009; Bun, Nissim, Stemmer & Vadhan
  2015) has probability exactly 0 here, and δ is spent on the truncation instead.

Why truncated noise: it yields both papers' guarantees at once — Golowich & Livni's
two bullets and Li, Wang & Ye's sup-error bound *with probability 1* — from one
implementation, and the privacy proof is two lines (below). The untruncated variant
only has high-probability error bounds.

Privacy proof (replacement neighbours; add/remove is the one-coordinate case)
------------------------------------------------------------------------------
View the output as a post-processing of the noisy count vector over the union of
both supports (items absent from a dataset get noise too in the analysis, which
changes nothing since 0 + Z ≤ A < τ is never released, and a count-1 item likewise).
Replacing one record moves two coordinates by ±1. For one coordinate, shifting c
to c ± 1 multiplies the probability of each outcome in the common support by at
most p^{−1} = e^{1/b} and leaves one outcome (mass p^A/N_A) uncovered, so each
coordinate is (1/b, p^A/N_A)-DP; basic composition over the two gives
(2/b, 2p^A/N_A) ⊆ (ε, δ). (Discrete Laplace is sampled at a scale rounded *up* to a
multiple of 2⁻²⁰, see :func:`~skdp.mechanisms.laplace.discrete_laplace`; every
closed form here uses that rounded scale, so 1/b ≤ ε/2 and the edge mass is exact.)

Release order: items are reported sorted (numpy input) or in a random order
(generic hashable input) — never in order of first appearance, which would leak
the order of the records.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np
from numpy.typing import NDArray

from .._validation import RandomStateLike, check_delta, check_epsilon, check_generator
from ..exceptions import PrivacyParameterError
from .laplace import _rational_scale, discrete_laplace

__all__ = [
    "HistogramRelease",
    "StableHistogram",
    "discrete_laplace_tail",
    "private_histogram",
    "private_histogram_error",
    "stable_histogram",
    "stable_histogram_min_size",
    "truncated_discrete_laplace_edge_mass",
]

# Safety margin for the float comparison 2·p^A/N_A ≤ δ (relative): the chosen A
# satisfies it with room to spare for rounding in exp/log.
_REL_MARGIN = 1e-9


def _check_delta_open(delta):
    delta = check_delta(delta)
    if delta <= 0.0:
        raise PrivacyParameterError(
            f"delta must lie in (0, 1) for a stable histogram over an unbounded domain, got "
            f"{delta!r}: with δ = 0 no item could ever be released."
        )
    return delta


def _dlap_p(scale):
    """p = exp(−1/b) for the scale b that :func:`discrete_laplace` actually samples."""
    t, s = _rational_scale(scale)
    return math.exp(-s / t)


def discrete_laplace_tail(scale: float, m: int) -> float:
    """P[Z ≥ m] for Z ~ DLap(scale) (untruncated), in closed form.

    With p = exp(−1/scale), P(Z = z) = (1 − p)/(1 + p)·p^{|z|}, so for integer m ≥ 0,
    P[Z ≥ m] = p^m / (1 + p), and for m < 0, P[Z ≥ m] = 1 − p^{1−m}/(1 + p). The
    scale is first rounded up exactly as the sampler rounds it.

    Parameters
    ----------
    scale : float
        Scale b > 0.
    m : int
        Integer threshold.

    Returns
    -------
    float
    """
    p = _dlap_p(scale)
    m = int(m)
    if m >= 0:
        return p**m / (1.0 + p)
    return 1.0 - p ** (1 - m) / (1.0 + p)


def truncated_discrete_laplace_edge_mass(scale: float, bound: int) -> float:
    """P[Z = bound] for Z ~ DLap(scale) conditioned on |Z| ≤ bound: p^A / N_A.

    N_A = Σ_{|z|≤A} p^{|z|} = 1 + 2p(1 − p^A)/(1 − p). This is the δ one shifted
    coordinate costs (see the module docstring).
    """
    p = _dlap_p(scale)
    a = int(bound)
    if a < 0:
        raise ValueError(f"bound must be ≥ 0, got {bound!r}.")
    log_pa = a * math.log(p)
    normaliser = 1.0 + 2.0 * p * (-math.expm1(log_pa)) / (-math.expm1(math.log(p)))
    return math.exp(log_pa) / normaliser


def _truncation_bound(scale, delta):
    """Smallest integer A ≥ 0 with 2·p^A/N_A ≤ δ (with a tiny relative safety margin)."""
    p = _dlap_p(scale)
    if p == 0.0:
        # e^(−1/scale) underflowed (ε in the thousands): the noise is 0 with probability 1
        # up to float precision, and P[|Z| ≥ 1] = 0 ≤ δ at A = 1 (log p would be −∞ below).
        return 1
    target = delta * (1.0 - _REL_MARGIN)
    # p^A/N_A ≈ p^A (1 − p)/(1 + p) for large A: start a little below that estimate.
    guess = math.log(target * (1.0 + p) / (2.0 * (1.0 - p))) / math.log(p)
    a = max(0, math.floor(guess) - 2)
    while a > 0 and 2.0 * truncated_discrete_laplace_edge_mass(scale, a - 1) <= target:
        a -= 1
    while 2.0 * truncated_discrete_laplace_edge_mass(scale, a) > target:
        a += 1
    return a


def _truncated_discrete_laplace(scale, bound, size, rng):
    """Exact DLap(scale) conditioned on |Z| ≤ bound, by rejection (accepts w.p. ≥ 1 − δ)."""
    z = discrete_laplace(scale, size=size, random_state=rng)
    flat = z.reshape(-1)
    bad = np.flatnonzero(np.abs(flat) > bound)
    while bad.size:
        flat[bad] = discrete_laplace(scale, size=bad.size, random_state=rng)
        bad = bad[np.abs(flat[bad]) > bound]
    return z


def _count_items(data):
    """(items, counts, ordered) for a 1-D array or an iterable of hashable items.

    ``ordered`` is True when ``items`` come sorted (numpy input); generic input is
    counted with a Counter and must be shuffled before release.
    """
    if isinstance(data, np.ndarray):
        if data.ndim != 1:
            raise ValueError(f"data must be 1-dimensional, got shape {data.shape}.")
        kind = data.dtype.kind
        if kind == "f" and not np.all(np.isfinite(data)):
            raise ValueError("data contains NaN or infinite items; they cannot be counted.")
        if kind in "iubfUSM":
            items, counts = np.unique(data, return_counts=True)
            return items, counts.astype(np.int64), True
        data = data.tolist()
    if isinstance(data, (str, bytes)) or not hasattr(data, "__iter__"):
        raise ValueError(
            f"data must be a 1-D array or an iterable of hashable items, got {type(data).__name__}."
        )
    try:
        counter = Counter(data)
    except TypeError as exc:
        raise ValueError(f"every item must be hashable: {exc}") from exc
    for key in counter:
        if isinstance(key, (float, np.floating)) and not math.isfinite(key):
            raise ValueError("data contains NaN or infinite items; they cannot be counted.")
    items = np.empty(len(counter), dtype=object)
    items[:] = list(counter.keys())
    counts = np.fromiter(counter.values(), dtype=np.int64, count=len(counter))
    return items, counts, False


@dataclass(frozen=True, eq=False)
class HistogramRelease:
    """The output of a stable histogram: released items and their noisy counts.

    Any item not listed has released count 0 (``count(item) == 0``).

    Attributes
    ----------
    items : ndarray
        Released items (sorted for numpy input, random order otherwise).
    counts : ndarray of int64
        Their noisy counts, each ≥ ``threshold``.
    threshold : int
        Release threshold τ on noisy counts.
    max_error : int
        sup_x |count(x) − Count(x)| ≤ ``max_error`` with probability 1 (τ − 1 + A).
    noise_bound : int
        Truncation A: every released noisy count is within A of the true count.
    epsilon, delta : float
        The guarantee of this release.
    """

    items: np.ndarray
    counts: np.ndarray
    threshold: int
    max_error: int
    noise_bound: int
    epsilon: float
    delta: float
    _lookup: dict[Hashable, int] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(
            self, "_lookup", dict(zip(self.items.tolist(), self.counts.tolist(), strict=True))
        )

    def __len__(self):
        return len(self.items)

    def __contains__(self, item):
        return item in self._lookup

    def count(self, item: Hashable) -> int:
        """The released count of ``item`` (0 when not released): Count̄(item)."""
        return self._lookup.get(item, 0)

    def to_dict(self) -> dict[Hashable, int]:
        """``{item: noisy count}`` for the released items."""
        return dict(self._lookup)

    def frequencies(self, list_size: int) -> dict[Hashable, float]:
        """``{item: min(count / list_size, 1)}``: the mapping freq̄ of Golowich–Livni Thm 5.1.

        ``list_size`` must be public (e.g. the fixed number k of trees in DP-SOA);
        passing the private length of the data would leak it.
        """
        if isinstance(list_size, bool) or not isinstance(list_size, (int, np.integer)):
            raise ValueError(f"list_size must be a positive integer, got {list_size!r}.")
        if list_size < 1:
            raise ValueError(f"list_size must be ≥ 1, got {list_size}.")
        return {k: min(v / list_size, 1.0) for k, v in self._lookup.items()}


class StableHistogram:
    """(ε, δ)-DP stable histogram with truncated discrete Laplace noise.

    See the module docstring for the mechanism and its privacy proof.

    Parameters
    ----------
    epsilon : float
        ε > 0.
    delta : float
        δ ∈ (0, 1).
    eta : float in (0, 1], optional
        Golowich–Livni's η: with it, the length k of the data is treated as PUBLIC
        and the release threshold becomes max(A + 2, ⌈ηk/2⌉), halfway between the
        frequencies η/4 and η of Thm 5.1's two bullets. The guarantee is then for
        replacement neighbours only (same k, as for HistSparse's lists of k trees);
        adding/removing a record would move the threshold.
    random_state : None, int or numpy.random.Generator
        Source of randomness.

    Privacy
    -------
    (ε, δ)-differentially private with respect to replacing (or adding/removing)
    one item of the data: basic composition of two (ε/2, δ/2)-DP truncated discrete
    Laplace coordinates; items of count ≤ 1 are never released. A larger threshold
    (``eta``) is post-processing. Golowich & Livni 2021, Thm 5.1; Li, Wang & Ye,
    Thm 2.6 — both existential; the mechanism and proof here are skdp's own.

    Attributes
    ----------
    noise_scale : float
        b = 2/ε.
    noise_bound : int
        A, the truncation of the noise.

    References
    ----------
    Golowich & Livni. Littlestone classes are privately online learnable. NeurIPS 2021.
    Li, Wang & Ye. Private online learning against an adaptive adversary.
    Bun, Nissim & Stemmer. Simultaneous private learning of multiple concepts. 2015.
    Korolova, Kenthapadi, Mishra & Ntoulas. Releasing search queries and clicks
    privately. WWW 2009.
    """

    def __init__(self, epsilon: float, delta: float, *, eta: float | None = None,
                 random_state: RandomStateLike = None) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.delta = _check_delta_open(delta)
        if eta is not None:
            eta_f = float(eta) if not isinstance(eta, bool) else math.nan
            if not (0.0 < eta_f <= 1.0):
                raise ValueError(f"eta must lie in (0, 1], got {eta!r}.")
            eta = eta_f
        self.eta = eta
        _rational_scale(self._noise_scale)  # refuses absurd scales before any draw
        self._rng = check_generator(random_state)

    # --- the noise calibration, overridable by tests building broken variants ---
    @property
    def _noise_scale(self):
        return 2.0 / self.epsilon

    @property
    def _truncation(self):
        return _truncation_bound(self._noise_scale, self.delta)

    def _threshold(self, n_records):
        tau = self._truncation + 2
        if self.eta is not None:
            tau = max(tau, math.ceil(self.eta * n_records / 2.0))
        return tau

    @property
    def noise_scale(self) -> float:
        return self._noise_scale

    @property
    def noise_bound(self) -> int:
        return self._truncation

    def max_error(self, n_records: int = 0) -> int:
        """sup-error bound τ − 1 + A (probability 1); ``n_records`` matters only with ``eta``."""
        return self._threshold(n_records) - 1 + self._truncation

    def _noisy(self, counts, tau, size, rng):
        noise = _truncated_discrete_laplace(self._noise_scale, self._truncation, size, rng)
        noisy = counts + noise
        released = (counts > 0) & (noisy >= tau)
        return noisy, released

    def release(self, data: Iterable[Hashable]) -> HistogramRelease:
        """Release the stable histogram of ``data``.

        Parameters
        ----------
        data : 1-D ndarray or iterable of hashable items
            The multiset (list) L; may be empty (then nothing is released — raising
            instead would reveal that it is empty).

        Returns
        -------
        HistogramRelease
        """
        items, counts, ordered = _count_items(data)
        n_records = int(counts.sum())
        tau = self._threshold(n_records)
        rng = self._rng
        noisy, released = self._noisy(counts, tau, counts.shape, rng)
        items, noisy = items[released], noisy[released]
        if not ordered:
            perm = rng.permutation(items.size)
            items, noisy = items[perm], noisy[perm]
        return HistogramRelease(
            items=items,
            counts=noisy.astype(np.int64),
            threshold=int(tau),
            max_error=int(tau - 1 + self._truncation),
            noise_bound=int(self._truncation),
            epsilon=self.epsilon,
            delta=self.delta,
        )

    def simulate(self, data: Iterable[Hashable], n_runs: int,
                 items: Sequence[Hashable]) -> NDArray[np.int64]:
        """``n_runs`` independent releases on ``data``, reported on a fixed public item list.

        For audits and studies: row r, column j is the released count of ``items[j]``
        in run r (0 when not released), distributed exactly as ``release(data).count``.

        Returns
        -------
        ndarray of int64, shape (n_runs, len(items))
        """
        if isinstance(n_runs, bool) or not isinstance(n_runs, (int, np.integer)) or n_runs < 1:
            raise ValueError(f"n_runs must be a positive integer, got {n_runs!r}.")
        data_items, data_counts, _ = _count_items(data)
        lookup = dict(zip(data_items.tolist(), data_counts.tolist(), strict=True))
        counts = np.array([lookup.get(x, 0) for x in items], dtype=np.int64)
        tau = self._threshold(int(data_counts.sum()))
        noisy, released = self._noisy(counts, tau, (int(n_runs), counts.size), self._rng)
        return np.where(released, noisy, 0)


def stable_histogram(data: Iterable[Hashable], epsilon: float, delta: float, *,
                     eta: float | None = None,
                     random_state: RandomStateLike = None) -> HistogramRelease:
    """Golowich–Livni ``hist_{ε,δ,η}`` (Thm 5.1): an (ε, δ)-DP stable histogram.

    Use in HistSparse (Golowich & Livni, Alg. 2) as
    ``stable_histogram(L_t, epsilon / (2 * c), delta / c, eta=eta)``, then
    ``.frequencies(k)`` for freq̄ with the public list size k.

    Guarantee (Thm 5.1's bullets, here with probability 1, i.e. β = 0): if ``eta`` is
    given and k = len(data) ≥ :func:`stable_histogram_min_size` (η, ε, δ), then
    (i) every released x has freq_L(x) > η/4, and (ii) every x with freq_L(x) > η is
    released. The paper's sample size is Θ₍₂₎ = 4/η + log(1/(η²βδ))/(ηε) for Bun,
    Nissim & Stemmer's mechanism; ours, for this mechanism, is the smallest k with
    ηk > 4A and ηk ≥ 2A + 4 (A ≈ (2/ε)·ln(ε/(2δ))), proven in
    :func:`stable_histogram_min_size`.

    Parameters
    ----------
    data : 1-D ndarray or iterable of hashable items
    epsilon : float
    delta : float in (0, 1)
    eta : float in (0, 1], optional
        Frequency parameter; makes len(data) public (see :class:`StableHistogram`).
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    HistogramRelease

    Privacy
    -------
    (ε, δ)-DP under replacement of one item (see :class:`StableHistogram`).
    """
    return StableHistogram(epsilon, delta, eta=eta, random_state=random_state).release(data)


def private_histogram(data: Iterable[Hashable], epsilon: float, delta: float, *,
                      random_state: RandomStateLike = None) -> HistogramRelease:
    """Li–Wang–Ye ``PrivateHistogram`` (their Thm 2.6): Count̄ with sup-error bounded w.p. 1.

    The same mechanism as :func:`stable_histogram` (no η). Returns a release whose
    ``count(z)`` is Count̄_S(z) and with
    sup_z |Count̄_S(z) − Count_S(z)| ≤ ``max_error`` = 2A + 1 with probability 1.
    Thm 2.6 states the bound 8·ln(8/δ)/ε; ours is at most that for every ε ≤ 1
    (the regime the paper assumes, ε ≤ 0.1) — see :func:`private_histogram_error` —
    and is the one to use in thresholds (e.g. keep h with Count̄ ≥ 3M_s/4 in Alg. 2,
    run with (ε₀/d, δ/d)).

    Privacy
    -------
    (ε, δ)-DP under replacement of one item (see :class:`StableHistogram`).
    """
    return StableHistogram(epsilon, delta, random_state=random_state).release(data)


def private_histogram_error(epsilon: float, delta: float) -> int:
    """The probability-1 sup-error 2A + 1 of :func:`private_histogram` at (ε, δ)."""
    return StableHistogram(epsilon, delta, random_state=0).max_error()


def stable_histogram_min_size(eta: float, epsilon: float, delta: float) -> int:
    """Smallest public list size k for which Thm 5.1's bullets hold with probability 1.

    With threshold τ = ⌈ηk/2⌉ ≥ A + 2 and noise |Z| ≤ A: a released x has
    c(x) ≥ τ − A ≥ ηk/2 − A > ηk/4 when ηk > 4A; an x with c(x) > ηk has noisy count
    > ηk − A ≥ ηk/2 + 1 > τ − 1 when ηk ≥ 2A + 2. Together with τ ≥ A + 2 (needs
    ηk ≥ 2A + 4): k is the least integer with ηk > 4A and ηk ≥ 2A + 4.
    """
    hist = StableHistogram(epsilon, delta, eta=eta, random_state=0)
    a = hist.noise_bound
    eta = cast(float, hist.eta)
    k = max(1, math.floor(max(4 * a, 2 * a + 4) / eta) - 1)
    while not (eta * k > 4 * a and eta * k >= 2 * a + 4):
        k += 1
    return k
