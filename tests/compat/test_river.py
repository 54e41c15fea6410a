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
from skdp.streams import ContinualReleaseClassifier, release_schedule  # noqa: E402

# Small batches draw the decision list's "too few rows for a rule list" warning.
pytestmark = pytest.mark.filterwarnings("ignore:.*too few for a rule list:UserWarning")

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


# -- ContinualReleaseClassifier in river ------------------------------------------------

# Each prediction reads every released model (about 2 ms a model on a loaded 2-core
# machine), so these tests use the first 400 rows in 16 batches of 25.
STREAM = PHISHING[:400]  # _differences_from_partial_fit_alone reads all 400 by default
STREAM_X = np.array([list(x.values()) for x, _ in STREAM])
STREAM_Y = np.array([label for _, label in STREAM])
BATCH = 25


def _continual(budget, **params):
    return ContinualReleaseClassifier(
        DPDecisionListClassifier(binarize=0.5), epsilon=1.0, delta=1e-6, budget=budget,
        random_state=TestingSeed(0), **params)


class _FlushesBeforePredicting(RiverClassifier):
    """Broken twin: learns the buffered rows before every prediction ("predict from the
    freshest rows"), so the calls, and the releases, follow the predictions."""

    def predict_one(self, x, **kwargs):
        self.flush()
        return super().predict_one(x, **kwargs)


class _RelearnsEveryRow(RiverClassifier):
    """Broken twin: every batch passes all rows seen so far (a refit on all the data):
    each row reaches many releases, while the stream is still charged once."""

    def flush(self):
        self._history = getattr(self, "_history", ([], []))
        self._history[0].extend(self._rows)
        self._history[1].extend(self._targets)
        self._rows, self._targets = list(self._history[0]), list(self._history[1])
        super().flush()


def _differences_from_partial_fit_alone(adapter, rows=400, **params):
    """What progressive validation through ``adapter`` over the first ``rows`` rows did
    beyond the estimator's own partial_fit on the same public batches: extra charges,
    other released models, spending on predictions. Empty for a correct adapter."""
    stream, X, y = STREAM[:rows], STREAM_X[:rows], STREAM_Y[:rows]
    budget = PrivacyBudget(epsilon=5.0, delta=1e-5)
    model = adapter(_continual(budget, **params), classes=CLASSES, batch_size=BATCH)
    _run(model, stream)
    reference_budget = PrivacyBudget(epsilon=5.0, delta=1e-5)
    reference = _continual(reference_budget, **params)
    for start in range(0, rows, BATCH):
        reference.partial_fit(X[start:start + BATCH], y[start:start + BATCH],
                              classes=CLASSES)
    problems = []
    charges = [charge[:2] for charge in budget.charges]  # (ε, δ, label)
    if charges != [charge[:2] for charge in reference_budget.charges]:
        problems.append(f"charges {charges}")
    if model.estimator.n_calls_ != reference.n_calls_ or not np.array_equal(
            model.estimator.predict_proba(X), reference.predict_proba(X)):
        problems.append("released models differ")
    spent = budget.spent
    for x, _ in stream[:20]:
        model.predict_one(x)
        model.predict_proba_one(x)
    if budget.spent != spent:
        problems.append("predictions spent")
    return problems


def test_continual_release_pays_its_stream_once_and_nothing_per_prediction():
    # 400 rows in 16 batches of 25: releases at calls 1, 3, 7, 15 (doubling up to 16
    # calls), the same models and the one (ε, δ) = (1, 1e-6) charge as partial_fit alone.
    assert _differences_from_partial_fit_alone(RiverClassifier) == []
    budget = PrivacyBudget(epsilon=5.0, delta=1e-5)
    model = RiverClassifier(_continual(budget), classes=CLASSES, batch_size=BATCH)
    accuracy = _run(model, STREAM)
    assert (model.n_batches_, accuracy.cm.total_weight) == (16, 375)
    assert model.estimator.n_releases_ == len(release_schedule("doubling", 1, 16, 16)) == 4
    assert [charge[:2] for charge in budget.charges] == [(1.0, 1e-6)]
    assert accuracy.get() > 0.75  # measured 0.829 (seeded)


@pytest.mark.parametrize("twin", [_FlushesBeforePredicting, _RelearnsEveryRow])
def test_broken_twins_fail_the_same_check(twin):
    assert _differences_from_partial_fit_alone(twin, rows=4 * BATCH) == [
        "released models differ"]  # charged the same: the stream is paid once


def test_a_fixed_schedule_predicts_nothing_before_its_first_release():
    model = RiverClassifier(_continual(None, schedule="fixed", block=4), classes=CLASSES,
                            batch_size=BATCH)
    for x, label in STREAM[:3 * BATCH]:
        model.learn_one(x, label)
    assert model.estimator.n_calls_ == 3 and model.estimator.n_releases_ == 0
    assert model.predict_one(STREAM[0][0]) is None  # river's metrics skip None
    assert model.predict_proba_one(STREAM[0][0]) == {False: 0.5, True: 0.5}
    fresh = RiverClassifier(_continual(None, schedule="fixed", block=4), classes=CLASSES,
                            batch_size=BATCH)
    accuracy = _run(fresh, STREAM)
    assert accuracy.cm.total_weight == len(STREAM) - 4 * BATCH  # first model after 4 calls


def test_clone_of_a_fitted_adapter_holds_an_unfitted_estimator_on_the_same_budget():
    budget = PrivacyBudget(epsilon=5.0, delta=1e-5)
    model = RiverClassifier(_continual(budget), classes=CLASSES, batch_size=BATCH)
    for x, label in STREAM[:60]:  # 2 calls, 10 rows in the adapter's buffer
        model.learn_one(x, label)
    fresh = model.clone()
    assert not hasattr(fresh.estimator, "n_calls_")  # no rows, no models, no stream
    assert fresh.estimator.budget.shares_ledger_with(budget)
    assert fresh.estimator.get_params()["epsilon"] == 1.0
    _run(fresh, STREAM[:100])  # a new stream: charged on its own
    assert [charge[:2] for charge in budget.charges] == [(1.0, 1e-6)] * 2
    assert model.estimator.n_calls_ == 2  # the original is untouched


def test_the_user_guide_example_runs_and_pays_once():
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "user_guide" / "river.rst"
    block = re.search(r"\.\. code-block:: python\n\n((?:   .*\n|\n)+)", page.read_text("utf-8"))
    code = "\n".join(line[3:] for line in block.group(1).splitlines())
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the list's "too few rows" early on
        exec(compile(code, str(page), "exec"), namespace)
    learner, budget, model = namespace["learner"], namespace["budget"], namespace["model"]
    assert (learner.n_calls_, model.n_learned_) == (12, 1200)
    # calls 1, 3 and 7 on the doubling schedule; the guard (noise unseeded here, as on
    # the page) may restart the schedule after a noisy check and release once more
    assert 3 <= learner.n_releases_ <= 12
    assert [charge[:2] for charge in budget.charges] == [(1.0, 1e-6)]
    assert namespace["accuracy"].cm.total_weight == 1150  # its value: fresh noise
