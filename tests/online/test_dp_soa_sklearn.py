"""DPSOAClassifier's own parameters as an estimator; what it shares with the other
private online learners (checks, pipelines, budget semantics, bad input) is in
test_private_online_common.py."""

import warnings

import pytest

from skdp import PrivacyBudget, TestingSeed
from skdp.exceptions import PrivacyWarning
from skdp.hypotheses.littlestone import PointVersionSpace, threshold_class
from skdp.online import DPSOAClassifier

P = dict(epsilon=2.0, delta=1e-6, n_trees=40, random_state=TestingSeed(0))


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        yield


# ----------------------------------------------------------------- bad input
def _fresh(budget, **kw):
    params = {**P, "hypothesis_class": threshold_class(10), "budget": budget, **kw}
    return DPSOAClassifier(**params)


@pytest.mark.parametrize(
    ("kwargs", "X", "y", "match"),
    [
        (dict(preset="theory", n_trees=None), [[0], [1]], [0, 1], "far beyond memory"),
        (dict(hypothesis_class=PointVersionSpace(8), n_leaves=3), [[0], [1]], [0, 1],
         "power of two"),
    ],
)
def test_bad_parameters_are_refused_before_the_charge(kwargs, X, y, match):
    budget = PrivacyBudget(10.0, 1e-4)
    with pytest.raises(ValueError, match=match):
        _fresh(budget, **kwargs).fit(X, y)
    assert budget.spent.epsilon == 0.0


def test_partial_fit_needs_classes_and_refuses_unseen_labels():
    budget = PrivacyBudget(10.0, 1e-4)
    clf = _fresh(budget)
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit([[0]], [0])
    assert budget.spent.epsilon == 0.0
    clf.partial_fit([[0], [3]], [0, 1], classes=[0, 1])
    state = (clf.n_rounds_seen_, clf._forest.hid.tobytes(), clf._hist_sparse.n_rounds)
    with pytest.raises(ValueError, match="not in classes"):
        clf.partial_fit([[1]], [7])
    with pytest.raises(ValueError, match="differs"):
        clf.partial_fit([[1]], [1], classes=[1, 2])
    with pytest.raises(ValueError, match="domain indices"):
        clf.partial_fit([[11]], [1])
    assert budget.spent.epsilon == 2.0
    assert (clf.n_rounds_seen_, clf._forest.hid.tobytes(), clf._hist_sparse.n_rounds) == state
