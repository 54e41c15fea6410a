"""Whole-estimator privacy audit of DPWinnowClassifier, with negative controls.

Neighbouring streams (one feature, z = (x, −x), no intercept) differ in row 0 only:

    D : (x = +1, y = 1), then n − 1 rows (x = 0, y = 1)
    D′: (x = −1, y = 1), then the same rows

Every row has margin 0, so every row counts as a mistake: AboveThreshold fires
every few rows, and the first update always uses row 0 — the differing row — so
the exponential-mechanism draws see S = (±1, ∓1). The audited output is what the
estimator releases over the whole stream, summarised as the mean over all released
weight vectors of w̃[0] (for m = 1, the fraction of draws of coordinate 0). The
events "mean ≥ t", t ∈ {0.5, 0.6, 0.7}, are fixed from this structure (before any
sample is drawn), and both directions are tested.

* The real estimator must keep the Clopper–Pearson lower bound ≤ ε, at K = 1, m = 1
  (where the tight accountant's ε̂ and 4η equal the paper's basic split, ε/2 each) and
  at K = 4, m = 3 (tight: ε̂ ≈ 0.318, 4η ≈ 0.106; the paper's split gives 0.25, 0.083).
  With the (x, −x) doubling a draw's realised loss on this pair is 2η, half its 4η
  bound, so this audit cannot tell a 2ε calibration from the real one; the
  decision-list audit has a pair that does.
* ``Uncapped`` — calibrated for K = 1 but never stops updating: every further
  firing re-releases a draw from the same w, and the leak grows with the number of
  firings. The same audit must catch it.
* ``ExactWeights`` — releases w itself instead of the m-draw empirical
  distribution: deterministic in the differing row, caught at once.

These run the sparse-vector path (``setting="practical"``); the default scheduled
path has its own audit, ``test_winnow_scheduled_audit.py``.
"""

import warnings

import numpy as np
import pytest
from _winnow_audit_runs import ExactWeights, Uncapped, one_feature_streams, run_recording

from skdp.audit import audit_mechanism
from skdp.exceptions import PrivacyWarning
from skdp.linear import DPWinnowClassifier

EPSILON, DELTA, ALPHA = 2.0, 1e-6, 1e-6
N_ROWS = 80
PARAMS = dict(epsilon=EPSILON, delta=DELTA, margin=1.0, max_updates=1, n_samples=1,
              threshold=1.0, fit_intercept=False, n_rounds=N_ROWS, setting="practical")


def _streams():
    X0, X1 = one_feature_streams(N_ROWS)
    return X0, X1, np.ones(N_ROWS, dtype=int)


def _run(cls, X, y, seed, classes=(0, 1), params=PARAMS):
    """fit(X, y) minus the input validation (identical otherwise: see the test below);
    returns the fitted estimator and the mean of w̃[0] over every release."""
    return run_recording(cls, X, y, seed, params, classes)


def _sampler(cls, params=PARAMS):
    def sample(X, n, rng):
        seeds = rng.integers(2**62, size=n)
        _, _, y = _streams()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)
            return np.array([_run(cls, X, y, int(s), params=params)[1] for s in seeds])

    return sample


EVENTS = [lambda out, t=t: out >= t for t in (0.5, 0.6, 0.7)]


def test_audit_path_is_the_fit_path():
    X0, _, _ = _streams()
    y = np.r_[0, np.ones(N_ROWS - 1, dtype=int)]  # fit needs both classes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        for seed in range(5):
            fitted = DPWinnowClassifier(**PARAMS, random_state=seed).fit(X0, y)
            est, _ = _run(DPWinnowClassifier, X0, y, seed, classes=(0, 1))
            np.testing.assert_array_equal(est.weights_, fitted.weights_)
            assert est.n_updates_ == fitted.n_updates_ == 1


@pytest.mark.parametrize("updates, samples", [(1, 1), (4, 3)])
def test_dp_winnow_audit_passes(updates, samples):
    params = dict(PARAMS, max_updates=updates, n_samples=samples)
    p = DPWinnowClassifier(**params)._resolve_parameters(1, N_ROWS)[2]
    assert p.accounting == "tight"
    X0, X1, _ = _streams()
    result = audit_mechanism(_sampler(DPWinnowClassifier, params), X0, X1, n_samples=2000,
                             events=EVENTS, alpha=ALPHA, delta=DELTA, random_state=1)
    assert result.epsilon_lower_bound <= EPSILON, str(result)


def test_uncapped_dp_winnow_is_caught():
    X0, X1, _ = _streams()
    sample = _sampler(Uncapped)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        est, _ = _run(Uncapped, X0, np.ones(N_ROWS, dtype=int), 0)
    assert est.n_updates_ > 5  # the design does make it update many times
    result = audit_mechanism(sample, X0, X1, n_samples=400, events=EVENTS,
                             alpha=ALPHA, delta=DELTA, random_state=2)
    assert result.epsilon_lower_bound > EPSILON, str(result)


def test_exact_weight_release_is_caught():
    X0, X1, _ = _streams()
    result = audit_mechanism(_sampler(ExactWeights), X0, X1, n_samples=500, events=EVENTS,
                             alpha=ALPHA, delta=DELTA, random_state=3)
    assert result.epsilon_lower_bound > EPSILON, str(result)


@pytest.mark.slow
def test_dp_winnow_audit_more_samples():
    X0, X1, _ = _streams()
    result = audit_mechanism(_sampler(DPWinnowClassifier), X0, X1, n_samples=60000,
                             events=EVENTS, alpha=ALPHA, delta=DELTA, random_state=4)
    assert result.epsilon_lower_bound <= EPSILON, str(result)
