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

Cost of a pass. The first bins every value. A rule pass compares one column with the
new rule's cut, then checks the rows it fires on against what the earlier rules left
of each feature (an interval and a NaN flag: :func:`_remaining_constraints`), and bins
only the rows it covers — each row is binned in one rule pass at most. So a rule pass
is O(rows + covered·d), whatever the number of rules already released.
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


def _remaining_constraints(grid, rules):
    """Per feature, what the rules ``rules`` leave of it: ``{j: (a, b, nan_taken)}``.

    A "≤ t" rule takes the rows with x_j ≤ t and a "> t" rule those with x_j > t, so the
    rows no rule fires on hold a_j < x_j ≤ b_j (a_j the largest "≤" cut, b_j the
    smallest ">" cut; ±inf when none) or a NaN, unless a "missing" rule took the NaNs.
    Three numbers per feature replace one comparison per rule: a pass costs O(rows·d),
    not O(rows·rules).
    """
    out = {}
    for lit in rules:
        j, op, cut = int(grid.feature[lit]), int(grid.op[lit]), grid.threshold(lit)
        a, b, nan_taken = out.get(j, (-np.inf, np.inf, False))
        if op == 0:
            a = max(a, cut)
        elif op == 1:
            b = min(b, cut)
        else:
            nan_taken = True
        out[j] = (a, b, nan_taken)
    return out


def _fires(column, op, cut):
    """Rows a literal fires on, from raw values (x ≤ cut_k ⇔ bin ≤ k; NaN fires only
    "missing")."""
    with np.errstate(invalid="ignore"):
        return np.isnan(column) if op == 2 else (column <= cut) if op == 0 else (
            column > cut)


def _newly_covered(xb, grid, rules):
    """Row indices of a chunk that the last rule of ``rules`` fires on and no earlier one
    does. The last rule's comparison runs on every row; the earlier rules' constraints
    (:func:`_remaining_constraints`) only on the rows it fires on, a few comparisons
    each, so a pass reads one column in full and the others on those rows only."""
    last = rules[-1]
    rows = np.flatnonzero(_fires(xb[:, int(grid.feature[last])], int(grid.op[last]),
                                 grid.threshold(last)))
    for j, (a, b, nan_taken) in _remaining_constraints(grid, rules[:-1]).items():
        if rows.size == 0:
            break
        column = xb[rows, j]
        with np.errstate(invalid="ignore"):
            # taken: x ≤ a or x > b (both false on NaN), or NaN if a rule took it
            taken = np.isnan(column) if nan_taken else np.zeros(rows.size, dtype=bool)
            if a > -np.inf:
                taken |= column <= a
            if b < np.inf:
                taken |= column > b
        rows = rows[~taken]
    return rows


def _chunk_histogram(xb, yb, grid, classes, rules, check):
    """Histogram of the rows of one chunk that no rule of ``rules[:-1]`` fires on and
    (if ``rules``) the last one does. ``check``: refuse non-finite values (NaN apart)
    and labels outside ``classes`` (messages name no value)."""
    xb = np.asarray(xb, dtype=np.float64)
    yb = np.asarray(yb)
    if not rules:  # every value is read: contiguous (a chunk may be a strided view)
        xb = np.ascontiguousarray(xb)
    if check:
        if np.isinf(xb).any():
            raise ValueError("X contains infinity; only NaN (missing) is accepted.")
        codes = np.searchsorted(classes, yb)
        inside = codes < classes.size
        if not (inside.all() and np.all(classes[np.where(inside, codes, 0)] == yb)):
            raise ValueError("y has labels outside the public classes.")
    if not rules:
        return class_histogram(grid.bins(xb), np.searchsorted(classes, yb), grid.n_bins,
                               classes.size)
    # Only the rows the new rule covers are binned: each row is binned in one rule pass
    # at most, and a pass costs one full-column comparison plus work on those rows.
    rows = _newly_covered(xb, grid, tuple(rules))
    return class_histogram(grid.bins(xb[rows]), np.searchsorted(classes, yb[rows]),
                           grid.n_bins, classes.size)


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
        # The chunks' delayed handles, built once: every pass maps over the same ones.
        # Not optimised: dask fuses each collection's graph on its own, so X's and y's
        # chunks would each carry a copy of any shared upstream task (a generated or
        # loaded block with the label in one column would be produced twice per pass).
        self._blocks = list(zip(self.X.to_delayed(optimize_graph=False).ravel(),
                                self.y.to_delayed(optimize_graph=False).ravel(), strict=True))

    def _pass(self, rules, check=False):
        import dask

        tasks = [dask.delayed(_chunk_histogram)(xb, yb, self.grid, self.classes,
                                                tuple(rules), check)
                 for xb, yb in self._blocks]
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
