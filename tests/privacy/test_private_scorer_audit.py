"""Statistical privacy audit of the private scorer (skdp.metrics), with broken twins.

Neighbouring validation folds differ by replacing one row (the model is fixed: its fit
was paid separately, so a fold is its rows' (true label, prediction) pairs). The
audited output is the released score itself — the float a search sees — through the
real code path (`_cell_counts` then `_noisy_scores`), with events chosen on a pilot
sample (Clopper–Pearson, `skdp.audit.audit_mechanism`). Two broken twins must fail the
same audit: half the noise (calibrated to sensitivity 1, as if a replacement moved
one cell — it moves two, so the twin is 2ε-DP) and the exact score.

The exact audit computes the law of the released accuracy itself (every noise pair
within 50 scales, the floats `_scores_from_noisy` returns, grouped) and its exact ε with
`skdp.audit.exact_epsilon`: the score loses nothing of the worst case — exactly ε
under replacement, ε/2 under add/remove — and the half-noise twin is exactly 2ε.
"""

import math

import numpy as np
import pytest

import skdp.metrics as metrics
from skdp.audit import audit_mechanism, exact_epsilon
from skdp.mechanisms.laplace import _rational_scale

EPS = 1.0
ALPHA = 1e-6
N = 400_000

# (metric, classes, y_true, y_pred on D, y_pred on D′): one row replaced by a row of
# the same true label that the model gets wrong — two cells move, the worst case.
CASES = {
    "accuracy": ("accuracy", None, [0] * 6, [0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 1]),
    "balanced_accuracy": ("balanced_accuracy", np.array([0, 1]), [0, 0], [0, 1], [1, 1]),
}


def _fold(y_true, y_pred):
    return np.array(y_true), np.array(y_pred)


def _sampler(metric, classes):
    def sample(fold, n, rng):
        cells = metrics._cell_counts(metric, *fold, classes)
        return metrics._noisy_scores(metric, np.tile(cells, (n, 1)), EPS, rng)

    return sample


def _audit(case):
    metric, classes, y_true, pred0, pred1 = CASES[case]
    return audit_mechanism(_sampler(metric, classes), _fold(y_true, pred0),
                           _fold(y_true, pred1), n_samples=N, alpha=ALPHA, random_state=0)


@pytest.mark.parametrize("case", sorted(CASES))
def test_released_score_stays_within_epsilon(case):
    result = _audit(case)
    assert result.epsilon_lower_bound <= EPS, result


@pytest.mark.parametrize("case", sorted(CASES))
def test_half_noise_twin_is_caught(case, monkeypatch):
    # Sensitivity 1 instead of 2: the twin is 2ε-DP; measured lower bounds 1.93 (accuracy)
    # and 1.86 (balanced accuracy) at ε = 1, against ≤ 0.3 for the real mechanism.
    monkeypatch.setattr(metrics, "_SENSITIVITY", 1)
    result = _audit(case)
    assert result.epsilon_lower_bound > EPS, result


@pytest.mark.parametrize("case", sorted(CASES))
def test_exact_score_twin_is_caught(case, monkeypatch):
    # The twin releases the exact score (what a plain GridSearchCV computes).
    def exact(values, epsilon, sensitivity=1, random_state=None):
        return np.asarray(values)

    monkeypatch.setattr(metrics, "geometric_mechanism", exact)
    result = _audit(case)
    assert result.epsilon_lower_bound > 2 * EPS, result


# ---------------------------------------------------------------- exact audit (accuracy)

TRUNCATION_DELTA = 1e-15  # noise beyond 50 scales is left out: mass < e^-50 per side


def _log_law_of_released_accuracy(cells, epsilon):
    """log P[score = v] for each distinct released float v, and the v's (sorted)."""
    t, s = _rational_scale(metrics._SENSITIVITY / epsilon)  # the scale the sampler uses
    b = t / s
    z = np.arange(-int(50 * b), int(50 * b) + 1)
    log_pmf = math.log(math.tanh(1 / (2 * b))) - np.abs(z) / b  # (1-α)/(1+α) α^|z|
    zc, zw = np.meshgrid(z, z, indexing="ij")
    noisy = np.stack([cells[0] + zc.ravel(), cells[1] + zw.ravel()], axis=1)
    scores = metrics._scores_from_noisy("accuracy", noisy)
    values, inverse = np.unique(scores, return_inverse=True)
    mass = np.zeros(values.size)
    np.add.at(mass, inverse, np.exp((log_pmf[:, None] + log_pmf[None, :]).ravel()))
    return values, mass


def _exact_epsilon(d0, d1, epsilon):
    v0, p0 = _log_law_of_released_accuracy(np.array(d0), epsilon)
    v1, p1 = _log_law_of_released_accuracy(np.array(d1), epsilon)
    values = np.union1d(v0, v1)
    full0, full1 = np.zeros(values.size), np.zeros(values.size)
    full0[np.searchsorted(values, v0)] = p0
    full1[np.searchsorted(values, v1)] = p1
    with np.errstate(divide="ignore"):
        return exact_epsilon(np.log(full0), np.log(full1), TRUNCATION_DELTA)


REPLACE = [([3, 3], [2, 4]), ([10, 10], [9, 11]), ([2, 0], [1, 1]), ([1, 1], [0, 2])]
ADD_REMOVE = [([0, 0], [1, 0]), ([0, 1], [0, 2]), ([5, 5], [6, 5])]


@pytest.mark.parametrize("epsilon", [0.25, 1.0, 4.0])
def test_exact_epsilon_of_the_released_accuracy(epsilon):
    # Measured: ε for each replacement pair (the claim is tight; δ = 1e-15 for the
    # truncation puts it a few 1e-6 below), ε/2 for each add/remove pair. Never above.
    for d0, d1 in REPLACE:
        assert epsilon * (1 - 1e-5) <= _exact_epsilon(d0, d1, epsilon) <= epsilon + 1e-9
    for d0, d1 in ADD_REMOVE:
        assert epsilon / 2 * (1 - 1e-5) <= _exact_epsilon(d0, d1, epsilon) <= epsilon / 2 + 1e-9


def test_exact_audit_catches_the_half_noise_twin(monkeypatch):
    monkeypatch.setattr(metrics, "_SENSITIVITY", 1)
    assert _exact_epsilon([3, 3], [2, 4], 1.0) > 2.0 * (1 - 1e-5)  # claimed 1
