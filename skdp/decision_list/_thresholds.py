"""Rule lists over real-valued features: public cut grids, binned counts, the threshold cover.

With ``DPDecisionListClassifier(bounds=(lower, upper))`` the literals of the list are
"x_j ≤ t", "x_j > t" over a **public** grid of cut points t of each feature, and
"x_j is missing" (NaN) for every feature. Comparisons with NaN are false, so a missing
value fires only the missing literal. The grid comes from the bounds, the number of cuts
and the spacing (or from the user's own cut lists) — never from the data — so the
candidate set is public and each rule step is the same exponential mechanism over more
candidates (its utility pays log(#candidates); its privacy is unchanged).

Counting. Each value is replaced by its *bin*, the number of cuts strictly below it
(0 … G_j; NaN gets the last bin B − 1). For a block of rows, :func:`class_histogram`
returns the (feature × bin × class) weights: one pass of O(rows·d). Every literal's
per-class count is a prefix or suffix sum of that histogram
(:func:`literal_counts`), so the cover keeps the histogram of the *remaining* rows and
subtracts the histogram of the rows each new rule covers: a whole fit is
O(n·d + K·d·B·C). :func:`class_histogram` is a function of a block of rows only, and
sums over blocks: the map step of a map-reduce over chunks (the reduce is ``+``).
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "LITERAL_OPS",
    "ArrayRows",
    "ThresholdGrid",
    "class_histogram",
    "literal_counts",
    "make_grid",
    "threshold_cover",
    "threshold_regions",
]

#: Operators of a threshold literal, by code: "x ≤ t", "x > t", "x is missing".
LITERAL_OPS = ("<=", ">", "missing")

# A log-spaced grid covers three decades above the lower bound: cut k sits at
# lower + (upper − lower)·r_k with r geometric from 10⁻³ to 1 (exclusive).
_LOG_DECADES = 3.0

# Grids of at most this many cuts per feature are binned by comparisons (cost ∝ cuts),
# longer ones by binary search (cost ∝ log cuts, but ~5× more per step on this data).
_COMPARE_CUTS = 64


class ThresholdGrid:
    """The public literals of a real-valued rule list (plain container).

    Attributes
    ----------
    cuts : list of ndarray
        Sorted, distinct cut points of each feature.
    n_bins : int
        B = max_j G_j + 2: bins 0 … G_j hold values, bin B − 1 holds NaN.
    feature, op, cut_index : ndarray of intp
        For each literal: its feature, operator code (index into :data:`LITERAL_OPS`)
        and cut position (−1 for "missing"). Literals are feature-major: the G_j
        "≤" literals, the G_j ">" literals, then "missing".
    """

    __slots__ = ("cut_index", "cuts", "feature", "n_bins", "op")

    def __init__(self, cuts):
        self.cuts = [np.asarray(c, dtype=np.float64) for c in cuts]
        sizes = np.array([c.size for c in self.cuts], dtype=np.intp)
        self.n_bins = int(sizes.max(initial=0)) + 2
        feature, op, cut_index = [], [], []
        for j, g in enumerate(sizes):
            ks = np.arange(g)
            feature += [np.full(2 * g + 1, j)]
            op += [np.r_[np.zeros(g), np.ones(g), 2]]
            cut_index += [np.r_[ks, ks, -1]]
        cat = lambda parts: (np.concatenate(parts) if parts else np.empty(0)).astype(np.intp)  # noqa: E731
        self.feature, self.op, self.cut_index = cat(feature), cat(op), cat(cut_index)

    @property
    def n_literals(self):
        return int(self.feature.size)

    def threshold(self, literal):
        """The cut of a literal (NaN for "missing")."""
        k = int(self.cut_index[literal])
        return float(self.cuts[int(self.feature[literal])][k]) if k >= 0 else float("nan")

    def bins(self, X):
        """(n, d) bin of every value: #cuts < x, NaN → B − 1 (uint8 when B ≤ 256)."""
        dtype = np.uint8 if self.n_bins <= 256 else np.uint16
        X = np.asarray(X, dtype=np.float64)
        if self.n_bins - 2 <= _COMPARE_CUTS and X.size:
            # #cuts < x as a sum of vectorised comparisons with each feature's k-th cut
            # (padded with +inf, which no value exceeds): exact like searchsorted, and a
            # few times faster for short grids (no branchy per-value binary search).
            # One cut list for every feature: compare the block with scalars as it is;
            # else feature-major (d, n), so that every comparison runs along rows.
            padded = self._padded_cuts()
            shared = bool(np.all(padded == padded[:, :1]))
            # (contiguous either way: on a strided view, numpy's inner loops would run
            # over one row's few values at a time, several times slower)
            if shared:
                values = X if X.flags.c_contiguous or X.flags.f_contiguous else (
                    np.ascontiguousarray(X))
            else:
                values = np.ascontiguousarray(X.T)
            out = np.zeros_like(values, dtype=dtype)
            above = np.empty_like(values, dtype=bool)
            with np.errstate(invalid="ignore"):
                for kth in padded:
                    np.greater(values, kth[0] if shared else kth[:, None], out=above)
                    out += above.view(np.uint8)
            out[np.isnan(values)] = self.n_bins - 1
            return out if shared else out.T
        out = np.empty(X.shape, dtype=dtype)
        for j, cuts in enumerate(self.cuts):
            column = X[:, j]
            b = np.searchsorted(cuts, column, side="left")
            b[np.isnan(column)] = self.n_bins - 1
            out[:, j] = b
        return out

    def _padded_cuts(self):
        """(G_max, d) cut matrix: row k holds every feature's k-th cut (+inf past its
        last)."""
        padded = np.full((self.n_bins - 2, len(self.cuts)), np.inf)
        for j, cuts in enumerate(self.cuts):
            padded[:cuts.size, j] = cuts
        return padded


def _check_cut_list(cuts, j):
    c = np.asarray(cuts, dtype=np.float64).ravel()
    if c.size == 0 or not np.all(np.isfinite(c)):
        raise ValueError(f"cuts[{j}] must be a non-empty list of finite numbers.")
    c = np.unique(c)
    if c.size > 65_000:
        raise ValueError(f"cuts[{j}] has {c.size} cut points; at most 65000 are supported.")
    return c


def make_grid(bounds, cuts, cut_scale, n_features):
    """The public :class:`ThresholdGrid` from ``bounds``, ``cuts`` and ``cut_scale``.

    Parameters
    ----------
    bounds : (lower, upper) or None
        Scalars or arrays of shape (n_features,), lower < upper.
    cuts : int, sequence of numbers, or sequence of n_features array-likes
        An int G: G cuts strictly inside each feature's bounds, at
        lower + (upper − lower)·r_k with r_k = k/(G + 1) (``cut_scale="linear"``) or
        r_k geometric from 10⁻³ to 1, both ends excluded (``"log"``, for quantities
        skewed towards the lower bound). A sequence of numbers: the same public cut points
        for every feature; a sequence of sequences: each feature's own (``bounds`` is then
        not needed).
    cut_scale : {"linear", "log"} or sequence of those, one per feature
    n_features : int

    Raises
    ------
    ValueError
        On malformed public parameters (no data is involved).
    """
    if not isinstance(cuts, numbers.Integral):
        if all(isinstance(c, numbers.Real) for c in cuts):  # one list for every feature
            shared = _check_cut_list(cuts, "*")
            return ThresholdGrid([shared] * n_features)
        if len(cuts) != n_features:
            raise ValueError(f"cuts has {len(cuts)} cut lists; X has {n_features} features.")
        return ThresholdGrid([_check_cut_list(c, j) for j, c in enumerate(cuts)])
    if bounds is None:
        raise ValueError("bounds=(lower, upper) is needed to place cuts=<int> cut points.")
    lower, upper = (np.broadcast_to(np.asarray(b, dtype=np.float64), (n_features,))
                    for b in _unpack_bounds(bounds, n_features))
    if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))
            and np.all(lower < upper)):
        raise ValueError("bounds must be finite with lower < upper for every feature.")
    scales = ([cut_scale] * n_features if isinstance(cut_scale, str) else list(cut_scale))
    if len(scales) != n_features or any(s not in ("linear", "log") for s in scales):
        raise ValueError(
            "cut_scale must be 'linear', 'log', or one of those per feature "
            f"({n_features} features).")
    g = int(cuts)
    linear = np.arange(1, g + 1) / (g + 1)
    log = np.geomspace(10.0**-_LOG_DECADES, 1.0, g + 2)[1:-1]
    return ThresholdGrid([
        np.unique(lo + (hi - lo) * (log if s == "log" else linear))
        for lo, hi, s in zip(lower, upper, scales, strict=True)])


def _unpack_bounds(bounds, n_features):
    try:
        lower, upper = bounds
    except (TypeError, ValueError):
        raise ValueError("bounds must be a pair (lower, upper) of scalars or arrays "
                         f"of shape ({n_features},).") from None
    for b in (lower, upper):
        shape = np.shape(b)
        if shape not in ((), (n_features,)):
            raise ValueError(f"bounds entries must be scalars or of shape ({n_features},); "
                             f"got shape {shape}.")
    return lower, upper


def class_histogram(bins, codes, n_bins, n_classes, weights=None):
    """(d, B, C) int64 weights of the rows of one block by feature, bin and class.

    The map step of the count passes: blocks' histograms add up to the whole table's
    (this function itself sums over row chunks of about 2²² cells to bound memory).
    ``weights``: integer row weights (units) or ``None`` (every row counts 1).
    """
    n, d = bins.shape
    C = int(n_classes)
    out = np.zeros(d * n_bins * C, dtype=np.int64)
    offsets = (np.arange(d, dtype=np.int64) * n_bins)[None, :]
    step = max(1, (1 << 22) // max(d, 1))
    for start in range(0, n, step):
        rows = slice(start, start + step)
        # flat cell of (row, feature): (j·B + bin)·C + class
        cells = (bins[rows].astype(np.int64) + offsets) * C \
            + np.asarray(codes[rows], np.int64)[:, None]
        w = None if weights is None else np.repeat(np.asarray(weights[rows], np.float64), d)
        # float sums of integer weights are exact below 2⁵³ (units of 2⁻²⁰, ≤ 2³³ rows)
        out += np.bincount(cells.ravel(), weights=w, minlength=out.size).astype(np.int64)
    return out.reshape(d, n_bins, C)


def literal_counts(hist, grid):
    """(L, C) weights of the rows each literal of ``grid`` fires on, from a histogram."""
    values = np.cumsum(hist[:, :-1], axis=1)  # ≤ bin k, NaN excluded
    total = values[:, -1]  # all non-missing rows of the feature
    f, op, k = grid.feature, grid.op, grid.cut_index
    out = np.empty((f.size, hist.shape[2]), dtype=np.int64)
    le, gt, miss = op == 0, op == 1, op == 2
    out[le] = values[f[le], k[le]]
    out[gt] = total[f[gt]] - values[f[gt], k[gt]]
    out[miss] = hist[f[miss], -1]
    return out


def _fires(bins_column, op, k, n_bins):
    """Rows a literal fires on, from its feature's bins (bin ≤ k ⇔ x ≤ cut k)."""
    if op == 2:
        return bins_column == n_bins - 1
    value = bins_column != n_bins - 1
    return value & (bins_column <= k) if op == 0 else value & (bins_column > k)


def threshold_regions(X, rules, n_rules_max=None):
    """Index of each row's region under threshold rules (feature, op, cut): its first
    firing rule, or ``len(rules)`` if none. O(n·K)."""
    n = X.shape[0]
    region = np.full(n, len(rules), dtype=np.intp)
    open_rows = np.ones(n, dtype=bool)
    for r, (j, op, t) in enumerate(rules):
        column = X[:, j]
        with np.errstate(invalid="ignore"):
            fires = (np.isnan(column) if op == 2 else
                     (column <= t) if op == 0 else (column > t))
        fires &= open_rows
        region[fires] = r
        open_rows &= ~fires
    return region


def _dominated(grid, literal):
    """Literals of the same feature and direction that fire only where ``literal`` does."""
    same = (grid.feature == grid.feature[literal]) & (grid.op == grid.op[literal])
    k = grid.cut_index[literal]
    if grid.op[literal] == 0:
        return same & (grid.cut_index <= k)
    if grid.op[literal] == 1:
        return same & (grid.cut_index >= k)
    return same


class ArrayRows:
    """In-memory rows for :func:`threshold_cover`: bins, codes, weights, remaining mask."""

    def __init__(self, X, codes, grid, n_classes, weights=None):
        self.bins = grid.bins(X)
        self.codes = np.asarray(codes)
        self.weights = weights
        self.grid, self.n_classes = grid, int(n_classes)
        self.remaining = np.ones(self.bins.shape[0], dtype=bool)

    def start(self):
        """The (d, B, C) histogram of all rows (one pass)."""
        return class_histogram(self.bins, self.codes, self.grid.n_bins, self.n_classes,
                               self.weights)

    def take(self, literal):
        """Remove the remaining rows ``literal`` fires on; return their histogram."""
        grid = self.grid
        j = int(grid.feature[literal])
        fires = _fires(self.bins[:, j], int(grid.op[literal]), int(grid.cut_index[literal]),
                       grid.n_bins)
        newly = np.flatnonzero(self.remaining & fires)
        self.remaining[newly] = False
        wn = None if self.weights is None else np.asarray(self.weights)[newly]
        return class_histogram(self.bins[newly], self.codes[newly], grid.n_bins,
                               self.n_classes, wn)


def threshold_cover(rows, n_classes, grid, *, max_rules, select, scorer,
                    stop_when_empty=False):
    """The greedy cover on threshold literals.

    Parameters
    ----------
    rows : ArrayRows or DaskRows
        The data: ``rows.start()`` gives the (d, B, C) histogram of all rows and
        ``rows.take(literal)`` removes the remaining rows a literal fires on and returns
        their histogram — one count pass each, over memory or over a dask cluster's
        chunks (:class:`._dask.DaskRows`).
    grid : ThresholdGrid
    max_rules : int
        Rule steps (fewer only if every literal is used, or ``stop_when_empty``).
    select : callable
        ``select(scores, coverage)`` → chosen position in the flattened (literal, label)
        scores of the available literals, or −1 to stop (non-private use only).
    scorer : callable
        ``scorer(block, totals)`` → (L, C) scores from the literals' per-class weights and
        the remaining rows' per-class weights (:func:`._greedy_cover.rule_scores`).
    stop_when_empty : bool
        Stop once no row remains (non-private use only).

    Returns
    -------
    literals, labels : ndarray of intp
        The rules' literal indices and label codes.
    n_steps : int
    region_counts : ndarray of int64 of shape (len(literals) + 1, C)
        The weight of the rows each rule reaches first, per class, and (last row) of
        the rows no rule reaches: each row's histogram over any one feature's bins sums
        to its class totals.
    """
    C = int(n_classes)
    hist = rows.start()

    def class_totals(h):
        return h[0].sum(axis=0) if h.shape[0] else np.zeros(C, np.int64)

    totals = class_totals(hist)
    available = np.ones(grid.n_literals, dtype=bool)
    literals, labels, regions, steps = [], [], [], 0
    for _ in range(min(int(max_rules), grid.n_literals)):
        if stop_when_empty and totals.sum() == 0:
            break
        avail_idx = np.flatnonzero(available)
        if avail_idx.size == 0:  # every literal used or left empty (a public fact)
            break
        block = literal_counts(hist, grid)[avail_idx]
        scores = scorer(block, totals)
        pick = int(select(scores.ravel(), np.repeat(block.sum(axis=1), C)))
        if pick < 0:
            break
        steps += 1
        cand, label = divmod(pick, C)
        lit = int(avail_idx[cand])
        literals.append(lit)
        labels.append(label)
        # Literals the new rule leaves empty go too: after "x_j ≤ t_k" no remaining row
        # has x_j ≤ t_k' for k' ≤ k (after "x_j > t_k", none has x_j > t_k' for k' ≥ k).
        # A function of the released rules and the public grid: the candidate set of
        # every step stays public.
        available[lit] = False
        available[_dominated(grid, lit)] = False
        covered = rows.take(lit)
        hist -= covered
        regions.append(class_totals(covered))
        totals = totals - regions[-1]
    regions.append(totals)
    return (np.asarray(literals, dtype=np.intp), np.asarray(labels, dtype=np.intp), steps,
            np.array(regions, dtype=np.int64).reshape(-1, C))
