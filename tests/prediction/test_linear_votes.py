"""LinearVotes (Lemma V): the pruned count equals the teacher-by-teacher count."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from skdp.hypotheses import Halfspaces
from skdp.prediction._linear_votes import LinearVotes
from skdp.prediction._teachers import _Blocks, _EstimatorTeachers, make_teachers


def _elementwise_nonnegative(theta, X):
    Z = np.c_[X, np.ones(len(X))]
    score = Z[:, :1] * theta[:, 0]
    for j in range(1, Z.shape[1]):
        score = score + Z[:, j : j + 1] * theta[:, j]
    return np.count_nonzero(score >= 0, axis=1)


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("strict", [False, True])
def test_pruned_count_equals_every_teacher_voting(seed, strict):
    rng = np.random.default_rng(seed)
    d, k = int(rng.integers(1, 5)), int(rng.integers(1, 400))
    # Nearly parallel teachers (what training produces), rescaled, some zero, some flipped.
    theta = rng.normal(size=d + 1) + 10 ** rng.uniform(-8, 1) * rng.normal(size=(k, d + 1))
    theta *= rng.uniform(0.1, 10, size=(k, 1))
    theta[rng.random(k) < 0.05] = 0.0
    if seed % 3 == 0:
        theta[rng.random(k) < 0.5] *= -1
    X = rng.normal(size=(400, d)) * rng.uniform(0.1, 100)
    a = theta[0, :d]
    if np.any(a):  # queries on (and next to) teacher 0's boundary
        X[:40] -= ((X[:40] @ a + theta[0, d]) / (a @ a))[:, None] * a
    sign = -1.0 if strict else 1.0
    nonneg = _elementwise_nonnegative(sign * theta, X)
    want = (k - nonneg if strict else nonneg) + 3
    votes = LinearVotes(theta, 3, k + 7, strict=strict)
    assert np.array_equal(votes.counts(X), want)
    assert np.allclose(votes.vote(X), want / (k + 7))


def test_halfspace_and_logistic_teachers_vote_through_the_pruned_count():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 2))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0.2, 1, -1).astype(np.int8)
    data = _Blocks(X, y, np.arange(600) % 60, 60)
    Xq = rng.normal(size=(2000, 2))
    teachers = make_teachers(Halfspaces(2), None, data)
    teachers.fit(None, None)
    brute = Halfspaces(2).predict_blocks(teachers.params, Xq)
    assert np.allclose(teachers.vote(Xq), np.mean(brute > 0, axis=0))
    sk = _EstimatorTeachers(LogisticRegression(), data)
    sk.fit(None, None)
    per_model = np.mean([m.predict(Xq) > 0 for m in sk.models], axis=0)
    assert np.allclose(sk.vote(Xq), per_model)
