"""Statistical privacy audit of the whole PrivatePredictor (fit + a stream of queries).

Neighbouring labelled samples differ in one row. Each output of the audited
mechanism is the full transcript of a fresh predictor — ``fit`` (random partition,
teachers) and ``predict`` on a fixed query stream — encoded per query as 0 / 1 (the
released label) or 2 (refused: cap reached). Design (fixed before sampling):
one-row teachers (n = k), so the vote on the query is the fraction of positive rows;
D has it just below t_l and D' (one label flipped) just above, the place where
BetweenThresholds works hardest. Events are chosen on a pilot sample by skdp.audit
(likelihood-ratio events), α = 1e-6, claimed (ε, δ) of the predictor. Both
calibrations: Yan's BSU (one instance per hard query, thresholds 3/8, 5/8, cap 1)
Stemmer's single instance stopped at the cap (thresholds 1/4, 3/4, cap 3 of a
cutoff 22: the early stop of ``_shrinkage_answering``'s Lemma 1), and the charged
single instance (cutoff = cap 3, noise ≤ gap/4 at its fewest teachers, the lemma of
``skdp.mechanisms._charged_calibration``).

Negative control: the same predictor whose BetweenThresholds draws no noise (every
calibration). Its transcripts on D and D' are disjoint, and the same audit must catch it.
"""

import numpy as np
import pytest

from skdp.audit import audit_mechanism
from skdp.mechanisms.between_thresholds import BetweenThresholds
from skdp.prediction import PrivatePredictor, QueryBudgetExhaustedError, shrinkage_parameters

EPSILON, DELTA = 1.0, 1e-2
# calibration → (cap, thresholds, fewest teachers)
SETUPS = {
    calibration: (cap, band, shrinkage_parameters(EPSILON, DELTA, cap, calibration=calibration,
                                                  thresholds=band)["min_teachers"])
    for calibration, cap, band in (("bsu", 1, (0.375, 0.625)), ("stemmer", 3, (0.25, 0.75)),
                                   ("charged", 3, (0.25, 0.75)))
}
N_QUERIES = 4
# Distinct rows (a repeated row is answered from the transcript, free); one-row
# teachers are constants, so every query gets the same vote.
QUERIES = np.arange(N_QUERIES, dtype=float)[:, None]
ALPHA = 1e-6


class _NoiselessBT(BetweenThresholds):
    @property
    def _threshold_noise_scale(self):
        return 0.0

    @property
    def _query_noise_scale(self):
        return 0.0


class NoNoisePredictor(PrivatePredictor):
    """Broken: BetweenThresholds without threshold or query noise."""

    def _new_mechanism(self, sensitivity):
        return _NoiselessBT(*self.thresholds_, self.epsilon_bt_, self.delta_bt_,
                            sensitivity=sensitivity, calibration=self.calibration_,
                            max_hard=self._plan["max_hard"], random_state=self._state.rng)


def _datasets(calibration):
    # Rows at x = 0 with labels; a one-row teacher predicts its own label everywhere.
    _, (lower, _), k = SETUPS[calibration]
    p = int(np.floor(lower * k))  # p/k < t_l ≤ (p+1)/k
    assert p / k < lower <= (p + 1) / k
    y0 = np.zeros(k, dtype=int)
    y0[:p] = 1
    y1 = y0.copy()
    y1[p] = 1
    return y0, y1


def _transcripts(cls, calibration, method="predict"):
    from skdp.hypotheses import Thresholds

    cap, band, k = SETUPS[calibration]
    X = np.zeros((k, 1))

    def sample(y, n, rng):
        out = np.empty((n, N_QUERIES), dtype=np.int8)
        for i in range(n):
            clf = cls(Thresholds(), epsilon=EPSILON, delta=DELTA, max_hard_queries=cap,
                      calibration=calibration, thresholds=band, n_teachers=k,
                      classes=[0, 1], random_state=rng)
            clf.fit(X, y)
            try:
                answers = getattr(clf, method)(QUERIES)
            except QueryBudgetExhaustedError as exc:
                answers = exc.answers
            if method == "predict_proba":  # the released score, one of four values
                answers = np.digitize(np.asarray(answers)[:, 1], [0.25, 0.5, 0.75]) + 3
            out[i] = 2
            out[i, : len(answers)] = answers
        return out

    return sample


def _audit(cls, calibration, n_samples, n_pilot, seed, method="predict"):
    y0, y1 = _datasets(calibration)
    return audit_mechanism(_transcripts(cls, calibration, method), y0, y1, n_samples=n_samples,
                           n_pilot=n_pilot, alpha=ALPHA, delta=DELTA, random_state=seed)


@pytest.mark.parametrize("calibration", sorted(SETUPS))
def test_private_predictor_passes_audit(calibration):
    result = _audit(PrivatePredictor, calibration, 1000, 300, 1)
    assert result.epsilon_lower_bound <= EPSILON, str(result)


@pytest.mark.parametrize("calibration", sorted(SETUPS))
def test_audit_catches_predictor_without_noise(calibration):
    result = _audit(NoNoisePredictor, calibration, 300, 100, 2)
    assert result.epsilon_lower_bound > EPSILON, str(result)


def test_predict_proba_passes_audit_and_catches_the_broken_twin():
    # predict_proba releases a function of the same codes and hard-query labels.
    result = _audit(PrivatePredictor, "stemmer", 600, 200, 4, method="predict_proba")
    assert result.epsilon_lower_bound <= EPSILON, str(result)
    broken = _audit(NoNoisePredictor, "stemmer", 300, 100, 5, method="predict_proba")
    assert broken.epsilon_lower_bound > EPSILON, str(broken)


@pytest.mark.slow
@pytest.mark.parametrize("calibration", sorted(SETUPS))
def test_private_predictor_passes_long_audit(calibration):
    result = _audit(PrivatePredictor, calibration, 40_000, 10_000, 3)
    assert result.epsilon_lower_bound <= EPSILON, str(result)
