"""Privacy audit of PERP's scores (issue 18): predict_proba releases nothing beyond its claim.

1. The too-few-rows answer, :func:`noisy_majority_score` (two noisy counts, ε-DP
   under add/remove): neighbouring label vectors differ by one added positive row;
   the outputs are discrete, so the audit picks likelihood-ratio events on a pilot
   sample. Broken twin: the same score without noise (deterministic, so any event
   separates the neighbours).
2. The running mechanism's three-level scores: the ``"sharp"`` preset's initial-sample
   design of ``test_perp_sharp_audit.py`` (claim (ε, δ(0))), with the transcript the
   ``predict_proba`` levels (inside / medium / high) instead of the 0/1 labels. The
   medium level is the extra information; the broken twin (data-dependent parts,
   noiseless BetweenThresholds) must fail on it.
"""

import numpy as np
from test_perp_sharp_audit import PositionPartitionNoiseless
from test_perp_sharp_audit import _audit as sharp_audit
from test_perp_sharp_audit import _Audited as Audited

from skdp.audit import audit_mechanism
from skdp.prediction._perp_scores import noisy_majority_score

ALPHA = 1e-6
EPS = 1.0
Y0 = np.array([1] * 12 + [-1] * 10)
Y1 = np.append(Y0, 1)  # one positive row added


def _majority(noisy):
    def sample(y, n, rng):
        if noisy:
            return noisy_majority_score(y, EPS, rng, size=n)
        return np.full(n, (np.sum(y > 0) - np.sum(y < 0)) / y.size)

    return sample


def test_majority_score_passes_the_audit():
    result = audit_mechanism(_majority(True), Y0, Y1, n_samples=200_000, alpha=ALPHA,
                             random_state=3)
    assert result.epsilon_lower_bound <= EPS, str(result)  # measured 0.24


def test_audit_catches_a_noiseless_majority_score():
    result = audit_mechanism(_majority(False), Y0, Y1, n_samples=2_000, alpha=ALPHA,
                             random_state=3)  # measured ε ≥ 4.83
    assert result.epsilon_lower_bound > EPS, str(result)


def _levels(cls, queries, **params):
    def sample(data, n, rng):
        out = np.empty((n, len(queries)), dtype=np.int8)
        for i in range(n):
            clf = cls(random_state=rng, classes=[0, 1], **params).fit(*data)
            out[i] = np.rint(4 * clf.predict_proba(queries)[:, 1])  # 0 high, 2 medium, 4 inside
        return out

    return sample


EVENTS = [lambda t: t[:, 0] == 4, lambda t: t[:, 0] == 2, lambda t: (t == 2).mean(axis=1) > 0.5]


def _audit(cls, n_samples):
    return sharp_audit(cls, n_samples, transcripts=_levels, events=EVENTS, seed=13)


def test_sharp_scores_pass_the_audit():
    result, eps = _audit(Audited, 300)  # measured ε ≥ −0.62 (claim 2)
    assert result.epsilon_lower_bound <= eps, str(result)


def test_audit_catches_scores_of_position_partition_without_noise():
    result, eps = _audit(PositionPartitionNoiseless, 300)  # measured ε ≥ 2.87 > 2
    assert result.epsilon_lower_bound > eps, str(result)
