"""Measured power of the PERP initial-sample audit against a 2× twin (issue 26, item 9).

The twin: every ChallengeBT copy of RectanglesPERP with half its inner BetweenThresholds
noise (a copy lemma off by a factor of two), on the initial-sample design of
``test_perp_sharp_audit.py`` (claim ε = 2 at δ(0); ``preset="charged"``, the default).
That design is built to catch data-dependent partitions: its honest audit value is far
below the claim (−0.30 at 1000 runs), and the half-noise twin is no different (−0.28):
the audit has no power against a factor-two error in the copies. The numbers are
reported (``benchmarks/audit_power.py``), not asserted as a catch. The copies' own
lemma has its exact 2× audit in ``test_exact_challenge_bt.py`` (caught with a sharp
Stopper; 3.90 of 4 at ε_s = ε). At PERP's own sizes (a first phase of 6.8·10⁷ queries
at ε = 1, d = 2) no exact model of the whole predictor is in reach.
"""

import numpy as np
import pytest
import test_perp_sharp_audit as sharp

from skdp.mechanisms.challenge_bt import ChallengeBT
from skdp.prediction._perp_phase import RectanglesRun, _SteppedChallengeBT


class _HalfNoiseChallengeBT(_SteppedChallengeBT):
    @property
    def _bt_query_noise_scale(self):
        return ChallengeBT._bt_query_noise_scale.fget(self) / 2.0


class _HalfNoiseRun(RectanglesRun):
    def _challenge_bt(self, q, seed):
        charged = q.bt_calibration == "charged"
        return _HalfNoiseChallengeBT(q.threshold, q.upper_threshold, q.epsilon_instance,
                                     q.delta_instance, q.max_hard, q.length + 1,
                                     stopper="svt", stopper_epsilon=q.stopper_epsilon,
                                     bt_calibration=q.bt_calibration,
                                     bt_noise_scale=q.bt_noise_scale if charged else None,
                                     random_state=seed)


class HalfNoiseCopies(sharp._Audited):
    """Broken: every ChallengeBT copy at half its BetweenThresholds noise."""

    _run_class = _HalfNoiseRun


def twin_power(cls, n_samples=1000, preset="charged"):
    """(ε lower bound, claimed ε) of the initial-sample audit for ``cls``."""
    result, eps = sharp._audit(cls, n_samples, preset=preset, seed=21)
    return result.epsilon_lower_bound, eps


def claim(preset="charged"):
    """The audited (ε, δ(0)) of the design's predictor."""
    d0, _, params = sharp._data(preset)
    return sharp._Audited(classes=[0, 1], **{**params, "preset": preset}).fit(
        *d0)._initial_privacy()


def test_half_noise_copies_are_really_half_noise():
    d0, _, params = sharp._data("charged")
    honest = sharp._Audited(classes=[0, 1], **params).fit(*d0)
    twin = HalfNoiseCopies(classes=[0, 1], **params).fit(*d0)
    for clf in (honest, twin):
        clf.predict(np.zeros((1, 1)))
    scale = [clf._state.mechanism.copies[0].mechanism._bt_query_noise_scale
             for clf in (honest, twin)]
    assert np.isclose(scale[1], scale[0] / 2), scale


@pytest.mark.slow
def test_initial_sample_audit_at_the_power_runs():
    """The honest predictor at the run count the power row uses (measured −0.30; the
    half-noise-copies twin −0.28 at the same 1000 runs: the audit has no power against
    it, which the table reports rather than asserts)."""
    honest, eps = twin_power(sharp._Audited)
    assert honest <= eps
