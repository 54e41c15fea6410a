"""The decision list's partial_fit guard: a private check against a constant on every
call after the first (skdp.streams._guard.ConstantGuard, K = 1)."""

import numpy as np
import pytest

from skdp.decision_list import DPDecisionListClassifier


def _calls(rng, n=1000):
    X = rng.integers(0, 2, (n, 4)).astype(float)
    return X


@pytest.mark.parametrize("guard, expected", [(0.1, 1), (None, 0)])
def test_an_abrupt_change_is_answered_by_the_constant_at_once(guard, expected):
    # Call 1: every label 0 (its list predicts 0); call 2: every label 1, checked
    # before it is buffered. The list is next released at the end of call 3, so after
    # call 2 only the guard can follow the change.
    rng = np.random.default_rng(0)
    clf = DPDecisionListClassifier(epsilon=1.0, classes=[0, 1], random_state=0,
                                   guard=guard)
    clf.partial_fit(_calls(rng), np.zeros(1000, int))
    clf.partial_fit(_calls(rng), np.ones(1000, int))
    X = _calls(rng, 50)
    assert (clf.predict(X) == expected).all()
    proba = clf.predict_proba(X)
    assert (proba.argmax(axis=1) == expected).all()
    assert clf.n_releases_ == 1


def test_checked_rows_are_released_at_the_rest_of_epsilon_and_fit_keeps_epsilon():
    rng = np.random.default_rng(1)
    clf = DPDecisionListClassifier(epsilon=2.0, max_rules=2, classes=[0, 1],
                                   random_state=0, guard=0.25)
    clf.fit(_calls(rng), rng.integers(0, 2, 1000))
    assert clf._release_plan.epsilon == 2.0  # fit alone is unchanged
    for _ in range(2):
        clf.partial_fit(_calls(rng), rng.integers(0, 2, 1000))
    assert clf.n_releases_ == 2
    assert clf._release_plan.epsilon == pytest.approx(1.5)
    assert clf.privacy_spent_.epsilon == pytest.approx(2.0)  # one stream, paid once
    clf.fit(_calls(rng), rng.integers(0, 2, 1000))  # a new stream: back to ε
    assert clf._release_plan.epsilon == 2.0
