"""Exact privacy loss of ChallengeBT (svt Stopper, charged inner BetweenThresholds) and
its half-noise twin (issue 26, item 9).

The sampled audit (``test_charged_between_thresholds_audit.py``) catches a twin at a
third of the inner noise but cannot reach the factor-two twin, whose violation lives in
transcripts of probability ≈ δ. ``_exact_challenge_bt.py`` computes the law of a whole
ChallengeBT run on a stationary design (every BT query at x under D, x + shift under D′),
Stopper included, from a real instance's noise scales, thresholds, k and T.

Claim (ε, δ) = (4, 0.05), k = 30, T = 100 steps, gap 3b with b the certified charged
noise for (ε, δ/2, k′). The audit's Stopper is run at ε_s = 40 (any ε_s is allowed: the
lemma holds for every Stopper privacy level, since the Stopper only post-processes the
BT answers), which makes k′ = k + 1 and the halt sharp at k: the inner BT then works as
hard as the lemma allows. On the designs pinned here (found by a grid search over x and
the shift's sign, re-run by the slow test):

* honest ChallengeBT: exact ε = 1.43 ≤ 4;
* twin with half the inner noise (a charged lemma off by 2×): exact ε = 4.18 > 4 — a real
  violation, so the exact audit catches it;
* at the default ε_s = ε (k′ = k + 4, noisier halt) the same twin reaches only 3.90: at
  k = 30 the charged lemma's slack is just under 2× there (the rows of the audit-power
  table give both).

Stemmer's Stopper and Thm 4.3's inner BetweenThresholds have more than 2× slack (see
``test_exact_thresholds.py``: Stemmer's half-noise BT stays at 1.97 of 2), so their
factor-two twin is not a violation; the sampled audits there catch grosser twins.
"""

import numpy as np
import pytest
from _exact_challenge_bt import stationary_pair, transcript_log_probs
from _exact_thresholds import pooled_chisquare_pvalue

from skdp.audit import exact_epsilon
from skdp.mechanisms._charged_calibration import charged_noise_scale
from skdp.mechanisms.between_thresholds import HARD, HIGH, LOW
from skdp.mechanisms.challenge_bt import ChallengeBT

EPS, DELTA, K, T, RATIO = 4.0, 0.05, 30, 100, 3.0
SHARP_STOPPER = 40.0  # ε_s of the audit's Stopper: k′ = k + 1


class ChallengeHalfNoise(ChallengeBT):
    """Broken: the inner BetweenThresholds at half the certified noise (2× the claim)."""

    @property
    def _bt_query_noise_scale(self):
        return self._charged_b / 2.0


def make(cls, stopper_epsilon=SHARP_STOPPER, k=K, steps=T, random_state=None):
    """A real instance whose gap is 3× its certified noise, as RectanglesPERP sets it."""
    k_prime = ChallengeBT(0.0, 1e9, EPS, DELTA, k, steps, stopper="svt",
                          stopper_epsilon=stopper_epsilon).k_prime
    b = charged_noise_scale(EPS, DELTA / 2, k_prime, gap_ratio=RATIO)
    return cls(0.0, RATIO * b, EPS, DELTA, k, steps, stopper="svt",
               stopper_epsilon=stopper_epsilon, bt_calibration="charged", bt_noise_scale=b,
               random_state=random_state)


def _scales(inst):
    """Everything the exact law needs, read from the instance (a recalibration shows)."""
    return dict(b=inst._bt._query_noise_scale, gap=inst.t_upper - inst.t_lower,
                k=inst.max_hard, n=inst.max_steps,
                stop_query_scale=inst._stopper._query_noise_scale,
                stop_threshold_scale=inst._stopper._threshold_noise_scale)


def challenge_epsilon(cls, x_units, shift, stopper_epsilon=SHARP_STOPPER, k=K, steps=T):
    """Exact ε at δ of the stationary design x = x_units·b (b: the instance's own noise)."""
    s = _scales(make(cls, stopper_epsilon, k, steps))
    log_p, log_q = stationary_pair(x_units * s["b"], shift, **s)
    return exact_epsilon(log_p, log_q, DELTA)


# (x in units of the audited variant's noise, shift): the worst pinned designs
HONEST_DESIGN, TWIN_DESIGN = (0.0, -1.0), (-0.2, 1.0)


def test_transcript_model_is_the_mechanism():
    """The cell law matches ChallengeBT.simulate (χ², α = 1e-6) on a short run, for the
    honest instance and the twin, with the default and the sharp Stopper: the model
    computed is the shipped algorithm (Flag rule, Stopper, T cap)."""
    for cls, eps_s, seed in ((ChallengeBT, EPS, 1), (ChallengeHalfNoise, SHARP_STOPPER, 2)):
        k, steps, runs = 18, 40, 60_000  # k ≥ 4·ln(4/δ) = 17.5
        s = _scales(make(cls, eps_s, k, steps))
        x = -0.3 * s["b"]
        log_p, cells = transcript_log_probs(x, **s)
        assert np.isclose(np.exp(log_p).sum(), 1.0)
        codes, stops = cls.simulate(np.full(steps, x), runs, 0.0, s["gap"], EPS, DELTA, k,
                                    steps, random_state=seed, stopper="svt",
                                    stopper_epsilon=eps_s, bt_calibration="charged",
                                    bt_noise_scale=make(ChallengeBT, eps_s, k, steps)._charged_b)
        index = {cell: i for i, cell in enumerate(cells)}
        ended = (stops == 1).any(axis=1).astype(int)
        seen = np.bincount([index[key] for key in zip(
            (codes == LOW).sum(1).tolist(), (codes == HARD).sum(1).tolist(),
            (codes == HIGH).sum(1).tolist(), ended.tolist(), strict=True)],
            minlength=len(cells))
        assert pooled_chisquare_pvalue(seen, np.exp(log_p) * runs) > 1e-6, cls.__name__


def test_half_noise_twin_is_a_real_violation():
    honest = challenge_epsilon(ChallengeBT, *HONEST_DESIGN)
    twin = challenge_epsilon(ChallengeHalfNoise, *TWIN_DESIGN)
    assert honest <= EPS, honest  # computed 1.428
    assert twin > EPS, twin  # computed 4.180 > 4: caught


def test_default_stopper_leaves_the_twin_under_the_claim():
    """With ε_s = ε (k′ = k + 4) the same twin is exactly 3.90 ≤ 4 on the pinned design:
    the slack is pinned so that a recalibration that eats it shows up here."""
    twin = challenge_epsilon(ChallengeHalfNoise, *TWIN_DESIGN, stopper_epsilon=EPS)
    assert 3.85 <= twin <= EPS, twin  # computed 3.903


@pytest.mark.slow
@pytest.mark.parametrize(("cls", "design"), [(ChallengeBT, HONEST_DESIGN),
                                             (ChallengeHalfNoise, TWIN_DESIGN)])
def test_pinned_designs_are_the_worst_on_the_grid(cls, design):
    pinned = challenge_epsilon(cls, *design)
    best = max(challenge_epsilon(cls, x, shift) for x in np.linspace(-1.0, 0.6, 17)
               for shift in (1.0, -1.0))
    assert pinned >= 0.99 * best, (pinned, best)


# Stemmer's ChallengeBT (Stemmer Stopper, Thm 4.3 inner BT): the sampled audit's setup of
# test_between_thresholds_audit.py (ε = 2, δ = 0.1, k = 15, T = 60, k′ = 92).
S_EPS, S_DELTA, S_K, S_T = 2.0, 0.1, 15, 60


def stemmer_challenge_epsilon(factor, x_units=0.5, shift=1.0):
    """Exact ε at δ of Stemmer's ChallengeBT with ``factor`` × its inner BT noise."""
    probe = ChallengeBT(0.0, 1e9, S_EPS, S_DELTA, S_K, S_T)
    gap = max(32 / S_EPS * np.sqrt(S_K * np.log(4 / S_DELTA)),
              16 / S_EPS * np.sqrt(probe.k_prime * np.log(4 / S_DELTA)))
    inst = ChallengeBT(0.0, gap, S_EPS, S_DELTA, S_K, S_T)
    s = _scales(inst)
    s["b"] *= factor
    return exact_epsilon(*stationary_pair(x_units * s["b"], shift, **s), S_DELTA)


def test_stemmer_challenge_has_more_than_twofold_slack():
    """Its half- and quarter-noise twins are exactly 0 at δ = 0.1 on the grid's worst
    design (k′ = 92 ≫ the k = 15 mediums the Stopper lets through): a factor-two error
    in Thm 4.3 / Alg. 4 would not be a violation here."""
    for factor in (1.0, 0.5, 0.25):
        assert stemmer_challenge_epsilon(factor) <= S_EPS
