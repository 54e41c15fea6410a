"""predict_proba, decision_function and sample_weight of the decision lists (issue 18)."""

import warnings

import numpy as np
import pytest
import sklearn
from _planted import planted
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline

from skdp import PrivacyBudget
from skdp.decision_list import DPDecisionListClassifier, GreedyDecisionListClassifier
from skdp.decision_list._frequencies import smoothed_proba
from skdp.preprocessing import PublicBoundsBinarizer

pytestmark = pytest.mark.filterwarnings("ignore::skdp.PrivacyWarning")

ESTIMATORS = [GreedyDecisionListClassifier, DPDecisionListClassifier]


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_proba_rows_sum_to_one_and_predict_is_their_argmax(cls):
    X, y = planted(noise=0.1)
    y3 = np.where(X[:, 7] == 1, 2, y)
    for labels in (y, y3):
        clf = cls().fit(X, labels)
        proba = clf.predict_proba(X)
        assert proba.shape == (len(y), clf.classes_.size)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X))
        np.testing.assert_allclose(np.exp(clf.predict_log_proba(X)), proba)
        counts = clf.rule_class_counts_
        assert counts.shape == (len(clf.rules_) + 1, clf.classes_.size)
    binary = cls().fit(X, y)
    scores = binary.decision_function(X)
    assert scores.shape == (len(y),)
    np.testing.assert_array_equal(binary.classes_[(scores > 0).astype(int)], binary.predict(X))


def test_greedy_proba_is_the_empirical_frequency_of_the_region():
    X = np.array([[1, 0], [1, 0], [1, 0], [0, 1], [0, 1], [0, 0]])
    y = np.array([1, 1, 0, 0, 0, 1])
    clf = GreedyDecisionListClassifier(error_weight=1.0).fit(X, y)
    assert clf.export_text() == "if x1 then 0\nelif x0 then 1\nelse 1"
    np.testing.assert_allclose(clf.predict_proba(X[[0, 3, 5]]),
                               [[1 / 3, 2 / 3], [1, 0], [0, 1]])


def test_smoothed_proba_clips_adds_pseudo_counts_and_trusts_the_selection():
    noisy = np.array([[-3, 10], [0, 0], [5, 4]])
    p = smoothed_proba(noisy, [0, 1, -1], 2.0)
    np.testing.assert_allclose(p, [[3 / 14, 11 / 14], [1 / 4, 3 / 4], [6 / 11, 5 / 11]])


def test_dp_proba_is_near_the_truth_at_large_epsilon():
    X, y = planted(noise=0.0)
    clf = DPDecisionListClassifier(epsilon=50.0, classes=[0, 1], random_state=0).fit(X, y)
    assert clf.score(X, y) == 1.0
    # noise-free planted list: every region is pure, the counts nearly exact
    assert np.mean(clf.predict_proba(X).max(axis=1)) > 0.95


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_roc_auc_log_loss_and_calibration_on_raw_breast_cancer(cls):
    """Default construction on raw features (binarize=0.0): the tools users pair it with."""
    X, y = load_breast_cancer(return_X_y=True)
    # seeded where the class draws noise: on raw X every bit is 1, so a private list's
    # AUC is noise around 0.5 and fell below it once in an unseeded full run
    seeded = {"random_state": 0} if "random_state" in cls().get_params() else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auc = cross_val_score(cls(**seeded), X, y, cv=3, scoring="roc_auc")
        loss = cross_val_score(cls(**seeded), X, y, cv=3, scoring="neg_log_loss")
        calibrated = CalibratedClassifierCV(cls(**seeded), cv=3).fit(X, y)
    assert np.all(np.isfinite(auc)) and np.all(np.isfinite(loss))
    assert np.all(auc >= 0.5 - 1e-9)
    proba = calibrated.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_roc_auc_with_public_thresholds_is_informative():
    from skdp.datasets import breast_cancer_public_bounds

    data = load_breast_cancer()
    # Five seeds: since the length comes from a noisy count (issue 27) one seed's
    # 3-fold mean spreads by ±0.03 (seed 0: 0.84); over 8 seeds the mean is 0.878,
    # as with the former fixed two rules (0.876).
    auc = [cross_val_score(make_pipeline(
        PublicBoundsBinarizer(bounds=breast_cancer_public_bounds(data.feature_names),
                              n_thresholds=3),
        DPDecisionListClassifier(epsilon=1.0, classes=[0, 1], random_state=seed),
    ), data.data, data.target, cv=3, scoring="roc_auc").mean() for seed in range(5)]
    assert np.mean(auc) > 0.85, auc


# -- sample_weight ---------------------------------------------------------------------
def test_greedy_weights_are_repetitions_and_zero_removes():
    X, y = planted(d=6, noise=0.2)
    X, y = X[:300], y[:300]
    w = np.random.default_rng(0).integers(0, 4, len(y))
    weighted = GreedyDecisionListClassifier().fit(X, y, sample_weight=w)
    repeated = GreedyDecisionListClassifier().fit(np.repeat(X, w, 0), np.repeat(y, w))
    assert weighted.rules_ == repeated.rules_
    np.testing.assert_allclose(weighted.predict_proba(X), repeated.predict_proba(X))
    half = GreedyDecisionListClassifier().fit(X, y, sample_weight=w / 2)
    assert half.rules_ == weighted.rules_


def test_dp_weights_are_clipped_to_one():
    X, y = planted(d=6)
    ones = DPDecisionListClassifier(classes=[0, 1], random_state=3).fit(X, y)
    big = DPDecisionListClassifier(classes=[0, 1], random_state=3).fit(
        X, y, sample_weight=np.full(len(y), 7.0))
    plain = DPDecisionListClassifier(classes=[0, 1], random_state=3).fit(X, y,
                                                                       sample_weight=None)
    assert ones.rules_ == big.rules_ == plain.rules_
    np.testing.assert_array_equal(ones.rule_class_counts_, big.rule_class_counts_)
    # zero weights remove rows; all-zero weights are refused before any privacy is spent
    keep = np.arange(len(y)) % 2 == 0
    zeroed = DPDecisionListClassifier(classes=[0, 1], random_state=3).fit(
        X, y, sample_weight=keep.astype(float))
    subset = DPDecisionListClassifier(classes=[0, 1], random_state=3).fit(X[keep], y[keep])
    np.testing.assert_array_equal(zeroed.rule_class_counts_, subset.rule_class_counts_)
    budget = PrivacyBudget(epsilon=5.0)
    with pytest.raises(ValueError, match="weight"):
        DPDecisionListClassifier(classes=[0, 1], budget=budget).fit(
            X, y, sample_weight=np.zeros(len(y)))
    with pytest.raises(ValueError):
        DPDecisionListClassifier(classes=[0, 1], budget=budget).fit(
            X, y, sample_weight=-np.ones(len(y)))
    assert budget.spent.epsilon == 0


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_metadata_routing_sends_sample_weight(cls):
    X, y = planted(d=6)
    w = np.r_[np.zeros(len(y) // 2), np.ones(len(y) - len(y) // 2)]
    with sklearn.config_context(enable_metadata_routing=True):
        est = cls().set_fit_request(sample_weight=True)
        pipe = make_pipeline(est)
        pipe.fit(X, y, sample_weight=w)
        direct = cls().fit(X[w > 0], y[w > 0]) if cls is GreedyDecisionListClassifier else None
        if direct is not None:
            assert pipe[-1].rules_ == direct.rules_
        requested = cls().set_fit_request(sample_weight=True).set_score_request(
            sample_weight=False)
        search = GridSearchCV(requested, {"max_rules": [1, 2]}, cv=2)
        search.fit(X, y, sample_weight=w)
        assert search.best_estimator_.predict_proba(X).shape == (len(y), 2)
        # without the request the router refuses the weight instead of dropping it
        with pytest.raises(Exception, match="sample_weight"):
            make_pipeline(cls()).fit(X, y, sample_weight=w)
