"""The count kernels of the dask rule passes (issue 27) against naive, rule-by-rule counts.

The dask path's released list equals the in-memory one (tests/decision_list/
test_thresholds.py); these tests pin the two shortcuts that make a pass fast: the bins by
comparisons, and the rows a new rule covers from three numbers per feature.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from skdp.decision_list._dask import _chunk_histogram, _newly_covered
from skdp.decision_list._thresholds import ArrayRows, make_grid


def _values(rng, n, d, cuts):
    """Uniform values around the bounds, NaN, ±inf and values equal to cuts (ties)."""
    X = rng.uniform(-2, 12, size=(n, d))
    X[rng.random((n, d)) < 0.1] = np.nan
    ties = rng.random((n, d)) < 0.1
    for j in range(d):
        X[ties[:, j], j] = rng.choice(cuts[j], ties[:, j].sum())
    X[rng.random((n, d)) < 0.02] = np.inf
    X[rng.random((n, d)) < 0.02] = -np.inf
    return X


def _naive_bins(grid, X):
    out = np.stack([np.searchsorted(c, X[:, j], side="left") for j, c in enumerate(grid.cuts)],
                   axis=1)
    out[np.isnan(X)] = grid.n_bins - 1
    return out


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), d=st.integers(1, 5),
       n_cuts=st.sampled_from([1, 3, 32, 64, 65, 200]), shared=st.booleans(),
       fortran=st.booleans())
def test_bins_equal_binary_search(seed, d, n_cuts, shared, fortran):
    rng = np.random.default_rng(seed)
    if shared:
        grid = make_grid((0.0, 10.0), n_cuts, "linear", d)
    else:  # per-feature grids of different lengths and scales
        grid = make_grid(None, [np.sort(rng.uniform(0, 10, rng.integers(1, n_cuts + 1)))
                                for _ in range(d)], "linear", d)
    X = _values(rng, 500, d, grid.cuts)
    X = np.asfortranarray(X) if fortran else X
    np.testing.assert_array_equal(grid.bins(X), _naive_bins(grid, X))
    assert grid.bins(X[:0]).shape == (0, d)


def _naive_newly_covered(X, grid, rules):
    remaining = np.ones(X.shape[0], dtype=bool)
    for position, lit in enumerate(rules):
        column, cut = X[:, grid.feature[lit]], grid.threshold(lit)
        with np.errstate(invalid="ignore"):
            fires = (np.isnan(column) if grid.op[lit] == 2 else
                     column <= cut if grid.op[lit] == 0 else column > cut)
        if position == len(rules) - 1:
            return np.flatnonzero(remaining & fires)
        remaining &= ~fires


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), d=st.integers(1, 4), n_rules=st.integers(1, 12))
def test_newly_covered_rows_equal_rule_by_rule(seed, d, n_rules):
    """Any rule sequence (repeats, contradictions, "missing" included)."""
    rng = np.random.default_rng(seed)
    grid = make_grid((0.0, 10.0), 5, "linear", d)
    X = _values(rng, 400, d, grid.cuts)
    X[np.isinf(X)] = 3.0  # the dask path refuses infinity in its first pass
    rules = tuple(int(r) for r in rng.integers(0, grid.n_literals, n_rules))
    np.testing.assert_array_equal(_newly_covered(X, grid, rules),
                                  _naive_newly_covered(X, grid, rules))


def test_chunk_histograms_add_up_to_the_in_memory_passes():
    """Each pass over chunks returns what ArrayRows.take returns for the same rule."""
    rng = np.random.default_rng(7)
    d, classes = 3, np.array([0, 1, 2])
    grid = make_grid((0.0, 10.0), 8, "linear", d)
    X = _values(rng, 3000, d, grid.cuts)
    X[np.isinf(X)] = 11.0
    y = rng.integers(0, 3, 3000)
    memory = ArrayRows(X, y, grid, classes.size)
    chunks = np.array_split(np.arange(3000), 7)

    def over_chunks(rules, check=False):
        return sum(_chunk_histogram(X[c], y[c], grid, classes, rules, check) for c in chunks)

    np.testing.assert_array_equal(over_chunks((), check=True), memory.start())
    rules = ()
    for lit in rng.choice(grid.n_literals, 10, replace=False):
        rules += (int(lit),)
        np.testing.assert_array_equal(over_chunks(rules), memory.take(int(lit)))
