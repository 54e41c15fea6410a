"""Privacy audit of DP-Winnow's ``predict_proba``, with broken twins the audit must catch.

``predict_proba`` is a function of the released state only: the released weights w̃
(the learner) or the one geometric label count (the guard's constant fallback).
The audits draw the probability the fitted estimator gives a fixed public row, on
neighbouring streams that make the release work hardest:

* Learner: one feature, z = (x, −x), no intercept; D has row 0 = (x = +1, y = 1),
  D′ (x = −1, y = 1), every other row (x = 0, y = 1) (as in
  ``test_winnow_scheduled_audit.py``). The output is ``predict_proba([[1]])[0, 1]``,
  a vote share over the m released draws; the events "p ≥ t" are fixed from the
  possible values (n(1 + μ)/2 + 1)/(n + 2).
  ``ProbaFromScores`` answers from the unreleased exact weights softmax(η·S) while it
  predicts with w̃ — probabilities that are not post-processing; ``ExactWeights``
  releases the exact weights themselves.
* Constant fallback: T = 40 rows the guard rules out, labels differ in row 0
  (21 vs 20 positives); the output is the probability of ``classes_[1]``, which must
  come from the noisy count ((c̃ + 1)/(n_c + 2)). ``ExactCount`` uses the exact count.
"""

import warnings

import numpy as np
import pytest
from _winnow_audit_runs import ExactWeights, one_feature_streams
from test_winnow_scheduled_audit import COUNT_PARAMS, ExactCount, _count_streams

from skdp.audit import audit_mechanism
from skdp.linear import DPWinnowClassifier
from skdp.linear._base import softmax

EPSILON, DELTA, ALPHA = 2.0, 1e-6, 1e-6
N_ROWS = 80
PARAMS = dict(epsilon=EPSILON, delta=DELTA, margin=1.0, max_updates=1, n_samples=1,
              fit_intercept=False, n_rounds=10, bounds=(-1.0, 1.0), classes=[0, 1])
PROBE = np.array([[1.0]])


class ProbaFromScores(DPWinnowClassifier):
    """Broken twin: probabilities from the exact (unreleased) weights softmax(η·S)."""

    def predict_proba(self, X):
        w = softmax(self.parameters_.learning_rate * self._full_scores())
        half = w.size // 2
        share = (1.0 + np.asarray(X, dtype=float) @ (w[:half] - w[half:])) / 2.0
        return np.column_stack([1.0 - share, share])


def _fit(cls, X, y, seed, params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(**params, random_state=seed).fit(X, y)


def _proba_sampler(cls, params, probe):
    def sample(data, n, rng):
        X, y = data
        return np.array([_fit(cls, X, y, int(s), params).predict_proba(probe)[0, 1]
                         for s in rng.integers(2**32, size=n)])

    return sample


def _learner_streams():
    X0, X1 = one_feature_streams(N_ROWS)
    y = np.ones(N_ROWS, dtype=int)
    return (X0, y), (X1, y)


def _events(n_votes):
    cuts = (np.arange(n_votes) + 1.5) / (n_votes + 2)  # between consecutive vote shares
    return [lambda out, t=t: out >= t for t in cuts]


def test_proba_is_a_vote_share_of_the_released_draws():
    (X0, y), _ = _learner_streams()
    est = _fit(DPWinnowClassifier, X0, y, 0, dict(PARAMS, n_samples=3))
    votes = 3 * est.weights_[0]  # draws on the +x coordinate (z_0 = x)
    np.testing.assert_allclose(est.predict_proba(PROBE)[0, 1], (votes + 1) / 5)
    np.testing.assert_allclose(est.predict_proba(PROBE).sum(axis=1), 1.0)


@pytest.mark.parametrize("updates, samples", [
    (1, 1), pytest.param(4, 3, marks=pytest.mark.slow)])
def test_proba_audit_passes(updates, samples):
    params = dict(PARAMS, max_updates=updates, n_samples=samples)
    D0, D1 = _learner_streams()
    result = audit_mechanism(_proba_sampler(DPWinnowClassifier, params, PROBE), D0, D1,
                             n_samples=600, events=_events(samples), alpha=ALPHA,
                             delta=DELTA, random_state=1)
    assert result.epsilon_lower_bound <= EPSILON, str(result)


@pytest.mark.parametrize("cls", [ProbaFromScores, ExactWeights])
def test_proba_broken_twins_are_caught(cls):
    D0, D1 = _learner_streams()
    events = [lambda out: out >= 0.5, lambda out: out > 0.6]
    result = audit_mechanism(_proba_sampler(cls, PARAMS, PROBE), D0, D1, n_samples=200,
                             events=events, alpha=ALPHA, delta=DELTA, random_state=2)
    assert result.epsilon_lower_bound > EPSILON, str(result)


def _fallback_setup():
    y0, y1 = _count_streams()
    X = np.zeros((y0.size, 3))
    params = dict(COUNT_PARAMS, bounds=(-1.0, 1.0), classes=[0, 1])
    rows = DPWinnowClassifier(**COUNT_PARAMS)._resolve_parameters(3, y0.size)[2].count_rows
    return (X, y0), (X, y1), params, rows


def test_fallback_proba_comes_from_the_noisy_count():
    D0, _, params, rows = _fallback_setup()
    est = _fit(DPWinnowClassifier, *D0, 0, params)
    assert est.constant_fallback_
    p = est.predict_proba(np.zeros((2, 3)))
    assert np.all(p[0] == p[1]) and p[0].sum() == pytest.approx(1.0)
    counts = p[0, 1] * (rows + 2) - 1  # (c̃ + 1)/(n_c + 2), c̃ an integer in [0, n_c]
    assert counts == pytest.approx(round(counts)) and 0 <= round(counts) <= rows
    assert est.predict(np.zeros((1, 3)))[0] == int(p[0, 1] > 0.5)


def test_fallback_proba_audit_and_exact_count_twin():
    D0, D1, params, rows = _fallback_setup()
    probe = np.zeros((1, 3))
    # "c̃ ≥ k" for the integer count c̃, cut between the possible values
    events = [lambda out, k=k: out >= (k + 0.5) / (rows + 2) for k in (19, 20, 21, 22)]
    result = audit_mechanism(_proba_sampler(DPWinnowClassifier, params, probe), D0, D1,
                             n_samples=700,
                             events=events, alpha=ALPHA, delta=DELTA, random_state=3)
    assert result.epsilon_lower_bound <= EPSILON, str(result)
    broken = audit_mechanism(_proba_sampler(ExactCount, params, probe), D0, D1,
                             n_samples=200, events=events, alpha=ALPHA, delta=DELTA,
                             random_state=4)
    assert broken.epsilon_lower_bound > EPSILON, str(broken)
