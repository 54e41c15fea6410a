"""Unit, sampler and accuracy tests for the stable / private histogram."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from skdp.exceptions import PrivacyParameterError
from skdp.mechanisms.histogram import (
    HistogramRelease,
    StableHistogram,
    _truncated_discrete_laplace,
    discrete_laplace_tail,
    private_histogram,
    private_histogram_error,
    stable_histogram,
    stable_histogram_min_size,
    truncated_discrete_laplace_edge_mass,
)
from skdp.mechanisms.laplace import _rational_scale, discrete_laplace

ALPHA = 1e-6


def _p(scale):
    t, s = _rational_scale(scale)
    return math.exp(-s / t)


def _pmf(scale, z):
    p = _p(scale)
    return (1 - p) / (1 + p) * p ** np.abs(z)


# --- closed forms -----------------------------------------------------------------


@pytest.mark.parametrize("scale", [0.3, 1.0, 2.0, 7.5])
@pytest.mark.parametrize("m", [-5, -1, 0, 1, 3, 10])
def test_discrete_laplace_tail_matches_pmf_sum(scale, m):
    z = np.arange(m, m + 20000)
    assert discrete_laplace_tail(scale, m) == pytest.approx(_pmf(scale, z).sum(), rel=1e-9)


@pytest.mark.parametrize("m", [0, 1, 2, 5])
def test_discrete_laplace_tail_matches_sampler(m):
    scale, n = 2.0, 200_000
    z = discrete_laplace(scale, size=n, random_state=11)
    k = int((z >= m).sum())
    lo, hi = stats.binom.ppf([ALPHA / 2, 1 - ALPHA / 2], n, discrete_laplace_tail(scale, m))
    assert lo <= k <= hi


@pytest.mark.parametrize("scale", [0.5, 2.0, 20.0])
@pytest.mark.parametrize("bound", [0, 1, 4, 30])
def test_edge_mass_closed_form(scale, bound):
    z = np.arange(-bound, bound + 1)
    w = _pmf(scale, z)
    expected = w[-1] / w.sum()
    assert truncated_discrete_laplace_edge_mass(scale, bound) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("epsilon", [0.01, 0.1, 1.0, 3.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-6, 1e-3, 0.3])
def test_truncation_is_the_smallest_valid(epsilon, delta):
    h = StableHistogram(epsilon, delta, random_state=0)
    a = h.noise_bound
    assert 2 * truncated_discrete_laplace_edge_mass(h.noise_scale, a) <= delta
    if a > 0:
        assert 2 * truncated_discrete_laplace_edge_mass(h.noise_scale, a - 1) > delta * (1 - 1e-8)
    assert h.max_error() == 2 * a + 1


@pytest.mark.parametrize("epsilon", [0.005, 0.01, 0.05, 0.1, 0.5, 1.0])
@pytest.mark.parametrize("delta", [1e-15, 1e-10, 1e-6, 1e-3, 1e-2, 0.1, 0.5])
def test_error_within_li_wang_ye_theorem_2_6(epsilon, delta):
    # Thm 2.6: sup error ≤ 8 ln(8/δ)/ε with probability 1 (for ε ≤ 1).
    assert private_histogram_error(epsilon, delta) <= 8 * math.log(8 / delta) / epsilon


# --- sampler --------------------------------------------------------------------


@pytest.mark.parametrize(("epsilon", "delta"), [(1.0, 1e-2), (0.5, 1e-3), (4.0, 0.2)])
def test_truncated_sampler_distribution(epsilon, delta):
    h = StableHistogram(epsilon, delta, random_state=0)
    scale, a, n = h.noise_scale, h.noise_bound, 200_000
    z = _truncated_discrete_laplace(scale, a, n, np.random.default_rng(5))
    assert np.abs(z).max() <= a
    support = np.arange(-a, a + 1)
    probs = _pmf(scale, support)
    probs /= probs.sum()
    observed = np.bincount(z + a, minlength=support.size)
    expected = probs * n
    # pool tiny cells into their neighbours so every expected count is ≥ 5
    keep = expected >= 5
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    assert stats.chisquare(obs, exp).pvalue > ALPHA


# --- behaviour ------------------------------------------------------------------


def test_release_contents_and_bounds():
    data = np.array([7] * 200 + [3] * 40 + [9] * 1 + [5] * 2)
    rel = stable_histogram(data, 1.0, 1e-6, random_state=0)
    assert isinstance(rel, HistogramRelease)
    assert 7 in rel and 9 not in rel and 5 not in rel
    assert rel.count(9) == 0 and rel.count(12345) == 0
    assert list(rel.items) == sorted(rel.items)
    assert np.all(rel.counts >= rel.threshold)
    true = {7: 200, 3: 40}
    for item, c in rel.to_dict().items():
        assert abs(c - true[item]) <= rel.noise_bound


def test_count_one_items_never_released():
    h = StableHistogram(2.0, 0.4, random_state=1)  # smallest threshold we can get
    out = h.simulate([0, 1, 1], 20_000, [0, 1, 2])
    assert h._threshold(3) == h.noise_bound + 2
    assert not out[:, 0].any() and not out[:, 2].any()


def test_private_histogram_error_holds_with_probability_one():
    eps, delta = 0.5, 1e-3
    h = StableHistogram(eps, delta, random_state=3)
    bound = h.max_error()
    counts = np.array([0, 1, bound // 2, bound - 1, bound, bound + 1, 3 * bound])
    data = np.repeat(np.arange(counts.size), counts)
    out = h.simulate(data, 20_000, list(range(counts.size)))
    assert np.abs(out - counts).max() <= bound
    # the bound is attained-ish: the largest unreleased count is near it
    assert np.abs(out - counts).max() >= bound // 2


def test_golowich_livni_theorem_5_1_bullets_hold():
    eta, eps, delta = 0.2, 1.0, 1e-4
    k = stable_histogram_min_size(eta, eps, delta)
    h = StableHistogram(eps, delta, eta=eta, random_state=4)
    a = h.noise_bound
    assert eta * k > 4 * a and eta * k >= 2 * a + 4
    assert not (eta * (k - 1) > 4 * a and eta * (k - 1) >= 2 * a + 4)
    # frequencies just above η, just at/below η/4, and in between
    hi = math.floor(eta * k) + 1
    lo = math.floor(eta * k / 4)
    mid = (hi + lo) // 2
    rest = k - hi - lo - mid
    counts = np.array([hi, lo, mid, rest])
    data = np.repeat(np.arange(4), counts)
    assert data.size == k
    out = h.simulate(data, 20_000, [0, 1, 2, 3])
    freq = counts / k
    released = out > 0
    assert released[:, freq > eta].all()  # bullet 2
    assert not released[:, freq <= eta / 4].any()  # bullet 1
    rel = stable_histogram(data, eps, delta, eta=eta, random_state=0)
    f = rel.frequencies(k)
    assert 0 in f and all(0 < v <= 1 for v in f.values())


def test_hist_sparse_usage_parameters():
    # HistSparse calls hist_{ε/(2c), δ/c, η}
    eps, delta, c, eta = 1.0, 1e-6, 5, 0.5
    k = stable_histogram_min_size(eta, eps / (2 * c), delta / c)
    data = [("h", 1)] * k
    rel = stable_histogram(data, eps / (2 * c), delta / c, eta=eta, random_state=0)
    assert rel.frequencies(k) == {("h", 1): pytest.approx(rel.count(("h", 1)) / k)}
    assert rel.epsilon == pytest.approx(0.1) and rel.delta == pytest.approx(2e-7)


def test_hashable_items_and_random_order():
    data = ["a"] * 100 + [("t", 1)] * 100 + [frozenset({1})] * 100 + [2.5] * 100
    orders = set()
    for seed in range(20):
        rel = private_histogram(data, 1.0, 1e-6, random_state=seed)
        assert len(rel) == 4
        orders.add(tuple(map(repr, rel.items)))
    assert len(orders) > 1  # order is random, not the order of first appearance


def test_empty_data_releases_nothing():
    rel = private_histogram([], 1.0, 1e-6, random_state=0)
    assert len(rel) == 0 and rel.count("x") == 0
    rel = private_histogram(np.array([], dtype=int), 1.0, 1e-6, random_state=0)
    assert len(rel) == 0


def test_large_input_vectorised():
    data = np.random.default_rng(0).integers(0, 5000, size=1_000_000)
    rel = private_histogram(data, 1.0, 1e-6, random_state=0)
    assert len(rel) == 5000
    assert np.abs(rel.counts - np.bincount(data)).max() <= rel.noise_bound


def test_reproducible():
    data = np.repeat(np.arange(50), 30)
    a = private_histogram(data, 0.5, 1e-5, random_state=9)
    b = private_histogram(data, 0.5, 1e-5, random_state=9)
    assert np.array_equal(a.items, b.items) and np.array_equal(a.counts, b.counts)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 6), min_size=0, max_size=300),
    st.floats(0.2, 5.0),
    st.floats(1e-9, 0.5),
    st.integers(0, 2**31),
)
def test_release_invariants(data, eps, delta, seed):
    rel = private_histogram(np.array(data, dtype=np.int64), eps, delta, random_state=seed)
    true = np.bincount(np.array(data, dtype=np.int64), minlength=7)
    assert np.all(rel.counts >= rel.threshold)
    for item in range(7):
        assert abs(rel.count(item) - true[item]) <= rel.max_error
        if item in rel:
            assert abs(rel.count(item) - true[item]) <= rel.noise_bound
        if true[item] <= 1:
            assert item not in rel


# --- bad input: refused before any randomness -------------------------------------


def _untouched(rng, state):
    return rng.bit_generator.state == state


@pytest.mark.parametrize(
    ("epsilon", "delta"),
    [
        (0.0, 1e-3),
        (-1.0, 1e-3),
        (math.nan, 1e-3),
        (math.inf, 1e-3),
        (1.0, 0.0),
        (1.0, 1.0),
        (1.0, -0.1),
        (1.0, math.nan),
        ("1", 1e-3),
        (True, 1e-3),
    ],
)
def test_bad_privacy_parameters(epsilon, delta):
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(PrivacyParameterError):
        private_histogram([1, 2, 2], epsilon, delta, random_state=rng)
    assert _untouched(rng, state)


@pytest.mark.parametrize(
    "data",
    [
        np.array([1.0, np.nan]),
        np.array([[1, 2], [3, 4]]),
        [1.0, float("nan")],
        [[1], [2]],
        "abc",
        5,
        [{"a": 1}],
    ],
)
def test_bad_data(data):
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError):
        private_histogram(data, 1.0, 1e-3, random_state=rng)
    assert _untouched(rng, state)


@pytest.mark.parametrize("eta", [0.0, -0.1, 1.5, math.nan, True])
def test_bad_eta(eta):
    with pytest.raises(ValueError):
        StableHistogram(1.0, 1e-3, eta=eta)


@pytest.mark.parametrize("size", [0, -1, 2.0, True])
def test_bad_list_size(size):
    rel = private_histogram([1] * 100, 1.0, 1e-3, random_state=0)
    with pytest.raises(ValueError):
        rel.frequencies(size)


def test_bad_n_runs():
    with pytest.raises(ValueError):
        StableHistogram(1.0, 1e-3).simulate([1], 0, [1])
