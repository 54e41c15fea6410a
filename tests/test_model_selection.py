"""skdp.model_selection.PrivateRandomizedSearchCV: plan, ledger, learners, refusals."""

import math
import pickle

import numpy as np
import pytest
from _search_cases import LEARNERS, X, learner, y
from hypothesis import given, settings
from hypothesis import strategies as st
from joblib import parallel_backend
from scipy import stats
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from skdp import (
    BudgetExhaustedError,
    DPDecisionListClassifier,
    DPWinnowClassifier,
    PrivacyBudget,
    PrivacyParameterError,
    PrivacyWarning,
    RectanglesPERPClassifier,
    SubsampleAggregatePredictor,
)
from skdp import TestingSeed as _TestingSeed
from skdp.model_selection import PrivateRandomizedSearchCV
from skdp.model_selection._stopping import make_stopping, search_epsilon
from skdp.preprocessing import PublicBoundsBinarizer

GRID = {"max_rules": [1, 2, 4, 8]}
TNB = "truncated_negative_binomial"


def _search(budget, estimator=None, grid=GRID, **kw):
    kw = {"epsilon": 2.0, "delta": 1e-6, "mean_trials": 3, **kw}
    estimator = DPDecisionListClassifier(classes=[0, 1]) if estimator is None else estimator
    return PrivateRandomizedSearchCV(estimator, grid, budget=budget, **kw)


# ---------------------------------------------------------------- stopping laws


@pytest.mark.parametrize("eta", [-0.5, 0.0, 0.5, 1.0, 3.0])
def test_truncated_negative_binomial_has_the_asked_mean_and_its_sampler_its_pmf(eta):
    law = make_stopping(TNB, 5.0, eta)
    k = np.arange(1, 200_000)
    pmf = law.pmf(k)
    assert math.isclose(pmf.sum(), 1.0, rel_tol=1e-9)
    assert math.isclose((k * pmf).sum(), 5.0, rel_tol=1e-6) and math.isclose(law.mean, 5.0)
    for x in (0.0, 0.3, 0.9):
        assert math.isclose(law.pgf(np.array(x)), (pmf * x**k).sum(), rel_tol=1e-9,
                            abs_tol=1e-15)
    rng = np.random.default_rng(1)
    draws = np.array([law.sample(rng) for _ in range(20_000)])
    edges = np.array([1, 2, 3, 4, 6, 9, 15, k.size + 1])  # last bin: 15 and above
    observed = np.histogram(draws, bins=edges)[0]
    cdf = np.concatenate([[0.0], np.cumsum(pmf)])  # cdf[j] = P[K ≤ j]
    expected = np.diff(cdf[edges - 1]) * draws.size
    assert stats.chisquare(observed, expected).pvalue > 1e-6
    if eta == 1.0:  # the geometric law of Liu & Talwar: γ = 1/E[K]
        assert math.isclose(law.gamma, 0.2, rel_tol=1e-9)


def test_poisson_law():
    law = make_stopping("poisson", 4.0)
    k = np.arange(0, 200)
    assert math.isclose(law.pmf(k).sum(), 1.0) and law.mean == 4.0
    assert math.isclose(law.pgf(np.array(0.5)), math.exp(-2.0))


@pytest.mark.parametrize("eta, factor", [(0.0, 2.0), (1.0, 3.0), (2.0, 4.0)])
def test_pure_dp_search_costs_two_plus_eta_trials(eta, factor):
    # Papernot & Steinke Cor. 4 ((2+η)ε₀); η = 1 is Liu & Talwar's 3ε₀. The λ̂ < ∞ terms
    # only help when log(1/γ) is small: for E[K] = 10 and ε₀ ≤ 1 they do not.
    law = make_stopping(TNB, 10.0, eta)
    for eps0 in (0.1, 0.5, 1.0):
        assert math.isclose(search_epsilon(eps0, law, 0.0), factor * eps0, rel_tol=1e-9)


def test_search_epsilon_grows_with_the_trial_epsilon_and_shrinks_with_delta():
    for law in (make_stopping(TNB, 10.0, 0.0), make_stopping("poisson", 10.0)):
        eps = [search_epsilon(e, law, 1e-6) for e in (0.05, 0.1, 0.5, 1.0)]
        assert eps == sorted(eps) and all(math.isfinite(e) for e in eps)
        assert search_epsilon(0.5, law, 1e-3) <= search_epsilon(0.5, law, 1e-9)


# ---------------------------------------------------------------- the plan


def test_plan_splits_the_total_and_says_what_each_part_costs():
    plan = _search(PrivacyBudget(10.0, 1e-3), epsilon=2.0, delta=0.0, eta=0.0,
                   mean_trials=10).plan()
    assert plan.trial_epsilon == 1.0 and plan.trial_delta == 0.0  # 2ε₀ = 2 (η = 0)
    assert plan.search == (2.0, 0.0) and plan.refit == (0.0, 0.0) and plan.total == (2.0, 0.0)
    liu_talwar = PrivateRandomizedSearchCV(DPDecisionListClassifier(), GRID, epsilon=3.0,
                                           delta=0.0, budget=PrivacyBudget(10.0)).plan()
    assert liu_talwar.trial_epsilon == 1.0  # the default: geometric law, 3ε₀
    assert liu_talwar.stopping.eta == 1.0 and liu_talwar.stopping.mean == 30
    refit = _search(PrivacyBudget(10.0, 1e-3), epsilon=3.0, delta=1e-6, refit=True,
                    eta=0.0, mean_trials=10).plan()
    assert refit.trial_epsilon == 1.0  # 2ε₀ for the search + ε₀ for the refit
    assert refit.refit == (1.0, refit.trial_delta) and refit.total == (3.0, 1e-6)
    assert math.isclose(refit.trial_delta, 1e-6 / (2 * 11))


def test_the_trial_epsilon_is_the_largest_that_fits():
    for kw in ({"epsilon": 1.0}, {"epsilon": 8.0}, {"stopping": "poisson", "epsilon": 4.0},
               {"eta": -0.5, "epsilon": 4.0, "refit": True}):
        search = _search(PrivacyBudget(100.0, 1e-3), delta=1e-5, mean_trials=10, **kw)
        plan = search.plan()
        law, delta_conv = plan.stopping, 1e-5 / 2
        refit = plan.refit.epsilon > 0
        cost = search_epsilon(plan.trial_epsilon, law, delta_conv) + refit * plan.trial_epsilon
        assert cost <= search.epsilon
        bigger = plan.trial_epsilon + 2.0**-20
        assert (search_epsilon(bigger, law, delta_conv) + refit * bigger) > search.epsilon


# ---------------------------------------------------------------- the ledger


def _run(n_jobs, fn):
    if n_jobs == 1:
        return fn()
    with parallel_backend("loky", n_jobs=n_jobs):
        return fn()


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("refit", [False, True])
def test_ledger_equals_the_plan_exactly(n_jobs, refit):
    budget = PrivacyBudget(20.0, 1e-3)
    search = _search(budget, refit=refit, n_jobs=n_jobs)
    plan = search.plan()
    _run(n_jobs, lambda: search.fit(X, y))
    assert budget.spent == plan.total == (2.0, 1e-6)
    assert [c[:2] for c in budget.charges] == ([tuple(plan.search), tuple(plan.refit)]
                                                if refit else [tuple(plan.search)])
    assert search.plan_ == plan and budget.verify()
    again = _search(budget, refit=refit, n_jobs=n_jobs)
    _run(n_jobs, lambda: again.fit(X, y))
    assert budget.spent == (4.0, 2e-6)


@pytest.mark.slow  # ~15 s: starts a two-process LocalCluster
def test_ledger_equals_the_plan_on_a_dask_cluster(dask_client):
    budget = PrivacyBudget(20.0, 1e-3)
    search = _search(budget, refit=True, mean_trials=6)
    with parallel_backend("dask"):
        search.fit(X, y)
    assert budget.spent == search.plan().total == (2.0, 1e-6)
    assert len(budget.charges) == 2
    assert search.best_params_["max_rules"] in GRID["max_rules"]


def test_cost_does_not_grow_with_the_grid():
    small, large = PrivacyBudget(10.0, 1e-3), PrivacyBudget(10.0, 1e-3)
    _search(small, grid={"max_rules": [2]}).fit(X, y)
    _search(large, grid={"max_rules": list(range(1, 200))}).fit(X, y)
    assert small.spent == large.spent == (2.0, 1e-6)


# ---------------------------------------------------------------- learners and pipelines


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_every_private_learner_can_be_searched(name):
    budget = PrivacyBudget(10.0, 1e-3)
    search = PrivateRandomizedSearchCV(learner(name), LEARNERS[name], epsilon=4.0,
                                       delta=1e-5, budget=budget, mean_trials=2)
    search.fit(X, y)
    assert budget.spent == (4.0, 1e-5)
    assert search.best_params_.keys() == LEARNERS[name].keys()
    assert search.predict(X).shape == y.shape and 0 <= search.score(X, y) <= 1
    assert search.best_estimator_.epsilon == search.plan_.trial_epsilon


def test_a_pipeline_and_estimators_as_values():
    budget = PrivacyBudget(10.0, 1e-3)
    pipe = Pipeline([("bin", PublicBoundsBinarizer(bounds=(0.0, 1.0), n_thresholds=1)),
                     ("clf", DPDecisionListClassifier(classes=[0, 1]))])
    grid = {"clf": [DPDecisionListClassifier(classes=[0, 1], max_rules=2),
                    DPWinnowClassifier(classes=[0, 1])]}
    search = PrivateRandomizedSearchCV(pipe, grid, epsilon=2.0, delta=1e-6, budget=budget,
                                       mean_trials=3, refit=True).fit(X, y)
    assert budget.spent == (2.0, 1e-6)
    clf = search.best_estimator_.named_steps["clf"]
    assert clf.epsilon == search.plan_.trial_epsilon and clf.budget is budget
    assert search.predict_proba(X).shape == (len(y), 2)
    assert list(search.classes_) == [0, 1]


def test_released_attributes_only():
    budget = PrivacyBudget(10.0, 1e-3)
    search = _search(budget).fit(X, y)
    results = search.cv_results_
    assert results["params"] == [search.best_params_] and search.best_index_ == 0
    assert results["mean_test_score"][0] == search.best_score_ and 0 <= search.best_score_ <= 1
    assert list(results["rank_test_score"]) == [1]
    # Nothing that counts the trials (K must stay secret) is kept on the search.
    public = {"best_params_", "best_score_", "best_estimator_", "best_index_", "cv_results_",
              "plan_", "multimetric_"}
    assert {k for k in vars(search) if k.endswith("_")} == public
    pickle.loads(pickle.dumps(search)).predict(X)


# ---------------------------------------------------------------- bad input, unpaid


def _refused_unpaid(exc, match=None, **kw):
    budget = kw.pop("budget", None) or PrivacyBudget(10.0, 1e-3)
    search = _search(budget, **kw)
    with pytest.raises(exc, match=match):
        search.fit(X, y)
    assert budget.spent == (0.0, 0.0)
    return search


@settings(max_examples=25, deadline=None)
@given(st.one_of(st.floats(max_value=0.0), st.just(float("nan")), st.just(float("inf")),
                 st.booleans(), st.text(max_size=2), st.none()))
def test_bad_epsilon_is_refused_unpaid(epsilon):
    _refused_unpaid(PrivacyParameterError, "epsilon", epsilon=epsilon)


@settings(max_examples=25, deadline=None)
@given(st.one_of(st.floats(max_value=-1e-300), st.floats(min_value=1.0),
                 st.just(float("nan")), st.none()))
def test_bad_delta_is_refused_unpaid(delta):
    _refused_unpaid(PrivacyParameterError, "delta", delta=delta)


@pytest.mark.parametrize("grid", [{}, [], [{}], {"max_rules": []}, {"max_rules": 3},
                                  "max_rules", {"epsilon": [1.0, 2.0]},
                                  {"clf__budget": [None]}, {"random_state": [0]}])
def test_bad_distributions_are_refused_unpaid(grid):
    _refused_unpaid(ValueError, grid=grid)


@pytest.mark.parametrize("kw, match", [
    ({"mean_trials": 1}, "mean_trials"), ({"mean_trials": 0}, "mean_trials"),
    ({"mean_trials": float("nan")}, "mean_trials"), ({"eta": -1.0}, "eta"),
    ({"stopping": "geometric"}, "stopping"), ({"validation_fraction": 1.0}, "validation"),
    ({"metric": "roc_auc"}, "metric"), ({"metric": "balanced_accuracy"}, "classes"),
])
def test_bad_search_parameters_are_refused_unpaid(kw, match):
    _refused_unpaid(ValueError, match, **kw)


def test_poisson_needs_delta_and_a_bare_seed_is_refused():
    _refused_unpaid(PrivacyParameterError, "poisson", stopping="poisson", delta=0.0)
    _refused_unpaid(PrivacyParameterError, "random_state", random_state=0)
    with pytest.raises(PrivacyParameterError, match="budget=PrivacyBudget"):
        _search("not a budget").fit(X, y)


def test_a_budget_too_small_for_the_plan_is_refused_unpaid():
    budget = PrivacyBudget(1.5, 1e-3)
    _refused_unpaid(BudgetExhaustedError, "nothing was spent", budget=budget)
    budget = PrivacyBudget(3.0, 1e-3)
    _refused_unpaid(BudgetExhaustedError, budget=budget, refit=True, epsilon=3.5)


def test_an_epsilon_too_small_for_any_trial_is_refused_unpaid():
    _refused_unpaid(PrivacyParameterError, "per-trial", epsilon=1e-9)


def test_a_learner_that_needs_delta_refuses_delta_zero_unpaid():
    _refused_unpaid(Exception, estimator=DPWinnowClassifier(classes=[0, 1]),
                    grid={"margin": [0.1]}, delta=0.0)


@pytest.mark.parametrize("estimator, grid", [
    (LogisticRegression(), {"C": [0.1, 1.0]}),
    (Pipeline([("scale", StandardScaler()), ("clf", DPDecisionListClassifier())]),
     {"clf__max_rules": [2]}),
    (Pipeline([("bin", PublicBoundsBinarizer(bounds=(0.0, 1.0))),
               ("clf", DPDecisionListClassifier())]),
     {"clf": [DPDecisionListClassifier(), LogisticRegression()]}),
])
def test_a_non_private_candidate_is_refused_unless_the_data_is_public(estimator, grid):
    _refused_unpaid(PrivacyParameterError, "public_data", estimator=estimator, grid=grid)
    budget = PrivacyBudget(10.0, 1e-3)
    search = _search(budget, estimator=estimator, grid=grid, public_data=True).fit(X, y)
    assert budget.spent == search.plan_.total
    assert search.predict(X).shape == y.shape


@pytest.mark.parametrize("predictor", [RectanglesPERPClassifier, SubsampleAggregatePredictor])
def test_query_budgeted_predictors_are_refused_unpaid(predictor):
    _refused_unpaid(ValueError, "stateful", estimator=predictor(classes=[0, 1]),
                    grid={"classes": [[0, 1]]})


def test_bad_input_messages_hold_no_data_value():
    secret = np.full((40, 6), 1234567)
    budget = PrivacyBudget(10.0, 1e-3)
    with pytest.raises(ValueError) as info:
        _search(budget, validation_fraction=0.001).fit(secret, np.zeros(40, dtype=int))
    assert "1234567" not in str(info.value) and "40" not in str(info.value)
    assert budget.spent == (0.0, 0.0)


# ---------------------------------------------------------------- testing mode


def test_a_testing_seed_reproduces_the_search_and_warns():
    def fit():
        budget = PrivacyBudget(10.0, 1e-3)
        with pytest.warns(PrivacyWarning, match="testing mode"):
            return _search(budget, random_state=_TestingSeed(3)).fit(X, y)

    a, b = fit(), fit()
    assert a.best_params_ == b.best_params_ and a.best_score_ == b.best_score_
    with pytest.warns(PrivacyWarning, match="testing mode"):  # a wrapped Generator too
        _search(PrivacyBudget(10.0, 1e-3),
                random_state=_TestingSeed(np.random.default_rng(0))).fit(X, y)


def test_poisson_may_release_nothing():
    # With μ tiny, K = 0 almost surely: nothing is released, the charge stands.
    budget = PrivacyBudget(100.0, 1e-3)
    search = _search(budget, stopping="poisson", mean_trials=1e-6, epsilon=60.0)
    with pytest.warns(PrivacyWarning, match="no trial"):
        search.fit(X, y)
    assert search.best_params_ == {} and math.isnan(search.best_score_)
    assert budget.spent == search.plan_.total
    with pytest.raises(AttributeError, match="no trial"):
        search.predict(X)
