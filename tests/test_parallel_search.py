"""One budget across a parallel model search: loky, threads and a dask cluster.

Regression tests for issue 13, item 1: on 1018f46 a ``cross_val_score(..., n_jobs=2)``
left ``budget.spent`` at 0 (the workers charged their own copies of the ledger), and a
``GridSearchCV`` over a budget smaller than the search ran every fit.
"""


import numpy as np
import pytest
from joblib import parallel_backend
from sklearn.exceptions import FitFailedWarning
from sklearn.model_selection import GridSearchCV, cross_val_score

from skdp import BudgetExhaustedError, DPDecisionListClassifier, PrivacyBudget

rng = np.random.default_rng(0)
X = rng.integers(0, 2, size=(300, 8))
y = X[:, 0] | X[:, 1]


@pytest.fixture(params=["sequential", "loky", "threading", "dask"])
def backend(request):
    if request.param == "dask":
        request.getfixturevalue("dask_client")
    return request.param


def _run(backend, fn):
    if backend == "sequential":
        return fn(n_jobs=1)
    with parallel_backend(backend, n_jobs=2):
        return fn(n_jobs=2)


def _model(budget, **params):
    return DPDecisionListClassifier(epsilon=1.0, delta=1e-6, classes=[0, 1], budget=budget,
                                    **params)


def test_cross_val_score_charges_every_fold_to_one_ledger(backend):
    budget = PrivacyBudget(100.0, 1e-3)
    scores = _run(backend, lambda n_jobs: cross_val_score(_model(budget), X, y, cv=5,
                                                           n_jobs=n_jobs))
    assert scores.shape == (5,)
    # Exactly the n_jobs=1 total: five releases of (1, 1e-6), whatever ran them.
    assert budget.spent.epsilon == pytest.approx(5.0, abs=1e-12)
    assert len(budget.charges) == 5
    assert budget.verify()


def test_a_budget_smaller_than_the_search_stops_it(backend):
    budget = PrivacyBudget(3.0, 1e-3)  # 3 of the 7 fits (2 candidates x 3 folds + refit)
    search = GridSearchCV(_model(budget), {"max_rules": [2, 4]}, cv=3, error_score="raise")
    with pytest.raises(BudgetExhaustedError, match=r"remains\. Nothing was spent"):
        _run(backend, lambda n_jobs: search.set_params(n_jobs=n_jobs).fit(X, y))
    assert budget.spent.epsilon <= 3.0 * (1 + 1e-12)
    assert len(budget.charges) == 3


def test_with_the_default_error_score_failed_fits_are_reported_not_paid(backend):
    budget = PrivacyBudget(3.0, 1e-3)
    search = GridSearchCV(_model(budget), {"max_rules": [2, 4]}, cv=3)
    with pytest.warns(FitFailedWarning, match="BudgetExhaustedError"), pytest.raises(
            (BudgetExhaustedError, ValueError)):
        _run(backend, lambda n_jobs: search.set_params(n_jobs=n_jobs).fit(X, y))
    assert budget.spent.epsilon <= 3.0 * (1 + 1e-12)
