"""PERP's predict_proba / decision_function (issue 18): the answers, with a score."""

import warnings

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.model_selection import cross_val_score
from sklearn.utils.estimator_checks import check_estimator

from skdp import PrivacyWarning
from skdp.prediction import (
    DecisionStumpPERPClassifier,
    RectanglesPERPClassifier,
    perp_parameters,
)

EPS = 1000.0


def _sample(n, seed=0):
    X = np.random.default_rng(seed).random((n, 2))
    return X, np.all((X > 0.2) & (X < 0.8), axis=1).astype(int)


def _need():
    return perp_parameters(EPS, 1e-6, 0.1, 0.05, 1.0, 2, preset="charged").initial_sample_size


def _rect(**kw):
    return RectanglesPERPClassifier(epsilon=EPS, gamma=1.0, random_state=0, classes=[0, 1], **kw)


@pytest.mark.parametrize("method", ["predict", "predict_proba", "decision_function"])
def test_every_answering_method_spends_alike_and_moves_the_stream(method):
    X, y = _sample(_need())
    Xq = _sample(2000, seed=1)[0]
    clf = _rect().fit(X, y)
    getattr(clf, method)(Xq)
    assert clf.queries_answered_ == 2000
    reference = _rect().fit(X, y)
    reference.predict(Xq)
    assert clf.budget_.spent == reference.budget_.spent


def test_scores_are_the_labels_the_stream_would_release():
    X, y = _sample(_need())
    Xq, yq = _sample(20_000, seed=2)
    labels = _rect().fit(X, y).predict(Xq)
    proba = _rect().fit(X, y).predict_proba(Xq)  # same seed: the same stream
    scores = _rect().fit(X, y).decision_function(Xq)
    assert proba.shape == (20_000, 2) and np.allclose(proba.sum(axis=1), 1.0)
    assert np.array_equal(np.argmax(proba, axis=1), labels)
    assert np.array_equal((scores > 0).astype(int), labels)
    assert np.allclose(proba[:, 1], (1 + scores) / 2)
    levels = set(np.round(proba[:, 1], 12))
    assert levels <= {0.05, 0.5, 0.95} and {0.05, 0.95} <= levels
    medium = np.isclose(proba[:, 1], 0.5)
    assert 0 < medium.mean() < 0.2  # a thin boundary band, labelled "outside"
    # The third level carries information: the band is more often inside than "high".
    assert yq[medium].mean() > yq[np.isclose(proba[:, 1], 0.05)].mean()


def test_majority_fallback_probability_is_the_released_noisy_margin():
    X, y = _sample(400, seed=3)
    with pytest.warns(PrivacyWarning, match="majority"):
        clf = _rect().fit(X, y)
    p = clf.predict_proba(X[:5])
    u = np.count_nonzero(y == 1) - np.count_nonzero(y == 0)
    assert np.allclose(p, p[0]) and p[0, 1] == pytest.approx((1 + u / 400) / 2, abs=0.01)
    assert clf.privacy_spent_.epsilon == EPS


@pytest.mark.parametrize("cls", [RectanglesPERPClassifier, DecisionStumpPERPClassifier])
def test_default_instance_passes_every_check(cls):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        failures = check_estimator(cls(), on_fail=None)
    failed = [r for r in failures if r["status"] == "failed"]
    assert not failed, [r["check_name"] for r in failed]


@pytest.mark.parametrize("cls", [RectanglesPERPClassifier, DecisionStumpPERPClassifier])
def test_roc_auc_and_calibration_work(cls):
    est = cls(epsilon=EPS, gamma=1.0, random_state=0, classes=[0, 1])
    X, y = _sample(10, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        need = est.fit(X, y).initial_sample_size_
    X, y = _sample(3 * need, seed=5)
    if cls is DecisionStumpPERPClassifier:
        y = (X[:, 1] > 0.4).astype(int)
    auc = cross_val_score(est, X, y, cv=3, scoring="roc_auc", error_score="raise")
    assert np.all(np.isfinite(auc)) and auc.mean() > 0.8
    logloss = cross_val_score(est, X, y, cv=3, scoring="neg_log_loss", error_score="raise")
    assert np.all(np.isfinite(logloss))
    calibrated = CalibratedClassifierCV(est, cv=2).fit(X, y)
    proba = calibrated.predict_proba(X[:500])
    assert proba.shape == (500, 2) and np.allclose(proba.sum(axis=1), 1.0)
