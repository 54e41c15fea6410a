"""Whole-estimator privacy audits of the agnostic online learners, with negative controls.

Neighbouring streams differ in their first row only: (x = 0, y = +1) in D, (x = 0, y = −1)
in D′; the other rows are (0, +1). The class is {all +1, all −1} on a one-point domain,
and Hedge runs with a huge learning rate (any η keeps privacy): the learners then follow
whatever their private statistics say, so the released predictions expose them as much
as possible. The audited output is everything released: the online predictions of every
round and the final ``predict``; the events ("at least k of the releases the
differing row can move say +1") are fixed from this structure.

* BatchSanitizedOnlineClassifier (B = 2): the first batch holds the differing row; the
  later rounds are predicted by copies fed its sanitized rows. Claimed ε = 1. Twice:
  Hedge copies with η = 30, and the default preset (AdaHedge copies, which follow the
  leader until they see a mixability gap, on the *projected* histogram), both with the
  default shared copies. Negative control: a sanitizer without noise (exact histogram,
  projected: the projection of exact counts is the batch itself) with the paper's
  independent η = 30 copies. The same control with AdaHedge copies is real but weak on
  this stream (they hedge after one batch: ε ≥ 0.98 from 2,000 runs per side), so it is
  not a test; with shared copies it is weak too (ε ≥ 0.89 from 500 runs: the second
  batch corrects D′), so shared copies get their own stream whose later batches are
  ties (below).
* PrivateExpertsClassifier (T = 6): the differing row is in every running count. Claimed
  ε = 1. Negative control: the cell counter without noise.
* PrivateExpertsClassifier with ``construction="constructed"`` (Alg 5–7, 28 experts):
  see ``_constructed`` below; negative control: both counters without noise.
"""

import warnings

import numpy as np
import pytest

from skdp.audit import audit_mechanism
from skdp.exceptions import PrivacyWarning
from skdp.hypotheses import threshold_class
from skdp.online import (
    BatchSanitizedOnlineClassifier,
    HistogramSanitizer,
    PrivateExpertsClassifier,
)
from skdp.online._experts import CellTreeCounter

EPSILON, ALPHA = 1.0, 1e-6
N_ROWS = 6
LABELS = np.array([[1], [-1]])


class ExactSanitizer(HistogramSanitizer):
    def _noise_scale(self, epsilon):
        return 0.0


class ExactCounter(CellTreeCounter):
    @property
    def _node_noise_scale(self):
        return 0.0


class ExactExperts(PrivateExpertsClassifier):
    _counter_class = ExactCounter


def _streams():
    y0 = np.ones(N_ROWS, dtype=int)
    y1 = y0.copy()
    y1[0] = -1
    return np.zeros((N_ROWS, 1), dtype=int), y0, y1


def _batch(sanitizer=None, learning_rate=30.0, copies="shared"):
    def make(seed):
        return BatchSanitizedOnlineClassifier(
            EPSILON, 0.0, hypothesis_class=LABELS, batch_size=2, n_rounds=N_ROWS,
            learning_rate=learning_rate, sanitizer=sanitizer, random_state=seed,
            copies=copies)
    return make


def _experts(cls=PrivateExpertsClassifier, construction="class"):
    def make(seed):
        return cls(EPSILON, experts=LABELS, n_rounds=N_ROWS, learning_rate=30.0,
                   construction=construction, random_state=seed)
    return make


def _sampler(make, X=None, domain=(0,)):
    def sample(data, n, rng):
        Xd, y = (_streams()[0], data) if X is None else data
        out = np.empty((n, N_ROWS + len(domain)), dtype=np.int8)
        seeds = rng.integers(2**63, size=n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)
            for i, seed in enumerate(seeds):
                clf = make(int(seed))
                wrong = clf._partial_fit_mistakes(Xd, y, classes=[-1, 1])
                out[i, :N_ROWS] = np.where(wrong, -y, y)  # the online predictions
                out[i, N_ROWS:] = clf.predict(np.array(domain)[:, None])
        return out
    return sample


def _events(first):
    """"At least k of the releases from round ``first`` on (and the final predict) say
    +1": fixed from the structure (the releases the differing row can move); both
    directions are tested."""
    def at_least(k):
        def event(outputs):
            return np.count_nonzero(outputs[:, first - 1:] > 0, axis=1) >= k
        return event
    return [at_least(k) for k in range(1, N_ROWS + 3 - first)]


def _audit(make, n):
    _, y0, y1 = _streams()
    first = 3 if make.__qualname__.startswith("_batch") else 2  # after the first batch
    return audit_mechanism(_sampler(make), y0, y1, n_samples=n, events=_events(first),
                           alpha=ALPHA, random_state=0)


# Constructed experts (Alg 5–7) on thresholds over {0, 1} (Ldim 1): the streams differ in
# the *feature* of row 1 (x = 0 vs 1; every label +1). The SOA starts at "x ≥ 1"; an
# expert whose forced point is 0 switches to "all +1", one whose point is 1 to "all −1",
# so which experts exist depends on the sanitized x's, and their losses on the counts.
# The events are the final predictions at 0 and at 1 (the leaders' majority).
CONSTRUCTED_X0 = np.ones((N_ROWS, 1), dtype=int)
CONSTRUCTED_X0[0, 0] = 0
CONSTRUCTED_X1 = np.ones((N_ROWS, 1), dtype=int)
CONSTRUCTED_Y = np.ones(N_ROWS, dtype=int)


def _constructed(cls=PrivateExpertsClassifier):
    def make(seed):
        return cls(EPSILON, experts=threshold_class(2), n_rounds=N_ROWS, learning_rate=30.0,
                   construction="constructed", random_state=seed)
    return make


def _audit_constructed(make, n):
    def positive_at(x):
        def event(outputs):
            return outputs[:, N_ROWS + x] > 0
        return event
    return audit_mechanism(_sampler(make, X=True, domain=(0, 1)),
                           (CONSTRUCTED_X0, CONSTRUCTED_Y), (CONSTRUCTED_X1, CONSTRUCTED_Y),
                           n_samples=n, events=[positive_at(0), positive_at(1)], alpha=ALPHA,
                           random_state=0)


@pytest.mark.parametrize("make", [_batch(), _batch(learning_rate="adaptive"), _experts()],
                         ids=["batch", "batch-adahedge", "experts"])
def test_whole_estimator_audit_stays_below_epsilon(make):
    result = _audit(make, 800)
    assert result.epsilon_lower_bound <= EPSILON, str(result)


@pytest.mark.parametrize("make", [_batch(ExactSanitizer(), copies="independent"),
                                  _experts(ExactExperts)],
                         ids=["batch-exact-sanitizer", "experts-exact-counter"])
def test_broken_variant_is_caught(make):
    result = _audit(make, 500)
    assert result.epsilon_lower_bound > EPSILON, str(result)


def test_constructed_experts_audit_and_its_broken_variant():
    result = _audit_constructed(_constructed(), 300)
    assert result.epsilon_lower_bound <= EPSILON, str(result)
    broken = _audit_constructed(_constructed(ExactExperts), 200)
    assert broken.epsilon_lower_bound > EPSILON, str(broken)


@pytest.mark.slow
@pytest.mark.parametrize("make", [_batch(), _batch(learning_rate="adaptive"), _experts()],
                         ids=["batch", "batch-adahedge", "experts"])
def test_whole_estimator_audit_large(make):
    result = _audit(make, 20000)
    assert result.epsilon_lower_bound <= EPSILON, str(result)


@pytest.mark.slow
def test_constructed_experts_audit_large():
    result = _audit_constructed(_constructed(), 5000)
    assert result.epsilon_lower_bound <= EPSILON, str(result)


# Shared copies on a stream whose later batches are ties, (+1, −1): they add the same
# mean loss to both hypotheses, so what the first batch's sanitized rows said decides
# every later release. D: first batch (+1, +1); D′: (−1, +1).
TIE_Y0 = np.array([1, 1, 1, -1, 1, -1])
TIE_Y1 = np.array([-1, 1, 1, -1, 1, -1])


def _audit_ties(make, n):
    X = _streams()[0]
    return audit_mechanism(_sampler(make, X=True), (X, TIE_Y0), (X, TIE_Y1), n_samples=n,
                           events=_events(3), alpha=ALPHA, random_state=0)


def test_shared_copies_audit_and_exact_sanitizer_twin():
    result = _audit_ties(_batch(), 800)
    assert result.epsilon_lower_bound <= EPSILON, str(result)
    broken = _audit_ties(_batch(ExactSanitizer()), 300)
    assert broken.epsilon_lower_bound > EPSILON, str(broken)
