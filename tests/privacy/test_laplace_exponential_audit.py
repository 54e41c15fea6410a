"""Privacy audits of the Laplace, discrete Laplace and selection mechanisms.

Negative controls: Laplace at half the scale, and selection calibrated as if
monotone (half the noise) on scores that are not — the same audits must catch them.
"""

import numpy as np
import pytest

from skdp.audit import audit_mechanism
from skdp.mechanisms import (
    exponential_mechanism,
    geometric_mechanism,
    laplace_mechanism,
    report_noisy_max,
)

EPSILON = 1.0


# Laplace: D has value 0, D' has value 1 (sensitivity 1). Events "output ≥ t" for a
# few t fixed in advance: the likelihood ratio is e^ε for outputs above 1.
LAPLACE_EVENTS = [lambda z, t=t: z >= t for t in (1.0, 2.0, 3.0)]


def laplace_audit(noise_epsilon):
    """Laplace noise calibrated for ``noise_epsilon`` (ε: honest; 2ε: the 2× twin)."""
    def sample(value, n, rng):
        return laplace_mechanism(np.full(n, value), noise_epsilon, random_state=rng)

    return audit_mechanism(sample, 1.0, 0.0, n_samples=400_000, events=LAPLACE_EVENTS)


def geometric_audit(noise_epsilon):
    def sample(count, n, rng):
        return geometric_mechanism(np.full(n, count), noise_epsilon, random_state=rng)

    return audit_mechanism(sample, 10, 11, n_samples=400_000)


@pytest.mark.parametrize("audit", [laplace_audit, geometric_audit])
@pytest.mark.parametrize("noise_epsilon, leaks", [(EPSILON, False), (2 * EPSILON, True)])
def test_laplace_and_geometric_audits(audit, noise_epsilon, leaks):
    # The broken variant claims ε but adds the noise for 2ε: half the promised scale.
    result = audit(noise_epsilon)
    assert (result.epsilon_lower_bound > EPSILON) == leaks, result


# Selection: one candidate gains 1 and all others lose 1 between D and D' — the worst
# case for non-monotone scores; the likelihood ratio of picking candidate 0 is ≈ e^ε.
N_CANDIDATES = 50
SCORES_D0 = np.r_[1.0, np.zeros(N_CANDIDATES - 1)]
SCORES_D1 = np.r_[0.0, np.ones(N_CANDIDATES - 1)]
PICKS_ZERO = [lambda idx: idx == 0]


def _selection_sampler(select, monotonic):
    def sample(scores, n, rng):
        return np.array([select(scores, EPSILON, monotonic=monotonic, random_state=rng)
                         for _ in range(n)])

    return sample


def _em_gumbel(scores, eps, monotonic, random_state):
    return exponential_mechanism(scores, eps, monotonic=monotonic, random_state=random_state)


def _em_permute_and_flip(scores, eps, monotonic, random_state):
    return exponential_mechanism(
        scores, eps, monotonic=monotonic, method="permute_and_flip", random_state=random_state
    )


def _rnm_laplace(scores, eps, monotonic, random_state):
    return report_noisy_max(scores, eps, monotonic=monotonic, random_state=random_state)


def _rnm_exponential(scores, eps, monotonic, random_state):
    return report_noisy_max(
        scores, eps, monotonic=monotonic, noise="exponential", random_state=random_state
    )


SELECTIONS = [_em_gumbel, _em_permute_and_flip, _rnm_laplace, _rnm_exponential]


def selection_audit(select, wrongly_monotonic):
    return audit_mechanism(
        _selection_sampler(select, wrongly_monotonic), SCORES_D0, SCORES_D1,
        n_samples=60_000, events=PICKS_ZERO,
    )


@pytest.mark.parametrize("select", SELECTIONS)
@pytest.mark.parametrize("wrongly_monotonic", [False, True])
def test_selection_audit(select, wrongly_monotonic):
    # monotonic=True on scores that move in opposite directions halves the noise:
    # the broken variant the audit must catch.
    result = selection_audit(select, wrongly_monotonic)
    assert (result.epsilon_lower_bound > EPSILON) == wrongly_monotonic, result


def test_exponential_mechanism_many_draws_audit():
    # The vectorised size=m path: each draw is ε-DP, audited on one draw per run.
    def sample(scores, n, rng):
        return exponential_mechanism(scores, EPSILON, size=n, random_state=rng)

    result = audit_mechanism(sample, SCORES_D0, SCORES_D1, n_samples=400_000, events=PICKS_ZERO)
    assert result.epsilon_lower_bound <= EPSILON, result
