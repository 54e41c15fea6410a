"""Statistical privacy audits: a Clopper–Pearson lower confidence bound on ε.

For a mechanism M and neighbouring inputs D, D′, draw outputs from both, count how
often an event E happens (k₀ of n₀ for D, k₁ of n₁ for D′) and bound

    ε ≥ ln((p₀,lo − δ) / p₁,hi)

where p₀,lo and p₁,hi are exact (Clopper–Pearson) one-sided confidence bounds at
level α/2 each. If M is (ε, δ)-DP, the bound exceeds ε with probability at most α,
whatever the event — provided the event was fixed independently of the samples it
is evaluated on. So an audit either fixes its events from the mechanism's
structure, or selects them on a separate *pilot* sample (:func:`audit_mechanism`
does that), and divides α among all the events and directions it tests
(Bonferroni), so the reported maximum is still a valid bound.

Where sampling cannot reach a claim (a bound needs about e^ε·ln(1/α) hits), an audit
can instead compute the output distributions on D and D′ exactly and report their
exact ε at the claimed δ (:func:`exact_epsilon`).

This is a *test*: it can only prove a mechanism leaks (a lower bound above the
claim), never that it is private. Its power comes from choosing neighbouring
inputs that make the mechanism work hard; the audits in ``tests/privacy`` also run
deliberately broken variants to show the test can fail.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.stats import beta as beta_dist

__all__ = ["AuditResult", "audit_mechanism", "epsilon_lower_bound", "exact_epsilon"]


def epsilon_lower_bound(k0: int, n0: int, k1: int, n1: int, alpha: float = 1e-6,
                        delta: float = 0.0) -> float:
    """Lower confidence bound on ε from event counts under D (k0 of n0) and D′ (k1 of n1).

    Returns ``-inf`` when the lower bound on P[M(D) ∈ E] does not exceed δ.
    """
    if not (0 <= k0 <= n0 and 0 <= k1 <= n1 and n0 > 0 and n1 > 0):
        raise ValueError(f"need 0 ≤ k ≤ n and n > 0, got k0={k0}, n0={n0}, k1={k1}, n1={n1}")
    p0_lo = 0.0 if k0 == 0 else beta_dist.ppf(alpha / 2, k0, n0 - k0 + 1)
    p1_hi = 1.0 if k1 == n1 else beta_dist.ppf(1 - alpha / 2, k1 + 1, n1 - k1)
    if p0_lo <= delta:
        return -math.inf
    return math.log((p0_lo - delta) / p1_hi)


def _hockey_stick(log_p: NDArray[np.float64], log_q: NDArray[np.float64], eps: float) -> float:
    """Σ max(0, p − e^ε·q): the least δ for which P ≤ e^ε·Q + δ on every event."""
    possible = np.isfinite(log_p)
    impossible_q = possible & ~np.isfinite(log_q)  # all of p's mass there counts
    if math.isinf(eps):
        return float(np.sum(np.exp(log_p[impossible_q])))
    both = possible & ~impossible_q
    gap = log_p[both] - eps - log_q[both]
    keep = gap > 0
    return float(np.sum(np.exp(log_p[impossible_q]))
                 + np.sum(np.exp(log_p[both][keep]) * -np.expm1(-gap[keep])))


def exact_epsilon(log_p: ArrayLike, log_q: ArrayLike, delta: float = 0.0, *,
                  tol: float = 1e-9) -> float:
    """Exact ε at δ between two discrete output distributions, in both directions.

    The least ε such that P[S] ≤ e^ε·Q[S] + δ and Q[S] ≤ e^ε·P[S] + δ for every
    set S of outcomes, i.e. the largest ε the pair (D, D′) can witness: for a
    mechanism claimed (ε*, δ)-DP a value above ε* *proves* a violation (up to
    floating point), with no sampling error. Outcomes may be grouped (e.g. by
    counts) when the likelihood ratio is constant on each group.

    Parameters
    ----------
    log_p, log_q : array-like of shape (n_outcomes,)
        Natural logs of the outcome probabilities under D and D′ (−inf for 0).
        Each should sum (in probability) to at most 1; missing mass is ignored,
        which can only understate ε.
    delta : float, default=0.0
        The δ of the claim.
    tol : float, default=1e-9
        Absolute tolerance of the bisection on ε.

    Returns
    -------
    float
        ε ≥ 0, or ``inf`` when an outcome of mass > δ is impossible on the other side.
    """
    log_p = np.asarray(log_p, dtype=float).ravel()
    log_q = np.asarray(log_q, dtype=float).ravel()
    if log_p.shape != log_q.shape:
        raise ValueError(f"log_p and log_q need the same shape, got {log_p.shape} and "
                         f"{log_q.shape}")
    if not 0 <= delta < 1:
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    best = 0.0
    for a, b in ((log_p, log_q), (log_q, log_p)):
        if _hockey_stick(a, b, math.inf) > delta:  # mass where b = 0
            return math.inf
        if _hockey_stick(a, b, best) <= delta:
            continue
        finite = np.isfinite(a) & np.isfinite(b)
        lo, hi = best, float(np.max(a[finite] - b[finite])) if finite.any() else best
        while hi - lo > tol:
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if _hockey_stick(a, b, mid) > delta else (lo, mid)
        best = hi
    return best


@dataclass(frozen=True)
class AuditResult:
    """Outcome of an audit: the largest lower bound found, and where.

    Attributes
    ----------
    epsilon_lower_bound : float
        Max over tested events and both directions; valid at confidence 1 − alpha.
    event : int
        Index of the event that achieved it.
    direction : str
        ``"D>D'"`` (the event is likelier under D) or ``"D'>D"``.
    counts : tuple
        (k_event_favoured, n_favoured, k_other, n_other) for that event.
    n_tests : int
        Number of (event, direction) pairs α was divided among.
    alpha, delta : float
        Confidence level and the δ subtracted.
    """

    epsilon_lower_bound: float
    event: int
    direction: str
    counts: tuple
    n_tests: int
    alpha: float
    delta: float

    def __str__(self) -> str:
        k0, n0, k1, n1 = self.counts
        return (
            f"ε ≥ {self.epsilon_lower_bound:.3f} (α={self.alpha:g}, δ={self.delta:g}; "
            f"event {self.event} {self.direction}: {k0}/{n0} vs {k1}/{n1}; {self.n_tests} tests)"
        )


def _as_indicator(event: Callable[[Any], Any], outputs: Any) -> NDArray[np.bool_]:
    hits = np.asarray(event(outputs), dtype=bool)
    if hits.shape != (len(outputs),):
        raise ValueError(f"an event must return one bool per output, got shape {hits.shape}")
    return hits


def _row_keys(outputs: Any) -> NDArray[Any]:
    """One hashable-by-bytes key per output (a value, or a row of a 2-D array)."""
    rows = np.ascontiguousarray(np.asarray(outputs).reshape(len(outputs), -1))
    return rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()


def _likelihood_ratio_events(pilot0: Any, pilot1: Any, max_events: int) -> list[NDArray[Any]]:
    """Events "outcome ∈ top-j outcomes by empirical log-ratio p0/p1", j = 1..max_events.

    Chosen on pilot samples only. Empirical ratios are smoothed (add-½) so outcomes
    never seen under D′ rank high without dividing by zero. Returns one array of
    outcome keys per event.
    """
    keys0, keys1 = _row_keys(pilot0), _row_keys(pilot1)
    outcomes, inverse = np.unique(np.concatenate([keys0, keys1]), return_inverse=True)
    c0 = np.bincount(inverse[: len(keys0)], minlength=len(outcomes)) + 0.5
    c1 = np.bincount(inverse[len(keys0) :], minlength=len(outcomes)) + 0.5
    order = np.argsort(-(np.log(c0 / len(keys0)) - np.log(c1 / len(keys1))))
    return [outcomes[order[:j]] for j in range(1, min(max_events, len(outcomes)) + 1)]


def _membership_event(chosen_keys: NDArray[Any]) -> Callable[[Any], NDArray[np.bool_]]:
    def event(outputs: Any) -> NDArray[np.bool_]:
        return np.isin(_row_keys(outputs), chosen_keys)

    return event


def audit_mechanism(
    sample: Callable[[Any, int, np.random.Generator], Any],
    d0: Any,
    d1: Any,
    *,
    n_samples: int,
    events: Sequence[Callable[[Any], NDArray[np.bool_]]] | None = None,
    n_pilot: int | None = None,
    max_events: int = 8,
    alpha: float = 1e-6,
    delta: float = 0.0,
    random_state: int = 0,
) -> AuditResult:
    """Audit ``sample`` on neighbouring inputs ``d0`` and ``d1``.

    Parameters
    ----------
    sample : callable
        ``sample(data, n, rng)`` returns ``n`` independent outputs of the mechanism
        on ``data`` (an array of length ``n``; rows if 2-D), using ``rng`` (a numpy
        Generator) for all its randomness.
    d0, d1 : object
        Neighbouring inputs, passed through to ``sample``.
    n_samples : int
        Outputs drawn from each input for the counts.
    events : list of callable, optional
        Fixed events, each mapping an output array to a bool array. When omitted the
        outputs must be discrete: events are chosen on a separate pilot sample as the
        sets of outcomes with the highest empirical likelihood ratio, in each direction.
    n_pilot : int, optional
        Pilot size for event selection (default ``n_samples // 4``).
    max_events : int, default=8
        How many nested likelihood-ratio events to test per direction.
    alpha : float, default=1e-6
        Total confidence level, divided among all tests (Bonferroni).
    delta : float, default=0.0
        The δ of the claim.
    random_state : int
        Seed; pilot and main samples get independent child streams.

    Returns
    -------
    AuditResult
    """
    pilot_seq, seq0, seq1 = np.random.SeedSequence(random_state).spawn(3)
    directional = []  # (event, favoured index) pairs
    if events is None:
        n_pilot = n_pilot or max(n_samples // 4, 1000)
        p0_seq, p1_seq = pilot_seq.spawn(2)
        pilot0 = sample(d0, n_pilot, np.random.default_rng(p0_seq))
        pilot1 = sample(d1, n_pilot, np.random.default_rng(p1_seq))
        for chosen in _likelihood_ratio_events(pilot0, pilot1, max_events):
            directional.append((_membership_event(chosen), 0))
        for chosen in _likelihood_ratio_events(pilot1, pilot0, max_events):
            directional.append((_membership_event(chosen), 1))
    else:
        for event in events:
            directional.extend([(event, 0), (event, 1)])

    out = (
        sample(d0, n_samples, np.random.default_rng(seq0)),
        sample(d1, n_samples, np.random.default_rng(seq1)),
    )
    per_test_alpha = alpha / len(directional)
    best = None
    for index, (event, favoured) in enumerate(directional):
        k_fav = int(_as_indicator(event, out[favoured]).sum())
        k_other = int(_as_indicator(event, out[1 - favoured]).sum())
        lcb = epsilon_lower_bound(k_fav, n_samples, k_other, n_samples, per_test_alpha, delta)
        if best is None or lcb > best.epsilon_lower_bound:
            best = AuditResult(
                epsilon_lower_bound=lcb,
                event=index if events is None else index // 2,
                direction="D>D'" if favoured == 0 else "D'>D",
                counts=(k_fav, n_samples, k_other, n_samples),
                n_tests=len(directional),
                alpha=alpha,
                delta=delta,
            )
    assert best is not None  # directional is never empty: len() divided alpha above
    return best
