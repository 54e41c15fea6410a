"""Littlestone dimension: exact recursion, closed forms, SOA prediction, refusals."""

import itertools
import math
from functools import cache

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skdp.hypotheses import FiniteClass, Halfspaces, Intervals, Thresholds
from skdp.hypotheses.littlestone import (
    FiniteVersionSpace,
    PointVersionSpace,
    ThresholdVersionSpace,
    interval_class,
    littlestone_dimension,
    point_class,
    soa_predict,
    threshold_class,
    version_space,
)


def _naive_ldim(L):
    """Textbook recursion over frozensets of rows, no pruning (independent oracle)."""
    L = np.asarray(L)

    @cache
    def rec(rows):
        if not rows:
            return -1
        best = 0
        for x in range(L.shape[1]):
            plus = frozenset(r for r in rows if L[r, x] > 0)
            minus = rows - plus
            if plus and minus:
                best = max(best, 1 + min(rec(plus), rec(minus)))
        return best

    return rec(frozenset(range(L.shape[0])))


@given(st.integers(1, 10), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_exact_ldim_matches_naive_recursion(n_hyp, n_domain, seed):
    L = np.random.default_rng(seed).choice([-1, 1], size=(n_hyp, n_domain))
    assert littlestone_dimension(FiniteClass(L)) == _naive_ldim(L)
    assert littlestone_dimension(L) <= math.floor(math.log2(n_hyp))


@pytest.mark.parametrize("n", range(1, 41))
def test_thresholds_closed_form(n):
    exact = FiniteVersionSpace(threshold_class(n), max_hypotheses=64)
    closed = ThresholdVersionSpace(n)
    assert exact.ldim() == closed.ldim() == math.floor(math.log2(n + 1))
    np.testing.assert_array_equal(exact.predict(np.arange(n)), closed.predict(np.arange(n)))


def test_thresholds_closed_form_after_restrictions(rng):
    n = 30
    exact, closed = FiniteVersionSpace(threshold_class(n)), ThresholdVersionSpace(n)
    t = 17
    for x in rng.integers(0, n, size=12):
        y = 1 if x >= t else -1
        exact, closed = exact.restrict(x, y), closed.restrict(x, y)
        assert exact.ldim() == closed.ldim()
        np.testing.assert_array_equal(exact.predict(np.arange(n)), closed.predict(np.arange(n)))


@pytest.mark.parametrize("n", range(1, 31))
def test_points_closed_form(n):
    exact = FiniteVersionSpace(point_class(n))
    closed = PointVersionSpace(n)
    assert exact.ldim() == closed.ldim() == (1 if n >= 2 else 0)
    np.testing.assert_array_equal(exact.predict(np.arange(n)), closed.predict(np.arange(n)))
    for x, y in [(0, -1), (n - 1, 1)]:
        exact, closed = exact.restrict(x, y), closed.restrict(x, y)
        assert exact.ldim() == closed.ldim()
        assert exact.is_empty == closed.is_empty
        if not closed.is_empty:
            np.testing.assert_array_equal(exact.predict(np.arange(n)),
                                          closed.predict(np.arange(n)))


def test_intervals_exact_values():
    expected = [1, 2, 2, 3, 3, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6]
    got = [littlestone_dimension(interval_class(n), max_hypotheses=200)
           for n in range(1, 16)]
    assert got == expected
    no_empty = [littlestone_dimension(interval_class(n, include_empty=False),
                                      max_hypotheses=200) for n in range(1, 16)]
    assert no_empty == [0, 1, *expected[2:]]
    for n in range(1, 9):  # small cases against the naive oracle
        assert expected[n - 1] == _naive_ldim(interval_class(n).label_matrix)


@pytest.mark.parametrize("n", range(1, 6))
def test_all_functions_have_ldim_n(n):
    L = np.array(list(itertools.product([-1, 1], repeat=n)))
    assert littlestone_dimension(L) == n


def test_small_known_classes():
    assert littlestone_dimension([[1, -1, 1]]) == 0
    assert littlestone_dimension([[1, -1], [1, 1]]) == 1
    assert littlestone_dimension([[1, -1], [1, -1], [1, 1]]) == 1  # duplicates do not count
    assert littlestone_dimension(point_class(1)) == 0
    assert littlestone_dimension(np.vstack([point_class(4).label_matrix, -np.ones(4)])) == 1
    assert version_space(threshold_class(3)).restrict(0, 1).restrict(0, -1).ldim() == -1


def test_infinite_domain_classes_have_infinite_ldim():
    assert littlestone_dimension(Thresholds()) == math.inf
    assert littlestone_dimension(Intervals()) == math.inf
    assert littlestone_dimension(Halfspaces(2)) == math.inf
    with pytest.raises(ValueError, match="infinite"):
        version_space(Thresholds())


def test_refuses_too_large_classes():
    with pytest.raises(ValueError, match="max_hypotheses=64"):
        littlestone_dimension(threshold_class(64))
    L = np.random.default_rng(0).choice([-1, 1], size=(60, 12))
    with pytest.raises(ValueError, match="max_states=50"):
        littlestone_dimension(L, max_states=50)


def test_soa_predict_label_matrix_and_version_space():
    L = threshold_class(7).label_matrix
    np.testing.assert_array_equal(soa_predict(L, np.arange(7)), [-1, -1, -1, -1, 1, 1, 1])
    assert soa_predict(ThresholdVersionSpace(7), 5) == 1
    # after "3 is negative" the thresholds left are t ∈ {4, …, 7}: binary search at 5
    vs = ThresholdVersionSpace(7).restrict(3, -1)
    np.testing.assert_array_equal(soa_predict(vs, [3, 4, 5, 6]), [-1, -1, -1, 1])
    with pytest.raises(ValueError, match="empty"):
        soa_predict(vs.restrict(3, 1), 0)


@pytest.mark.parametrize("vs", [ThresholdVersionSpace(5), PointVersionSpace(5),
                                FiniteVersionSpace(point_class(5))])
@pytest.mark.parametrize("bad", [5, -1, 1.5, np.nan, np.inf])
def test_bad_domain_points(vs, bad):
    with pytest.raises(ValueError, match="domain points"):
        vs.predict(np.array([bad]))
    with pytest.raises(ValueError, match="domain points"):
        vs.restrict(bad, 1)


@pytest.mark.parametrize("vs", [ThresholdVersionSpace(5), PointVersionSpace(5),
                                FiniteVersionSpace(point_class(5))])
def test_bad_labels_and_sizes(vs):
    with pytest.raises(ValueError, match="labels must be"):
        vs.restrict(0, 0)
    with pytest.raises(ValueError, match="n_domain"):
        ThresholdVersionSpace(0)
    with pytest.raises(ValueError, match="n_domain"):
        point_class(2.5)


def test_soa_keys_identify_hypotheses():
    a = ThresholdVersionSpace(16).restrict(8, 1)
    b = ThresholdVersionSpace(16).restrict(8, 1).restrict(0, -1)
    assert a.soa_key() == ("threshold", int(np.argmax(a.predict(np.arange(16)) > 0)))
    assert (a.soa_key() == b.soa_key()) == bool(
        np.array_equal(a.predict(np.arange(16)), b.predict(np.arange(16))))
    f = FiniteVersionSpace(threshold_class(16))
    assert f.soa_key() == FiniteVersionSpace(threshold_class(16)).soa_key()
    assert f.soa_key() != f.restrict(3, 1).soa_key()
    assert PointVersionSpace(4).restrict(2, 1).soa_key() == ("point", 2)
