"""The online learners on a real column through RealThresholds / RealIntervals: the same
run as on the public bin indices, and bad input refused before anything is charged."""

import warnings

import numpy as np
import pytest

from skdp import PrivacyBudget
from skdp.exceptions import PrivacyWarning
from skdp.hypotheses import (
    RealIntervals,
    RealThresholds,
    ThresholdVersionSpace,
    interval_class,
    threshold_class,
)
from skdp.online import (
    AdaptivePrivateOnlineClassifier,
    BatchSanitizedOnlineClassifier,
    DPSOAClassifier,
    PrivateExpertsClassifier,
    SOAClassifier,
)

H = RealThresholds(bounds=(0.0, 100.0), n_bins=32)


def _make(cls, hc, **kw):
    key = "experts" if cls is PrivateExpertsClassifier else "hypothesis_class"
    return cls(1.0, classes=[0, 1], random_state=7, **{key: hc}, **kw)


def _stream(rng, n=3000):
    X = rng.normal(50.0, 30.0, size=(n, 1))  # some rows fall outside the bounds
    y = np.where(rng.random(n) < 0.1, X[:, 0] < 60, X[:, 0] >= 60).astype(int)
    return X, y


@pytest.mark.parametrize("cls", [PrivateExpertsClassifier, BatchSanitizedOnlineClassifier])
@pytest.mark.parametrize(("real", "finite"), [(H, threshold_class(32)),
                                              (RealIntervals((0.0, 100.0), 12),
                                               interval_class(12))])
def test_real_column_is_the_run_on_bin_indices(cls, real, finite, rng):
    X, y = _stream(rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        on_reals = _make(cls, real)
        wrong_reals = on_reals._partial_fit_mistakes(X, y, classes=[0, 1])
        on_bins = _make(cls, finite)
        wrong_bins = on_bins._partial_fit_mistakes(real.to_domain(X)[:, None], y,
                                                   classes=[0, 1])
    np.testing.assert_array_equal(wrong_reals, wrong_bins)
    grid = np.linspace(-50.0, 150.0, 41)[:, None]
    np.testing.assert_array_equal(on_reals.predict(grid),
                                  on_bins.predict(real.to_domain(grid)[:, None]))
    assert on_reals.n_domain_ == real.n_bins and on_reals.n_features_in_ == 1


@pytest.mark.parametrize("cls", [PrivateExpertsClassifier, BatchSanitizedOnlineClassifier])
def test_experts_learn_a_real_threshold(cls, rng):
    X, y = _stream(rng, 20_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        clf = _make(cls, H, n_rounds=20_000).fit(X, y)
    np.testing.assert_array_equal(clf.predict([[-1e9], [10.0], [90.0], [1e9]]), [0, 0, 1, 1])


@pytest.mark.parametrize("cls", [PrivateExpertsClassifier, BatchSanitizedOnlineClassifier])
@pytest.mark.parametrize(("X", "match"), [(np.array([[1.0], [np.nan]]), "NaN"),
                                          (np.ones((2, 2)), "feature")])
def test_bad_real_input_refused_before_any_charge(cls, X, match):
    budget = PrivacyBudget(5.0)
    clf = _make(cls, H, budget=budget)
    with pytest.raises(ValueError, match=match):
        clf.fit(X, [0, 1])
    assert budget.spent.epsilon == 0.0


@pytest.mark.parametrize("cls", [SOAClassifier, DPSOAClassifier,
                                 AdaptivePrivateOnlineClassifier])
def test_littlestone_learners_read_a_real_column_as_its_bins(cls, rng):
    """DP-SOA, Li–Wang–Ye and the SOA take RealThresholds too: the run on the real column
    is the run on its public bin indices (ThresholdVersionSpace over the bins)."""
    X, y = _stream(rng, 2000)
    kw = {} if cls is SOAClassifier else dict(epsilon=4.0, classes=[0, 1], random_state=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        on_reals = cls(hypothesis_class=H, **kw)
        wrong_reals = on_reals._partial_fit_mistakes(X, y, classes=[0, 1])
        on_bins = cls(hypothesis_class=ThresholdVersionSpace(H.n_bins), **kw)
        wrong_bins = on_bins._partial_fit_mistakes(H.to_domain(X)[:, None], y,
                                                   classes=[0, 1])
    np.testing.assert_array_equal(wrong_reals, wrong_bins)
    grid = np.linspace(-50.0, 150.0, 41)[:, None]
    np.testing.assert_array_equal(on_reals.predict_proba(grid),
                                  on_bins.predict_proba(H.to_domain(grid)[:, None]))
