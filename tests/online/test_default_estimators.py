"""The online learners with default arguments (issue 18): every scikit-learn check on
``Est()`` (no skips, no wrappers: in tests/test_sklearn_dropin.py, which runs them for
every exported estimator), real features through the default
:class:`~skdp.hypotheses.MeanThresholds`, input validated before anything else,
probabilities from released state, and the tools users pair them with."""

import warnings

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import cross_val_score

from skdp import PrivacyBudget, TestingSeed
from skdp.exceptions import PrivacyLeakWarning, PrivacyWarning
from skdp.hypotheses import MeanThresholds, Thresholds
from skdp.online import (
    AdaptivePrivateOnlineClassifier,
    BatchSanitizedOnlineClassifier,
    DPSOAClassifier,
    PrivateExpertsClassifier,
    SOAClassifier,
)
from skdp.online._predicting import PROBA_SMOOTHING

CLASSES = [SOAClassifier, DPSOAClassifier, AdaptivePrivateOnlineClassifier,
           BatchSanitizedOnlineClassifier, PrivateExpertsClassifier]
PRIVATE = CLASSES[1:]
HARD_LABEL = CLASSES[:3]  # release one hypothesis: predict_proba is a smoothed one-hot


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        for category in (PrivacyWarning, PrivacyLeakWarning, UserWarning):
            warnings.simplefilter("ignore", category)
        yield


def _make(cls, **kw):
    return cls(**kw) if cls is SOAClassifier else cls(random_state=TestingSeed(0), **kw)


@pytest.fixture(scope="module")
def breast_cancer():
    return load_breast_cancer(return_X_y=True)


@pytest.mark.parametrize("cls", CLASSES)
def test_defaults_on_raw_breast_cancer(cls, breast_cancer):
    X, y = breast_cancer
    clf = _make(cls).fit(X, y)
    assert clf.n_features_in_ == X.shape[1] and clf.n_domain_ == MeanThresholds().n_bins
    pred = clf.predict(X)
    proba = clf.predict_proba(X)
    assert proba.shape == (len(X), 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.classes_[np.argmax(proba, axis=1)], pred)
    np.testing.assert_array_equal(clf.decision_function(X) > 0, pred == clf.classes_[1])
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X)), proba)


@pytest.mark.parametrize("cls", CLASSES)
def test_roc_auc_log_loss_and_calibration_work(cls, breast_cancer):
    X, y = breast_cancer
    auc = cross_val_score(_make(cls), X, y, cv=3, scoring="roc_auc")
    nll = cross_val_score(_make(cls), X, y, cv=3, scoring="neg_log_loss")
    assert np.all(np.isfinite(auc)) and np.all((auc >= 0) & (auc <= 1))
    assert np.all(np.isfinite(nll))
    calibrated = CalibratedClassifierCV(_make(cls), cv=3).fit(X, y)
    proba = calibrated.predict_proba(X)
    assert proba.shape == (len(X), 2) and np.all(np.isfinite(proba))


@pytest.mark.parametrize("cls", HARD_LABEL)
def test_hard_label_probabilities_are_the_smoothed_one_hot(cls, rng):
    X = rng.normal(size=(300, 3))
    y = (X.sum(axis=1) > 0).astype(int)
    clf = _make(cls).fit(X, y)
    proba = clf.predict_proba(X)
    assert set(np.unique(proba)) <= {PROBA_SMOOTHING, 1 - PROBA_SMOOTHING}
    np.testing.assert_array_equal(proba[:, 1] > 0.5, clf.predict(X) == clf.classes_[1])


@pytest.mark.parametrize("cls", [BatchSanitizedOnlineClassifier, PrivateExpertsClassifier])
def test_randomised_learners_give_the_released_mixture(cls, rng):
    X = rng.uniform(-1, 1, size=(2000, 2))
    y = (X.mean(axis=1) > 0).astype(int)
    clf = _make(cls).fit(X, y)
    grid = np.linspace(-1, 1, 33)[:, None].repeat(2, axis=1)
    p = clf.predict_proba(grid)[:, 1]
    np.testing.assert_allclose(p, clf._positive_rate(clf._hypotheses().to_domain(grid)),
                               atol=1e-12)
    np.testing.assert_allclose(clf.decision_function(grid), 2 * p - 1)
    assert p[-1] > p[0]  # learnt the direction of the mean


@pytest.mark.parametrize("cls", PRIVATE)
def test_default_bounds_warning_depends_on_parameters_only(cls, rng):
    messages = []
    for X in (rng.normal(size=(50, 2)), 1e6 * rng.normal(size=(50, 2))):
        with pytest.warns(UserWarning, match="no public bounds") as record:
            _make(cls).fit(X, (X[:, 0] > 0).astype(int))
        messages.append([str(w.message) for w in record if "bounds" in str(w.message)])
    assert messages[0] == messages[1]
    key = "experts" if cls is PrivateExpertsClassifier else "hypothesis_class"
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        warnings.filterwarnings("ignore", message=".*random_state is set")  # testing mode
        _make(cls, **{key: MeanThresholds(bounds=(-3.0, 3.0))}).fit(X, (X[:, 0] > 0) * 1)


@pytest.mark.parametrize("cls", PRIVATE)
def test_per_feature_bounds_and_their_length_checked_before_the_charge(cls, breast_cancer):
    X, y = breast_cancer
    key = "experts" if cls is PrivateExpertsClassifier else "hypothesis_class"
    lower, upper = np.zeros(X.shape[1]), np.full(X.shape[1], 10.0)
    budget = PrivacyBudget(10.0, 1e-4)
    bad = _make(cls, budget=budget, **{key: MeanThresholds(bounds=(lower[:3], upper[:3]))})
    with pytest.raises(ValueError, match="one entry per feature"):
        bad.fit(X, y)
    assert budget.spent.epsilon == 0.0 and not hasattr(bad, "classes_")
    clf = _make(cls, **{key: MeanThresholds(bounds=(lower, upper))}).fit(X, y)
    assert clf.predict(X).shape == y.shape


@pytest.mark.parametrize("cls", PRIVATE)
@pytest.mark.parametrize(("X", "y", "match"), [
    ([[0.0], [np.nan]], [0, 1], "NaN"),
    ([[0.0], [1.0]], None, "requires y"),
    (np.zeros((0, 1)), [], "0 sample"),
])
def test_input_is_validated_before_the_class_and_the_charge(cls, X, y, match):
    """X and y are checked first, even when the hypothesis class itself is unusable."""
    key = "experts" if cls is PrivateExpertsClassifier else "hypothesis_class"
    budget = PrivacyBudget(10.0, 1e-4)
    clf = _make(cls, budget=budget, **{key: Thresholds()})  # infinite class: refused later
    with pytest.raises(ValueError, match=match):
        clf.fit(X, y)
    assert budget.spent.epsilon == 0.0
