"""skdp.compat.river with the real river: progressive validation without ε per prediction."""

import warnings

import numpy as np
import pytest

from skdp import TestingSeed

river = pytest.importorskip("river")

from river import datasets, evaluate, metrics  # noqa: E402

from skdp.accounting import PrivacyBudget  # noqa: E402
from skdp.compat.river import RiverClassifier  # noqa: E402
from skdp.decision_list import DPDecisionListClassifier  # noqa: E402
from skdp.exceptions import PrivacyWarning  # noqa: E402
from skdp.linear import DPWinnowClassifier  # noqa: E402
from skdp.prediction import PrivatePredictor  # noqa: E402

PHISHING = list(datasets.Phishing())  # 1250 rows, 9 features in [0, 1], labels bool
CLASSES = [False, True]


class _ChargingLearner:
    """Test double: charges ``budget`` ε = 1 per partial_fit (raising, unchanged, when it
    cannot pay), predicts the majority label of its last batch (post-processing of what
    it released), has no predict_proba, and may raise a stop flag after ``stop_after``."""

    def __init__(self, budget, stop_after=None):
        self.budget, self.stop_after, self.calls = budget, stop_after, 0

    def partial_fit(self, X, y, classes=None):
        self.budget.spend(1.0, 0.0, label="batch")  # raises BudgetExhaustedError first
        if classes is not None:
            self.classes_ = np.asarray(classes)
        self.calls += 1
        self.label_ = self.classes_[np.argmax([np.sum(y == c) for c in self.classes_])]
        if self.stop_after is not None and self.calls >= self.stop_after:
            self.updates_stopped_ = True
        return self

    def predict(self, X):
        return np.full(len(X), self.label_)


def _run(model, data=PHISHING, metric=None):
    metric = metric or metrics.Accuracy()
    evaluate.progressive_val_score(data, model, metric)
    return metric


def _decision_list(budget):
    return DPDecisionListClassifier(epsilon=1.0, binarize=0.5, budget=budget,
                                    random_state=TestingSeed(0))


def test_progressive_validation_pays_per_batch_not_per_prediction():
    budget = PrivacyBudget(epsilon=100.0)
    model = RiverClassifier(_decision_list(budget), classes=CLASSES, batch_size=100)
    accuracy = _run(model)
    n_predictions = accuracy.cm.total_weight
    # 1250 rows: 12 full batches learned, 50 rows still buffered; no model before row 101
    assert (model.n_seen_, model.n_learned_, model.n_batches_) == (1250, 1200, 12)
    assert n_predictions == 1150
    # exactly what partial_fit alone spends on the same 12 batches, without predicting
    reference_budget = PrivacyBudget(epsilon=100.0)
    reference = _decision_list(reference_budget)
    X = np.array([list(x.values()) for x, _ in PHISHING[:1200]])
    y = np.array([label for _, label in PHISHING[:1200]])
    for start in range(0, 1200, 100):
        reference.partial_fit(X[start:start + 100], y[start:start + 100], classes=CLASSES)
    assert budget.spent.epsilon == pytest.approx(reference_budget.spent.epsilon)
    assert len(budget.charges) == len(reference_budget.charges) <= 12  # ≤ ε = 1 a batch
    assert accuracy.get() > 0.75  # measured 0.86 at seed 0
    # more predictions from the released state spend nothing
    spent = budget.spent
    for x, _ in PHISHING[:500]:
        model.predict_one(x)
        model.predict_proba_one(x)
    assert budget.spent == spent


def test_dp_winnow_spends_its_stream_plan_once():
    budget = PrivacyBudget(epsilon=5.0, delta=1e-5)
    estimator = DPWinnowClassifier(epsilon=1.0, bounds=(0, 1), budget=budget,
                                   random_state=TestingSeed(0))
    model = RiverClassifier(estimator, classes=CLASSES, batch_size=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "cannot learn within n_rounds"
        accuracy = _run(model)
    assert model.n_batches_ == 25 and accuracy.cm.total_weight == 1200
    assert budget.spent.epsilon == pytest.approx(1.0) and len(budget.charges) == 1


def test_predict_proba_one_is_a_distribution_over_classes_and_roc_auc_runs():
    model = RiverClassifier(
        DPDecisionListClassifier(epsilon=1.0, binarize=0.5, random_state=0),
        classes=CLASSES, batch_size=200)
    assert model.predict_proba_one(PHISHING[0][0]) == {False: 0.5, True: 0.5}  # no release
    assert model.predict_one(PHISHING[0][0]) is None
    auc = _run(model, metric=metrics.ROCAUC())
    assert 0.5 < auc.get() <= 1.0
    proba = model.predict_proba_one(PHISHING[0][0])
    assert set(proba) == set(CLASSES) and sum(proba.values()) == pytest.approx(1.0)


def test_without_predict_proba_a_one_hot_of_predict():
    model = RiverClassifier(_ChargingLearner(PrivacyBudget(10.0)), classes=["a", "b"],
                            batch_size=3)
    for label in ["b", "b", "a"]:
        model.learn_one({"f": 1.0}, label)
    assert model.predict_one({"f": 0.0}) == "b"
    assert model.predict_proba_one({"f": 0.0}) == {"a": 0.0, "b": 1.0}


def test_budget_exhausted_mid_stream_stops_and_says_so():
    budget = PrivacyBudget(epsilon=3.5)
    learner = _ChargingLearner(budget)
    model = RiverClassifier(learner, classes=CLASSES, batch_size=100)
    with pytest.warns(PrivacyWarning, match="cannot pay for batch 4.*300 rows learned in 3"):
        _run(model)
    assert model.updates_stopped_ and "budget" in model.stop_reason_
    assert (model.n_seen_, model.n_learned_, model.n_batches_, learner.calls) == (
        1250, 300, 3, 3)
    assert budget.spent.epsilon == 3.0
    assert model.predict_one(PHISHING[0][0]) in CLASSES  # the last released model


def test_budget_too_small_for_the_first_batch_leaves_the_estimator_unfitted():
    budget = PrivacyBudget(epsilon=0.5, delta=1e-5)
    estimator = DPWinnowClassifier(epsilon=1.0, bounds=(0, 1), budget=budget,
                                   random_state=TestingSeed(0))
    model = RiverClassifier(estimator, classes=CLASSES, batch_size=100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("error", PrivacyWarning)
        with pytest.raises(PrivacyWarning, match="no released model"):
            _run(model)
    assert model.updates_stopped_ and model.n_batches_ == 0
    assert not hasattr(estimator, "classes_") and budget.spent.epsilon == 0.0


def test_the_estimators_own_stop_flag_stops_the_adapter():
    learner = _ChargingLearner(PrivacyBudget(100.0), stop_after=2)
    model = RiverClassifier(learner, classes=CLASSES, batch_size=100)
    with pytest.warns(PrivacyWarning, match="estimator stopped updating"):
        _run(model)
    assert model.updates_stopped_ and learner.calls == 2 and model.n_learned_ == 200


def test_flush_learns_the_buffered_rows_and_clone_is_fresh():
    learner = _ChargingLearner(PrivacyBudget(100.0))
    model = RiverClassifier(learner, classes=[0, 1], batch_size=10)
    for i in range(4):
        model.learn_one({"f": float(i)}, 1)
    assert learner.calls == 0
    model.flush()
    assert (learner.calls, model.n_learned_) == (1, 4)
    fresh = model.clone()
    assert (fresh.n_seen_, fresh.n_batches_, fresh.batch_size) == (0, 0, 10)


def test_bad_parameters_and_rows_are_refused_without_printing_data():
    with pytest.raises(TypeError, match="query-budgeted"):
        RiverClassifier(PrivatePredictor(), classes=[0, 1])
    with pytest.raises(ValueError, match="batch_size"):
        RiverClassifier(DPDecisionListClassifier(), classes=[0, 1], batch_size=0)
    with pytest.raises(ValueError, match="at least 2"):
        RiverClassifier(DPDecisionListClassifier(), classes=[0])
    with pytest.raises(TypeError, match="no partial_fit"):
        RiverClassifier(object(), classes=[0, 1])
    model = RiverClassifier(DPDecisionListClassifier(), classes=[0, 1])
    with pytest.raises(ValueError, match="public classes") as bad_label:
        model.learn_one({"f": 1.0}, 7)
    assert "7" not in str(bad_label.value)
    with pytest.raises(ValueError, match="feature 'f'") as bad_value:
        model.learn_one({"f": "secret-value"}, 1)
    assert "secret" not in str(bad_value.value)


def test_rivers_own_estimator_checks_pass():
    from river.checks import yield_checks

    model = RiverClassifier(DPWinnowClassifier(epsilon=1.0, random_state=0),
                            classes=CLASSES, batch_size=20)
    failed = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for check in yield_checks(model):
            try:
                check(model.clone())
            except AssertionError as exc:
                failed.append(f"{check.__name__}: {exc}")
    assert not failed
