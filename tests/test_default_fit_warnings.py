"""Defaults that cannot fit the data given say so at fit, with the figure and the fix
(issue 29, "Defaults that do not silently learn nothing").

Each warning is checked both ways: it fires where the default learns nothing, and stays
silent where the same estimator, given the fix, learns.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline

import skdp
from skdp import (
    ContinualReleaseClassifier,
    DPDecisionListClassifier,
    GreedyDecisionListClassifier,
    SubsampleAggregatePredictor,
)
from skdp.preprocessing import PublicBoundsBinarizer

ONE_LABEL = "predicts one label almost everywhere"
COIN_FLIPS = "answers are close to coin flips"


def _positive_table(n=2000, seed=0):
    """Positive measurements in [1, 10] (every x > 0): y = x0 > 5.5."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(1, 10, (n, 4))
    return X, (X[:, 0] > 5.5).astype(int)


def _fit(est, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    return [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


def _private(cls, **kw):
    return cls(epsilon=2.0, classes=[0, 1], random_state=skdp.TestingSeed(0), **kw)


LISTS = {
    "DPDecisionListClassifier": lambda **kw: _private(DPDecisionListClassifier, **kw),
    "GreedyDecisionListClassifier": lambda **kw: GreedyDecisionListClassifier(**kw),
    # negated literals: "x ≤ 0" never fires, so the default takes every row
    "DPDecisionListClassifier(negations)": lambda **kw: _private(
        DPDecisionListClassifier, negations=True, **kw),
}


@pytest.mark.parametrize("name", LISTS)
def test_list_reading_positive_reals_as_bits_warns_with_the_fix(name):
    X, y = _positive_table()
    texts = _fit(est := LISTS[name](), X, y)
    (text,) = [t for t in texts if ONE_LABEL in t]
    assert "PublicBoundsBinarizer" in text and "binarize=0.0" in text
    assert ("bounds=" in text) == ("bounds" in est.get_params())
    assert "takes about 9" in text or "takes about 10" in text  # the figure: 9x % / 100 %
    assert np.mean(est.predict(X) == y) <= max(np.mean(y), 1 - np.mean(y)) + 0.02


@pytest.mark.parametrize("name", LISTS)
def test_list_given_public_thresholds_learns_without_the_warning(name):
    X, y = _positive_table()
    est = make_pipeline(PublicBoundsBinarizer(bounds=(1, 10), n_thresholds=8), LISTS[name]())
    assert not [t for t in _fit(est, X, y) if ONE_LABEL in t]
    assert np.mean(est.predict(X) == y) >= 0.9  # majority ~0.5


def test_private_list_in_real_valued_mode_learns_without_the_warning():
    X, y = _positive_table()
    est = _private(DPDecisionListClassifier, bounds=(1.0, 10.0))
    assert not [t for t in _fit(est, X, y) if ONE_LABEL in t]
    assert np.mean(est.predict(X) == y) >= 0.9  # majority ~0.5


def test_stream_wrapper_passes_its_list_s_warning_on():
    X, y = _positive_table()
    texts = _fit(ContinualReleaseClassifier(epsilon=2.0, classes=[0, 1],
                                            random_state=skdp.TestingSeed(0)), X, y)
    assert any(ONE_LABEL in t for t in texts)


def test_imbalanced_default_region_is_not_reported():
    # a default that takes nearly every row of a 96 %-majority table can be right
    rng = np.random.default_rng(1)
    X = rng.integers(0, 2, (3000, 6))
    y = (X[:, :5].sum(axis=1) == 5).astype(int)  # ~3 % positives: x0..x4 all set
    texts = _fit(GreedyDecisionListClassifier(), X, y)
    assert not [t for t in texts if ONE_LABEL in t]


def test_subsample_aggregate_with_too_few_teachers_warns_with_the_figure():
    X, y = _positive_table(400)
    texts = _fit(SubsampleAggregatePredictor(classes=[0, 1]), X, y)
    (text,) = [t for t in texts if COIN_FLIPS in t]
    # 400 rows → 40 teachers; the default plan (ε = 1 over 1000 answers) needs 534
    assert "400 rows make 40 teacher(s)" in text and "fewer than 534" in text
    assert "5340 rows" in text and "n_queries=10 or fewer" in text


def test_subsample_aggregate_with_enough_teachers_is_silent():
    X, y = _positive_table(400)
    assert not [t for t in _fit(SubsampleAggregatePredictor(n_queries=10, classes=[0, 1]),
                                X, y) if COIN_FLIPS in t]
