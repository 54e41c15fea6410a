"""The interface every hypothesis class implements, and shared array helpers."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_float_array

__all__ = ["HypothesisClass"]

# Queries are evaluated against all blocks in chunks of at most this many
# (block, query) pairs, so memory stays bounded for 10⁴ teachers × 10⁵ queries.
_CHUNK_CELLS = 4_000_000


class HypothesisClass:
    """Base class: a concept class with vectorised (constrained) ERM over blocks.

    Subclasses implement :meth:`fit_blocks` and :meth:`predict_blocks`; they may
    override :meth:`vote` with something faster than averaging ``predict_blocks``.
    ``supports_through`` is True for classes whose ``fit_blocks`` accepts
    ``through=`` (hypotheses whose decision boundary passes through given points).
    """

    supports_through = False
    #: VC dimension as a function of the number of features (informational).
    vc_dimension: int | None = None

    def check_X(self, X: ArrayLike) -> NDArray[np.float64]:
        """Validate query/training points for this class; return a float 2-D array."""
        X = as_float_array(X, "X")
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got shape {X.shape}.")
        n_features = getattr(self, "n_features", None)
        if n_features is not None and X.shape[1] != n_features:
            raise ValueError(
                f"{type(self).__name__} expects {n_features} feature(s), got {X.shape[1]}."
            )
        return X

    def fit_blocks(self, X: ArrayLike, y: ArrayLike, blocks: ArrayLike, n_blocks: int, *,
                   sample_weight: ArrayLike | None = None, forced_X: ArrayLike | None = None,
                   forced_y: ArrayLike | None = None,
                   through: ArrayLike | None = None) -> NDArray[Any]:
        """Constrained ERM on every block at once; returns ``params`` (one row per block).

        Parameters
        ----------
        X : ndarray of shape (n, d)
        y : ndarray of shape (n,)
            Labels in {−1, +1}.
        blocks : ndarray of int, shape (n,)
            Block id of each row, in ``[0, n_blocks)``.
        n_blocks : int
        sample_weight : ndarray of shape (n,), optional
            Non-negative weights (default 1).
        forced_X, forced_y : ndarray, optional
            Forced labelled points, shared by every block (lexicographic priority).
        through : ndarray of shape (h, d), optional
            Points the decision boundary must pass through (``supports_through``).
        """
        raise NotImplementedError

    def predict_blocks(self, params: ArrayLike, X: ArrayLike) -> NDArray[np.int8]:
        """±1 predictions of every block's hypothesis: ``(n_blocks, n_queries)`` int8."""
        raise NotImplementedError

    def vote(self, params: ArrayLike, X: ArrayLike) -> NDArray[np.float64]:
        """Fraction of blocks voting +1 on each query, shape ``(n_queries,)``."""
        X = self.check_X(X)
        n_blocks = len(np.asarray(params))
        step = max(1, _CHUNK_CELLS // max(n_blocks, 1))
        out = np.empty(X.shape[0])
        for start in range(0, X.shape[0], step):
            pred = self.predict_blocks(params, X[start : start + step])
            out[start : start + step] = np.count_nonzero(pred > 0, axis=0) / n_blocks
        return out

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({fields})"


# --------------------------------------------------------------------- helpers
def _weights(y: NDArray[Any], sample_weight: ArrayLike | None) -> NDArray[np.float64]:
    if sample_weight is None:
        return np.ones(len(y))
    w = as_float_array(sample_weight, "sample_weight")
    if w.shape != (len(y),) or np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError("sample_weight must be finite, non-negative, one per row.")
    return w


def _forced(forced_X: ArrayLike | None, forced_y: ArrayLike | None,
            n_features: int) -> tuple[NDArray[np.float64], NDArray[np.int8]]:
    if forced_X is None or np.size(forced_X) == 0:
        return np.empty((0, n_features)), np.empty(0, dtype=np.int8)
    fx = np.asarray(forced_X, dtype=float).reshape(-1, n_features)
    fy = np.asarray(forced_y).reshape(-1)
    if fy.shape[0] != fx.shape[0] or not np.all(np.isin(fy, (-1, 1))):
        raise ValueError("forced_y must hold one label in {-1, +1} per forced point.")
    return fx, fy.astype(np.int8)


def _with_forced(X, y, w, blocks, n_blocks, forced_X, forced_y):
    """Append the forced points to every block with a weight larger than any block's.

    A weight W > (largest block weight) makes plain weighted ERM lexicographic:
    one forced violation costs more than every block error together.
    """
    fx, fy = _forced(forced_X, forced_y, X.shape[1])
    if fx.shape[0] == 0:
        return X, y, w, blocks
    block_weight = np.bincount(blocks, weights=w, minlength=n_blocks)
    big = float(block_weight.max(initial=0.0)) + 1.0
    f = fx.shape[0]
    X = np.concatenate([X, np.tile(fx, (n_blocks, 1))])
    y = np.concatenate([y, np.tile(fy, n_blocks)])
    w = np.concatenate([w, np.full(f * n_blocks, big)])
    blocks = np.concatenate([blocks, np.repeat(np.arange(n_blocks), f)])
    return X, y, w, blocks


def _check_blocks(X: NDArray[Any], y: ArrayLike, blocks: ArrayLike,
                  n_blocks: int) -> tuple[NDArray[np.int8], NDArray[np.intp]]:
    y = np.asarray(y).reshape(-1)
    blocks = np.asarray(blocks).reshape(-1).astype(np.intp)
    if y.shape[0] != X.shape[0] or blocks.shape[0] != X.shape[0]:
        raise ValueError("X, y and blocks must have the same number of rows.")
    if not np.all(np.isin(y, (-1, 1))):
        raise ValueError("y must hold labels in {-1, +1}.")
    if blocks.size and (blocks.min() < 0 or blocks.max() >= n_blocks):
        raise ValueError(f"blocks must lie in [0, {n_blocks}).")
    return y.astype(np.int8), blocks


def _pad(X, y, w, blocks, n_blocks):
    """Flat rows → padded ``(n_blocks, m, ·)`` arrays (padding has weight 0)."""
    order = np.argsort(blocks, kind="stable")
    b = blocks[order]
    counts = np.bincount(b, minlength=n_blocks)
    m = max(int(counts.max(initial=0)), 1)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    slot = np.arange(b.size) - starts[b]
    Xp = np.zeros((n_blocks, m, X.shape[1]))
    yp = np.zeros((n_blocks, m), dtype=np.int8)
    wp = np.zeros((n_blocks, m))
    Xp[b, slot] = X[order]
    yp[b, slot] = y[order]
    wp[b, slot] = w[order]
    return Xp, yp, wp


def _first_argmin_per_block(values, blocks, n_blocks):
    """Index (into ``values``) of the first minimum within each block (−1 if empty)."""
    order = np.lexsort((np.arange(values.size), values, blocks))
    sb = blocks[order]
    first = np.ones(sb.size, dtype=bool)
    first[1:] = sb[1:] != sb[:-1]
    out = np.full(n_blocks, -1, dtype=np.intp)
    out[sb[first]] = order[first]
    return out
