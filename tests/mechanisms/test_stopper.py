"""Functional and bad-input tests for Stopper (Stemmer 2024, Alg. 2)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from skdp.exceptions import MechanismHaltedError, PrivacyParameterError
from skdp.mechanisms.sparse_vector import AboveThreshold
from skdp.mechanisms.stopper import Stopper

ALPHA = 1e-6


def test_noise_scale_is_alg2():
    s = Stopper(0.5, 1e-4, 10)
    assert s._query_noise_scale == pytest.approx(8 / 0.5 * math.log(2 / 1e-4))
    assert s._threshold_noise_scale == 0.0
    # built on AboveThreshold, not a re-implementation
    assert isinstance(s._svt, AboveThreshold)
    assert s._svt._query_noise_scale == s._query_noise_scale


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        ((0.0, 1e-3, 5), {}, "epsilon"),
        ((1.0, 0.0, 5), {}, "δ > 0"),
        ((1.0, 1.0, 5), {}, "delta"),
        ((1.0, 1e-3, float("inf")), {}, "NaN or infinite"),
        ((1.0, 1e-3, 5), {"initial_bits": [0, 2]}, "bits"),
        ((1.0, 1e-3, 5), {"initial_bits": [0.5]}, "bits"),
        ((1.0, 1e-3, 5), {"random_state": "seed"}, "random_state"),
    ],
)
def test_bad_parameters_refused(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        Stopper(*args, **kwargs)


def test_refusal_draws_no_randomness():
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    with pytest.raises(PrivacyParameterError):
        Stopper(1.0, 0.0, 5, random_state=rng)
    assert rng.bit_generator.state == before


def test_counts_halts_and_refuses_after_halt():
    s = Stopper(5.0, 0.5, 3, initial_bits=[1, 0, 1], random_state=0)  # scale ≈ 2.2
    assert s.count == 2
    s.update(1)
    s.update([1, 1, 1, 1, 1])
    assert s.count == 8
    answers = [s.query() for _ in range(50) if not s.halted]
    assert answers[-1] is True and not any(answers[:-1])
    assert s.halted
    with pytest.raises(MechanismHaltedError):
        s.query()
    with pytest.raises(MechanismHaltedError):
        s.update(1)


def test_far_below_threshold_answers_bottom():
    s = Stopper(1.0, 1e-3, 1e6, random_state=0)
    assert not s.process(np.zeros(100)).any()
    assert s.n_queries == 100 and not s.halted


def test_process_equals_update_then_query():
    inc = np.array([0, 1, 1, 0, 3, 2, 0, 5, 5, 5, 5, 5, 5])
    a = Stopper(1.0, 0.1, 12, random_state=9)
    out = a.process(inc)
    b = Stopper(1.0, 0.1, 12, random_state=9)
    manual = []
    for x in inc[: out.size]:
        b.update([1] * int(x))
        manual.append(b.query())
    assert out.tolist() == manual
    assert a.count == b.count


@given(st.lists(st.integers(-3, -1), min_size=1, max_size=5))
def test_process_rejects_negative_increments(incs):
    s = Stopper(1.0, 0.1, 12, random_state=0)
    with pytest.raises(ValueError, match="non-negative"):
        s.process(incs)
    assert s.n_queries == 0


@given(st.floats(allow_nan=True, allow_infinity=True).filter(lambda x: not 0 <= x < 1))
def test_delta_outside_unit_interval_refused(delta):
    with pytest.raises(ValueError):
        Stopper(1.0, delta, 3)


def test_halting_index_distribution_chi_square():
    # Constant count s < t: each query halts independently with p = P(Lap(b) ≥ t − s).
    eps, delta, t, s0 = 1.0, 0.1, 10, 4
    b = 8 / eps * math.log(2 / delta)
    p = stats.laplace(scale=b).sf(t - s0)
    n_q, n = 12, 100_000
    halt = Stopper.simulate(np.zeros(n_q), n, eps, delta, t, initial_count=s0, random_state=1)
    observed = np.bincount(halt, minlength=n_q + 1)
    probs = np.append(p * (1 - p) ** np.arange(n_q), (1 - p) ** n_q)
    chi2 = ((observed - n * probs) ** 2 / (n * probs)).sum()
    assert stats.chi2.sf(chi2, n_q) > ALPHA


def test_simulate_matches_instances_in_distribution():
    eps, delta, t = 1.0, 0.2, 6
    inc = np.array([1, 1, 1, 1, 1, 1, 1, 1, 1, 1])
    n = 3000
    sim = Stopper.simulate(inc, n, eps, delta, t, random_state=2)
    rng = np.random.default_rng(3)
    inst = []
    for _ in range(n):
        out = Stopper(eps, delta, t, random_state=rng).process(inc)
        inst.append(out.size - 1 if out[-1] else inc.size)
    table = np.array(
        [np.bincount(sim, minlength=inc.size + 1), np.bincount(inst, minlength=inc.size + 1)]
    )
    table = table[:, table.sum(axis=0) > 0]
    assert stats.chi2_contingency(table)[1] > ALPHA
