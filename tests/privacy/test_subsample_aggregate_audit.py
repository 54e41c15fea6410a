"""Statistical privacy audit of subsample-and-aggregate's released scores, alone and as
Yan's predictor's small-sample fallback (Lemma F in ``skdp.prediction._small_sample``).

Design (fixed before sampling): 2 rows at x = 0, so both predictors train one teacher
(k = min(⌈4/ε_q⌉, max(1, ⌊n/m⌋)) = 1, m = 10 for the baseline's default and 2 for the
fallback's threshold teachers) whose vote is the block's majority: D has no positive
label (the teacher votes −1 everywhere), D′ one (1 of 2: the threshold ERM votes +1).
Two distinct queries, planned for exactly two, so each answer is a
``DiscreteLaplace(ε_q)`` release with the largest ε_q the accountant allows. The output
is the pair of released scores (``predict_proba``), rounded; events are chosen on a
pilot sample by ``skdp.audit``, α = 1e-6, claimed (ε, δ).

Negative control: the same predictors releasing the exact count (no noise); their
transcripts on D and D′ are disjoint and the audit must catch them.
"""

import warnings

import numpy as np
import pytest

from skdp.audit import audit_mechanism
from skdp.hypotheses import Thresholds
from skdp.prediction import PrivatePredictor, SubsampleAggregatePredictor

EPSILON, DELTA, ALPHA = 1.0, 1e-2, 1e-6
QUERIES = np.array([[0.0], [1.0]])
Y0 = np.array([0, 0])
Y1 = np.array([1, 0])


def _exact(self, teachers, X, eps_q):
    return np.rint(teachers.vote(X) * teachers.data.n_blocks).astype(np.int64)


class ExactCountAggregate(SubsampleAggregatePredictor):
    """Broken: releases the exact teacher count."""

    _release_counts = _exact


class ExactCountFallback(PrivatePredictor):
    """Broken: the small-sample fallback releases the exact teacher count."""

    _release_counts = _exact


class HalfNoiseAggregate(SubsampleAggregatePredictor):
    """Broken: each released count noised for 2ε_q (half the scale), claiming ε_q."""

    def _release_counts(self, teachers, X, eps_q):
        return super()._release_counts(teachers, X, 2.0 * eps_q)


def _make(cls, rng):
    common = dict(epsilon=EPSILON, delta=DELTA, classes=[0, 1], random_state=rng)
    if issubclass(cls, SubsampleAggregatePredictor):
        return cls(Thresholds(), n_queries=2, **common)
    return cls(Thresholds(), n_queries=2, **common)


def _sampler(cls):
    X = np.zeros((2, 1))

    def sample(y, n, rng):
        out = np.empty((n, 2), dtype=np.int64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # too few rows for Yan's teachers
            for i in range(n):
                clf = _make(cls, rng).fit(X, y)
                out[i] = np.rint(1e4 * clf.predict_proba(QUERIES)[:, 1])
        return out

    return sample


def _audit(cls, n_samples, n_pilot, seed):
    return audit_mechanism(_sampler(cls), Y0, Y1, n_samples=n_samples, n_pilot=n_pilot,
                           alpha=ALPHA, delta=DELTA, random_state=seed)


@pytest.mark.parametrize("cls", [SubsampleAggregatePredictor, PrivatePredictor])
def test_released_scores_pass_audit(cls):
    result = _audit(cls, 1000, 300, 1)
    assert result.epsilon_lower_bound <= EPSILON, str(result)


@pytest.mark.parametrize("cls", [ExactCountAggregate, ExactCountFallback])
def test_audit_catches_exact_counts(cls):
    result = _audit(cls, 300, 100, 2)
    assert result.epsilon_lower_bound > EPSILON, str(result)


def test_audit_catches_half_the_noise():
    result = _audit(HalfNoiseAggregate, 1200, 400, 4)  # measured 1.41 (1.67 at 3000 runs)
    assert result.epsilon_lower_bound > EPSILON, str(result)


def test_fallback_is_subsample_and_aggregate():
    # Below the floor, Yan's predictor is subsample-and-aggregate with the same plan.
    X = np.zeros((2, 1))
    rng = np.random.default_rng(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yan = _make(PrivatePredictor, 7).fit(X, Y1)
    base = _make(SubsampleAggregatePredictor, 7).fit(X, Y1)
    Xq = rng.random((2, 1))
    np.testing.assert_allclose(yan.predict_proba(Xq), base.predict_proba(Xq))
