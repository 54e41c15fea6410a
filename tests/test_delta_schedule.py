"""Tests for skdp.accounting.delta_schedule."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdp.accounting.delta_schedule import DeltaSchedule
from skdp.exceptions import PrivacyParameterError

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)

SCHEDULES = [
    {"kind": "polynomial"},
    {"kind": "polynomial", "exponent": 1.5},
    {"kind": "polynomial", "exponent": 3.0},
    {"kind": "geometric"},
    {"kind": "geometric", "first_phase_length": 7, "growth": 1},
    {"kind": "geometric", "first_phase_length": 5, "growth": 3},
    {"kind": "geometric", "first_phase_length": 100, "growth": 2},
]
IDS = [
    "poly2",
    "poly1.5",
    "poly3",
    "geom",
    "geom-const7",
    "geom-5x3",
    "geom-100x2",
]


@pytest.fixture(params=SCHEDULES, ids=IDS)
def schedule(request):
    return DeltaSchedule(1e-6, **request.param)


def test_polynomial_default_formula():
    sched = DeltaSchedule(1e-6)
    i = np.arange(1, 100)
    expected = 1e-6 * 6 / math.pi**2 / i.astype(float) ** 2
    np.testing.assert_allclose(sched(i), expected, rtol=1e-11)
    assert sched(i).max() <= 1e-6 * 6 / math.pi**2  # rounded down, never up
    assert isinstance(sched(3), float)
    assert sched.schedule(3) == sched(3)


def test_geometric_formula():
    sched = DeltaSchedule(1e-3, kind="geometric", first_phase_length=2, growth=2)
    # phases: p=1 -> {1,2}, p=2 -> {3..6}, p=3 -> {7..14}
    np.testing.assert_array_equal(sched.phase_of([1, 2, 3, 6, 7, 14, 15]), [1, 1, 2, 2, 3, 3, 4])
    assert [sched.phase_length(p) for p in (1, 2, 3)] == [2, 4, 8]
    expected = [1e-3 / (2 * 2), 1e-3 / (4 * 4), 1e-3 / (8 * 8)]
    np.testing.assert_allclose(sched([1, 3, 7]), expected, rtol=1e-11)
    # phase p spends exactly its share δ*/2^p (up to the 1e-12 safety margin)
    for p in (1, 2, 3, 10):
        start = 2 * (2 ** (p - 1) - 1) + 1
        idx = np.arange(start, start + sched.phase_length(p))
        assert math.fsum(sched(idx)) == pytest.approx(1e-3 / 2**p, rel=1e-11)
        assert math.fsum(sched(idx)) <= 1e-3 / 2**p


def test_sum_over_first_ten_million_indices(schedule):
    i = np.arange(1, 10**7 + 1)
    values = schedule(i)
    assert np.all(values >= 0)  # constant-length phases underflow to 0.0 eventually
    assert np.all(values[:1000] > 0)
    total = float(np.sum(values))  # pairwise summation: relative error ~1e-15
    assert total <= schedule.delta_star
    assert total == pytest.approx(schedule.partial_sum(10**7), rel=1e-12)
    # the tail after 10⁷ is what is left
    assert schedule.delta_star - total == pytest.approx(
        schedule.remaining_after(10**7), rel=1e-6, abs=2e-18
    )


def test_monotone_non_increasing(schedule):
    i = np.unique(np.concatenate((np.arange(1, 5000), np.logspace(0, 18, 500).astype(np.int64))))
    values = schedule(i)
    assert np.all(np.diff(values) <= 0)
    assert np.all(values >= 0)
    n = np.concatenate(([0], i))
    partial = schedule.partial_sum(n)
    remaining = schedule.remaining_after(n)
    assert np.all(np.diff(partial) >= 0)
    assert np.all(np.diff(remaining) <= 0)
    assert np.all(partial <= schedule.delta_star)
    np.testing.assert_allclose(partial + remaining, schedule.delta_star, rtol=1e-14)


def test_partial_sums_match_direct_sums(schedule):
    values = schedule(np.arange(1, 200_001))
    for n in (0, 1, 2, 3, 10, 99, 100, 101, 1234, 65_535, 200_000):
        assert schedule.partial_sum(n) == pytest.approx(math.fsum(values[:n]), rel=1e-13, abs=0)
        # the remainder covers every later index
        assert schedule.remaining_after(n) >= math.fsum(values[n:])
    np.testing.assert_allclose(
        schedule.partial_sum(np.array([5, 50])), [math.fsum(values[:5]), math.fsum(values[:50])]
    )


@pytest.mark.parametrize("exponent", [1.1, 1.5, 2.0, 4.0])
def test_polynomial_tail_bounds(exponent):
    """∫_{n+1}^∞ ≤ Σ_{i>n} i^(−s) ≤ ∫_n^∞: c(n+1)^{1−s}/(s−1) ≤ tail ≤ c n^{1−s}/(s−1)."""
    sched = DeltaSchedule(0.01, exponent=exponent)
    c = sched(1)
    slack = 0.01 * 1e-12  # the unspent safety margin
    for n in (1, 10, 1000, 10**6, 10**12):
        tail = sched.remaining_after(n)
        assert tail >= c * (n + 1) ** (1 - exponent) / (exponent - 1)
        assert tail <= c * n ** (1 - exponent) / (exponent - 1) + slack * 1.0001


def test_geometric_tail_bound():
    sched = DeltaSchedule(0.01, kind="geometric", first_phase_length=3, growth=2)
    for p in range(1, 40):
        end = 3 * (2**p - 1)  # last index of phase p
        # after phase p only the later phases' shares are left: Σ_{q>p} δ*/2^q = δ*/2^p
        assert sched.remaining_after(end) == pytest.approx(0.01 / 2**p, rel=1e-9)


@SETTINGS
@given(
    lengths=st.lists(st.integers(1, 10**9), min_size=1, max_size=60),
    kind=st.sampled_from(["polynomial", "geometric"]),
    delta_star=st.floats(1e-12, 0.99),
)
def test_phase_allocation_sums_below_delta_star(lengths, kind, delta_star):
    sched = DeltaSchedule(delta_star, kind=kind)
    p = np.arange(1, len(lengths) + 1)
    t = np.asarray(lengths)
    per_step = sched.phase_delta(p, t)
    assert np.all(per_step > 0)
    assert math.fsum(t * per_step) <= delta_star
    assert math.fsum(sched.phase_budget(p)) <= delta_star
    for q, length in zip(p[:3], lengths[:3], strict=False):
        assert sched.phase_delta(int(q), length) == pytest.approx(
            sched.phase_budget(int(q)) / length
        )


def test_phase_budget_matches_schedule():
    poly = DeltaSchedule(1e-5)
    np.testing.assert_array_equal(poly.phase_budget(np.arange(1, 50)), poly(np.arange(1, 50)))
    assert poly.phase_delta(4, 1) == poly(4)
    geom = DeltaSchedule(1e-5, kind="geometric", first_phase_length=4, growth=3)
    for p in (1, 2, 5):
        start = 4 * (3 ** (p - 1) - 1) // 2 + 1
        assert geom.phase_of(start) == p
        assert geom.phase_delta(p, geom.phase_length(p)) == pytest.approx(geom(start), rel=1e-15)
    np.testing.assert_allclose(geom.phase_budget([1, 2, 3]), 1e-5 * np.array([0.5, 0.25, 0.125]))
    assert geom.phase_budget(5000) == 0.0  # underflows to 0 (conservative), no error


def test_huge_indices_are_finite():
    for kind in ("polynomial", "geometric"):
        sched = DeltaSchedule(1e-6, kind=kind)
        big = np.array([2**40, 2**62, np.iinfo(np.int64).max])
        assert np.all(np.isfinite(sched(big)))
        assert np.all(sched.remaining_after(big) >= 0)
        assert sched.partial_sum(np.iinfo(np.int64).max) <= 1e-6
    flat = DeltaSchedule(1e-6, kind="geometric", growth=1, first_phase_length=10**6)
    assert flat(np.iinfo(np.int64).max) == 0.0


def test_repr():
    assert "polynomial" in repr(DeltaSchedule(0.1))
    assert "growth=2" in repr(DeltaSchedule(0.1, kind="geometric"))


# --------------------------------------------------------------------------- bad input


@SETTINGS
@given(
    delta_star=st.one_of(
        st.floats(max_value=0.0),
        st.floats(min_value=1.0),
        st.just(math.nan),
        st.just(True),
        st.none(),
        st.text(max_size=2),
    )
)
def test_bad_delta_star(delta_star):
    with pytest.raises(PrivacyParameterError, match="delta_star"):
        DeltaSchedule(delta_star)


@SETTINGS
@given(exponent=st.one_of(st.floats(max_value=1.0), st.just(math.inf), st.just(math.nan)))
def test_bad_exponent(exponent):
    with pytest.raises(PrivacyParameterError, match="exponent"):
        DeltaSchedule(0.1, exponent=exponent)


def test_bad_options():
    with pytest.raises(ValueError, match="kind"):
        DeltaSchedule(0.1, kind="harmonic")
    with pytest.raises(PrivacyParameterError, match="exponent"):
        DeltaSchedule(0.1, exponent="2")
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="first_phase_length"):
            DeltaSchedule(0.1, kind="geometric", first_phase_length=bad)
        with pytest.raises(ValueError, match="growth"):
            DeltaSchedule(0.1, kind="geometric", growth=bad)
    poly = DeltaSchedule(0.1)
    with pytest.raises(ValueError, match="geometric"):
        poly.phase_of(3)
    with pytest.raises(ValueError, match="geometric"):
        poly.phase_length(3)


@SETTINGS
@given(
    index=st.one_of(
        st.integers(max_value=0),
        st.floats(allow_nan=True),
        st.just(True),
        st.lists(st.integers(max_value=0), min_size=1, max_size=5),
        st.lists(st.floats(1.0, 10.0), min_size=1, max_size=5),
        st.text(max_size=2),
        st.integers(min_value=2**63),
    )
)
def test_bad_indices(index):
    sched = DeltaSchedule(0.1, kind="geometric")
    for call in (sched, sched.phase_of, sched.phase_budget, lambda p: sched.phase_delta(p, 1)):
        with pytest.raises(ValueError):
            call(index)
    with pytest.raises(ValueError):
        sched.phase_delta(1, index)


def test_bad_counts():
    sched = DeltaSchedule(0.1)
    assert sched.partial_sum(0) == 0.0
    assert sched.remaining_after(0) == 0.1
    for bad in (-1, [3, -2], 2.0, np.array([1.5]), True):
        with pytest.raises(ValueError, match="n must"):
            sched.partial_sum(bad)
        with pytest.raises(ValueError, match="n must"):
            sched.remaining_after(bad)
