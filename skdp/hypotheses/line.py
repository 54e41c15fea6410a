"""Thresholds and intervals on the real line, with exact vectorised ERM."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_float_array
from ._base import (
    HypothesisClass,
    _check_blocks,
    _first_argmin_per_block,
    _weights,
    _with_forced,
)

__all__ = ["Intervals", "Thresholds"]


def _aggregate(x, s, blocks):
    """Sort by (block, x) and merge equal (block, x) pairs, summing the signed weights.

    Returns sorted unique ``x``, summed ``s``, their ``blocks``, and the index of
    each block's first entry (``starts``).
    """
    order = np.lexsort((x, blocks))
    x, s, b = x[order], s[order], blocks[order]
    new = np.ones(x.size, dtype=bool)
    new[1:] = (b[1:] != b[:-1]) | (x[1:] != x[:-1])
    at = np.flatnonzero(new)
    return x[at], np.add.reduceat(s, at) if at.size else s[:0], b[at]


def _segment_cumsum(s, b):
    """Inclusive cumulative sum of ``s`` restarting at every new block id in ``b``."""
    if b.size == 0:
        return np.cumsum(s)
    c = np.cumsum(s)
    new = np.ones(b.size, dtype=bool)
    new[1:] = b[1:] != b[:-1]
    start_of = np.maximum.accumulate(np.where(new, np.arange(b.size), 0))
    return c - (c - s)[start_of]


def _mid(left, right):
    return 0.5 * (left + right)


def _line_data(cls, X, y, blocks, n_blocks, sample_weight, forced_X, forced_y, through):
    if through is not None and len(through):
        raise ValueError(f"{cls.__name__} does not support through= constraints.")
    X = as_float_array(X, "X")
    if X.ndim != 2 or X.shape[1] != 1:
        raise ValueError(f"{cls.__name__} expects X of shape (n, 1), got {X.shape}.")
    y, blocks = _check_blocks(X, y, blocks, n_blocks)
    w = _weights(y, sample_weight)
    X, y, w, blocks = _with_forced(X, y, w, blocks, n_blocks, forced_X, forced_y)
    return _aggregate(X[:, 0], w * y, blocks)


class Thresholds(HypothesisClass):
    """One-sided thresholds on a line: h_t(x) = +1 iff x ≥ t (VC dimension 1).

    ``params`` holds one threshold per block (±inf for "all +1" / "all −1").

    Notes
    -----
    ERM is exact (minimum weighted error; forced labels lexicographically first).
    One sort of the n rows (plus k·f forced copies for f forced points) and linear
    scans: O((n + k·f)·log(n + k·f)) time, O(n + k·f) memory. The chosen threshold
    is the midpoint of the gap it falls in (ties: the leftmost optimal gap). The
    vote needs one sort of the thresholds: O((k + q)·log k) for q queries.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.hypotheses import Thresholds
    >>> X = np.array([[0.1], [0.4], [0.6], [0.9]]); y = np.array([-1, -1, 1, 1])
    >>> Thresholds().fit_blocks(X, y, np.zeros(4, dtype=int), 1)
    array([0.5])
    >>> Thresholds().fit_blocks(X, y, np.zeros(4, dtype=int), 1, forced_X=[[0.55]],
    ...                         forced_y=[-1])
    array([0.575])
    """

    n_features = 1
    vc_dimension = 1

    def fit_blocks(self, X: ArrayLike, y: ArrayLike, blocks: ArrayLike, n_blocks: int, *,
                   sample_weight: ArrayLike | None = None, forced_X: ArrayLike | None = None,
                   forced_y: ArrayLike | None = None,
                   through: ArrayLike | None = None) -> NDArray[Any]:
        x, s, b = _line_data(Thresholds, X, y, blocks, n_blocks, sample_weight, forced_X,
                             forced_y, through)
        # Splitting before entry j: cost = Σ_{i<j} pos_i + Σ_{i≥j} neg_i
        #                                 = neg_total + Σ_{i<j} s_i  (s = pos − neg).
        before = _segment_cumsum(s, b) - s  # Σ_{i<j} s_i, per block
        total = np.bincount(b, weights=s, minlength=n_blocks)  # split after the last entry
        values = np.concatenate([before, total])
        owner = np.concatenate([b, np.arange(n_blocks)])
        best = _first_argmin_per_block(values, owner, n_blocks)
        # Threshold of "split before j": midpoint to the previous x of the block.
        prev = np.concatenate([[-np.inf], x[:-1]])
        first = np.ones(b.size, dtype=bool)
        first[1:] = b[1:] != b[:-1]
        prev[first] = -np.inf
        t_before = np.where(np.isinf(prev), -np.inf, _mid(prev, x))
        thresholds = np.concatenate([t_before, np.full(n_blocks, np.inf)])
        return thresholds[best]

    def predict_blocks(self, params: ArrayLike, X: ArrayLike) -> NDArray[np.int8]:
        X = self.check_X(X)
        return np.where(X[None, :, 0] >= np.asarray(params)[:, None], 1, -1).astype(np.int8)

    def vote(self, params: ArrayLike, X: ArrayLike) -> NDArray[np.float64]:
        X = self.check_X(X)
        t = np.sort(np.asarray(params, dtype=float))
        return np.searchsorted(t, X[:, 0], side="right") / t.size


class Intervals(HypothesisClass):
    """Closed intervals on a line: h(x) = +1 iff a ≤ x ≤ b (VC dimension 2).

    ``params`` has shape ``(n_blocks, 2)``: ``[a, b]``; the empty interval is
    ``[inf, -inf]``.

    Notes
    -----
    ERM is exact: maximum-weight segment of the signed weights along the sorted
    line (Kadane's recurrence written with segment prefix sums and running minima,
    so all blocks are solved in a few vectorised passes). O((n + k·f)·log(n + k·f))
    time for the sort, O(n + k·f) memory. Endpoints sit at midpoints of gaps.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.hypotheses import Intervals
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([-1, 1, 1, -1])
    >>> Intervals().fit_blocks(X, y, np.zeros(4, dtype=int), 1)
    array([[0.5, 2.5]])
    """

    n_features = 1
    vc_dimension = 2

    def fit_blocks(self, X: ArrayLike, y: ArrayLike, blocks: ArrayLike, n_blocks: int, *,
                   sample_weight: ArrayLike | None = None, forced_X: ArrayLike | None = None,
                   forced_y: ArrayLike | None = None,
                   through: ArrayLike | None = None) -> NDArray[Any]:
        x, s, b = _line_data(Intervals, X, y, blocks, n_blocks, sample_weight, forced_X,
                             forced_y, through)
        params = np.tile([np.inf, -np.inf], (n_blocks, 1))
        if b.size == 0:
            return params
        prefix = _segment_cumsum(s, b)  # P_j
        before = prefix - s  # P_{j-1}
        # Running minimum of P_{i-1} within each block: shift blocks apart so that a
        # global running minimum restarts at each block (later blocks lie far below).
        span = 2.0 * (np.abs(s).sum() + 1.0)
        shifted = before - b * span
        run_min = np.minimum.accumulate(shifted) + b * span
        gain = prefix - run_min  # best segment ending at j
        end = _first_argmin_per_block(-gain, b, n_blocks)
        has = end >= 0
        end_gain = np.where(has, gain[np.maximum(end, 0)], 0.0)
        take = has & (end_gain > 0)
        # Start: first i ≤ end (same block) where P_{i-1} attains the running minimum.
        idx = np.arange(b.size)
        end_of = np.full(n_blocks, -1)
        end_of[take] = end[take]
        ok = idx <= end_of[b]
        key = np.where(ok, before, np.inf)
        start = _first_argmin_per_block(key, b, n_blocks)
        first = np.ones(b.size, dtype=bool)
        first[1:] = b[1:] != b[:-1]
        last = np.ones(b.size, dtype=bool)
        last[:-1] = b[1:] != b[:-1]
        prev = np.concatenate([[np.nan], x[:-1]])
        nxt = np.concatenate([x[1:], [np.nan]])
        lo = np.where(first, -np.inf, _mid(prev, x))
        hi = np.where(last, np.inf, _mid(x, nxt))
        rows = np.flatnonzero(take)
        params[rows, 0] = lo[start[rows]]
        params[rows, 1] = hi[end[rows]]
        return params

    def predict_blocks(self, params: ArrayLike, X: ArrayLike) -> NDArray[np.int8]:
        X = self.check_X(X)
        p = np.asarray(params, dtype=float)
        inside = (X[None, :, 0] >= p[:, :1]) & (X[None, :, 0] <= p[:, 1:])
        return np.where(inside, 1, -1).astype(np.int8)
