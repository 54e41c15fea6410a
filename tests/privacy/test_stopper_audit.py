"""Privacy audit of Stopper (Stemmer 2024, Thm 4.2), and the broken variants it must catch.

Design: one bit of the *initial* dataset differs, so the count is t − 3 under D and
t − 2 under D'. The Stopper is queried 100 times with no updates, then two one-bits
arrive (counts t − 1 vs t) and it is queried once more. The output is the index of
the halting query (101 = never halted). The 100 queries close to the threshold work
the ⊥-answers' accumulated leak, which the 8·ln(2/δ)/ε noise pays for; the last
query makes a noiseless Stopper halt under D' and never under D. Events are the
likelihood-ratio sets audit_mechanism picks on its own pilot sample.
"""

import numpy as np
import pytest

from skdp.audit import audit_mechanism
from skdp.mechanisms.stopper import Stopper

EPS, DELTA, THRESHOLD, RUNS, ALPHA = 1.0, 1e-3, 20, 200_000, 1e-6
INCREMENTS = np.zeros(101)
INCREMENTS[-1] = 2


class NoNoise(Stopper):
    """Compares the exact count with t."""

    @property
    def _query_noise_scale(self):
        return 0.0


class SingleQueryNoise(Stopper):
    """Noise Lap(1/ε), as for a single sensitivity-1 count: ignores that the ⊥ answers
    to arbitrarily many queries must be paid for (the 8·ln(2/δ) factor)."""

    @property
    def _query_noise_scale(self):
        return 1.0 / self.epsilon


def _audit(cls):
    def sample(initial_count, n, rng):
        return cls.simulate(
            INCREMENTS, n, EPS, DELTA, THRESHOLD, initial_count=initial_count, random_state=rng
        )

    return audit_mechanism(
        sample,
        THRESHOLD - 3,
        THRESHOLD - 2,
        n_samples=RUNS,
        alpha=ALPHA,
        delta=DELTA,
        random_state=2,
    )


def test_stopper_audit_passes():
    result = _audit(Stopper)
    assert result.epsilon_lower_bound <= EPS, str(result)  # measured ≈ 0


@pytest.mark.parametrize("cls", [NoNoise, SingleQueryNoise], ids=["no-noise", "lap-1/eps"])
def test_stopper_audit_catches_broken_variant(cls):
    result = _audit(cls)
    assert result.epsilon_lower_bound > EPS, str(result)  # measured 9.44 / 4.20


def test_instances_and_simulate_agree_on_the_audit_design():
    # The audit runs the vectorised path; check it against real instances here.
    from scipy import stats

    n = 2000
    sim = Stopper.simulate(INCREMENTS, n, 4.0, 0.3, 5, initial_count=3, random_state=5)
    rng = np.random.default_rng(6)
    inst = []
    for _ in range(n):
        out = Stopper(4.0, 0.3, 5, initial_bits=[1, 1, 1], random_state=rng).process(INCREMENTS)
        inst.append(out.size - 1 if out.size and out[-1] else INCREMENTS.size)
    bins = INCREMENTS.size + 1
    table = np.array([np.bincount(sim, minlength=bins), np.bincount(inst, minlength=bins)])
    table = table[:, table.sum(axis=0) > 0]
    assert stats.chi2_contingency(table)[1] > ALPHA


# -- calibration="svt" (monotone AboveThreshold, pure ε-DP): same design -------------------
class SvtWithoutThresholdNoise(Stopper):
    """Broken: the svt query noise Lap(2/ε) but no threshold noise — the ⊥ answers of
    the 100 queries below the threshold then leak independently (no shared ρ)."""

    @property
    def _threshold_noise_scale(self):
        return 0.0


def _svt_audit(cls):
    def sample(initial_count, n, rng):
        return cls.simulate(INCREMENTS, n, EPS, DELTA, THRESHOLD, initial_count=initial_count,
                            calibration="svt", random_state=rng)

    return audit_mechanism(sample, THRESHOLD - 3, THRESHOLD - 2, n_samples=RUNS, alpha=ALPHA,
                           delta=0.0, random_state=4)


def test_svt_stopper_audit_passes():
    result = _svt_audit(Stopper)
    assert result.epsilon_lower_bound <= EPS, str(result)  # measured 0.30


def test_svt_stopper_audit_catches_missing_threshold_noise():
    result = _svt_audit(SvtWithoutThresholdNoise)
    assert result.epsilon_lower_bound > EPS, str(result)  # measured 2.29
