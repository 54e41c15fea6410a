"""skdp.metrics.make_private_scorer: charges, sklearn's search tools, bad input."""

import math
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from joblib import parallel_backend
from sklearn.metrics import accuracy_score, balanced_accuracy_score
from sklearn.model_selection import (
    GridSearchCV,
    KFold,
    RandomizedSearchCV,
    ShuffleSplit,
    cross_val_score,
    cross_validate,
)

import skdp.metrics as metrics
from skdp import (
    BudgetExhaustedError,
    DPDecisionListClassifier,
    PrivacyBudget,
    PrivacyParameterError,
)
from skdp.metrics import PrivateScorer, make_private_scorer

rng = np.random.default_rng(0)
X = rng.integers(0, 2, size=(300, 8))
y = X[:, 0] | X[:, 1]
FIT_EPS, SCORE_EPS = 0.5, 0.25  # binary fractions: ledger sums are exact
GRID = {"max_rules": [2, 4]}


def _model(budget):
    return DPDecisionListClassifier(epsilon=FIT_EPS, delta=1e-6, classes=[0, 1], budget=budget)


def _scorer(budget, metric="accuracy"):
    return make_private_scorer(metric, epsilon=SCORE_EPS, budget=budget, classes=[0, 1])


def _score_charges(budget):
    return [c for c in budget.charges if c[2] is not None and c[2].startswith("PrivateScorer")]


# ---------------------------------------------------------------------- bad input


@given(st.one_of(st.floats(max_value=0.0), st.just(float("nan")), st.just(float("inf")),
                 st.booleans(), st.text(max_size=3), st.none(), st.just(1e-12)))
def test_bad_epsilon_is_refused_before_any_spend(epsilon):
    budget = PrivacyBudget(10.0)
    with pytest.raises(PrivacyParameterError, match="epsilon"):
        make_private_scorer("accuracy", epsilon=epsilon, budget=budget)
    assert budget.spent.epsilon == 0


@pytest.mark.parametrize("budget", [None, 4.0, "ledger"])
def test_a_missing_budget_is_refused(budget):
    with pytest.raises(PrivacyParameterError, match="budget=PrivacyBudget"):
        make_private_scorer("accuracy", epsilon=1.0, budget=budget)
    with pytest.raises(PrivacyParameterError, match="budget=PrivacyBudget"):
        PrivateScorer("accuracy", 1.0, budget)  # the class checks too


@pytest.mark.parametrize("metric", ["roc_auc", "f1", "Accuracy", None])
def test_an_unknown_metric_is_refused(metric):
    with pytest.raises(ValueError, match="metric must be one of"):
        make_private_scorer(metric, epsilon=1.0, budget=PrivacyBudget(1.0))


def test_balanced_accuracy_needs_public_classes():
    with pytest.raises(ValueError, match="classes"):
        make_private_scorer("balanced_accuracy", epsilon=1.0, budget=PrivacyBudget(1.0))
    with pytest.raises(ValueError, match="distinct"):
        make_private_scorer("balanced_accuracy", epsilon=1.0, budget=PrivacyBudget(1.0),
                            classes=[0, 0])


def test_sample_weight_and_bad_y_are_refused_unpaid_and_unprinted():
    budget = PrivacyBudget(10.0, 1e-3)
    model = _model(budget).fit(X, y)
    scorer = _scorer(budget)
    before = budget.spent.epsilon
    with pytest.raises(ValueError, match="sample_weight"):
        scorer(model, X, y, sample_weight=np.ones(len(y)))
    with pytest.raises(ValueError, match="one label per row") as info:
        scorer(model, X, y[:-1])
    assert "299" not in str(info.value) and "300" not in str(info.value)
    assert budget.spent.epsilon == before


# ---------------------------------------------------------------------- the release


@pytest.mark.parametrize("metric, sk", [("accuracy", accuracy_score),
                                        ("balanced_accuracy", balanced_accuracy_score)])
def test_without_noise_the_cells_give_sklearns_score(metric, sk):
    r = np.random.default_rng(1)
    y_true, y_pred = r.integers(0, 3, 50), r.integers(0, 3, 50)
    cells = metrics._cell_counts(metric, y_true, y_pred, np.arange(3))
    assert cells.sum() == 50
    assert metrics._scores_from_noisy(metric, cells) == pytest.approx(sk(y_true, y_pred))


@given(st.lists(st.integers(-10**6, 10**6), min_size=2, max_size=12).filter(
    lambda v: len(v) % 2 == 0))
def test_any_noisy_cells_give_a_score_in_the_unit_interval(noisy):
    for metric in ("accuracy", "balanced_accuracy") if len(noisy) > 2 else ("accuracy",):
        cells = np.array(noisy if metric == "balanced_accuracy" else noisy[:2])
        assert 0.0 <= metrics._scores_from_noisy(metric, cells) <= 1.0


def test_the_score_never_uses_the_exact_fold_size():
    # The denominator is the noisy correct + wrong, clipped at 0: from noisy cells only.
    assert metrics._scores_from_noisy("accuracy", np.array([7, -3])) == 1.0
    assert metrics._scores_from_noisy("accuracy", np.array([-2, -5])) == 0.0
    assert metrics._scores_from_noisy("accuracy", np.array([3, 1])) == 0.75
    assert metrics._scores_from_noisy("balanced_accuracy", np.array([1, 1, 4, 0])) == 0.75


def test_noisy_scores_are_unbiased_enough_and_seeded():
    cells = np.tile([150, 50], (4000, 1))
    a = metrics._noisy_scores("accuracy", cells, 1.0, np.random.default_rng(3))
    b = metrics._noisy_scores("accuracy", cells, 1.0, np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    assert a.min() >= 0 and a.max() <= 1
    assert abs(a.mean() - 0.75) < 0.005 and 0.003 < a.std() < 0.02


def test_each_call_charges_epsilon_before_it_returns():
    budget = PrivacyBudget(10.0, 1e-3)
    model = _model(budget).fit(X, y)
    scorer = _scorer(budget, "balanced_accuracy")
    score = scorer(model, X[:100], y[:100])
    assert 0.0 <= score <= 1.0
    assert _score_charges(budget) == [(SCORE_EPS, 0.0, scorer.label)]
    scorer(model, X[100:], y[100:])
    assert len(_score_charges(budget)) == 2


def test_an_exhausted_budget_releases_nothing():
    budget = PrivacyBudget(FIT_EPS + SCORE_EPS, 1e-3)
    model = _model(budget).fit(X, y)
    scorer = _scorer(budget)
    scorer(model, X, y)
    with pytest.raises(BudgetExhaustedError):
        scorer(model, X, y)
    assert budget.spent.epsilon == FIT_EPS + SCORE_EPS


def test_the_scorer_pickles_with_its_ledger():
    budget = PrivacyBudget(10.0, 1e-3)
    model = _model(budget).fit(X, y)
    copy = pickle.loads(pickle.dumps(_scorer(budget)))
    copy(model, X, y)
    assert budget.spent.epsilon == FIT_EPS + SCORE_EPS


def test_cost_counts_every_call():
    scorer = _scorer(PrivacyBudget(1.0))
    assert scorer.cost(4, 5) == (4 * 5 * SCORE_EPS, 0.0)
    assert scorer.cost(4, KFold(3)) == (3.0, 0.0)
    assert scorer.cost(2, ShuffleSplit(7)) == (3.5, 0.0)
    assert scorer.cost(2, 3, return_train_score=True) == (3.0, 0.0)
    with pytest.raises(ValueError, match="n_candidates"):
        scorer.cost(0, 3)


# ---------------------------------------------------------------------- sklearn's tools


def _run(n_jobs, fn):
    if n_jobs == 1:
        return fn(1)
    with parallel_backend("loky", n_jobs=n_jobs):
        return fn(n_jobs)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_grid_search_ledger_equals_the_documented_cost(n_jobs):
    budget = PrivacyBudget(100.0, 1e-3)
    scorer = _scorer(budget)
    search = GridSearchCV(_model(budget), GRID, cv=KFold(3), scoring=scorer)
    _run(n_jobs, lambda j: search.set_params(n_jobs=j).fit(X, y))
    fits = (2 * 3 + 1) * FIT_EPS
    assert budget.spent.epsilon == fits + scorer.cost(2, KFold(3)).epsilon == 5.0
    assert len(_score_charges(budget)) == 6
    assert np.all((search.cv_results_["mean_test_score"] >= 0)
                  & (search.cv_results_["mean_test_score"] <= 1))
    assert search.best_params_["max_rules"] in (2, 4)
    assert budget.verify()


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_randomized_search_cross_val_score_and_cross_validate(n_jobs):
    budget = PrivacyBudget(100.0, 1e-3)
    scorer = _scorer(budget, "balanced_accuracy")
    rs = RandomizedSearchCV(_model(budget), {"max_rules": [2, 3, 4]}, n_iter=2, cv=KFold(2),
                            scoring=scorer, random_state=0)
    _run(n_jobs, lambda j: rs.set_params(n_jobs=j).fit(X, y))
    assert len(_score_charges(budget)) == 4
    scores = _run(n_jobs, lambda j: cross_val_score(_model(budget), X, y, cv=KFold(3),
                                                     scoring=scorer, n_jobs=j))
    assert scores.shape == (3,) and np.all((scores >= 0) & (scores <= 1))
    out = _run(n_jobs, lambda j: cross_validate(_model(budget), X, y, cv=KFold(3),
                                                 scoring={"acc": scorer}, n_jobs=j,
                                                 return_train_score=True))
    assert out["test_acc"].shape == (3,)
    assert len(_score_charges(budget)) == 4 + 3 + 6  # train scores are releases too
    assert budget.spent.epsilon == pytest.approx((5 + 3 + 3) * FIT_EPS + 13 * SCORE_EPS,
                                                 abs=1e-12)


def test_reuse_and_overlapping_folds_are_charged_every_time():
    budget = PrivacyBudget(100.0, 1e-3)
    scorer = _scorer(budget)
    for cv in (KFold(3), KFold(3), ShuffleSplit(4, test_size=0.5, random_state=0)):
        cross_val_score(_model(budget), X, y, cv=cv, scoring=scorer)
    assert len(_score_charges(budget)) == 3 + 3 + 4
    assert math.isclose(budget.spent.epsilon, 10 * FIT_EPS + 10 * SCORE_EPS)


def test_a_search_the_budget_cannot_score_stops_unpaid():
    # 7 fits (3.5) + 6 scores (1.5) = 5.0; give 4.5: the last scores are refused.
    budget = PrivacyBudget(4.5, 1e-3)
    search = GridSearchCV(_model(budget), GRID, cv=KFold(3), scoring=_scorer(budget),
                          error_score="raise")
    with pytest.raises(BudgetExhaustedError):
        search.fit(X, y)
    assert budget.spent.epsilon <= 4.5


def test_the_readme_search_spends_exactly_its_documented_cost():
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```python\n(.*?)```", readme, re.S)
                 if "make_private_scorer" in b)
    namespace = {}
    exec(compile(block, "README.md", "exec"), namespace)
    fits = 7 * 0.5  # 2 candidates x 3 folds + the refit
    scores = namespace["scorer"].cost(n_candidates=2, cv=3).epsilon
    assert namespace["budget"].spent.epsilon == fits + scores == 5.0


@pytest.mark.slow  # ~12 s: starts a two-process LocalCluster
def test_grid_search_on_a_dask_cluster_charges_the_documented_cost(dask_client):
    budget = PrivacyBudget(100.0, 1e-3)
    scorer = _scorer(budget)
    search = GridSearchCV(_model(budget), GRID, cv=KFold(3), scoring=scorer)
    with parallel_backend("dask"):
        search.fit(X, y)
    assert budget.spent.epsilon == 7 * FIT_EPS + scorer.cost(2, 3).epsilon == 5.0
    assert len(_score_charges(budget)) == 6
