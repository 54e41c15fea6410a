import math

import numpy as np
import pytest

from skdp.audit import audit_mechanism, epsilon_lower_bound, exact_epsilon


def test_lower_bound_is_below_the_point_estimate():
    lcb = epsilon_lower_bound(5000, 10_000, 2000, 10_000, alpha=1e-6)
    assert 0 < lcb < math.log(5000 / 2000)


def test_equal_counts_give_no_evidence():
    assert epsilon_lower_bound(100, 1000, 100, 1000) < 0


def test_delta_is_subtracted():
    plain = epsilon_lower_bound(500, 10_000, 10, 10_000)
    with_delta = epsilon_lower_bound(500, 10_000, 10, 10_000, delta=0.01)
    assert with_delta < plain
    assert epsilon_lower_bound(5, 10_000, 0, 10_000, delta=0.1) == -math.inf


def test_zero_counts_are_handled():
    assert epsilon_lower_bound(0, 100, 0, 100) == -math.inf
    assert math.isfinite(epsilon_lower_bound(100, 100, 0, 100))


@pytest.mark.parametrize("bad", [(-1, 10, 0, 10), (11, 10, 0, 10), (0, 0, 0, 10)])
def test_bad_counts(bad):
    with pytest.raises(ValueError):
        epsilon_lower_bound(*bad)


def _randomized_response(epsilon):
    keep = math.exp(epsilon) / (1 + math.exp(epsilon))

    def sample(bit, n, rng):
        return np.where(rng.random(n) < keep, bit, 1 - bit)

    return sample


def test_audit_is_valid_across_seeds():
    # Exactly ε-DP randomized response: over many independent audits the bound must
    # (essentially) never exceed ε. With α = 1e-6 not one of 30 may.
    eps = 1.0
    bounds = [
        audit_mechanism(_randomized_response(eps), 0, 1, n_samples=20_000,
                        random_state=seed).epsilon_lower_bound
        for seed in range(30)
    ]
    assert max(bounds) <= eps
    assert min(bounds) > 0.7  # and it is tight enough to be useful


def test_audit_catches_an_understated_epsilon():
    result = audit_mechanism(_randomized_response(2.0), 0, 1, n_samples=20_000)
    assert result.epsilon_lower_bound > 1.5
    assert "ε ≥" in str(result)


def test_fixed_events_are_tested_in_both_directions():
    result = audit_mechanism(_randomized_response(1.0), 0, 1, n_samples=20_000,
                             events=[lambda out: out == 1])
    assert result.n_tests == 2 and result.direction == "D'>D"


def test_event_must_return_one_bool_per_output():
    with pytest.raises(ValueError, match="one bool per output"):
        audit_mechanism(_randomized_response(1.0), 0, 1, n_samples=100,
                        events=[lambda out: np.array([True])])


# -- exact_epsilon ------------------------------------------------------------------------
def test_exact_epsilon_of_randomized_response():
    eps = 1.3
    keep = math.exp(eps) / (1 + math.exp(eps))
    log_p, log_q = np.log([keep, 1 - keep]), np.log([1 - keep, keep])
    assert exact_epsilon(log_p, log_q) == pytest.approx(eps, abs=1e-8)
    # with δ the least ε such that keep − e^ε(1 − keep) ≤ δ, in closed form
    delta = 0.1
    assert exact_epsilon(log_p, log_q, delta) == pytest.approx(
        math.log((keep - delta) / (1 - keep)), abs=1e-8)


def test_exact_epsilon_is_symmetric_and_zero_for_equal_laws():
    log_p = np.log([0.5, 0.3, 0.2])
    log_q = np.log([0.2, 0.3, 0.5])
    assert exact_epsilon(log_p, log_q) == pytest.approx(exact_epsilon(log_q, log_p))
    assert exact_epsilon(log_p, log_p) == 0.0


def test_exact_epsilon_with_impossible_outcomes():
    with np.errstate(divide="ignore"):
        log_p, log_q = np.log([0.5, 0.48, 0.02]), np.log([0.5, 0.5, 0.0])
    assert exact_epsilon(log_p, log_q) == math.inf
    assert exact_epsilon(log_p, log_q, delta=0.03) < math.inf  # the 0.02 fits in δ


def test_exact_epsilon_bad_input():
    with pytest.raises(ValueError, match="same shape"):
        exact_epsilon([0.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="delta"):
        exact_epsilon([0.0], [0.0], delta=1.0)
