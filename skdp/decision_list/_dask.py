"""Rule lists on a dask array or dataframe: every count pass is a map-reduce over chunks.

:func:`._thresholds.threshold_cover` reads its data through two calls: the (feature ×
bin × class) histogram of all rows, then, per rule, the histogram of the remaining rows
the rule fires on. :class:`DaskRows` answers each with one pass over the chunks: every
chunk computes :func:`._thresholds.class_histogram` of its own rows (given the public
grid and the rules released so far, which decide which of its rows remain) and only
those histograms — d·B·C integers per chunk — come back to the client, which sums them.
No row ever leaves its worker, and the client holds no more than one histogram per
chunk. A fit makes 1 + K passes (K rules); the first also validates the chunks, before
anything is charged.
"""

from __future__ import annotations

import numpy as np

from ._thresholds import class_histogram

__all__ = ["DaskRows", "is_dask_collection"]


def is_dask_collection(X):
    """Whether X is a dask array or dataframe (without importing dask otherwise)."""
    module = type(X).__module__
    return module.startswith("dask.") or module.startswith("dask_expr")


def _as_row_chunks(X, y):
    """(dask array X with whole rows per chunk, dask array y with the same row chunks)."""
    import dask.array as da

    if not isinstance(X, da.Array):
        X = X.to_dask_array(lengths=True)
    if not isinstance(y, da.Array):
        y = y.to_dask_array(lengths=True) if is_dask_collection(y) else da.from_array(
            np.asarray(y), chunks=(X.chunks[0],))
    if X.ndim != 2 or y.ndim != 1:
        raise ValueError(f"expected a 2-d X and a 1-d y; got {X.ndim}-d and {y.ndim}-d.")
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows and y {y.shape[0]}.")
    X = X.rechunk({1: -1})
    return X, y.rechunk((X.chunks[0],))


def _chunk_histogram(xb, yb, grid, classes, rules, check):
    """Histogram of the rows of one chunk that no rule of ``rules[:-1]`` fires on and
    (if ``rules``) the last one does. ``check``: refuse non-finite values (NaN apart)
    and labels outside ``classes`` (messages name no value)."""
    xb = np.asarray(xb, dtype=np.float64)
    yb = np.asarray(yb)
    codes = np.searchsorted(classes, yb)
    if check:
        if np.isinf(xb).any():
            raise ValueError("X contains infinity; only NaN (missing) is accepted.")
        inside = codes < classes.size
        if not (inside.all() and np.all(classes[np.where(inside, codes, 0)] == yb)):
            raise ValueError("y has labels outside the public classes.")
    # Which rows the rules select, by comparing raw values with the rules' cuts (exactly
    # the bins' semantics: x ≤ cut_k ⇔ bin ≤ k; NaN fires only "missing"); only those
    # rows are binned, so a pass costs O(rows·rules) comparisons plus the binning of
    # the rows the new rule covers — each row is binned in one rule pass at most.
    keep = np.ones(xb.shape[0], dtype=bool)
    for position, lit in enumerate(rules):
        column = xb[:, int(grid.feature[lit])]
        op, cut = int(grid.op[lit]), grid.threshold(lit)
        with np.errstate(invalid="ignore"):
            fires = np.isnan(column) if op == 2 else (column <= cut) if op == 0 else (
                column > cut)
        keep &= fires if position == len(rules) - 1 else ~fires
    return class_histogram(grid.bins(xb[keep]), codes[keep], grid.n_bins, classes.size)


class DaskRows:
    """Rows of a dask collection for :func:`._thresholds.threshold_cover` (see module).

    ``prepare()`` runs the first pass (validation and the full histogram); call it
    before charging so that bad input spends nothing.
    """

    def __init__(self, X, y, grid, classes):
        self.X, self.y = _as_row_chunks(X, y)
        self.shape = self.X.shape
        self.grid, self.classes = grid, np.asarray(classes)
        self.rules = []
        self._start = None

    def _pass(self, rules, check=False):
        import dask

        tasks = [dask.delayed(_chunk_histogram)(xb, yb, self.grid, self.classes,
                                                tuple(rules), check)
                 for xb, yb in zip(self.X.to_delayed().ravel(), self.y.to_delayed().ravel(),
                                   strict=True)]
        return sum(dask.compute(*tasks))

    def prepare(self):
        self._start = self._pass([], check=True)
        return self

    @property
    def total(self):
        """Number of rows (every row is in one bin of feature 0)."""
        return int(self._start[0].sum()) if self.shape[1] else int(self.shape[0])

    def start(self):
        return self._start.copy()

    def take(self, literal):
        self.rules.append(int(literal))
        return self._pass(self.rules)
