"""Winnow and ConfidentWinnow: mistake bounds, vectorised loop = per-row reference,
block equivalence."""

import math

import numpy as np
import pytest

from skdp.linear import ConfidentWinnowClassifier, WinnowClassifier
from skdp.linear._base import softmax


def _disjunction_stream(rng, n, d, literals=(0, 1), noise=0.0):
    X = rng.choice([-1.0, 1.0], size=(n, d))
    y = (X[:, list(literals)] > 0).any(axis=1).astype(int)
    flip = rng.random(n) < noise
    return X, np.where(flip, 1 - y, y)


def _reference(X, y, eta, trigger):
    """Per-row normalised Winnow on z = (x, 1, −x, −1), straight from Alg 2.

    w ∝ w·exp(η y z) is kept as w = softmax(η·S), S = Σ y·z, and the margin as
    ⟨w⁺ − w⁻, (x, 1)⟩ — the estimator's arithmetic, so exact ties (margin 0, common
    with symmetric weights) agree bit for bit.
    """
    n, d = X.shape
    U = np.hstack([X, np.ones((n, 1))])
    S = np.zeros(d + 1)
    w = softmax(np.concatenate([S, -S]))
    updates = mistakes = 0
    for u, label in zip(U, np.where(y == 1, 1.0, -1.0), strict=True):
        margin = u[:d] @ (w[:d] - w[d + 1:-1]) + (w[d] - w[-1])
        mistakes += (margin > 0) != (label > 0)
        if trigger(margin, label):
            S += label * u
            w = softmax(eta * np.concatenate([S, -S]))
            updates += 1
    return w, updates, mistakes


def test_winnow_matches_per_row_reference(rng):
    # continuous features: no exact ties, whose sign would depend on the summation
    # order of BLAS (chunk) versus a per-row dot product
    X, _ = _disjunction_stream(rng, 3000, 15)
    X = X * rng.random(X.shape)
    y = (X[:, 0] + X[:, 1] + 0.3 * rng.standard_normal(3000) > 0).astype(int)
    clf = WinnowClassifier(learning_rate=0.4).fit(X, y)
    w, updates, mistakes = _reference(X, y, 0.4, lambda m, lab: lab * m <= 0)
    np.testing.assert_allclose(clf.weights_, w, rtol=1e-9, atol=1e-12)
    assert (clf.n_updates_, clf.n_mistakes_) == (updates, mistakes)


def test_confident_winnow_matches_per_row_reference(rng):
    X, _ = _disjunction_stream(rng, 3000, 15)
    X = X * rng.random(X.shape)
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    clf = ConfidentWinnowClassifier(learning_rate=0.3, margin=1 / 3).fit(X, y)
    w, updates, mistakes = _reference(
        X, y, 0.3, lambda m, lab: lab * m <= 0 or abs(m) < 0.5 / 3)
    np.testing.assert_allclose(clf.weights_, w, rtol=1e-9, atol=1e-12)
    assert (clf.n_updates_, clf.n_mistakes_) == (updates, mistakes)


@pytest.mark.parametrize("cls", [WinnowClassifier, ConfidentWinnowClassifier])
def test_block_equivalence(cls, rng):
    X, y = _disjunction_stream(rng, 4000, 30, noise=0.05)
    one = cls(learning_rate=0.3).fit(X, y)
    blocks = cls(learning_rate=0.3)
    for start, stop in [(0, 1), (1, 7), (7, 1000), (1000, 1001), (1001, 4000)]:
        blocks.partial_fit(X[start:stop], y[start:stop], classes=[0, 1])
    np.testing.assert_array_equal(one.weights_, blocks.weights_)
    assert (one.n_updates_, one.n_mistakes_) == (blocks.n_updates_, blocks.n_mistakes_)


def test_lemma9_update_bounds(rng):
    """Updates ≤ log(n_coords)/((1 − c)ηρ − η²/2) on a ρ-margin stream (Lemma 9)."""
    d, r = 50, 2
    X, y = _disjunction_stream(rng, 20000, d, literals=range(r))
    rho = 1.0 / (2 * r - 1)  # OR of r literals with a bias: margin 1/(2r − 1)
    n_coords = 2 * (d + 1)
    eta = rho / 2
    win = WinnowClassifier(learning_rate=eta).fit(X, y)
    assert win.n_updates_ <= math.log(n_coords) / (eta * rho - eta**2 / 2)
    conf = ConfidentWinnowClassifier(learning_rate=eta, margin=rho, confidence=0.25).fit(X, y)
    assert conf.n_updates_ <= math.log(n_coords) / (0.75 * eta * rho - eta**2 / 2)
    assert conf.score(X, y) == 1.0 and win.score(X, y) == 1.0


def test_weights_are_softmax_of_scores_and_predict_uses_them(rng):
    X, y = _disjunction_stream(rng, 500, 8, noise=0.1)
    clf = WinnowClassifier(learning_rate=0.5).fit(X, y)
    np.testing.assert_allclose(clf.weights_, softmax(0.5 * clf._full_scores()))
    np.testing.assert_allclose(clf.decision_function(X), X @ clf.coef_[0] + clf.intercept_[0])
    assert np.isclose(clf.weights_.sum(), 1.0)


def test_no_doubling_no_intercept_shapes(rng):
    X = rng.integers(0, 2, size=(300, 6)).astype(float)
    y = (X[:, 0] > 0).astype(int)
    clf = WinnowClassifier(double_features=False, fit_intercept=False).fit(X, y)
    assert clf.weights_.shape == (6,) and clf.intercept_[0] == 0.0
    assert np.all(clf.coef_ >= 0)


def test_string_labels_and_pipeline_with_public_clipper(rng):
    from sklearn.pipeline import make_pipeline

    from skdp.preprocessing import PublicBoundsClipper

    X = rng.normal(size=(2000, 5)) * 3
    y = np.where(X[:, 1] > 0, "yes", "no")
    pipe = make_pipeline(PublicBoundsClipper(-10.0, 10.0), WinnowClassifier(learning_rate=0.5))
    pipe.fit(X, y)
    assert set(pipe.predict(X)) <= {"yes", "no"}
    assert pipe.score(X, y) > 0.9


def test_confident_winnow_without_unconfident_updates_is_winnow(rng):
    X, y = _disjunction_stream(rng, 2000, 10, noise=0.05)
    a = WinnowClassifier(learning_rate=0.3).fit(X, y)
    b = ConfidentWinnowClassifier(learning_rate=0.3, update_unconfident=False).fit(X, y)
    np.testing.assert_array_equal(a.weights_, b.weights_)
