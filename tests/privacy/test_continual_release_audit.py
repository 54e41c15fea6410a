"""Exact privacy audit of ContinualReleaseClassifier's routing of rows to releases,
with a broken twin the same audit catches.

The wrapped learner releases one geometric count of positive labels (ε-DP under adding
or removing a row; ``tests/_stream_recording.py``), so a release's law is a two-sided
geometric around its block's true count, and the whole stream's output — the tuple of
released counts — has an exact law: the product over releases (their noise is
independent). The routing is the real wrapper's: the true counts are read off the
models it released. Neighbouring streams D, D′: seven calls of four rows; D′ has one
more positive row in call 2, so with the doubling schedule (releases after calls 1, 3
and 7) it lies in the second block only. :func:`skdp.audit.exact_epsilon` of the two
laws must be ε (parallel composition).

``Cumulative`` refits each release on all rows seen so far (what "a model from all the
data" naively does): the added row enters releases 2 and 3, and the exact ε is 2ε.
"""

import itertools

import numpy as np
import pytest
from _stream_recording import NoisyCountClassifier

from skdp.audit import exact_epsilon
from skdp.streams import ContinualReleaseClassifier

EPSILON = 1.0
WIDTH = 30  # noise support kept on each side of a count (mass beyond: < e^-30)


class Cumulative(ContinualReleaseClassifier):
    """Broken twin: the buffer is never emptied, so each release sees every row so far."""

    def _release(self):
        kept = list(self._blocks._parts)
        super()._release()
        self._blocks._parts = kept


def _streams():
    rng = np.random.default_rng(0)
    calls = [(np.zeros((4, 1)), rng.integers(0, 2, 4)) for _ in range(7)]
    neighbour = list(calls)
    neighbour[1] = (np.zeros((5, 1)), np.r_[calls[1][1], 1])  # one more positive row in call 2
    return calls, neighbour


def _released_counts(cls, calls):
    clf = cls(NoisyCountClassifier(), epsilon=EPSILON, classes=[0, 1])
    for X, y in calls:
        clf.partial_fit(X, y)
    return [m.true_count_ for m in clf.estimators_]


def _log_law(centres, grids):
    """Log-probabilities of every tuple of released counts on the product grid."""
    alpha = np.exp(-EPSILON)
    log_norm = np.log((1 - alpha) / (1 + alpha))
    axes = [log_norm - EPSILON * np.abs(grid - c) for c, grid in zip(centres, grids,
                                                                     strict=True)]
    return np.array([sum(cell) for cell in itertools.product(*axes)])


def _exact_epsilon(cls):
    calls, neighbour = _streams()
    c, c2 = _released_counts(cls, calls), _released_counts(cls, neighbour)
    assert len(c) == len(c2) == 3  # releases after calls 1, 3, 7
    grids = [np.arange(min(a, b) - WIDTH, max(a, b) + WIDTH + 1) for a, b in zip(c, c2,
                                                                                 strict=True)]
    return exact_epsilon(_log_law(c, grids), _log_law(c2, grids)), c, c2


def test_disjoint_blocks_keep_the_stream_at_epsilon():
    eps, c, c2 = _exact_epsilon(ContinualReleaseClassifier)
    assert [b - a for a, b in zip(c, c2, strict=True)] == [0, 1, 0]
    assert eps == pytest.approx(EPSILON, abs=1e-6)


def test_broken_twin_releasing_a_row_twice_is_caught_at_twice_epsilon():
    eps, c, c2 = _exact_epsilon(Cumulative)
    assert [b - a for a, b in zip(c, c2, strict=True)] == [0, 1, 1]
    assert eps == pytest.approx(2 * EPSILON, abs=1e-6)
    assert eps > EPSILON * 1.5  # the audit's verdict: the claim is violated
