"""MeanThresholds: the online learners' default class over d real features."""

import math
import warnings

import numpy as np
import pytest

from skdp.hypotheses import (
    MeanThresholds,
    littlestone_dimension,
    threshold_class,
    two_sided_threshold_class,
)


def test_to_domain_bins_the_clipped_rescaled_mean():
    h = MeanThresholds(bounds=(0.0, 10.0), n_bins=4)
    X = np.array([[0.0, 1.0], [5.0, 5.0], [20.0, 9.0], [-3.0, -3.0], [10.0, 10.0]])
    # means of the rescaled, clipped rows: 0.05, 0.5, 0.95, 0, 1 -> bins 0, 2, 3, 0, 3
    np.testing.assert_array_equal(h.to_domain(X), [0, 2, 3, 0, 3])


def test_per_feature_bounds_are_the_diffprivlib_form(rng):
    lower, upper = np.array([0.0, -5.0, 100.0]), np.array([1.0, 5.0, 300.0])
    X = rng.uniform(lower - 1, upper + 1, size=(200, 3))
    per_feature = MeanThresholds(bounds=(lower, upper), n_bins=8).to_domain(X)
    unit = (np.clip(X, lower, upper) - lower) / (upper - lower)  # the same map, by hand
    np.testing.assert_array_equal(per_feature, np.minimum(np.floor(8 * unit.mean(1)), 7))
    with pytest.raises(ValueError, match="one entry per feature"):
        MeanThresholds(bounds=(lower, upper)).to_domain(X[:, :2])


def test_default_bounds_are_minus_one_one_and_monotone(rng):
    h = MeanThresholds()
    assert h.bounds is None and h.n_bins == 16
    lo, hi = h.resolve_bounds(3)
    np.testing.assert_array_equal(lo, -1.0)
    np.testing.assert_array_equal(hi, 1.0)
    X = rng.normal(size=(500, 3))
    bins = h.to_domain(X)
    assert bins.min() >= 0 and bins.max() < 16
    bigger = X.copy()
    bigger[:, 1] += rng.uniform(0, 2, size=500)
    assert np.all(h.to_domain(bigger) >= bins)  # monotone in every feature


def test_warning_comes_from_the_parameters_only():
    with pytest.warns(UserWarning, match="no public bounds"):
        MeanThresholds().check_features(3, "Owner")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MeanThresholds(bounds=(0, 1)).check_features(3, "Owner")


def test_the_class_is_thresholds_both_ways():
    n = 6
    L = two_sided_threshold_class(n).label_matrix
    assert L.shape == (2 * n, n)
    assert len({row.tobytes() for row in L}) == 2 * n  # distinct hypotheses
    up = threshold_class(n).label_matrix
    np.testing.assert_array_equal(L[: n + 1], up)
    np.testing.assert_array_equal(L[n + 1:], -up[1:n])
    assert MeanThresholds(n_bins=n).finite_class().n_hypotheses == 2 * n


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 16])
def test_littlestone_dimension_between_the_bounds(n):
    got = MeanThresholds(n_bins=n).littlestone_dimension
    assert got == littlestone_dimension(two_sided_threshold_class(n))
    assert int(math.log2(n + 1)) <= got <= int(math.log2(2 * n))
    if n & (n - 1) == 0:
        assert got == int(math.log2(2 * n))


def test_erm_fits_a_separable_sample_exactly(rng):
    h = MeanThresholds(bounds=(-1.0, 1.0), n_bins=8)
    X = rng.uniform(-1, 1, size=(300, 2))
    y = np.where(h.to_domain(X) < 5, 1, -1)  # "bin < 5": a complement threshold
    params = h.fit_blocks(X, y, np.zeros(300, dtype=int), 1)
    np.testing.assert_array_equal(h.predict_blocks(params, X)[0], y)


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(n_bins=1), "n_bins"), (dict(n_bins=2.5), "n_bins"), (dict(n_bins=True), "n_bins"),
    (dict(bounds=(0.0,)), "bounds"), (dict(bounds="ab"), "bounds"),
])
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MeanThresholds(**kwargs)


@pytest.mark.parametrize("X", [[[0.0], [np.nan]], [[np.inf, 0.0]], np.zeros((2, 0)), [1.0]])
def test_bad_input_names_no_value(X):
    with pytest.raises(ValueError, match="MeanThresholds") as err:
        MeanThresholds(bounds=(0, 1)).to_domain(X)
    assert "nan" not in str(err.value).lower().replace("nan or inf", "")
