"""Every public classifier on a 3-class table: it learns C labels (natively or by the
one-vs-rest of skdp/_multiclass.py) or refuses before spending, naming the fix; the
API page's table says which, from the same facts."""

from __future__ import annotations

import copy
import inspect
import pathlib
import warnings

import numpy as np
import pytest
from sklearn.base import ClassifierMixin

import skdp
from skdp._multiclass import multiclass_support, one_vs_rest_split, support_table
from skdp.accounting import PrivacyBudget, PrivacyCost
from skdp.exceptions import PrivacyLeakWarning, StaleStateError

CLASSIFIERS = sorted(
    (obj for name in skdp.__all__
     if inspect.isclass(obj := getattr(skdp, name)) and issubclass(obj, ClassifierMixin)),
    key=lambda c: c.__name__)

# Which classifiers beat the majority label on the table below, at ε = 8 and 1000 rows
# (measured with the seeds used here). The others run C-class end to end but do not
# learn at this size, as their binary versions: DP-Winnow and its decision-list
# embedding predict their private constant (the guard finds 1000 rows too few), and
# the non-private SOA assumes realizable labels, which the middle class (an interval
# of the mean) is not.
# The private decision list with ``bounds=`` (its real-valued mode, whose default "lift"
# score wins on digits: 0.55 at ε = 4 against 0.22 for the net score) measured
# 0.630–0.667 here over seeds 0–4 (majority 0.635; the net score 0.72): the three classes
# are bands of a mean, which one threshold per rule captures poorly. The continual-release
# wrapper's default list (0/1 input, net score, negations) reaches 0.70.
LEARNS = {"WinnowClassifier", "ConfidentWinnowClassifier", "DPSOAClassifier",
          "AdaptivePrivateOnlineClassifier", "BatchSanitizedOnlineClassifier",
          "PrivateExpertsClassifier", "ContinualReleaseClassifier",
          "GreedyDecisionListClassifier", "SOAClassifier"}


def _table(n=1000, seed=0):
    """3 classes by the mean of 4 features in [−1, 1], cut at the public bins ±0.25 of
    the online learners' default class (so "label 0" and "label 2" are thresholds)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 4))
    m = X.mean(axis=1)
    return X, np.where(m < -0.25, 0, np.where(m >= 0.25, 2, 1))


def _make(cls, **kw):
    params = cls().get_params()
    if "epsilon" in params:
        kw = {"epsilon": 8.0, "classes": [0, 1, 2], "random_state": 0, **kw}
    if "bounds" in params and "epsilon" in params:
        # the private list in its real-valued mode; the non-private greedy list stays on
        # x > 0 bits (with bounds= and its lift score it reaches 0.659 here, majority 0.635)
        kw.setdefault("bounds", (-1.0, 1.0))
    return cls(**kw)


def test_every_public_classifier_is_listed():
    assert len(CLASSIFIERS) == 16
    assert {multiclass_support(c) for c in CLASSIFIERS} == {"native", "one-vs-rest",
                                                            "binary only"}


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_three_classes_learn_or_refuse_before_spending(cls):
    X, y = _table()
    support = multiclass_support(cls)
    budget = PrivacyBudget(100.0, 1e-3)
    private = "budget" in cls().get_params()
    kw = {"budget": budget, "random_state": skdp.TestingSeed(0)} if private else {}
    est = _make(cls, **kw)
    if support == "binary only":
        with pytest.raises(ValueError, match=r"Only binary.*multiclass skdp classifier"):
            est.fit(X, y)
        assert budget.charges == ()
        assert not cls().__sklearn_tags__().classifier_tags.multi_class
        return
    assert cls().__sklearn_tags__().classifier_tags.multi_class
    est.fit(X, y)
    np.testing.assert_array_equal(est.classes_, [0, 1, 2])
    pred = est.predict(X)
    assert set(np.unique(pred)) <= {0, 1, 2}
    proba = est.predict_proba(X)
    assert proba.shape == (len(X), 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(est.classes_[proba.argmax(axis=1)], pred)
    if support == "one-vs-rest":
        assert est.decision_function(X).shape == (len(X), 3)
        assert len(est.estimators_) == 3
    if "epsilon" in est.get_params():
        assert sum(e for e, _, _ in budget.charges) == pytest.approx(8.0)
    majority = np.bincount(y).max() / len(y)
    accuracy = np.mean(pred == y)
    if cls.__name__ in LEARNS:
        assert accuracy >= majority + 0.05, (accuracy, majority)
    else:  # measured: these do not learn here (see LEARNS); if one starts to, move it
        assert accuracy < majority + 0.05


@pytest.mark.parametrize("cls", [c for c in CLASSIFIERS
                                 if multiclass_support(c) == "one-vs-rest"
                                 and "epsilon" in c().get_params()],
                         ids=lambda c: c.__name__)
def test_one_vs_rest_pays_once_and_splits_by_optimal_composition(cls):
    X, y = _table(300)
    budget = PrivacyBudget(10.0, 1e-4)
    est = _make(cls, epsilon=3.0, delta=1e-5, budget=budget,
                random_state=skdp.TestingSeed(1)).fit(X, y)
    (charge,) = budget.charges
    assert charge[:2] == (3.0, 1e-5)
    assert "one-vs-rest over 3 classes" in charge[2]
    assert est.privacy_spent_ == PrivacyCost(3.0, 1e-5)
    share = one_vs_rest_split(3.0, 1e-5, 3)
    assert share.epsilon >= 1.0 and share.delta == pytest.approx(1e-5 / 6)
    for copy_ in est.estimators_:
        assert (copy_.epsilon, copy_.delta, copy_.budget) == (share.epsilon, share.delta, None)
        assert copy_.privacy_spent_.epsilon <= share.epsilon
        assert copy_.privacy_spent_.delta <= share.delta


def test_optimal_split_beats_basic_only_with_delta():
    assert one_vs_rest_split(1.0, 0.0, 3).epsilon == pytest.approx(1 / 3)
    assert one_vs_rest_split(1.0, 1e-6, 3).epsilon > 1 / 3
    assert one_vs_rest_split(1.0, 1e-6, 20).epsilon > 1.05 / 20


def test_partial_fit_streams_three_classes_and_refuses_a_stale_copy():
    X, y = _table(400)
    est = skdp.DPWinnowClassifier(epsilon=4.0, bounds=(-1, 1), random_state=0)
    est.partial_fit(X[:200], y[:200], classes=[0, 1, 2])
    stale = copy.copy(est)
    est.partial_fit(X[200:], y[200:])
    assert est.estimators_[0].n_rounds_seen_ == 400
    with pytest.raises(StaleStateError):
        stale.partial_fit(X[200:], y[200:])
    with pytest.raises(ValueError, match="classes must be passed"):
        skdp.DPWinnowClassifier(epsilon=4.0, bounds=(-1, 1)).partial_fit(X, y)


def test_non_private_partial_fit_in_blocks_equals_fit():
    X, y = _table(600)
    whole = skdp.WinnowClassifier(bounds=(-1, 1)).fit(X, y)
    blocks = skdp.WinnowClassifier(bounds=(-1, 1))
    for part in np.array_split(np.arange(600), 3):
        blocks.partial_fit(X[part], y[part], classes=[0, 1, 2])
    np.testing.assert_array_equal(whole.decision_function(X), blocks.decision_function(X))


def test_bad_parameters_refused_before_the_one_vs_rest_charge():
    X, y = _table(200)
    budget = PrivacyBudget(10.0, 1e-4)
    with pytest.raises(ValueError):
        skdp.DPWinnowClassifier(epsilon=1.0, classes=[0, 1, 2], budget=budget,
                                bounds=(np.zeros(3), np.ones(3))).fit(X, y)
    with pytest.raises(ValueError, match="beyond n_rounds"):
        skdp.DPWinnowClassifier(epsilon=1.0, classes=[0, 1, 2], budget=budget,
                                bounds=(-1, 1), n_rounds=50, beyond_horizon="raise").fit(X, y)
    with pytest.raises(ValueError, match="labels not in classes"):
        skdp.DPSOAClassifier(epsilon=1.0, classes=[0, 1, 5], budget=budget).fit(X, y)
    assert budget.charges == ()


def test_inferred_label_set_warns_and_refit_binary_drops_the_copies():
    X, y = _table(300)
    est = skdp.PrivateExpertsClassifier(epsilon=4.0, random_state=0)
    with pytest.warns(PrivacyLeakWarning, match="label set"):
        est.fit(X, y)
    assert len(est.estimators_) == 3
    est.set_params(classes=[0, 1]).fit(X, (y > 0).astype(int))
    assert not hasattr(est, "estimators_")
    assert est.decision_function(X).shape == (300,)


def test_api_page_table_matches_the_facts():
    api = (pathlib.Path(__file__).parents[1] / "docs" / "api.rst").read_text()
    table = support_table(CLASSIFIERS)
    assert table in api, "regenerate docs/api.rst's table with:\n" + table


def test_binary_only_message_has_no_label_values():
    X, _ = _table(50)
    y = np.array(["secret-a", "secret-b", "secret-c"] * 16 + ["secret-a"] * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError) as info:
            skdp.SubsampleAggregatePredictor().fit(X, y)
    assert "secret" not in str(info.value)


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_sparse_input_learns_or_is_refused_before_spending(cls):
    # Binary labels here (the 3-class test above covers labels); the API table's
    # sparse column is this tag.
    import scipy.sparse as sp

    X, y = _table(300)
    X = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))  # half the cells unstored
    y = (y == 2).astype(int)
    budget = PrivacyBudget(100.0, 1e-3)
    private = "budget" in cls().get_params()
    kw = {"budget": budget, "random_state": skdp.TestingSeed(0), "classes": [0, 1]} \
        if private else {}
    est = _make(cls, **kw)
    if not est.__sklearn_tags__().input_tags.sparse:  # the list's bounds= mode is dense
        with pytest.raises(TypeError, match="dense data is required"):
            est.fit(X, y)
        assert budget.charges == ()
        return
    est.fit(X, y)
    assert est.predict(X).shape == (300,)
    assert est.predict_proba(X).shape == (300, 2)
