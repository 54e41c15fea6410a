"""BatchSanitizedOnlineClassifier specifics: batches, sanitizer failure policies, the
sanitizer interface, and what an incomplete batch may (not) influence."""

import math

import numpy as np
import pytest

from skdp import PrivacyBudget, TestingSeed
from skdp.exceptions import PrivacyWarning
from skdp.hypotheses import threshold_class
from skdp.online import BatchSanitizedOnlineClassifier, HistogramSanitizer, StableHistogramSanitizer
from skdp.online._batch_sanitized import AUTO_ROWS_PER_CELL

N = 8
CLASS = threshold_class(N)


def _stream(rng, n, rate=0.1):
    x = rng.integers(0, N, size=n)
    y = (x >= 5).astype(int)
    return x[:, None], np.where(rng.random(n) < rate, 1 - y, y)


class _Failing(HistogramSanitizer):
    def sanitize(self, x, y, n_domain, epsilon, delta, random_state=None):
        return None


def test_auto_batch_size_and_learning_rate(rng):
    X, y = _stream(rng, 1000)
    clf = BatchSanitizedOnlineClassifier(2.0, hypothesis_class=CLASS, random_state=0).fit(X, y)
    expected = math.ceil(AUTO_ROWS_PER_CELL * 2 * N / 2.0)  # 2·(2N)/ε = 16 < ⌈√1000⌉
    assert clf.batch_size_ == expected
    assert clf.n_batches_ == 1000 // expected
    assert clf.learning_rate_ is None  # AdaHedge copies
    worst = BatchSanitizedOnlineClassifier(2.0, hypothesis_class=CLASS, learning_rate="auto",
                                           random_state=0).fit(X, y)
    assert worst.learning_rate_ == pytest.approx(
        math.sqrt(8 * math.log(N + 1) / math.ceil(1000 / expected)))
    # the cap ⌈√T⌉ on short horizons, and B ≥ 2
    short = BatchSanitizedOnlineClassifier(0.1, hypothesis_class=CLASS, random_state=0)
    assert short.fit(X[:50], y[:50]).batch_size_ == 8
    assert BatchSanitizedOnlineClassifier(100.0, hypothesis_class=CLASS,
                                          random_state=0).fit(X, y).batch_size_ == 2
    fixed = BatchSanitizedOnlineClassifier(2.0, hypothesis_class=CLASS, batch_size=7,
                                           random_state=0).fit(X, y)
    assert fixed.batch_size_ == 7 and fixed.n_batches_ == 1000 // 7


def test_an_incomplete_batch_influences_nothing_released(rng):
    X, y = _stream(rng, 130)
    full = BatchSanitizedOnlineClassifier(1.0, hypothesis_class=CLASS, batch_size=20,
                                          n_rounds=200, random_state=4)
    wrong_full = full._partial_fit_mistakes(X, y, classes=[0, 1])
    cut = BatchSanitizedOnlineClassifier(1.0, hypothesis_class=CLASS, batch_size=20,
                                         n_rounds=200, random_state=4)
    y_other = y.copy()
    y_other[120:] = 1 - y_other[120:]  # change every row of the incomplete last batch
    wrong_cut = cut._partial_fit_mistakes(X, y_other, classes=[0, 1])
    pred = np.where(wrong_full, 1 - y, y)  # the online predictions
    np.testing.assert_array_equal(np.where(wrong_cut, 1 - y_other, y_other), pred)
    grid = np.arange(N)[:, None]
    np.testing.assert_array_equal(full.predict(grid), cut.predict(grid))


@pytest.mark.parametrize("policy", ["skip", "stop"])
def test_sanitizer_failure_policies(policy, rng):
    X, y = _stream(rng, 100)
    clf = BatchSanitizedOnlineClassifier(1.0, hypothesis_class=CLASS, batch_size=10,
                                         sanitizer=_Failing(), on_failure=policy,
                                         random_state=0)
    if policy == "stop":
        with pytest.warns(PrivacyWarning, match="sanitizer failed"):
            clf.fit(X, y)
        assert clf.updates_stopped_ and clf.n_batches_ == 1
    else:
        clf.fit(X, y)
        assert not clf.updates_stopped_ and clf.n_batches_ == clf.n_failed_batches_ == 10
    assert np.all(clf._copies.loss == 0.0)  # nothing was ever fed to the copies


def test_stable_histogram_sanitizer_charges_delta(rng):
    X, y = _stream(rng, 2000)
    budget = PrivacyBudget(2.0, 1e-4)
    clf = BatchSanitizedOnlineClassifier(1.0, 1e-6, hypothesis_class=CLASS, batch_size=200,
                                         sanitizer=StableHistogramSanitizer(), budget=budget,
                                         random_state=TestingSeed(0)).fit(X, y)
    assert clf.privacy_spent_.delta == 1e-6 and budget.spent.delta == pytest.approx(1e-6)
    default = BatchSanitizedOnlineClassifier(1.0, 1e-6, hypothesis_class=CLASS,
                                             random_state=0).fit(X, y)
    assert default.privacy_spent_.delta == 0.0  # the histogram sanitizer is pure ε-DP


def test_bad_sanitizer_and_policy_refused(rng):
    X, y = _stream(rng, 10)
    with pytest.raises(ValueError, match="sanitizer"):
        BatchSanitizedOnlineClassifier(hypothesis_class=CLASS, sanitizer="laplace").fit(X, y)
    with pytest.raises(ValueError, match="on_failure"):
        BatchSanitizedOnlineClassifier(hypothesis_class=CLASS, on_failure="retry").fit(X, y)


def test_defaults_learn_a_noisy_threshold_far_better_than_the_worst_case_preset(rng):
    """The horizon-free presets (B ∝ 2N/ε, AdaHedge copies, projected histogram) against
    the worst-case ones (B ∝ T^{1/3}, fixed η, clipped histogram), same stream."""
    X, y = _stream(rng, 20_000)
    ys = np.where(y == 1, 1, -1)
    best = min(np.count_nonzero(np.where(X[:, 0] >= t, 1, -1) != ys) for t in range(N + 1))

    def regret(**kw):
        clf = BatchSanitizedOnlineClassifier(1.0, hypothesis_class=CLASS, random_state=3, **kw)
        return int(np.count_nonzero(clf._partial_fit_mistakes(X, y, classes=[0, 1]))) - best

    tuned = regret()
    worst = regret(learning_rate="auto", sanitizer=HistogramSanitizer(post="clip"),
                   batch_size=math.ceil((2 * N) ** (2 / 3) * 20_000 ** (1 / 3)
                                        / math.log(N + 1) ** (1 / 3)))
    assert tuned < worst / 2, (tuned, worst)
