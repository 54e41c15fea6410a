"""clone / deepcopy / pickle / GridSearchCV / cross_val_score never reset or duplicate
spent privacy (documented in DPWinnowClassifier's Privacy section)."""

import copy
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline

from skdp import PrivacyBudget, TestingSeed
from skdp.exceptions import BudgetExhaustedError, PrivacyWarning, StaleStateError
from skdp.linear import DPWinnowClassifier
from skdp.preprocessing import PublicBoundsClipper

P = dict(epsilon=1.0, delta=1e-6, margin=0.5, max_updates=30, n_samples=3)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        yield


def _data(rng, n=300):
    X = rng.normal(size=(n, 4)) * 5  # raw scale: the pipeline's public clipper maps it
    return X, (X[:, 0] > 0).astype(int)


def test_clone_shares_the_ledger(rng):
    X, y = _data(rng)
    budget = PrivacyBudget(3.0, 1e-5)
    clf = DPWinnowClassifier(**P, budget=budget, random_state=TestingSeed(0))
    twin = clone(clf)
    assert twin.budget.shares_ledger_with(budget)
    clf.fit(np.clip(X / 10, -1, 1), y)
    twin.fit(np.clip(X / 10, -1, 1), y)
    assert budget.spent.epsilon == pytest.approx(2.0)
    with pytest.raises(BudgetExhaustedError):
        clone(clf).set_params(epsilon=1.5).fit(np.clip(X / 10, -1, 1), y)


def test_deepcopy_and_pickle_keep_spent_privacy(rng):
    X, y = _data(rng)
    X = np.clip(X / 10, -1, 1)
    budget = PrivacyBudget(2.0, 1e-5)
    clf = DPWinnowClassifier(**P, budget=budget, random_state=TestingSeed(0)).fit(X, y)
    for copy_ in (copy.deepcopy(clf), pickle.loads(pickle.dumps(clf))):
        assert copy_.privacy_spent_ == clf.privacy_spent_
        assert copy_.budget.spent.epsilon == pytest.approx(1.0)
        np.testing.assert_array_equal(copy_.predict(X), clf.predict(X))
    restored = pickle.loads(pickle.dumps(clf))
    restored.fit(X, y)  # a new stream charges the same (shared) ledger
    assert budget.spent.epsilon == pytest.approx(2.0)


def test_forked_stream_cannot_be_continued_twice(rng):
    X, y = _data(rng)
    X = np.clip(X / 10, -1, 1)
    clf = DPWinnowClassifier(**P, random_state=0).partial_fit(X[:100], y[:100], classes=[0, 1])
    fork = copy.deepcopy(clf)
    pickled = pickle.loads(pickle.dumps(clf))
    clf.partial_fit(X[100:200], y[100:200])  # the original continues: fine
    with pytest.raises(StaleStateError, match="stale copy"):
        fork.partial_fit(X[200:], y[200:])
    with pytest.raises(StaleStateError, match="stale copy"):
        pickled.partial_fit(X[200:], y[200:])
    clf.partial_fit(X[200:], y[200:])  # the original is not blocked
    fork.fit(X, y)  # a fresh (charged) stream is always allowed


def test_grid_search_and_cross_val_charge_every_fit(rng):
    X, y = _data(rng)
    budget = PrivacyBudget(12.0, 1e-4)
    pipe = make_pipeline(PublicBoundsClipper(-10.0, 10.0),
                         DPWinnowClassifier(**P, budget=budget, random_state=TestingSeed(0)))
    search = GridSearchCV(pipe, {"dpwinnowclassifier__epsilon": [0.5, 1.0]}, cv=3)
    search.fit(X, y)
    # 3 folds × (0.5 + 1.0) + the refit at the best ε
    best = search.best_params_["dpwinnowclassifier__epsilon"]
    assert budget.spent.epsilon == pytest.approx(4.5 + best)
    spent = budget.spent.epsilon
    cross_val_score(pipe, X, y, cv=2)
    assert budget.spent.epsilon == pytest.approx(spent + 2.0)
    with pytest.raises(BudgetExhaustedError):
        GridSearchCV(pipe, {"dpwinnowclassifier__epsilon": [4.0]}, cv=3,
                     error_score="raise").fit(X, y)
