"""Privacy audit of an online learner's ``predict_proba``, with a broken twin.

PrivateExpertsClassifier's ``predict_proba`` is the probability of +1 under the Hedge
distribution computed from the *released* noisy cell counts: post-processing, so the
stream's ε covers it. Neighbouring streams of six rows on a one-point domain differ in
their first label (+1 in D, −1 in D′; the rest +1); the class is {all +1, all −1} and
Hedge runs with η = 1 (any η keeps privacy), so the probability moves with the counts:
from the exact counts it is 1/(1 + e^{−6}) ≈ 0.9975 on D and 1/(1 + e^{−4}) ≈ 0.982 on D′.
The audited output is ``predict_proba`` at the point after the stream; the events
"P(+1) > c" use thresholds fixed from that structure (both directions are tested).

Broken twin: probabilities from the exact, unreleased counts (``_counter._exact``): the
event P(+1) > 0.99 then separates D from D′ every time, and the audit must catch it.
"""

import warnings

import numpy as np

from skdp.audit import audit_mechanism
from skdp.exceptions import PrivacyWarning
from skdp.online import PrivateExpertsClassifier

EPSILON, ALPHA = 1.0, 1e-6
N_ROWS = 6
LABELS = np.array([[1], [-1]])
THRESHOLDS = (0.5, 0.9, 0.99, 0.999)


class LeakyProbaExperts(PrivateExpertsClassifier):
    """Broken: predict_proba from the exact (unreleased) cell counts."""

    def _released_score(self, x):
        p = self._probs(self._counter._exact[None, :].astype(float))[0]
        return 2.0 * (p @ (self.labels_ > 0))[x] - 1.0


def _sampler(cls):
    def sample(y, n, rng):
        X = np.zeros((N_ROWS, 1))
        out = np.empty(n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)
            for i, seed in enumerate(rng.integers(2**32, size=n)):
                clf = cls(EPSILON, experts=LABELS, n_rounds=N_ROWS, learning_rate=1.0,
                          classes=[-1, 1], random_state=int(seed)).fit(X, y)
                out[i] = clf.predict_proba([[0]])[0, 1]
        return out
    return sample


def _audit(cls, n):
    y0 = np.ones(N_ROWS, dtype=int)
    y1 = y0.copy()
    y1[0] = -1
    events = [lambda p, c=c: p > c for c in THRESHOLDS]
    return audit_mechanism(_sampler(cls), y0, y1, n_samples=n, events=events, alpha=ALPHA,
                           random_state=0)


def test_experts_predict_proba_audit_stays_below_epsilon():
    result = _audit(PrivateExpertsClassifier, 600)
    assert result.epsilon_lower_bound <= EPSILON, str(result)


def test_predict_proba_from_unreleased_counts_is_caught():
    result = _audit(LeakyProbaExperts, 300)
    assert result.epsilon_lower_bound > EPSILON, str(result)
