"""A finite concept class given as a label matrix over a finite domain."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._base import HypothesisClass, _check_blocks, _forced, _weights

__all__ = ["FiniteClass"]


class FiniteClass(HypothesisClass):
    """Finite class ``C = {h_0, …, h_{H−1}}`` over the domain ``{0, …, N−1}``.

    Points are domain indices: ``X`` has one column of integers in ``[0, N)``.

    Parameters
    ----------
    label_matrix : array-like of shape (n_hypotheses, n_domain)
        ``label_matrix[h, x]`` is h(x), in {−1, +1} (or {0, 1}, mapped to −1/+1).

    Notes
    -----
    ERM is exact. ``fit_blocks`` builds per-block weighted label histograms over the
    domain and scores every hypothesis by two matrix products: O(n + k·N·H) time
    and O(k·(N + H)) memory for k blocks, N domain points and H hypotheses.
    Ties go to the lowest hypothesis index. ``params`` holds one hypothesis index
    per block.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.hypotheses import FiniteClass
    >>> points = FiniteClass(np.where(np.eye(4), 1, -1))  # "point functions"
    >>> X = np.array([[0], [1], [1], [2]]); y = np.array([-1, 1, 1, -1])
    >>> points.fit_blocks(X, y, np.zeros(4, dtype=int), 1)
    array([1])
    >>> points.fit_blocks(X, y, np.zeros(4, dtype=int), 1, forced_X=[[3]], forced_y=[1])
    array([3])
    """

    def __init__(self, label_matrix: ArrayLike) -> None:
        L = np.asarray(label_matrix)
        if L.ndim != 2 or L.size == 0:
            raise ValueError("label_matrix must be a non-empty 2-D array.")
        if np.all(np.isin(L, (0, 1))):
            L = 2 * L.astype(np.int8) - 1
        if not np.all(np.isin(L, (-1, 1))):
            raise ValueError("label_matrix must hold labels in {-1, +1} or {0, 1}.")
        self.label_matrix = L.astype(np.int8)
        self.n_features = 1

    @property
    def n_hypotheses(self) -> int:
        return self.label_matrix.shape[0]

    @property
    def n_domain(self) -> int:
        return self.label_matrix.shape[1]

    def _indices(self, X):
        X = self.check_X(X)
        idx = X[:, 0]
        if not np.all((idx == np.round(idx)) & (idx >= 0) & (idx < self.n_domain)):
            raise ValueError(f"FiniteClass points must be integers in [0, {self.n_domain}).")
        return idx.astype(np.intp)

    def fit_blocks(self, X: ArrayLike, y: ArrayLike, blocks: ArrayLike, n_blocks: int, *,
                   sample_weight: ArrayLike | None = None, forced_X: ArrayLike | None = None,
                   forced_y: ArrayLike | None = None,
                   through: ArrayLike | None = None) -> NDArray[Any]:
        if through is not None and np.size(through):
            raise ValueError("FiniteClass does not support through= constraints.")
        idx = self._indices(X)
        y, blocks = _check_blocks(idx[:, None], y, blocks, n_blocks)
        w = _weights(y, sample_weight)
        N = self.n_domain
        pos = np.bincount(blocks * N + idx, weights=w * (y > 0), minlength=n_blocks * N)
        neg = np.bincount(blocks * N + idx, weights=w * (y < 0), minlength=n_blocks * N)
        pos, neg = pos.reshape(n_blocks, N), neg.reshape(n_blocks, N)
        L = self.label_matrix
        errors = pos @ (L < 0).T + neg @ (L > 0).T  # (k, H)
        fx, fy = _forced(forced_X, forced_y, 1)
        if fx.shape[0]:
            fidx = self._indices(fx)
            violations = np.count_nonzero(L[:, fidx] != fy[None, :], axis=1)  # (H,)
            big = errors.max(initial=0.0) + 1.0
            errors = errors + big * violations[None, :]
        return np.argmin(errors, axis=1)

    def predict_blocks(self, params: ArrayLike, X: ArrayLike) -> NDArray[np.int8]:
        return self.label_matrix[np.asarray(params)][:, self._indices(X)]
