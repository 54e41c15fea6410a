"""Thresholds and intervals on a real feature through a public discretisation.

The online learners of :mod:`skdp.online` work over a finite domain {0, …, N−1}: a
Littlestone class needs one (thresholds on the reals have infinite Littlestone
dimension), and the histogram sanitizer and the private experts count cells of it.
These classes own the bridge from a real column: public ``bounds=(lo, hi)`` and a bin
count ``n_bins`` fix N = ``n_bins`` equal-width bins, values outside the bounds are
clipped into the end bins, and the hypotheses are thresholds (or intervals) on the bin
index. Everything is fixed by the constructor's arguments: no statistic of the data is
used, so discretising a private column costs no privacy (choose the bounds from domain
knowledge, never from the data).

Both are :class:`~skdp.hypotheses.HypothesisClass` es (vectorised, exact constrained
ERM over blocks, like :class:`~skdp.hypotheses.Thresholds`), and both give the finite
class they stand for (``finite_class()``, ``version_space()``), so every learner that
takes a finite class takes them and then reads real features (``to_domain``).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_float_array
from ._base import HypothesisClass
from .finite import FiniteClass
from .line import Intervals, Thresholds
from .littlestone import (
    FiniteVersionSpace,
    ThresholdVersionSpace,
    interval_class,
    threshold_class,
)

__all__ = ["RealIntervals", "RealThresholds"]


class _PublicBins(HypothesisClass):
    """A class on one real feature, discretised into public equal-width bins."""

    n_features = 1
    bounds: tuple[float, float]
    n_bins: int

    def __init__(self, bounds: tuple[float, float] = (0.0, 1.0), n_bins: int = 256) -> None:
        name = type(self).__name__
        try:
            lo, hi = (float(b) for b in bounds)
        except (TypeError, ValueError):
            raise ValueError(f"{name}: bounds must be a pair (lo, hi) of real numbers, "
                             f"got {bounds!r}.") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError(f"{name}: bounds (lo, hi) must be finite with lo < hi, got "
                             f"{bounds!r}.")
        if (isinstance(n_bins, bool) or not isinstance(n_bins, numbers.Integral)
                or n_bins < 2):
            raise ValueError(f"{name}: n_bins must be an integer ≥ 2, got {n_bins!r}.")
        self.bounds = (lo, hi)
        self.n_bins = int(n_bins)

    @property
    def n_domain(self) -> int:
        """N = ``n_bins``: the size of the finite domain the features are mapped to."""
        return self.n_bins

    @property
    def bin_edges(self) -> NDArray[np.float64]:
        """The ``n_bins + 1`` public edges lo = e₀ < … < e_N = hi (bin j is [e_j, e_{j+1}))."""
        return np.linspace(self.bounds[0], self.bounds[1], self.n_bins + 1)

    def to_domain(self, X: ArrayLike) -> NDArray[np.intp]:
        """Bin index of every row of a real column: ``(n, 1)`` floats → ``(n,)`` intp.

        Bin j holds [e_j, e_{j+1}) (the last bin also holds hi); values below lo go to
        bin 0 and values above hi to bin N−1 (clipping). Monotone non-decreasing in x.
        Raises ValueError, without printing any value, for a shape other than (n, 1)
        or non-finite values (NaN, ±inf).
        """
        name = type(self).__name__
        X = as_float_array(X, f"{name}: X")
        if X.ndim != 2 or X.shape[1] != 1:
            raise ValueError(f"{name} expects one real feature, X of shape (n, 1); got an "
                             f"array of shape {X.shape}.")
        if not np.all(np.isfinite(X)):
            raise ValueError(f"{name}: X must be finite (NaN or inf found; the values "
                             "are not shown: they may be private).")
        lo, hi = self.bounds
        scaled = (np.clip(X[:, 0], lo, hi) - lo) * (self.n_bins / (hi - lo))
        return np.minimum(np.floor(scaled), self.n_bins - 1).astype(np.intp)

    def _bins_column(self, X):
        return self.to_domain(X)[:, None].astype(np.float64)

    def _fit_on_bins(self, X, y, blocks, n_blocks, sample_weight, forced_X, forced_y,
                     through):
        """The real-line class's exact ERM (``_line_class``) on the bin indices."""
        forced = None if forced_X is None else self._bins_column(forced_X)
        return self._line_class().fit_blocks(
            self._bins_column(X), y, blocks, n_blocks, sample_weight=sample_weight,
            forced_X=forced, forced_y=forced_y, through=through)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(bounds={self.bounds!r}, n_bins={self.n_bins})"


class RealThresholds(_PublicBins):
    """Thresholds on a real feature with public bounds and bins: h_t(x) = +1 iff bin(x) ≥ t.

    The hypotheses are t = 0 (all +1), 1, …, N (all −1) with N = ``n_bins``: the
    class :func:`~skdp.hypotheses.threshold_class` (N) on the bin indices, i.e. the
    thresholds at the public edges (t ↔ "x ≥ e_t"). Littlestone dimension
    ⌊log₂(N + 1)⌋ (binary search).

    Parameters
    ----------
    bounds : (float, float), default=(0.0, 1.0)
        Public lo < hi. Values outside are clipped into the first / last bin.
    n_bins : int, default=256
        N ≥ 2 equal-width bins.

    Attributes
    ----------
    n_domain : int
        N, the domain the learners see.
    bin_edges : ndarray of shape (N + 1,)
    littlestone_dimension : int

    Notes
    -----
    ERM is exact over the N + 1 thresholds: :class:`~skdp.hypotheses.Thresholds` on
    the bin indices, its cut rounded up to the next index (every integer in the gap
    between two observed bins labels the data alike). ``params`` holds one threshold
    index t per block (int64). Costs as for ``Thresholds``.

    Privacy
    -------
    The discretisation is a fixed public function of each row (it reads only the
    constructor's arguments): a learner fed ``to_domain(X)`` is exactly as private as
    on the bin indices.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.hypotheses import RealThresholds
    >>> h = RealThresholds(bounds=(0.0, 10.0), n_bins=5)
    >>> h.to_domain([[-3.0], [0.0], [4.1], [9.99], [10.0], [42.0]])
    array([0, 0, 2, 4, 4, 4])
    >>> X = np.array([[1.0], [3.0], [5.0], [9.0]]); y = np.array([-1, -1, 1, 1])
    >>> h.fit_blocks(X, y, np.zeros(4, dtype=int), 1), h.littlestone_dimension
    (array([2]), 2)
    """

    vc_dimension = 1
    _line_class = Thresholds

    @property
    def littlestone_dimension(self) -> int:
        return int(self.version_space().ldim())

    def finite_class(self) -> FiniteClass:
        """The class on bin indices: :func:`~skdp.hypotheses.threshold_class` (N)."""
        return threshold_class(self.n_bins)

    def version_space(self, **limits: Any) -> ThresholdVersionSpace:
        """Closed-form :class:`~skdp.hypotheses.ThresholdVersionSpace` (N) (any N)."""
        return ThresholdVersionSpace(self.n_bins)

    def fit_blocks(self, X: ArrayLike, y: ArrayLike, blocks: ArrayLike, n_blocks: int, *,
                   sample_weight: ArrayLike | None = None, forced_X: ArrayLike | None = None,
                   forced_y: ArrayLike | None = None,
                   through: ArrayLike | None = None) -> NDArray[Any]:
        cut = self._fit_on_bins(X, y, blocks, n_blocks, sample_weight, forced_X, forced_y,
                                through)
        return np.clip(np.ceil(np.nan_to_num(cut, posinf=self.n_bins, neginf=0)),
                       0, self.n_bins).astype(np.int64)

    def predict_blocks(self, params: ArrayLike, X: ArrayLike) -> NDArray[np.int8]:
        bins = self.to_domain(X)
        t = np.asarray(params, dtype=np.int64).reshape(-1, 1)
        return np.where(bins[None, :] >= t, 1, -1).astype(np.int8)


class RealIntervals(_PublicBins):
    """Intervals on a real feature with public bins: h(x) = +1 iff a ≤ bin(x) ≤ b.

    The class :func:`~skdp.hypotheses.interval_class` (N) on the bin indices
    (0 ≤ a ≤ b < N, plus the empty interval): N(N + 1)/2 + 1 hypotheses. Its
    Littlestone dimension lies between ⌊log₂(N + 1)⌋ and about 2·log₂ N; it is computed
    exactly for N ≤ 15 and refused (ValueError) beyond.

    Parameters
    ----------
    bounds : (float, float), default=(0.0, 1.0)
        Public lo < hi; values outside are clipped into the end bins.
    n_bins : int, default=64
        N ≥ 2 (the finite class has about N²/2 hypotheses: the agnostic learners hold
        its label matrix, so keep N²·N/2 under their ``MAX_TABLE`` = 2²⁴, i.e. N ≤ 322).

    Notes
    -----
    ERM is exact: :class:`~skdp.hypotheses.Intervals` on the bin indices with its
    endpoints rounded inwards to indices. ``params`` has shape (k, 2): [a, b] bin
    indices, the empty interval as [N, −1].

    Privacy
    -------
    As :class:`RealThresholds`: the discretisation is public.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.hypotheses import RealIntervals
    >>> h = RealIntervals(bounds=(0.0, 1.0), n_bins=10)
    >>> X = np.array([[0.05], [0.35], [0.42], [0.9]]); y = np.array([-1, 1, 1, -1])
    >>> h.fit_blocks(X, y, np.zeros(4, dtype=int), 1)
    array([[2, 6]])
    >>> h.predict_blocks([[3, 4]], [[0.33], [0.5]])
    array([[ 1, -1]], dtype=int8)
    """

    vc_dimension = 2
    _line_class = Intervals

    def __init__(self, bounds: tuple[float, float] = (0.0, 1.0), n_bins: int = 64) -> None:
        super().__init__(bounds, n_bins)

    @property
    def littlestone_dimension(self) -> int:
        if self.n_bins > 15:
            raise ValueError(
                f"RealIntervals: the exact Littlestone dimension is computed for n_bins ≤ "
                f"15 only; for n_bins={self.n_bins} it lies between "
                f"{int(math.log2(self.n_bins + 1))} and {2 * math.ceil(math.log2(self.n_bins))}.")
        return int(self.version_space(max_hypotheses=200).ldim())

    def finite_class(self) -> FiniteClass:
        """The class on bin indices: :func:`~skdp.hypotheses.interval_class` (N)."""
        return interval_class(self.n_bins)

    def version_space(self, **limits: Any) -> FiniteVersionSpace:
        """:class:`~skdp.hypotheses.FiniteVersionSpace` of :meth:`finite_class` (exact
        recursion; refuses large N with the recursion's limits)."""
        return FiniteVersionSpace(self.finite_class(), **limits)

    def fit_blocks(self, X: ArrayLike, y: ArrayLike, blocks: ArrayLike, n_blocks: int, *,
                   sample_weight: ArrayLike | None = None, forced_X: ArrayLike | None = None,
                   forced_y: ArrayLike | None = None,
                   through: ArrayLike | None = None) -> NDArray[Any]:
        ends = self._fit_on_bins(X, y, blocks, n_blocks, sample_weight, forced_X, forced_y,
                                 through)
        n = self.n_bins
        a = np.clip(np.ceil(np.nan_to_num(ends[:, 0], posinf=n, neginf=0)), 0, n)
        b = np.clip(np.floor(np.nan_to_num(ends[:, 1], posinf=n - 1, neginf=-1)), -1, n - 1)
        empty = a > b
        a[empty], b[empty] = n, -1
        return np.stack([a, b], axis=1).astype(np.int64)

    def predict_blocks(self, params: ArrayLike, X: ArrayLike) -> NDArray[np.int8]:
        bins = self.to_domain(X)[None, :]
        p = np.asarray(params, dtype=np.int64).reshape(-1, 2)
        inside = (bins >= p[:, :1]) & (bins <= p[:, 1:])
        return np.where(inside, 1, -1).astype(np.int8)
