"""The Winnow family with the tools scikit-learn users pair a classifier with (issue 18):
``cross_val_score`` with ``roc_auc`` and ``neg_log_loss``, ``CalibratedClassifierCV``,
on breast cancer's raw features, default-constructed estimators; and what
``predict_proba``/``decision_function`` promise (vote share of the predicting weights,
columns in ``classes_`` order, no ``sample_weight``)."""

import warnings

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import VotingClassifier
from sklearn.model_selection import StratifiedKFold, TunedThresholdClassifierCV, cross_val_score
from sklearn.utils.validation import has_fit_parameter

from skdp.linear import (
    ConfidentWinnowClassifier,
    DPWinnowClassifier,
    OnlineDecisionListClassifier,
    WinnowClassifier,
)

CLASSIFIERS = [WinnowClassifier, ConfidentWinnowClassifier, DPWinnowClassifier,
               OnlineDecisionListClassifier]


def _defaults(cls):
    return cls(random_state=0) if "random_state" in cls().get_params() else cls()


@pytest.fixture(scope="module")
def breast_cancer():
    return load_breast_cancer(return_X_y=True)


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_scores_and_calibration_on_raw_features(cls, breast_cancer):
    X, y = breast_cancer
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auc = cross_val_score(_defaults(cls), X, y, cv=cv, scoring="roc_auc",
                              error_score="raise")
        loss = cross_val_score(_defaults(cls), X, y, cv=cv, scoring="neg_log_loss",
                               error_score="raise")
        calibrated = CalibratedClassifierCV(_defaults(cls)).fit(X, y)
    assert np.all(np.isfinite(auc)) and np.all((auc >= 0) & (auc <= 1))
    assert np.all(np.isfinite(loss)) and np.all(loss < 0)
    proba = calibrated.predict_proba(X)
    assert proba.shape == (len(y), 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_exact_winnow_ranks_breast_cancer(breast_cancer):
    """Where the learner has a signal, roc_auc sees it (measured 0.96 with 5 folds)."""
    X, y = breast_cancer
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auc = cross_val_score(WinnowClassifier(), X, y, cv=cv, scoring="roc_auc")
    assert auc.mean() > 0.9


@pytest.mark.parametrize("est", [
    WinnowClassifier(learning_rate=0.5),
    ConfidentWinnowClassifier(learning_rate=0.5, margin=0.5),
    DPWinnowClassifier(epsilon=4.0, margin=1.0, random_state=0),
    DPWinnowClassifier(epsilon=8.0, margin=1.0, setting="practical", random_state=0),
], ids=lambda e: type(e).__name__)
def test_proba_is_the_vote_share_of_the_predicting_weights(est):
    rng = np.random.default_rng(0)
    X = rng.choice([-1.0, 1.0], size=(3000, 6))
    y = np.where(X[:, 1] > 0, "yes", "no")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    margin = est.decision_function(X)
    proba = est.predict_proba(X)
    assert list(est.classes_) == ["no", "yes"] and proba.shape == (3000, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    share = (1.0 + margin) / 2.0
    n = est._n_votes()
    expected = share if n == np.inf else (n * share + 1.0) / (n + 2.0)
    np.testing.assert_allclose(proba[:, 1], expected)
    assert np.all((proba > 0) & (proba < 1))
    np.testing.assert_array_equal(est.classes_[proba.argmax(axis=1)], est.predict(X))


def test_dp_proba_uses_released_weights_only():
    """Changing the private scores after fit moves neither margins nor probabilities."""
    rng = np.random.default_rng(1)
    X = rng.choice([-1.0, 1.0], size=(4000, 5))
    y = (X[:, 0] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = DPWinnowClassifier(epsilon=4.0, margin=1.0, random_state=0).fit(X, y)
    before = est.predict_proba(X)
    est._scores = est._scores + 100.0 * rng.standard_normal(est._scores.shape)
    np.testing.assert_array_equal(est.predict_proba(X), before)
    assert est._n_votes() == est.parameters_.n_samples


def test_fallback_proba_is_the_noisy_count():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((200, 4))
    y = (rng.random(200) < 0.8).astype(int)
    with pytest.warns(UserWarning, match="privately estimated constant"):
        est = DPWinnowClassifier(epsilon=1.0, margin=0.1, bounds=(-3, 3), random_state=0,
                                 classes=[0, 1]).fit(X, y)
    assert est.constant_fallback_
    proba = est.predict_proba(X)
    assert np.all(proba == proba[0])  # one constant, whatever the row
    n_c = est.parameters_.count_rows
    assert n_c == len(y)  # fit releases only its final state: the count covers every row
    count = proba[0, 1] * (n_c + 2) - 1
    assert count == pytest.approx(round(count)) and 0 <= round(count) <= n_c
    assert abs(round(count) - y.sum()) <= 20  # geometric noise at ε = 1: P(|Z| > 20) < 1e-8
    assert est.predict(X[:1])[0] == int(proba[0, 1] > 0.5)


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_no_sample_weight(cls):
    """Order-dependent online learners: no weighted form equals repeated rows (see
    skdp.linear._base), so ``fit`` takes no sample_weight, as sklearn's convention."""
    assert not has_fit_parameter(cls(), "sample_weight")
    assert "sample_weight" not in cls().get_metadata_routing().fit.requests


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_soft_voting_and_tuned_threshold(cls, breast_cancer):
    """Soft voting takes every member's probabilities. TunedThresholdClassifierCV tunes the
    exact learners; DP-Winnow at 455 rows is its guard's constant, which sklearn refuses
    to tune ("makes constant predictions") — the honest answer for a constant."""
    X, y = breast_cancer
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vote = VotingClassifier([("a", _defaults(cls)), ("b", WinnowClassifier())],
                                voting="soft").fit(X, y)
        assert vote.predict_proba(X).shape == (len(y), 2)
        tuned = TunedThresholdClassifierCV(_defaults(cls))
        if cls in (WinnowClassifier, ConfidentWinnowClassifier):
            assert 0 < tuned.fit(X, y).best_threshold_ < 1
        else:
            with pytest.raises(ValueError, match="constant predictions"):
                tuned.fit(X, y)
