"""The stream learners' outputs for a seed are pinned: speed work (validation shortcuts,
one validation per prediction, count kernels, the guard's window sums) must release and
predict exactly what it did before. Digests of every prediction and probability of a
prequential run, recorded on main eea9e68 (before the throughput work of issue 30)."""

import hashlib
import warnings

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline

from skdp.decision_list import DPDecisionListClassifier
from skdp.preprocessing import PublicBoundsBinarizer
from skdp.streams import ContinualReleaseClassifier

THRESHOLDS = [list(np.arange(2.5, 60, 2.5)), *[[0.5]] * 3, [0.25, 0.5, 0.75]]


def _stream(n=24_000, seed=3):
    """A numeric feature that predicts the label, weak binary ones and noise; the concept
    flips at two thirds (the guard's restart)."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / n
    delay = np.clip(rng.gamma(2.0, 6.0, n), 0, 60)
    weak = rng.integers(0, 2, (n, 3))
    sign = np.where(t >= 2 / 3, -1.0, 1.0)
    z = sign * 0.45 * (delay - 20.0) + 0.4 * (weak[:, 0] - weak[:, 1])
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-z))).astype(int)
    return np.column_stack([delay, weak, rng.uniform(size=n)]), y


def _list(**kw):
    return make_pipeline(PublicBoundsBinarizer(thresholds=THRESHOLDS),
                         DPDecisionListClassifier(classes=[0, 1], negations=True, **kw))


def _digest(clf, X, y, chunk=400):
    h = hashlib.sha256()
    for start in range(0, X.shape[0], chunk):
        Xc, yc = X[start:start + chunk], y[start:start + chunk]
        if start:
            h.update(np.ascontiguousarray(clf.predict(Xc)).tobytes())
            h.update(np.round(clf.predict_proba(Xc), 12).tobytes())
        if hasattr(clf, "steps"):  # the list's own partial_fit behind its binarizer
            clf[-1].partial_fit(clf[:-1].fit_transform(Xc), yc, classes=[0, 1])
        else:
            clf.partial_fit(Xc, yc, classes=[0, 1])
    return h.hexdigest()[:24]


# The stream restarts once (the concept flips) and the guard answers with the
# combination, the latest model and the constant at some calls (checked when pinned).


CASES = {
    "continual defaults": (lambda: ContinualReleaseClassifier(
        _list(), epsilon=1.0, delta=1e-6, classes=[0, 1], random_state=7),
        "2eeeb8dadaceca8f5a3cc833"),
    "continual ensemble, no guard": (lambda: ContinualReleaseClassifier(
        _list(), epsilon=4.0, delta=1e-6, classes=[0, 1], random_state=8, guard=None,
        combine="ensemble"), "f45279a6a30c5d18e9b87aac"),
    "continual latest": (lambda: ContinualReleaseClassifier(
        _list(), epsilon=1.0, delta=1e-6, classes=[0, 1], random_state=9,
        combine="latest"), "4e2743d5baa367afbbf6d7d1"),
    "list partial_fit": (lambda: _list(epsilon=1.0, delta=1e-6, random_state=10),
                         "8c996af4ec3f8e6500b5d95e"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_seeded_stream_outputs_are_pinned(name):
    make, expected = CASES[name]
    X, y = _stream()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _digest(make(), X, y) == expected
