"""Constrained ERM of the hypothesis classes: exactness against brute force."""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skdp.hypotheses import FiniteClass, Halfspaces, Intervals, Rectangles, Thresholds

_CANDIDATES = np.concatenate([np.arange(-1, 20) * 0.5 + 0.25, [np.inf, -np.inf]])


def _brute(cls, X, y, fx, fy):
    if isinstance(cls, Thresholds):
        hyps = [np.array([t]) for t in _CANDIDATES]
    else:
        hyps = [np.array([a, b]) for a, b in itertools.product(_CANDIDATES, repeat=2)]
    return min(
        (
            int(np.sum(cls.predict_blocks(h[None], fx)[0] != fy)),
            int(np.sum(cls.predict_blocks(h[None], X)[0] != y)),
        )
        for h in hyps
    )


line_data = st.integers(0, 2**32 - 1).map(np.random.default_rng)


@pytest.mark.parametrize("cls", [Thresholds(), Intervals()])
@given(rng=line_data)
def test_line_classes_are_exact_lexicographic_erm(cls, rng):
    n, k = int(rng.integers(1, 25)), int(rng.integers(1, 4))
    X = rng.integers(0, 8, size=(n, 1)).astype(float)  # ties on purpose
    y = rng.choice([-1, 1], n)
    blocks = rng.integers(0, k, n)
    fx = rng.integers(0, 8, size=(2, 1)) + 0.5
    fy = rng.choice([-1, 1], 2)
    params = cls.fit_blocks(X, y, blocks, k, forced_X=fx, forced_y=fy)
    pred, fpred = cls.predict_blocks(params, X), cls.predict_blocks(params, fx)
    for b in range(k):
        m = blocks == b
        got = (int(np.sum(fpred[b] != fy)), int(np.sum(pred[b][m] != y[m])))
        assert got == _brute(cls, X[m], y[m], fx, fy)


@given(rng=line_data)
def test_finite_class_is_exact(rng):
    H, N, n, k = 12, 6, int(rng.integers(1, 30)), 3
    cls = FiniteClass(rng.choice([0, 1], size=(H, N)))
    X = rng.integers(0, N, (n, 1))
    y = rng.choice([-1, 1], n)
    blocks = rng.integers(0, k, n)
    fx, fy = rng.integers(0, N, (2, 1)), rng.choice([-1, 1], 2)
    params = cls.fit_blocks(X, y, blocks, k, forced_X=fx, forced_y=fy)
    L = cls.label_matrix
    for b in range(k):
        m = blocks == b
        scores = [(int(np.sum(L[h, fx[:, 0]] != fy)), int(np.sum(L[h, X[m, 0]] != y[m])))
                  for h in range(H)]
        assert scores[params[b]] == min(scores)


def test_weights_and_votes():
    X = np.array([[0.0], [1.0], [2.0]])
    y = np.array([-1, 1, -1])
    t = Thresholds()
    # Weight 3 on the negative at 2.0 beats the positive at 1.0.
    assert t.fit_blocks(X, y, np.zeros(3, int), 1, sample_weight=[1, 1, 3])[0] == np.inf
    params = np.array([0.5, 1.5, np.inf, -np.inf])
    np.testing.assert_allclose(t.vote(params, [[1.0], [2.0], [-5.0]]), [0.5, 0.75, 0.25])
    assert t.vote(params, [[1.0]])[0] == np.mean(t.predict_blocks(params, [[1.0]]) > 0)


def test_rectangles_exact_when_realizable_and_cut_forced_negatives():
    rng = np.random.default_rng(0)
    X = rng.random((400, 2))
    y = np.where((X[:, 0] > 0.2) & (X[:, 0] < 0.6) & (X[:, 1] > 0.3) & (X[:, 1] < 0.8), 1, -1)
    blocks = rng.integers(0, 4, 400)
    r = Rectangles(2)
    params = r.fit_blocks(X, y, blocks, 4)
    pred = r.predict_blocks(params, X)
    for b in range(4):
        assert np.all(pred[b][blocks == b] == y[blocks == b])
    inside = np.array([[0.4, 0.5]])
    params = r.fit_blocks(X, y, blocks, 4, forced_X=inside, forced_y=[-1])
    assert np.all(r.predict_blocks(params, inside) == -1)
    far = np.array([[0.95, 0.95]])
    params = r.fit_blocks(X, y, blocks, 4, forced_X=far, forced_y=[1])
    assert np.all(r.predict_blocks(params, far) == 1)
    votes = r.vote(params, X[:50])
    np.testing.assert_allclose(votes, np.mean(r.predict_blocks(params, X[:50]) > 0, axis=0))


def test_halfspaces_fit_separable_data_and_respect_through():
    rng = np.random.default_rng(0)
    w = np.array([1.0, -1.0, 0.5])
    X = rng.normal(size=(3000, 3))
    y = np.where(X @ w >= 0.2, 1, -1)
    blocks = rng.integers(0, 10, 3000)
    h = Halfspaces(3)
    params = h.fit_blocks(X, y, blocks, 10)
    assert np.mean(h.predict_blocks(params, X) == y[None, :]) > 0.97
    through = X[:2]
    params = h.fit_blocks(X, y, blocks, 10, through=through)
    lifted = np.concatenate([through, np.ones((2, 1))], axis=1)
    np.testing.assert_allclose(params @ lifted.T, 0.0, atol=1e-8)
    np.testing.assert_allclose(h.vote(params, X[:200]),
                               np.mean(h.predict_blocks(params, X[:200]) > 0, axis=0))
    assert h.basis(X[:4]).shape == (4, 0)
    assert np.all(h.fit_blocks(X, y, blocks, 10, through=X[:4]) == 0)


@pytest.mark.parametrize(
    "call",
    [
        lambda: Thresholds().fit_blocks(np.zeros((3, 2)), [1, 1, -1], [0, 0, 0], 1),
        lambda: Thresholds().fit_blocks(np.zeros((3, 1)), [1, 0, -1], [0, 0, 0], 1),
        lambda: Thresholds().fit_blocks(np.zeros((3, 1)), [1, 1, -1], [0, 0, 5], 1),
        lambda: Thresholds().fit_blocks(np.zeros((3, 1)), [1, 1, -1], [0, 0, 0], 1,
                                        through=[[0.0]]),
        lambda: FiniteClass(np.array([[2, 1]])),
        lambda: FiniteClass([[1, -1]]).fit_blocks([[3]], [1], [0], 1),
        lambda: Rectangles(0),
        lambda: Halfspaces(2, C=-1.0),
        lambda: Rectangles(2).predict_blocks(np.zeros((1, 2, 2)), np.zeros((2, 3))),
    ],
)
def test_bad_input_is_refused(call):
    with pytest.raises(ValueError):
        call()


def test_vectorised_over_many_blocks_matches_one_at_a_time():
    rng = np.random.default_rng(3)
    X = rng.random((2000, 1))
    y = np.where(X[:, 0] > 0.5, 1, -1) * np.where(rng.random(2000) < 0.1, -1, 1)
    blocks = rng.integers(0, 50, 2000)
    for cls in (Thresholds(), Intervals()):
        together = cls.fit_blocks(X, y, blocks, 50, forced_X=[[0.3]], forced_y=[1])
        for b in (0, 17, 49):
            m = blocks == b
            alone = cls.fit_blocks(X[m], y[m], np.zeros(m.sum(), int), 1, forced_X=[[0.3]],
                                   forced_y=[1])
            np.testing.assert_allclose(together[b], alone[0])
