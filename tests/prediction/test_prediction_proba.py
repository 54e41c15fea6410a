"""predict_proba / decision_function of the private predictors, and the sklearn tools
that need them (issue 18): one released score per query, repeated rows free."""

import warnings

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.model_selection import cross_val_score

from skdp.hypotheses import Thresholds
from skdp.prediction import PrivatePredictor, SubsampleAggregatePredictor


def _thresholds(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 1))
    y = (X[:, 0] >= 0.4).astype(int)
    return X, np.where(rng.random(n) < 0.1, 1 - y, y)


def _yan(**kw):
    return PrivatePredictor(Thresholds(), epsilon=2.0, delta=1e-3, max_hard_queries=30,
                            n_queries=5000, classes=[0, 1], random_state=0, **kw)


def _aggregate(**kw):
    return SubsampleAggregatePredictor(Thresholds(), epsilon=50.0, delta=1e-6, n_queries=20_000,
                                       classes=[0, 1], random_state=0, **kw)


@pytest.mark.parametrize("make", [_yan, _aggregate])
def test_proba_decision_and_predict_agree_and_repeats_are_free(make):
    X, y = _thresholds(30_000)
    clf = make().fit(X, y)
    Xq = _thresholds(500, seed=1)[0]
    proba = clf.predict_proba(Xq)
    spent = clf.budget_.spent
    assert proba.shape == (500, 2) and np.allclose(proba.sum(axis=1), 1.0)
    assert np.all((proba > 0) & (proba < 1))
    np.testing.assert_array_equal(clf.predict(Xq), clf.classes_[proba.argmax(axis=1)])
    np.testing.assert_array_equal(clf.decision_function(Xq) > 0, proba[:, 1] > 0.5)
    np.testing.assert_allclose(clf.predict_log_proba(Xq[::-1]), np.log(proba[::-1]))
    assert clf.budget_.spent == spent  # every row above was released once
    assert np.mean(clf.predict(Xq) == (Xq[:, 0] >= 0.4)) > 0.9


@pytest.mark.parametrize("make", [_yan, _aggregate])
def test_roc_auc_log_loss_and_calibration_work(make):
    X, y = _thresholds(30_000, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auc = cross_val_score(make(), X, y, cv=3, scoring="roc_auc")
        loss = cross_val_score(make(), X, y, cv=3, scoring="neg_log_loss")
        calibrated = CalibratedClassifierCV(make(), cv=3).fit(X, y)
    assert np.all(auc > 0.8) and np.all(np.isfinite(loss))
    Xq, yq = _thresholds(2000, seed=3)
    proba = calibrated.predict_proba(Xq)
    assert np.allclose(proba.sum(axis=1), 1.0)
    assert np.mean(proba.argmax(axis=1) == yq) > 0.8
