"""Functional and bad-input tests for ReorderSliceCompute (Stemmer 2024, Alg. 1)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from skdp.exceptions import MechanismHaltedError
from skdp.mechanisms.reorder_slice_compute import ReorderSliceCompute, one_sided_geometric

ALPHA = 1e-6


def identity(s, rng):
    return s


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
def test_geometric_sampler_chi_square(eps):
    n = 200_000
    g = one_sided_geometric(1 / eps, size=n, random_state=0)
    assert g.min() >= 0
    a = math.exp(-eps)
    top = int(np.searchsorted(-(a ** np.arange(200)), -5.0 / n * 1 / (1 - a))) or 1
    top = max(2, min(top, 60))
    observed = np.append(np.bincount(np.minimum(g, top), minlength=top + 1)[:top], (g >= top).sum())
    probs = np.append((1 - a) * a ** np.arange(top), a**top)
    keep_expected = n * probs
    chi2 = ((observed - keep_expected) ** 2 / keep_expected).sum()
    assert stats.chi2.sf(chi2, top) > ALPHA


def test_geometric_zero_scale_and_scalar():
    assert one_sided_geometric(0.0, size=5, random_state=0).tolist() == [0] * 5
    assert isinstance(one_sided_geometric(1.0, random_state=0), int)


def test_slices_are_top_mhat_disjoint_and_removed():
    data = np.random.default_rng(0).permutation(np.arange(200.0))
    rsc = ReorderSliceCompute(data, 1.0, 0.0, 4, random_state=1)
    s1 = rsc.compute(10, identity)
    s2 = rsc.compute(20, identity, key=lambda x: -x)  # smallest first
    s3 = rsc.compute(5, identity, key=lambda x: (x % 2 == 0).astype(float))  # evens first
    m1, m2, m3 = rsc.slice_sizes_
    assert m1 >= 10 and m2 >= 20 and m3 >= 5
    assert sorted(s1) == list(np.arange(200 - m1, 200.0))
    assert sorted(s2) == list(np.arange(0.0, m2))
    # evens among the remaining, ties broken by the value itself (largest first)
    remaining = np.setdiff1d(np.arange(200.0), np.concatenate([s1, s2]))
    evens = np.sort(remaining[remaining % 2 == 0])[::-1]
    assert list(s3) == list(evens[:m3])
    assert rsc.n_slices == 3 and not rsc.halted
    assert len(np.intersect1d(s1, s2)) == 0


def test_two_dimensional_rows_and_lexicographic_ties():
    data = np.array([[1.0, 5.0], [1.0, 7.0], [0.0, 9.0], [1.0, 6.0]])
    rsc = ReorderSliceCompute(data, 50.0, 0.0, 1, random_state=0)  # geometric ≈ 0
    out = rsc.compute(2, identity, key=lambda rows: rows[:, 0])
    extra = rsc.slice_sizes_[0] - 2
    expect = [[1.0, 7.0], [1.0, 6.0], [1.0, 5.0], [0.0, 9.0]][: 2 + extra]
    assert out.tolist() == expect


def test_slice_larger_than_remaining_takes_all_then_empty():
    rsc = ReorderSliceCompute(np.arange(5.0), 1.0, 0.0, 3, random_state=0)
    assert rsc.compute(10, identity).size == 5
    assert rsc.compute(1, identity).size == 0


def test_max_slices_is_a_hard_cap():
    rsc = ReorderSliceCompute(np.arange(50.0), 1.0, 0.0, 2, random_state=0)
    rsc.compute(1, identity)
    rsc.compute(1, identity)
    assert rsc.halted
    with pytest.raises(MechanismHaltedError):
        rsc.compute(1, identity)


def test_protocol_receives_the_generator():
    rng = np.random.default_rng(5)
    rsc = ReorderSliceCompute(np.arange(50.0), 1.0, 0.0, 1, random_state=rng)
    assert rsc.compute(1, lambda s, r: r) is rng


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda r: r.compute(-1, identity), "non-negative"),
        (lambda r: r.compute(2.5, identity), "non-negative"),
        (lambda r: r.compute(True, identity), "non-negative"),
        (lambda r: r.compute(2, "not callable"), "protocol"),
        (lambda r: r.compute(2, identity, key=3), "key"),
        (lambda r: r.compute(2, identity, key=lambda x: np.ones(2)), "one score"),
        (lambda r: r.compute(2, identity, key=lambda x: np.full(len(x), np.nan)), "NaN"),
    ],
)
def test_bad_compute_arguments_spend_nothing(call, match):
    rsc = ReorderSliceCompute(np.arange(20.0), 1.0, 0.0, 3, random_state=0)
    state = rsc._rng.bit_generator.state
    with pytest.raises(ValueError, match=match):
        call(rsc)
    assert rsc.n_slices == 0 and rsc._rng.bit_generator.state == state


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((np.zeros((2, 2, 2)), 1.0, 0.0, 1), "1-D or 2-D"),
        ((np.array([np.nan]), 1.0, 0.0, 1), "NaN"),
        ((np.arange(3.0), 0.0, 0.0, 1), "epsilon"),
        ((np.arange(3.0), 1.0, 1.5, 1), "delta"),
        ((np.arange(3.0), 1.0, 0.0, 0), "max_slices"),
    ],
)
def test_bad_constructor_arguments(args, match):
    with pytest.raises(ValueError, match=match):
        ReorderSliceCompute(*args)


def test_key_none_needs_1d():
    rsc = ReorderSliceCompute(np.zeros((3, 2)), 1.0, 0.0, 1)
    with pytest.raises(ValueError, match="1-D"):
        rsc.compute(1, identity)


@given(st.lists(st.integers(0, 30), min_size=1, max_size=6), st.floats(0.2, 3.0))
def test_sample_slice_sizes_shift_requested_sizes(sizes, eps):
    m_hat = ReorderSliceCompute.sample_slice_sizes(sizes, 50, eps, random_state=0)
    assert m_hat.shape == (50, len(sizes))
    assert np.all(m_hat >= np.array(sizes))


def test_sample_slice_sizes_bad_input():
    with pytest.raises(ValueError):
        ReorderSliceCompute.sample_slice_sizes([1.5], 10, 1.0)
    with pytest.raises(ValueError):
        ReorderSliceCompute.sample_slice_sizes([], 10, 1.0)
    with pytest.raises(ValueError):
        ReorderSliceCompute.sample_slice_sizes([-1], 10, 1.0)


def test_compute_slice_sizes_match_vectorised_sampler():
    eps, m = 0.7, 3
    rng = np.random.default_rng(8)
    inst = []
    for _ in range(1200):
        rsc = ReorderSliceCompute(np.arange(100.0), eps, 0.0, 1, random_state=rng)
        rsc.compute(m, identity)
        inst.append(rsc.slice_sizes_[0])
    sim = ReorderSliceCompute.sample_slice_sizes([m], 1200, eps, random_state=9)[:, 0]
    top = 10
    table = np.array(
        [
            np.bincount(np.minimum(inst, top), minlength=top + 1),
            np.bincount(np.minimum(sim, top), minlength=top + 1),
        ]
    )
    table = table[:, table.sum(axis=0) > 0]
    assert stats.chi2_contingency(table)[1] > ALPHA
