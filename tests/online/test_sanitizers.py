"""Sanitizers of labelled finite-domain data: interface, exactness, failure, bad input,
and the cell counter of the private experts learner."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skdp.mechanisms.binary_tree import BinaryTreeCounter
from skdp.online import HistogramSanitizer, Sanitizer, StableHistogramSanitizer
from skdp.online._experts import CellTreeCounter
from skdp.online._sanitizers import allocate_rows


@given(st.lists(st.integers(0, 50), min_size=1, max_size=20), st.integers(1, 200))
def test_allocate_rows_sums_and_is_proportional(weights, n):
    counts = allocate_rows(weights, n)
    w = np.asarray(weights, dtype=float)
    if w.sum() == 0:
        assert counts is None
        return
    assert counts.sum() == n and np.all(counts >= 0)
    assert np.all(np.abs(counts - n * w / w.sum()) < 1.0 + 1e-9)  # Hamilton rounding
    assert np.all(counts[w == 0] == 0)


@pytest.mark.parametrize("sanitizer", [HistogramSanitizer(), StableHistogramSanitizer()])
def test_output_shape_and_labels(sanitizer, rng):
    x = rng.integers(0, 5, size=200)
    y = np.where(x >= 2, 1, -1)
    xs, ys = sanitizer.sanitize(x, y, 5, epsilon=1.0, delta=1e-6, random_state=0)
    assert xs.shape == ys.shape == (200,)
    assert xs.min() >= 0 and xs.max() < 5 and set(np.unique(ys)) <= {-1, 1}
    assert isinstance(sanitizer, Sanitizer)


def test_histogram_sanitizer_is_nearly_exact_at_large_epsilon(rng):
    x = rng.integers(0, 4, size=400)
    y = np.where(rng.random(400) < 0.3, 1, -1)
    xs, ys = HistogramSanitizer().sanitize(x, y, 4, 200.0, 0.0, random_state=1)
    exact = np.bincount(2 * x + (y > 0), minlength=8)
    got = np.bincount(2 * xs + (ys > 0), minlength=8)
    assert np.abs(exact - got).sum() <= 2


def test_histogram_sanitizer_error_shrinks_with_batch_size():
    rng = np.random.default_rng(0)

    def tv(n):
        errs = []
        for seed in range(30):
            x = rng.integers(0, 8, size=n)
            y = np.where(x >= 3, 1, -1)
            xs, ys = HistogramSanitizer().sanitize(x, y, 8, 1.0, 0.0, random_state=seed)
            p = np.bincount(2 * x + (y > 0), minlength=16) / n
            q = np.bincount(2 * xs + (ys > 0), minlength=16) / n
            errs.append(0.5 * np.abs(p - q).sum())
        return np.mean(errs)

    assert tv(4000) < tv(200) / 5  # about 2N·(2/ε)/n


def test_failure_returns_none():
    class AlwaysNegative(HistogramSanitizer):
        def _noisy_counts(self, x, y, n_domain, epsilon, rng):
            return -np.ones(2 * n_domain, dtype=np.int64)

    assert AlwaysNegative(post="clip").sanitize(np.array([0]), np.array([1]), 2, 1.0,
                                               0.0) is None
    # the projection never fails: n public rows always find cells
    assert AlwaysNegative().sanitize(np.array([0]), np.array([1]), 2, 1.0, 0.0) is not None
    # a stable histogram never releases a cell of count 1: a one-row batch always fails
    assert StableHistogramSanitizer().sanitize(np.array([0]), np.array([1]), 2, 1.0,
                                               1e-6, random_state=0) is None


def test_costs():
    assert HistogramSanitizer().cost(2.0, 1e-6) == (2.0, 0.0)
    assert StableHistogramSanitizer().cost(2.0, 1e-6) == (2.0, 1e-6)


@pytest.mark.parametrize(("x", "y", "match"), [
    (np.array([0, 5]), np.array([1, 1]), "domain indices"),
    (np.array([0.5, 1]), np.array([1, 1]), "domain indices"),
    (np.array([0, 1]), np.array([1, 0]), "labels"),
    (np.array([], dtype=int), np.array([]), "same non-zero length"),
    (np.array([[0, 1]]), np.array([[1, 1]]), "same non-zero length"),
])
def test_bad_batches(x, y, match):
    with pytest.raises(ValueError, match=match):
        HistogramSanitizer().sanitize(x, y, 5, 1.0, 0.0)


def test_bad_privacy_parameters():
    with pytest.raises(ValueError):
        HistogramSanitizer().sanitize(np.array([0]), np.array([1]), 2, -1.0, 0.0)
    with pytest.raises(ValueError):
        StableHistogramSanitizer().sanitize(np.array([0]), np.array([1]), 2, 1.0, 0.0)
    with pytest.raises(ValueError, match="max_cells"):
        HistogramSanitizer(max_cells=4).sanitize(np.array([0]), np.array([1]), 3, 1.0, 0.0)


# ----------------------------------------------------------------- cell counter
class _Exact(CellTreeCounter):
    @property
    def _node_noise_scale(self):
        return 0.0


def test_cell_counter_without_noise_is_the_exact_running_count(rng):
    cells = rng.integers(0, 5, size=300)
    counter = _Exact(5, 300, 1.0, entropy=0, key=0)
    out = np.vstack([counter.update(cells[a:b]) for a, b in [(0, 1), (1, 77), (77, 300)]])
    exact = np.cumsum(np.eye(5, dtype=int)[cells], axis=0)
    np.testing.assert_array_equal(out, exact)
    with pytest.raises(ValueError, match="exceed"):
        counter.update(np.array([0]))


def test_cell_counter_noise_follows_the_binary_mechanism():
    """Noise at step s is a sum of popcount(s) independent nodes of scale L/ε, as in
    BinaryTreeCounter: compare the variances at steps with 1 and with 4 set bits."""
    n_steps, runs = 15, 1500
    noise = np.empty((runs, n_steps))
    for r in range(runs):
        counter = CellTreeCounter(1, n_steps, 1.0, entropy=r, key=0)
        noise[r] = counter.update(np.zeros(n_steps, dtype=int))[:, 0] - np.arange(1, 16)
    tree = BinaryTreeCounter(n_steps, 1.0, discrete=True, random_state=0)
    reference = tree.simulate(np.ones(n_steps), runs) - np.arange(1, 16)
    for step in (8, 15):  # popcount 1 and 4
        ratio = noise[:, step - 1].var() / reference[:, step - 1].var()
        assert 0.8 < ratio < 1.25
    assert noise[:, 14].var() / noise[:, 7].var() == pytest.approx(4.0, rel=0.25)


def test_cell_counter_blocks_do_not_change_the_draws(rng):
    cells = rng.integers(0, 3, size=2500)
    one = CellTreeCounter(3, 2500, 1.0, entropy=7, key=3).update(cells)
    split = CellTreeCounter(3, 2500, 1.0, entropy=7, key=3)
    parts = [split.update(cells[a:b]) for a, b in [(0, 1000), (1000, 1030), (1030, 2500)]]
    np.testing.assert_array_equal(np.vstack(parts), one)
