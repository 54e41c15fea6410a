"""δ schedules for truly-everlasting privacy over an unbounded stream.

A mechanism that runs forever (a private prediction oracle answering an unbounded
stream of queries, say) cannot spend a fixed δ on every record: the δ's add up.
Stemmer's truly-everlasting privacy (Stemmer, "Private Truly-Everlasting
Robust-Prediction", Def 3.8) instead lets the guarantee for the i-th record be
(ε, δ(i)) for a *schedule* δ : ℕ → [0, 1] with Σ_i δ(i) ≤ δ* < 1/8, which rules
out leaking algorithms however long the stream (Observation 3.9).
:class:`DeltaSchedule` builds such schedules, in closed form, with their partial
sums and tails, and the per-phase split used by phase-based algorithms
(Algorithm 5, RectanglesPERP: phase p has t_p time steps, each with δ_p, and
Σ_p t_p·δ_p ≤ δ*).
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import zeta

from .._validation import check_delta
from ..exceptions import PrivacyParameterError

__all__ = ["DeltaSchedule"]

# Every schedule spends at most (1 − 10⁻¹²)·δ*: far more than enough to absorb the
# floating-point rounding of the per-index values, so Σ_i δ(i) ≤ δ* holds for the
# numbers actually returned, not only for the real-number formulas.
_SAFETY = 1.0 - 1e-12
_INT64_MAX = np.iinfo(np.int64).max
# 2**-p underflows to 0.0 for p > 1074; clip phase numbers before np.ldexp.
_MAX_EXP = 2000

KINDS = ("polynomial", "geometric")


def _check_index(value, name, minimum):
    """Return ``value`` as an int64 array (and whether it was a scalar), values ≥ minimum."""
    scalar = np.ndim(value) == 0
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be an integer or an integer array, got a bool.")
    if scalar and isinstance(value, numbers.Integral):
        if value < minimum:
            raise ValueError(f"{name} must be ≥ {minimum}, got {value}.")
        if value > _INT64_MAX:
            raise ValueError(f"{name} must be at most 2**63 − 1, got {value}.")
        return np.asarray(int(value), dtype=np.int64), True
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError) as exc:  # pragma: no cover - defensive
        raise ValueError(f"{name} must be an integer or an integer array, got {value!r}.") from exc
    if arr.dtype.kind not in "iu":
        raise ValueError(
            f"{name} must be an integer or an integer array (indices start at 1), got "
            f"{value!r} with dtype {arr.dtype}."
        )
    if arr.dtype.kind == "u" and arr.size and int(arr.max()) > _INT64_MAX:
        raise ValueError(f"{name} must be at most 2**63 − 1.")
    arr = arr.astype(np.int64, copy=False)
    if arr.size and int(arr.min()) < minimum:
        raise ValueError(f"{name} must be ≥ {minimum}, got a value {int(arr.min())}.")
    return arr, scalar


def _out(arr, scalar):
    return float(arr) if scalar else np.asarray(arr, dtype=float)


def _check_length(value: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer ≥ 1, got {value!r}.")
    return int(value)


class DeltaSchedule:
    """A δ schedule δ(1), δ(2), … with Σ_i δ(i) ≤ δ* over an unbounded stream.

    Parameters
    ----------
    delta_star : float
        The total δ* ∈ (0, 1) the whole (infinite) stream may spend. Stemmer's
        Observation 3.9 needs δ* < 1/8 to rule out leaking.
    kind : {"polynomial", "geometric"}, default="polynomial"
        ``"polynomial"``: δ(i) = δ* · i^(−s) / ζ(s), s = ``exponent`` (for s = 2,
        δ(i) = δ*·(6/π²)/i²). Decays smoothly; early records get the most.

        ``"geometric"``: the stream is cut into phases p = 1, 2, … of lengths
        t_p = first_phase_length · growth^(p−1); phase p gets δ*/2^p in
        total, spread evenly over its t_p indices: δ(i) = δ*/(2^p·t_p) for i in
        phase p. This is the split of Stemmer's phase-based algorithms
        (RectanglesPERP: Σ_p t_p·δ_p ≤ δ*).
    exponent : float, default=2.0
        The decay exponent s > 1 of the polynomial schedule (s ≤ 1 diverges).
    first_phase_length : int, default=1
        Geometric schedule: the length t_1 ≥ 1 of the first phase.
    growth : int, default=2
        Geometric schedule: phase lengths multiply by this integer ≥ 1 (1: all
        phases have the same length).

    Attributes
    ----------
    delta_star, kind, exponent, first_phase_length, growth
        As given.

    Notes
    -----
    Both schedules spend at most (1 − 10⁻¹²)·δ* in total, so the bound Σ δ(i) ≤
    δ* survives the floating-point rounding of the values returned.

    Methods take indices i ≥ 1 (or counts n ≥ 0) as ints or integer arrays, and
    return a float for a scalar, an array otherwise.

    Privacy
    -------
    A prediction oracle that is (ε, δ(i))-private for the record at index i, in
    the sense of Stemmer's Definition 3.8, with Σ_i δ(i) ≤ δ* < 1/8, is not
    leaking (Observation 3.9), however long it runs.

    References
    ----------
    U. Stemmer. "Private Truly-Everlasting Robust-Prediction". Def 3.8,
    Observation 3.9, Algorithm 5 (RectanglesPERP) and Thm 4.6.

    Examples
    --------
    >>> sched = DeltaSchedule(1e-6)
    >>> math.isclose(sched(1), 1e-6 * 6 / math.pi**2, rel_tol=1e-11)
    True
    >>> float(sched.partial_sum(10**6) + sched.remaining_after(10**6))
    1e-06
    >>> sched.partial_sum(10**6) < 1e-6
    True
    """

    def __init__(self, delta_star: float, kind: str = "polynomial", *, exponent: float = 2.0,
                 first_phase_length: int = 1, growth: int = 2) -> None:
        delta_star = check_delta(delta_star, name="delta_star")
        if delta_star == 0.0:
            raise PrivacyParameterError(
                "delta_star must lie in (0, 1), got 0.0: a schedule with Σ δ(i) ≤ 0 gives "
                "every record δ(i) = 0; use a pure ε-DP mechanism instead."
            )
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}.")
        self.delta_star = delta_star
        self.kind = kind
        if isinstance(exponent, bool) or not isinstance(exponent, numbers.Real):
            raise PrivacyParameterError(f"exponent must be a real number, got {exponent!r}.")
        exponent = float(exponent)
        if not (math.isfinite(exponent) and exponent > 1.0):
            raise PrivacyParameterError(
                f"exponent must be finite and > 1, got {exponent!r}: Σ_i i^(−s) diverges "
                "for s ≤ 1, so no such schedule has a finite total δ."
            )
        self.exponent: float = exponent
        self.first_phase_length: int = _check_length(first_phase_length, "first_phase_length")
        self.growth: int = _check_length(growth, "growth")
        # Usable total: (1 − 10⁻¹²)·δ*.
        self._budget: float = delta_star * _SAFETY
        if kind == "polynomial":
            self._zeta = float(zeta(exponent, 1.0))
            self._scale: float = self._budget / self._zeta
        else:
            self._ends = self._phase_end_table()

    def __repr__(self) -> str:
        if self.kind == "polynomial":
            extra = f"exponent={self.exponent!r}"
        else:
            extra = f"first_phase_length={self.first_phase_length!r}, growth={self.growth!r}"
        return f"DeltaSchedule({self.delta_star!r}, kind={self.kind!r}, {extra})"

    # ------------------------------------------------------------------ geometric phases

    def _phase_end_table(self):
        """E_p (last index of phase p) for p = 1, 2, … while below 2**63 (growth > 1)."""
        if self.growth == 1:
            return None
        ends = []
        end, length = 0, self.first_phase_length
        while end < _INT64_MAX:
            end = min(end + length, _INT64_MAX)
            ends.append(end)
            length *= self.growth
        return np.asarray(ends, dtype=np.int64)

    def _phase_of(self, i):
        if self.growth == 1:
            return (i - 1) // self.first_phase_length + 1
        return np.searchsorted(self._ends, i, side="left") + 1

    def _phase_end(self, p):
        """E_p, the last index of phase p (E_0 = 0), as int64 (E_p < 2**63 − 1 assumed)."""
        if self.growth == 1:
            return p * self.first_phase_length
        table = np.concatenate(([0], self._ends))
        return table[p]

    def _phase_length_float(self, p):
        return self.first_phase_length * np.power(float(self.growth), p - 1.0)

    def phase_of(self, i: ArrayLike) -> int | NDArray[np.int64]:
        """The phase p(i) ≥ 1 of index i (geometric schedules).

        Parameters
        ----------
        i : int or array-like of int
            Indices ≥ 1.

        Returns
        -------
        int or ndarray of int
        """
        self._require_geometric("phase_of")
        arr, scalar = _check_index(i, "i", 1)
        p = self._phase_of(arr)
        return int(p) if scalar else np.asarray(p, dtype=np.int64)

    def phase_length(self, p: ArrayLike) -> int | float | NDArray[np.float64]:
        """The length t_p = first_phase_length · growth^(p−1) of phase p (geometric).

        Returns a Python int for a scalar ``p`` (exact, however large), else a float
        array.
        """
        self._require_geometric("phase_length")
        arr, scalar = _check_index(p, "p", 1)
        if scalar:
            return self.first_phase_length * self.growth ** (int(arr) - 1)
        return self._phase_length_float(arr)

    def _require_geometric(self, what):
        if self.kind != "geometric":
            raise ValueError(f"{what} is only defined for kind='geometric' schedules.")

    # ------------------------------------------------------------------ schedule

    def schedule(self, i: ArrayLike) -> float | NDArray[np.float64]:
        """δ(i), the δ granted to index i.

        Parameters
        ----------
        i : int or array-like of int
            Indices ≥ 1 (1-based: the first record/query is i = 1).

        Returns
        -------
        float or ndarray of float
            δ(i) ≥ 0, non-increasing in i, with Σ_{i≥1} δ(i) ≤ δ*.
        """
        arr, scalar = _check_index(i, "i", 1)
        if self.kind == "polynomial":
            out = self._scale * np.power(arr.astype(float), -self.exponent)
        else:
            p = self._phase_of(arr)
            out = self._phase_budget(p) / self._phase_length_float(p)
        return _out(out, scalar)

    __call__ = schedule

    def partial_sum(self, n: ArrayLike) -> float | NDArray[np.float64]:
        """Σ_{i=1}^{n} δ(i), in closed form (n = 0 gives 0).

        Parameters
        ----------
        n : int or array-like of int
            Number of indices n ≥ 0.

        Returns
        -------
        float or ndarray of float
            The δ spent by the first n indices; ≤ δ*.
        """
        arr, scalar = _check_index(n, "n", 0)
        return _out(np.maximum(self._budget - self._remaining_in_budget(arr), 0.0), scalar)

    def remaining_after(self, n: ArrayLike) -> float | NDArray[np.float64]:
        """δ* − Σ_{i=1}^{n} δ(i): what is left for the indices after n.

        This is at least the tail Σ_{i>n} δ(i) that those indices will use. It is
        computed directly (not as a difference), so it is accurate even when tiny.

        Parameters
        ----------
        n : int or array-like of int
            Number of indices n ≥ 0.

        Returns
        -------
        float or ndarray of float
        """
        arr, scalar = _check_index(n, "n", 0)
        unused = self.delta_star - self._budget  # the 10⁻¹² safety margin, never spent
        return _out(unused + self._remaining_in_budget(arr), scalar)

    def _remaining_in_budget(self, n):
        """Budget·(1 − spent fraction) after n indices, i.e. the exact tail Σ_{i>n} δ(i)."""
        if self.kind == "polynomial":
            # Σ_{i>n} i^(−s) = ζ(s, n+1) (Hurwitz zeta).
            return self._scale * zeta(self.exponent, n.astype(float) + 1.0)
        n = np.asarray(n, dtype=np.int64)
        p = np.where(n == 0, 1, self._phase_of(np.maximum(n, 1)))
        # Indices of phase p still to come (t_p minus those done; E_{p−1} ≤ n is
        # exact in int64), then all of the later phases' budget, budget/2^p.
        length = self._phase_length_float(p)
        left_in_phase = length - (n - self._phase_end(p - 1)).astype(float)
        per_index = self._phase_budget(p) / length
        later = np.ldexp(self._budget, -np.minimum(p, _MAX_EXP).astype(np.int32))
        return left_in_phase * per_index + later

    # ------------------------------------------------------------------ phases

    def phase_budget(self, p: ArrayLike) -> float | NDArray[np.float64]:
        """The part of δ* reserved for phase p; Σ_{p≥1} phase_budget(p) ≤ δ*.

        ``"geometric"``: δ*/2^p. ``"polynomial"``: δ(p), i.e. the same schedule with
        phases as units (a phase of length 1 per index recovers the schedule).

        Parameters
        ----------
        p : int or array-like of int
            Phase numbers ≥ 1.
        """
        arr, scalar = _check_index(p, "p", 1)
        return _out(self._phase_budget(arr), scalar)

    def _phase_budget(self, p):
        if self.kind == "polynomial":
            return self._scale * np.power(p.astype(float), -self.exponent)
        return np.ldexp(self._budget, -np.minimum(p, _MAX_EXP).astype(np.int32))

    def phase_delta(self, p: ArrayLike, phase_length: ArrayLike) -> float | NDArray[np.float64]:
        """Per-step δ_p for phase p of ``phase_length`` steps: phase_budget(p) / t_p.

        If phase p runs (at most) t_p steps, each (ε, δ_p)-private, then
        Σ_p t_p·δ_p ≤ Σ_p phase_budget(p) ≤ δ* — the accounting of Stemmer's
        RectanglesPERP (Thm 4.6), with phase lengths chosen freely by the caller
        (e.g. data-dependent t_p).

        Parameters
        ----------
        p : int or array-like of int
            Phase numbers ≥ 1.
        phase_length : int or array-like of int
            The number of steps t_p ≥ 1 of phase p (broadcast against ``p``).

        Returns
        -------
        float or ndarray of float
        """
        budget = self.phase_budget(p)
        t, t_scalar = _check_index(phase_length, "phase_length", 1)
        out = np.asarray(budget, dtype=float) / t.astype(float)
        return _out(out, np.ndim(budget) == 0 and t_scalar)
