"""RealThresholds / RealIntervals: the public discretisation of a real feature (monotone,
clipping, bad input), exact ERM against the finite class on bin indices, Ldim."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skdp.hypotheses import (
    FiniteClass,
    RealIntervals,
    RealThresholds,
    interval_class,
    littlestone_dimension,
    threshold_class,
    version_space,
)

reals = st.floats(-1e6, 1e6, allow_nan=False)
bounds = st.tuples(st.floats(-1e3, 1e3), st.floats(1e-3, 1e3)).map(lambda b: (b[0], b[0] + b[1]))
bins = st.integers(2, 1000)


@given(bounds, bins, st.lists(reals, min_size=1, max_size=50))
def test_to_domain_is_monotone_in_range_and_clips(b, n_bins, xs):
    h = RealThresholds(bounds=b, n_bins=n_bins)
    x = np.sort(np.asarray(xs))
    idx = h.to_domain(x[:, None])
    assert idx.dtype == np.intp and idx.shape == x.shape
    assert np.all(np.diff(idx) >= 0)  # monotone
    assert idx.min() >= 0 and idx.max() < n_bins
    lo, hi = b
    np.testing.assert_array_equal(idx, h.to_domain(np.clip(x, lo, hi)[:, None]))  # clipping
    assert np.all(idx[x <= lo] == 0) and np.all(idx[x >= hi] == n_bins - 1)


@given(bounds, bins)
def test_bins_follow_the_public_edges(b, n_bins):
    h = RealThresholds(bounds=b, n_bins=n_bins)
    edges = h.bin_edges
    mids = 0.5 * (edges[:-1] + edges[1:])
    np.testing.assert_array_equal(h.to_domain(mids[:, None]), np.arange(n_bins))


@pytest.mark.parametrize("X", [np.array([[np.nan]]), np.array([[0.5], [np.inf]]),
                               np.array([[-np.inf]])])
def test_non_finite_refused_without_printing_values(X):
    with pytest.raises(ValueError, match="finite") as info:
        RealThresholds().to_domain(X)
    assert "nan" not in str(info.value).lower().replace("nan or inf", "")


@pytest.mark.parametrize("X", [np.zeros(3), np.zeros((3, 2)), np.zeros((1, 1, 1))])
def test_wrong_shape_refused(X):
    with pytest.raises(ValueError, match=r"shape \(n, 1\)"):
        RealThresholds().to_domain(X)


def test_non_numeric_refused():
    with pytest.raises(ValueError, match="real numbers"):
        RealThresholds().to_domain([["a"]])


@pytest.mark.parametrize("cls", [RealThresholds, RealIntervals])
@pytest.mark.parametrize(("kw", "match"), [
    ({"bounds": (1.0, 1.0)}, "lo < hi"), ({"bounds": (2.0, 1.0)}, "lo < hi"),
    ({"bounds": (0.0, np.inf)}, "finite"), ({"bounds": (np.nan, 1.0)}, "finite"),
    ({"bounds": 3.0}, "pair"), ({"bounds": (0, 1, 2)}, "pair"),
    ({"n_bins": 1}, "n_bins"), ({"n_bins": 0}, "n_bins"), ({"n_bins": 2.5}, "n_bins"),
    ({"n_bins": True}, "n_bins"),
])
def test_bad_parameters_refused(cls, kw, match):
    with pytest.raises(ValueError, match=match):
        cls(**kw)


def _brute_force_erm(finite, idx, y, forced_idx=None, forced_y=None):
    L = finite.label_matrix
    err = np.count_nonzero(L[:, idx] != y[None, :], axis=1).astype(float)
    if forced_idx is not None:
        err += (len(y) + 1) * np.count_nonzero(L[:, forced_idx] != forced_y[None, :], axis=1)
    return err


@given(st.integers(2, 12), st.lists(st.tuples(st.floats(-2, 3), st.sampled_from([-1, 1])),
                                    min_size=1, max_size=25))
def test_erm_is_exact_over_the_finite_class(n_bins, rows):
    x = np.array([r[0] for r in rows])[:, None]
    y = np.array([r[1] for r in rows])
    for h, finite in [(RealThresholds((0.0, 1.0), n_bins), threshold_class(n_bins)),
                      (RealIntervals((0.0, 1.0), n_bins), interval_class(n_bins))]:
        params = h.fit_blocks(x, y, np.zeros(len(y), dtype=int), 1)
        got = np.count_nonzero(h.predict_blocks(params, x)[0] != y)
        assert got == _brute_force_erm(finite, h.to_domain(x), y).min()


def test_erm_over_blocks_with_forced_labels(rng):
    h = RealThresholds((0.0, 1.0), 8)
    x = rng.random((60, 1))
    y = np.where(x[:, 0] >= 0.4, 1, -1)
    blocks = np.repeat(np.arange(3), 20)
    forced_X, forced_y = np.array([[0.1]]), np.array([1])
    params = h.fit_blocks(x, y, blocks, 3, forced_X=forced_X, forced_y=forced_y)
    assert params.shape == (3,) and np.all(params == 0)  # x = 0.1 forced +1: all +1
    assert np.all(h.predict_blocks(params, forced_X) == 1)
    free = h.fit_blocks(x, y, blocks, 3)
    assert np.all(np.abs(free - round(0.4 * 8)) <= 1)


def test_littlestone_dimensions_and_finite_classes():
    for n in (2, 7, 256, 2**16):
        h = RealThresholds(n_bins=n)
        assert h.littlestone_dimension == math.floor(math.log2(n + 1))
        assert littlestone_dimension(h) == h.littlestone_dimension
        assert version_space(h).n_domain == n
    assert RealThresholds(n_bins=5).finite_class().label_matrix.shape == (6, 5)
    small = RealIntervals(n_bins=6)
    assert small.littlestone_dimension == littlestone_dimension(interval_class(6),
                                                                max_hypotheses=200) == 4
    assert isinstance(small.finite_class(), FiniteClass)
    with pytest.raises(ValueError, match="n_bins ≤ 15"):
        _ = RealIntervals(n_bins=64).littlestone_dimension
    assert repr(RealThresholds((0, 2), 4)) == "RealThresholds(bounds=(0.0, 2.0), n_bins=4)"
