"""AdaptivePrivateOnlineClassifier's own parameters as an estimator; what it shares with
the other private online learners (checks, pipelines, budget semantics, bad input) is in
test_private_online_common.py."""

import pickle
import warnings

import pytest

from skdp import PrivacyBudget, TestingSeed
from skdp.exceptions import PrivacyWarning
from skdp.hypotheses.littlestone import PointVersionSpace, threshold_class
from skdp.online import AdaptivePrivateOnlineClassifier

P = dict(epsilon=2.0, delta=1e-6, n_sequences=256, random_state=TestingSeed(0))


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        yield


# ----------------------------------------------------------------- bad input
def _fresh(budget, **kw):
    params = {**P, "hypothesis_class": threshold_class(10), "budget": budget, **kw}
    return AdaptivePrivateOnlineClassifier(**params)


@pytest.mark.parametrize(
    ("kwargs", "X", "y", "match"),
    [
        (dict(preset="paper", hypothesis_class=threshold_class(8), n_sequences=None),
         [[0], [1]], [0, 1], "astronomically"),
        (dict(preset="paper", hypothesis_class=PointVersionSpace(8), n_sequences=None),
         [[0], [1]], [0, 1], "beyond the horizon"),
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
    state = pickle.dumps(clf._core)
    with pytest.raises(ValueError, match="not in classes"):
        clf.partial_fit([[1]], [7])
    with pytest.raises(ValueError, match="differs"):
        clf.partial_fit([[1]], [1], classes=[1, 2])
    with pytest.raises(ValueError, match="domain indices"):
        clf.partial_fit([[11]], [1])
    assert budget.spent.epsilon == 2.0 and clf.n_rounds_seen_ == 2
    assert pickle.dumps(clf._core) == state
