"""Littlestone dimension and the Standard Optimal Algorithm (SOA) on finite domains.

The Littlestone dimension Ldim(V) of a set V of hypotheses is the depth of the deepest
complete mistake tree V shatters (Littlestone 1988); recursively

    Ldim(∅) = −1,   Ldim(V) = max_x 1 + min(Ldim(V_x^−), Ldim(V_x^+))   (0 if no x splits V)

with V_x^y = {h ∈ V : h(x) = y}. The SOA predicts at x the label y whose restricted
version space has the larger Ldim; every mistake lowers Ldim(V) by at least one, so it
makes at most Ldim(C) mistakes on any realizable sequence, which is optimal for
deterministic learners (Littlestone 1988; the black box of Golowich & Livni 2021 and
Li, Wang & Ye 2024).

A *version space* here is an immutable object with ``ldim()``, ``restrict(x, y)``,
``predict(x)`` (the SOA's ±1 labels at domain indices, vectorised), ``is_empty``,
``soa_key()`` (a hashable identity of the SOA hypothesis) and ``n_domain``:

* :class:`FiniteVersionSpace` — any :class:`~skdp.hypotheses.FiniteClass`, exact Ldim by
  memoised recursion over bitmasks (refuses, with a ValueError, classes that are too large);
* :class:`ThresholdVersionSpace` — thresholds on {0, …, N−1} in closed form (any N, e.g. 2¹⁶);
* :class:`PointVersionSpace` — point functions on {0, …, N−1} in closed form.

Tie-breaking of the SOA (documented, deterministic): predict +1 iff
Ldim(V⁺) > Ldim(V⁻), or the two are equal and |V⁺| > |V⁻|; otherwise −1.

References
----------
N. Littlestone. Learning quickly when irrelevant attributes abound: a new linear-threshold
algorithm. Machine Learning 2(4), 1988.
N. Golowich, R. Livni. Littlestone classes are privately online learnable. NeurIPS 2021, §2.
Y. Li, Y. Wang, Y. Ye (2024). Private online learning against an adaptive adversary:
realizable and agnostic settings, §2.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._base import HypothesisClass
from .finite import FiniteClass

__all__ = [
    "FiniteVersionSpace",
    "PointVersionSpace",
    "ThresholdVersionSpace",
    "interval_class",
    "littlestone_dimension",
    "point_class",
    "soa_predict",
    "threshold_class",
    "version_space",
]

#: Default refusal limits of the exact recursion.
MAX_HYPOTHESES = 64
MAX_STATES = 2**20


# ----------------------------------------------------------------- label matrices
def threshold_class(n_domain: int) -> FiniteClass:
    """Thresholds on {0, …, N−1} as a :class:`FiniteClass`: h_t(x) = +1 iff x ≥ t.

    There are N + 1 hypotheses, t = 0 (all +1) … t = N (all −1); row t is h_t.
    Ldim = ⌊log₂(N + 1)⌋ (binary search over N + 1 thresholds; see
    :class:`ThresholdVersionSpace`).
    """
    n = _check_n(n_domain)
    t = np.arange(n + 1)[:, None]
    return FiniteClass(np.where(np.arange(n)[None, :] >= t, 1, -1))


def point_class(n_domain: int) -> FiniteClass:
    """Point functions on {0, …, N−1}: h_i(x) = +1 iff x = i (N hypotheses, Ldim 1 if N ≥ 2).

    The all-negative function is *not* included (add a row of −1 to include it; the Ldim
    stays 1 for N ≥ 1).
    """
    n = _check_n(n_domain)
    return FiniteClass(np.where(np.eye(n, dtype=bool), 1, -1))


def interval_class(n_domain: int, *, include_empty: bool = True) -> FiniteClass:
    """Intervals on {0, …, N−1}: h_{a,b}(x) = +1 iff a ≤ x ≤ b, 0 ≤ a ≤ b < N.

    N(N + 1)/2 hypotheses (+1 for the empty interval with ``include_empty``). Rows are in
    lexicographic (a, b) order, the empty interval last. No closed form for the Ldim is
    used: it is computed exactly (:func:`littlestone_dimension`) for small N (N = 15 takes
    milliseconds with ``max_hypotheses=200``). It lies between ⌊log₂(N + 1)⌋ (prefixes are
    thresholds) and about 2·log₂ N (an interval is the intersection of two thresholds).
    Exact values with the empty interval, N = 1 … 15: 1, 2, 2, 3, 3, 4, 4, 4, 5, 5, 5, 5,
    6, 6, 6 (without it the same except N = 1, 2: 0, 1); checked in the tests.
    """
    n = _check_n(n_domain)
    a, b = np.triu_indices(n)
    x = np.arange(n)[None, :]
    L = np.where((x >= a[:, None]) & (x <= b[:, None]), 1, -1)
    if include_empty:
        L = np.vstack([L, -np.ones((1, n), dtype=L.dtype)])
    return FiniteClass(L)


def _check_n(n_domain):
    if isinstance(n_domain, bool) or not isinstance(n_domain, (int, np.integer)) or n_domain < 1:
        raise ValueError(f"n_domain must be a positive integer, got {n_domain!r}.")
    return int(n_domain)


def _floor_log2(n):
    """⌊log₂ n⌋ for n ≥ 1 and −1 for n = 0 (the Ldim of n consecutive thresholds), vectorised."""
    n = np.asarray(n, dtype=np.int64)
    out = np.full(n.shape, -1, dtype=np.int64)
    pos = n > 0
    # exact for integers (frexp returns e with 2^(e-1) ≤ n < 2^e)
    out[pos] = np.frexp(n[pos].astype(np.float64))[1] - 1
    return out


def _soa_label(l_plus, l_minus, n_plus, n_minus):
    """The documented SOA tie-break, vectorised: +1 iff (Ldim⁺, |V⁺|) > (Ldim⁻, |V⁻|)."""
    plus = (l_plus > l_minus) | ((l_plus == l_minus) & (n_plus > n_minus))
    return np.where(plus, 1, -1).astype(np.int8)


def _check_points(x: ArrayLike, n_domain: int) -> NDArray[np.intp]:
    arr = np.asarray(x)
    if arr.dtype.kind not in "iuf" or not np.all(np.isfinite(arr)):
        raise ValueError("domain points must be finite integers.")
    if not np.all((arr == np.round(arr)) & (arr >= 0) & (arr < n_domain)):
        raise ValueError(f"domain points must be integers in [0, {n_domain}).")
    return arr.astype(np.intp)


def _check_label(y):
    if y not in (-1, 1):
        raise ValueError("labels must be -1 or +1 (the label given is not shown: it may "
                         "be private data).")
    return int(y)


# ----------------------------------------------------------------- finite (exact)
_LABEL_MEMO_SIZE = 4096


class _FiniteOracle:
    """Shared, memoised Ldim of bitmask version spaces of one label matrix."""

    def __init__(self, label_matrix, max_hypotheses, max_states):
        L = np.asarray(label_matrix, dtype=np.int8)
        if L.shape[0] > max_hypotheses:
            raise ValueError(
                f"littlestone_dimension: the class has {L.shape[0]} hypotheses, more than "
                f"max_hypotheses={max_hypotheses}; the exact recursion is exponential. Use a "
                "structured version space (ThresholdVersionSpace, PointVersionSpace) or raise "
                "max_hypotheses if you can afford it."
            )
        self.label_matrix = L
        self.n_hypotheses, self.n_domain = L.shape
        self.max_states = max_states
        weights = [1 << i for i in range(self.n_hypotheses)]
        # pos[x] = bitmask of hypotheses labelling x with +1
        self.pos = [sum(w for w, v in zip(weights, L[:, x], strict=True) if v > 0)
                    for x in range(self.n_domain)]
        self.distinct_pos = list(dict.fromkeys(self.pos))
        self.full = (1 << self.n_hypotheses) - 1
        self.memo = {}
        # SOA labels per version space: learners that keep many copies (DP-SOA, Li–Wang–Ye)
        # reach the same mask along different sequences; bounded, cleared when full.
        self.label_memo = {}

    def ldim(self, mask):
        if mask == 0:
            return -1
        if mask & (mask - 1) == 0:
            return 0
        got = self.memo.get(mask)
        if got is not None:
            return got
        if len(self.memo) >= self.max_states:
            raise ValueError(
                f"littlestone_dimension: more than max_states={self.max_states} version "
                "spaces visited; the class is too large for the exact recursion."
            )
        size = mask.bit_count()
        cap = size.bit_length() - 1  # Ldim(V) ≤ ⌊log₂|V|⌋
        candidates, seen = [], set()
        for p in self.distinct_pos:
            a = mask & p
            if a == 0 or a == mask or a in seen:
                continue
            b = mask ^ a
            seen.add(a)
            seen.add(b)
            na = a.bit_count()
            bound = 1 + min(na.bit_length(), (size - na).bit_length()) - 1
            candidates.append((bound, a, b))
        candidates.sort(key=lambda c: -c[0])
        best = 0
        for bound, a, b in candidates:
            if bound <= best:
                break
            la = self.ldim(a)
            if 1 + la <= best:
                continue
            best = max(best, 1 + min(la, self.ldim(b)))
            if best >= cap:
                break
        self.memo[mask] = best
        return best


class FiniteVersionSpace:
    """Version space of a :class:`FiniteClass` (a bitmask over its rows), exact Ldim.

    Parameters
    ----------
    hypothesis_class : FiniteClass or array-like of shape (n_hypotheses, n_domain)
        Labels in {−1, +1} (or {0, 1}).
    max_hypotheses : int, default=64
        Refuse (ValueError) classes with more rows: the recursion is exponential.
    max_states : int, default=2**20
        Refuse (ValueError) once this many version spaces have been memoised.

    Notes
    -----
    Ldim is memoised per class (shared by every restriction), pruned with
    Ldim(V) ≤ ⌊log₂|V|⌋ and by trying the most balanced splits first. ``predict`` computes
    the SOA's label on the whole domain once per version space (2·N Ldim look-ups) and then
    answers any block by indexing.
    """

    def __init__(self, hypothesis_class: Any, *, max_hypotheses: int = MAX_HYPOTHESES,
                 max_states: int = MAX_STATES, _oracle: Any = None, _mask: Any = None) -> None:
        if _oracle is None:
            L = (hypothesis_class.label_matrix if isinstance(hypothesis_class, FiniteClass)
                 else FiniteClass(hypothesis_class).label_matrix)
            _oracle = _FiniteOracle(L, max_hypotheses, max_states)
        self._oracle = _oracle
        self._mask = _oracle.full if _mask is None else _mask
        self._labels = None

    @property
    def n_domain(self) -> int:
        return self._oracle.n_domain

    @property
    def is_empty(self) -> bool:
        return self._mask == 0

    @property
    def size(self) -> int:
        return self._mask.bit_count()

    def hypotheses(self) -> NDArray[np.intp]:
        """Row indices (into the label matrix) of the hypotheses still consistent."""
        m, out, i = self._mask, [], 0
        while m:
            if m & 1:
                out.append(i)
            m >>= 1
            i += 1
        return np.asarray(out, dtype=np.intp)

    def ldim(self) -> int:
        return self._oracle.ldim(self._mask)

    def restrict(self, x: int, y: int) -> FiniteVersionSpace:
        """The version space {h ∈ V : h(x) = y} (a new object)."""
        x = int(_check_points(x, self.n_domain))
        p = self._oracle.pos[x]
        mask = self._mask & p if _check_label(y) > 0 else self._mask & ~p & self._oracle.full
        return FiniteVersionSpace(None, _oracle=self._oracle, _mask=mask)

    def _all_labels(self):
        if self._labels is None:
            o, m = self._oracle, self._mask
            cached = o.label_memo.get(m)
            if cached is not None:
                self._labels = cached
                return cached
            out = np.empty(o.n_domain, dtype=np.int8)
            by_col = {}
            for x, p in enumerate(o.pos):
                lab = by_col.get(p)
                if lab is None:
                    a, b = m & p, m & ~p & o.full
                    lab = _soa_label(o.ldim(a), o.ldim(b), a.bit_count(), b.bit_count())
                    by_col[p] = lab
                out[x] = lab
            out.setflags(write=False)  # shared between version spaces with this mask
            if len(o.label_memo) >= _LABEL_MEMO_SIZE:
                o.label_memo.clear()
            o.label_memo[m] = out
            self._labels = out
        return self._labels

    def predict(self, x: ArrayLike) -> Any:
        """SOA labels (±1, int8) at domain indices ``x`` (scalar or array)."""
        return self._all_labels()[_check_points(x, self.n_domain)]

    def soa_key(self) -> Hashable:
        """Hashable identity of the SOA hypothesis (its labels on the whole domain)."""
        return self._all_labels().tobytes()


# ----------------------------------------------------------------- closed forms
class ThresholdVersionSpace:
    """Thresholds t ∈ {lo, …, hi} ⊆ {0, …, N} on the domain {0, …, N−1}: h_t(x) = +1 iff x ≥ t.

    Closed form: k consecutive thresholds have Ldim ⌊log₂ k⌋ (a split leaves a and k − a
    consecutive thresholds, and max_a 1 + min(⌊log₂ a⌋, ⌊log₂(k − a)⌋) = ⌊log₂ k⌋), so the
    full class (k = N + 1) has Ldim ⌊log₂(N + 1)⌋; the SOA is binary search. O(1) memory,
    vectorised prediction — usable for N = 2¹⁶ and beyond. Matches
    ``FiniteVersionSpace(threshold_class(N))`` (tested).

    Parameters
    ----------
    n_domain : int
    lo, hi : int, optional
        The range of thresholds still consistent (default 0 … N).
    """

    def __init__(self, n_domain: int, lo: int = 0, hi: int | None = None) -> None:
        self.n_domain = _check_n(n_domain)
        self.lo = int(lo)
        self.hi = self.n_domain if hi is None else int(hi)

    @property
    def is_empty(self) -> bool:
        return self.lo > self.hi

    @property
    def size(self) -> int:
        return max(0, self.hi - self.lo + 1)

    def ldim(self) -> int:
        return int(_floor_log2(self.size))

    def restrict(self, x: int, y: int) -> ThresholdVersionSpace:
        x = int(_check_points(x, self.n_domain))
        if _check_label(y) > 0:  # x ≥ t
            return ThresholdVersionSpace(self.n_domain, self.lo, min(self.hi, x))
        return ThresholdVersionSpace(self.n_domain, max(self.lo, x + 1), self.hi)

    def _split(self, x):
        n_plus = np.clip(x - self.lo + 1, 0, self.size)
        return n_plus, self.size - n_plus

    def predict(self, x: ArrayLike) -> Any:
        x = _check_points(x, self.n_domain)
        n_plus, n_minus = self._split(x)
        return _soa_label(_floor_log2(n_plus), _floor_log2(n_minus), n_plus, n_minus)

    def soa_key(self) -> Hashable:
        """The SOA hypothesis is itself a threshold: the first x labelled +1 (N if none)."""
        if self.is_empty:
            return None
        # predictions are monotone in x: binary search for the first +1
        lo, hi = 0, self.n_domain
        while lo < hi:
            mid = (lo + hi) // 2
            if self.predict(mid) > 0:
                hi = mid
            else:
                lo = mid + 1
        return ("threshold", lo)


class PointVersionSpace:
    """Point functions h_i(x) = +1 iff x = i, i ∈ alive ⊆ {0, …, N−1}.

    Closed form: Ldim = 1 if at least two points are alive, 0 for one, −1 for none. The
    SOA predicts −1 everywhere until one point is left (then it predicts that point), so it
    errs at most once on a realizable stream. Matches ``FiniteVersionSpace(point_class(N))``.
    """

    def __init__(self, n_domain: int, alive: ArrayLike | None = None) -> None:
        self.n_domain = _check_n(n_domain)
        self.alive = (np.ones(self.n_domain, dtype=bool) if alive is None
                      else np.asarray(alive, dtype=bool))
        self._size = int(np.count_nonzero(self.alive))

    @property
    def is_empty(self) -> bool:
        return self._size == 0

    @property
    def size(self) -> int:
        return self._size

    def ldim(self) -> int:
        return 1 if self._size >= 2 else self._size - 1

    def restrict(self, x: int, y: int) -> PointVersionSpace:
        x = int(_check_points(x, self.n_domain))
        if _check_label(y) > 0:
            alive = np.zeros(self.n_domain, dtype=bool)
            alive[x] = self.alive[x]
        else:
            alive = self.alive.copy()
            alive[x] = False
        return PointVersionSpace(self.n_domain, alive)

    def predict(self, x: ArrayLike) -> Any:
        x = _check_points(x, self.n_domain)
        in_v = self.alive[x]
        n_plus = in_v.astype(np.int64)
        n_minus = self._size - n_plus
        l_minus = np.where(n_minus >= 2, 1, n_minus - 1)
        return _soa_label(n_plus - 1, l_minus, n_plus, n_minus)

    def soa_key(self) -> Hashable:
        if self._size == 1:
            return ("point", int(np.flatnonzero(self.alive)[0]))
        return ("point", None) if self._size else None


_VERSION_SPACES = (FiniteVersionSpace, ThresholdVersionSpace, PointVersionSpace)


def version_space(hypothesis_class: Any, **limits: Any) -> Any:
    """The full version space of a class: a version space passes through, a
    :class:`FiniteClass` or a label matrix becomes a :class:`FiniteVersionSpace`."""
    if isinstance(hypothesis_class, _VERSION_SPACES):
        return hypothesis_class
    if callable(getattr(hypothesis_class, "version_space", None)):  # e.g. RealThresholds
        return hypothesis_class.version_space(**limits)
    if isinstance(hypothesis_class, HypothesisClass) and not isinstance(
        hypothesis_class, FiniteClass
    ):
        raise ValueError(
            f"{type(hypothesis_class).__name__} is a class over an infinite domain "
            "(infinite Littlestone dimension): the SOA needs a finite class."
        )
    return FiniteVersionSpace(hypothesis_class, **limits)


# ----------------------------------------------------------------- public helpers
def littlestone_dimension(cls: Any, *, max_hypotheses: int = MAX_HYPOTHESES,
                          max_states: int = MAX_STATES) -> int | float:
    """Littlestone dimension of a concept class (exact).

    Parameters
    ----------
    cls : FiniteClass, array-like label matrix, version space, or HypothesisClass
        Finite classes use the memoised recursion; :class:`ThresholdVersionSpace` and
        :class:`PointVersionSpace` the closed forms ⌊log₂(N + 1)⌋ and 1. Thresholds,
        intervals, rectangles and halfspaces over the reals (``Thresholds()`` …) have
        infinite Ldim (Littlestone 1988: thresholds on [0, 1] shatter trees of any depth):
        ``math.inf`` is returned. Classes over *discretised* reals
        (:class:`~skdp.hypotheses.RealThresholds`, ``RealIntervals``) are finite: their
        ``version_space()`` answers.
    max_hypotheses, max_states : int
        Refusal limits of the exact recursion (ValueError beyond them).

    Returns
    -------
    int or float
        −1 for the empty class, ``math.inf`` for the infinite-domain classes.

    Examples
    --------
    >>> from skdp.hypotheses.littlestone import (littlestone_dimension, point_class,
    ...                                          threshold_class)
    >>> littlestone_dimension(threshold_class(7)), littlestone_dimension(point_class(5))
    (3, 1)
    """
    if callable(getattr(cls, "version_space", None)):
        return cls.version_space(max_hypotheses=max_hypotheses, max_states=max_states).ldim()
    if isinstance(cls, HypothesisClass) and not isinstance(cls, FiniteClass):
        return math.inf
    vs = (cls if isinstance(cls, _VERSION_SPACES)
          else FiniteVersionSpace(cls, max_hypotheses=max_hypotheses, max_states=max_states))
    return vs.ldim()


def soa_predict(version_space: Any, x: ArrayLike) -> Any:
    """The SOA's prediction(s) at domain index (indices) ``x`` for a version space.

    Parameters
    ----------
    version_space : version space object, or array-like of shape (k, n_domain)
        A label matrix is read as the (non-empty) set of hypotheses still consistent.
    x : int or array-like of int

    Returns
    -------
    int8 or ndarray of int8
        +1 iff Ldim(V⁺) > Ldim(V⁻) (ties: the larger of V⁺, V⁻; then −1).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.hypotheses.littlestone import soa_predict, threshold_class
    >>> soa_predict(threshold_class(7).label_matrix, np.arange(7))
    array([-1, -1, -1, -1,  1,  1,  1], dtype=int8)
    """
    vs = version_space if isinstance(version_space, _VERSION_SPACES) else FiniteVersionSpace(
        version_space)
    if vs.is_empty:
        raise ValueError("soa_predict: the version space is empty (non-realizable data).")
    return vs.predict(x)
