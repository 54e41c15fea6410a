"""Exact loss of PrivatePredictor's BetweenThresholds at the predictor's own parameters,
honest and at half / a quarter of the noise (issue 26, item 9).

``test_prediction_audit.py`` samples whole predictors (fit + predict) and catches the
noiseless twin; a factor-two twin lives in events of probability ≈ δ there. Here the
instance a fitted predictor starts (``_new_mechanism``: its thresholds, ε_bt, δ_bt,
cutoff, noise for the vote's sensitivity 1/k at its fewest teachers k) is computed
exactly with ``_exact_thresholds.py`` on stationary designs the predictor can present:
every query's vote is j/k under D and (j ± 1)/k under D′ (one changed row changes one
one-row teacher, as in the sampled audit), j searched over the votes near the lower
threshold (the upper one is its mirror image), the transcript run to the cutoff.

Measured, claim (ε, δ) = (1, 0.01) (the sampled audit's setups):

* charged (cap 3, cutoff 3, 119 teachers): honest 0.26, half noise 0.71, quarter 1.82;
* Stemmer (cap 3; cutoff 22, stopped early at the cap — computed to the cutoff, which
  only adds transcripts; 346 teachers): honest 0.20, half 0.54, quarter 1.38;
* BSU (cap 1: one instance, cutoff 1; 381 teachers; μ integrated, slow): honest 0.29,
  half 0.72, quarter 1.67.

So at these parameters the calibrations have more than a factor two of slack on every
stationary design: a factor-two error would not be a violation there, and the table
reports the quarter-noise twin, which is. (Adaptive query sequences could realise more;
none is known to.)
"""

import warnings

import numpy as np
import pytest
from _exact_thresholds import stationary_epsilon

from skdp.exceptions import PrivacyWarning
from skdp.hypotheses import Thresholds
from skdp.prediction import PrivatePredictor, shrinkage_parameters

EPSILON, DELTA = 1.0, 1e-2
SETUPS = {"bsu": (1, (0.375, 0.625)), "stemmer": (3, (0.25, 0.75)),
          "charged": (3, (0.25, 0.75))}
N_QUERIES = 100  # the transcripts' law has saturated well before (each run halts)


def instance(calibration):
    """(query scale, threshold scale, gap, lower threshold, cutoff, teachers k) of the
    BetweenThresholds a fitted predictor starts."""
    cap, band = SETUPS[calibration]
    k = shrinkage_parameters(EPSILON, DELTA, cap, calibration=calibration,
                             thresholds=band)["min_teachers"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        clf = PrivatePredictor(Thresholds(), epsilon=EPSILON, delta=DELTA,
                               max_hard_queries=cap, calibration=calibration, thresholds=band,
                               n_teachers=k, classes=[0, 1], random_state=0)
        clf.fit(np.zeros((k, 1)), np.r_[np.ones(k // 2), np.zeros(k - k // 2)].astype(int))
    bt = clf._new_mechanism(1.0 / k)
    return (bt._query_noise_scale, bt._threshold_noise_scale, bt.t_upper - bt.t_lower,
            bt.t_lower, bt.max_hard, k)


def predictor_epsilon(calibration, factor, votes=None):
    """max over realisable stationary designs (vote j/k vs (j ± 1)/k) of the exact ε at δ
    of the instance with ``factor`` × its noise."""
    b, tb, gap, lower, cutoff, k = instance(calibration)
    if votes is None:  # the votes within ~2.5 noise scales below t_l, and the first above
        top = int(np.floor(lower * k)) + 1
        votes = range(max(1, top - int(np.ceil(2.5 * b * k))), top + 1, 3)
    # x is measured from t_l: _exact_thresholds puts the thresholds at 0 and the gap
    return max(stationary_epsilon(j / k - lower, shift / k, b * factor, gap, cutoff,
                                  N_QUERIES, DELTA, tb * factor)
               for j in votes for shift in (1.0, -1.0) if 0 <= j + shift <= k)


def _check_slack(calibration):
    honest, half = predictor_epsilon(calibration, 1.0), predictor_epsilon(calibration, 0.5)
    assert honest <= half <= EPSILON, (honest, half)
    assert predictor_epsilon(calibration, 0.25) > EPSILON  # the exact audit can fail


@pytest.mark.parametrize("calibration", ["charged", "stemmer"])
def test_predictor_instances_have_more_than_twofold_slack(calibration):
    _check_slack(calibration)  # charged 0.26 / 0.71 / 1.82, Stemmer 0.20 / 0.54 / 1.38


@pytest.mark.slow
def test_bsu_instance_has_more_than_twofold_slack():
    _check_slack("bsu")  # 0.29 / 0.72 / 1.67 (≈ 4 min: μ is integrated on a grid)
