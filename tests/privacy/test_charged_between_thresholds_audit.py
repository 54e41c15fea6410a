"""Privacy audits of BetweenThresholds' ``calibration="charged"`` and of ChallengeBT with
``bt_calibration="charged"`` (the lemma in ``skdp.mechanisms._charged_calibration``),
with broken twins whose noise is a fraction of the certified one.

Design ("A/B", as in ``test_between_thresholds_audit.py``): N queries on the lower
threshold t_l = 0 under D; under D′ the even-indexed ones move up by Δ = 1 and the
odd-indexed ones down. The released codes are post-processed into the transcript's
exact log-likelihood ratio ln(P_D/P_D′) for *the audited variant's own* noise scale
(a fixed, data-independent function of the codes: the Neyman–Pearson statistic of
this design), and the events are {statistic ≥ c} for c fixed in advance.

Claim: ε = 4 at δ = 0.05, k = 30, gap 3b (b the certified noise, as RectanglesPERP's
``"charged"`` schedule sets it). The lemma is tight only to leading order, and at
these small k and large δ the honest mechanism's true loss is well below the claim
(measured ε ≥ 1.05; the statistic reaches c = 3 in 0.15 % of runs), so a twin at
*half* the noise is not caught at k = 30 even with 4·10⁵ runs (ε ≥ 3.23). The fast
twin has a third of the noise (a lemma off by a factor three); the half-noise twin
is audited at k = 100 with 4·10⁵ runs behind ``slow`` (measured ε ≥ 4.09, claim 4:
caught, at the edge of what an audit can show).
"""

import math

import numpy as np
import pytest

from skdp.audit import audit_mechanism
from skdp.mechanisms._charged_calibration import charged_epsilon, charged_noise_scale
from skdp.mechanisms.between_thresholds import HARD, HIGH, LOW, BetweenThresholds
from skdp.mechanisms.challenge_bt import ChallengeBT

ALPHA = 1e-6
EPS, DELTA, K, N, RUNS, RATIO = 4.0, 0.05, 30, 80, 20_000, 3.0
B = charged_noise_scale(EPS, DELTA, K, gap_ratio=RATIO)
GAP = RATIO * B
EVENTS = [(lambda s, c=c: s >= c) for c in (1.0, 2.0, 3.0, 4.0, 5.0, 6.0)]
SIGNS = np.where(np.arange(N) % 2 == 0, 1.0, -1.0)


def _laplace_cdf(z):
    return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0)), 1 - 0.5 * np.exp(-np.maximum(z, 0)))


def _log_probs(x, b, gap):
    low = _laplace_cdf((0.0 - x) / b)
    high = 1 - _laplace_cdf((gap - x) / b)
    return np.log(np.stack([low, 1 - low - high, high]))


def _llr_table(b, gap, signs=SIGNS):
    """ln P_D(a) − ln P_D′(a) for each query (columns) and answer L / ⊤ / R (rows)."""
    return _log_probs(np.zeros(signs.size), b, gap) - _log_probs(signs, b, gap)


def _statistic(codes, table):
    row = np.select([codes == LOW, codes == HARD, codes == HIGH], [0, 1, 2], default=-1)
    terms = table[np.clip(row, 0, 2), np.arange(codes.shape[1])]
    return np.where(row >= 0, terms, 0.0).sum(axis=1)


class ThirdNoise(BetweenThresholds):
    """Broken: a third of the certified noise (a lemma off by a factor of three)."""

    @property
    def _query_noise_scale(self):
        return self._charged_scale / 3.0


class HalfNoise(BetweenThresholds):
    """Broken: half the certified noise (a lemma off by a factor of two)."""

    @property
    def _query_noise_scale(self):
        return self._charged_scale / 2.0


def _bt_audit(cls, factor, k=K, n_queries=N, runs=RUNS, events=EVENTS):
    b = charged_noise_scale(EPS, DELTA, k, gap_ratio=RATIO)
    signs = np.where(np.arange(n_queries) % 2 == 0, 1.0, -1.0)
    table = _llr_table(b * factor, RATIO * b, signs)

    def sample(shift, n, rng):
        out = np.empty(n)
        for start in range(0, n, 10_000):
            stop = min(n, start + 10_000)
            codes = cls.simulate(shift * signs, stop - start, 0.0, RATIO * b, EPS, DELTA,
                                 random_state=rng, calibration="charged", max_hard=k,
                                 noise_scale=b)
            out[start:stop] = _statistic(codes, table)
        return out

    return audit_mechanism(sample, 0.0, 1.0, n_samples=runs, events=events, alpha=ALPHA,
                           delta=DELTA, random_state=1)


def test_certificate_holds_for_the_design():
    assert charged_epsilon(B, GAP, K, DELTA) <= EPS
    assert math.isclose(BetweenThresholds(0.0, GAP, EPS, DELTA, calibration="charged",
                                          max_hard=K)._query_noise_scale, B, rel_tol=1e-5)


# -- ChallengeBT with the svt Stopper and the charged inner BetweenThresholds ------------
# Its inner BT runs at (ε, δ/2, k' = k + ⌈(4/ε)·ln(2/δ)⌉) with gap 3b'; the statistic is
# the same LLR (the Stopper's answers are a data-independent function of the codes).
CB_K, CB_RUNS = K, 40_000  # k ≥ 4·ln(4/δ) = 17.5, ChallengeBT's least k


CB_B = charged_noise_scale(EPS, DELTA / 2, ChallengeBT(0.0, 1e9, EPS, DELTA, CB_K, N,
                                                     stopper="svt").k_prime, gap_ratio=RATIO)


class ChallengeThirdNoise(ChallengeBT):
    """Broken: the inner BetweenThresholds at a third of the certified noise."""

    @property
    def _bt_query_noise_scale(self):
        return self._charged_b / 3.0


def _challenge_audit(cls, factor):
    table = _llr_table(CB_B * factor, RATIO * CB_B)

    def sample(shift, n, rng):
        codes, _ = cls.simulate(shift * SIGNS, n, 0.0, RATIO * CB_B, EPS, DELTA, CB_K, N,
                                random_state=rng, stopper="svt", bt_calibration="charged",
                                bt_noise_scale=CB_B)
        return _statistic(codes, table)

    return audit_mechanism(sample, 0.0, 1.0, n_samples=CB_RUNS, events=EVENTS, alpha=ALPHA,
                           delta=DELTA, random_state=3)


@pytest.mark.parametrize(
    ("audit", "cls", "factor", "broken"),
    [(_bt_audit, BetweenThresholds, 1.0, False), (_bt_audit, ThirdNoise, 1 / 3, True),
     (_challenge_audit, ChallengeBT, 1.0, False),
     (_challenge_audit, ChallengeThirdNoise, 1 / 3, True)],
    ids=["charged-passes", "catches-a-third-of-the-noise", "charged-challenge-passes",
         "challenge-catches-a-third-of-the-noise"])
def test_charged_audit(audit, cls, factor, broken):
    result = audit(cls, factor)
    # measured BT 1.05 (event c = 1) / 4.55; ChallengeBT 0.88 (20,000 runs) / 4.25 (4.01
    # at 20,000 runs: hence 40,000)
    assert (result.epsilon_lower_bound > EPS) == broken, str(result)


@pytest.mark.slow
def test_half_noise_twin_at_scale():
    """The factor-two twin, k = 100 (closer to the lemma's large-k regime), 4·10⁵ runs."""
    events = [(lambda s, c=c: s >= c) for c in (3.5, 4.0, 4.5, 5.0)]
    result = _bt_audit(HalfNoise, 0.5, k=100, n_queries=240, runs=400_000, events=events)
    assert result.epsilon_lower_bound > EPS, str(result)  # measured 4.09 (honest: −inf)
