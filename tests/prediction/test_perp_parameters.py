"""perp_parameters: every inequality of the reconstructed Alg. 5 schedule, both presets."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdp import PrivacyParameterError
from skdp.mechanisms import ChallengeBT
from skdp.prediction import perp_parameters

SETTING = dict(epsilon=1.0, delta=1e-6, alpha=0.1, beta=0.05, gamma=0.5, n_features=2)


def _check_all(P, n_phases):
    """The inequalities, restated independently of PERPParameters.violations()."""
    d, eps, gamma = P.n_features, P.epsilon, P.gamma
    assert P.violations() == []
    total = 0.0
    for q in P.phases:
        p = q.phase
        assert q.alpha == pytest.approx(P.alpha / 2**p)
        assert q.beta == pytest.approx(P.beta / 2**p)
        assert q.length == P.first_phase_length * 3 ** (p - 1)
        total += q.length * q.delta
        assert q.delta_instance == pytest.approx(q.delta / (8 * d))
        factor = math.log(2 / q.delta)
        if P.preset == "practical":
            factor = min(2 * d, factor)
        assert q.epsilon_instance == pytest.approx(eps / factor)
        # m_p ≥ (1/ε_0)·ln(4d/β_p): the paper's (1/ε)·log(1/δ_p)·log(4d/β_p) for its ε_0.
        assert q.slice_size >= math.log(4 * d / q.beta) / q.epsilon_instance
        nxt = P.phase(p + 1)
        assert q.length >= 4 * d * nxt.slice_size / (gamma * q.alpha) * (1 - 1e-12)
        # ChallengeBT accepts the copies (k, gap, T): privacy conditions.
        ChallengeBT(q.threshold, 2 * q.threshold, q.epsilon_instance, q.delta_instance,
                    q.max_hard, q.length + 1)
        noise = q.bt_noise_scale * math.log(8 * d * q.length / q.beta)
        assert q.threshold >= noise * (1 - 1e-12)
        if P.preset == "paper":
            assert q.max_hard >= 2 * q.threshold
            assert q.slice_size >= 4 * q.threshold
            assert q.max_hard >= 2 * q.slice_size
            paper_delta = (4 * math.log(1 / q.delta) / eps
                           * math.sqrt(q.max_hard * math.log(2 * d / q.delta))
                           * math.log(8 * d * q.length / q.beta))
            assert q.threshold >= paper_delta * (1 - 1e-12)
        else:
            assert q.slice_size >= 2 * q.threshold + q.bt_noise_scale * math.log(
                8 * q.length / q.beta)
            assert q.max_hard >= q.slice_size
    assert total <= P.delta / 2
    assert P.phases[0].delta <= P.delta / 4
    assert P.initial_sample_size * P.alpha >= 4 * d * P.phases[0].slice_size * (1 - 1e-12)
    assert len(P.phases) == n_phases


@pytest.mark.parametrize("preset", ["paper", "practical"])
def test_reference_setting_satisfies_every_inequality(preset):
    P = perp_parameters(**SETTING, preset=preset, n_phases=6)
    _check_all(P, 6)
    assert P.m_p.shape == P.k_p.shape == P.t_p.shape == P.Delta_p.shape == (6,)
    np.testing.assert_allclose(P.alpha_p, 0.1 / 2.0 ** np.arange(1, 7))


def test_paper_is_astronomical_and_practical_much_smaller():
    paper = perp_parameters(**SETTING, preset="paper")
    practical = perp_parameters(**SETTING, preset="practical")
    assert paper.initial_sample_size > 1e12  # ≈ 6.4e12 rows
    assert practical.initial_sample_size < paper.initial_sample_size / 100


@settings(max_examples=25, deadline=None)
@given(
    epsilon=st.floats(0.5, 2000.0),
    delta=st.floats(1e-12, 0.1),
    alpha=st.floats(0.01, 0.5),
    beta=st.floats(0.001, 0.5),
    gamma=st.floats(0.05, 1.0),
    d=st.integers(1, 8),
    preset=st.sampled_from(["paper", "practical"]),
)
def test_every_inequality_holds_everywhere(epsilon, delta, alpha, beta, gamma, d, preset):
    P = perp_parameters(epsilon, delta, alpha, beta, gamma, d, preset=preset, n_phases=3)
    _check_all(P, 3)


def test_late_phases_are_computed_on_demand_and_stay_valid():
    P = perp_parameters(**SETTING, preset="practical", n_phases=2)
    for p in (3, 10, 30):
        q = P.phase(p)
        nxt = P.phase(p + 1)
        assert q.length == P.first_phase_length * 3 ** (p - 1)
        assert q.length * P.gamma * q.alpha >= 4 * 2 * nxt.slice_size
        assert q.delta * q.length <= P.delta / 2 ** (p + 1)
    # The whole infinite stream spends at most δ*/2 on queries.
    sched = P.delta_schedule
    assert sched.partial_sum(10**18) <= P.delta / 2


def test_schedule_delta_matches_the_phase_delta():
    P = perp_parameters(**SETTING, preset="practical", n_phases=3)
    sched = P.delta_schedule
    ends = np.cumsum(P.t_p).astype(np.int64)
    for q, end in zip(P.phases, ends, strict=True):
        assert sched(int(end)) == pytest.approx(q.delta, rel=1e-12)


def test_overrides_are_used_and_privacy_conditions_still_enforced():
    P = perp_parameters(1000.0, 1e-6, 0.1, 0.05, 1.0, 2, preset="practical",
                        slice_size=5, max_hard=200, first_phase_length=50)
    assert P.first_phase_length == 50
    assert all(q.slice_size == 5 and q.max_hard == 200 for q in P.phases)
    assert P.violations() == []  # utility inequalities are not checked with overrides
    # k and Δ below what ChallengeBT's proof covers are raised to its minimum, per phase.
    tight = perp_parameters(1.0, 1e-6, 0.1, 0.05, 1.0, 2, preset="practical", threshold=1.0,
                            max_hard=2, first_phase_length=50, n_phases=4)
    assert tight.violations() == []
    for q in tight.phases:
        assert q.threshold == q.min_gap > 1.0
        assert q.max_hard == np.ceil(4 * np.log(4 / q.delta_instance))
        ChallengeBT(q.threshold, 2 * q.threshold, q.epsilon_instance, q.delta_instance,
                    q.max_hard, q.length + 1)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        (dict(epsilon=0.0), PrivacyParameterError),
        (dict(epsilon=float("inf")), PrivacyParameterError),
        (dict(delta=0.0), PrivacyParameterError),
        (dict(delta=1.0), PrivacyParameterError),
        (dict(alpha=0.0), ValueError),
        (dict(alpha=1.0), ValueError),
        (dict(beta=-0.1), ValueError),
        (dict(gamma=0.0), ValueError),
        (dict(gamma=1.5), ValueError),
        (dict(n_features=0), ValueError),
        (dict(n_features=2.5), ValueError),
    ],
)
def test_invalid_arguments(kwargs, error):
    args = {**SETTING, **kwargs}
    with pytest.raises(error):
        perp_parameters(args["epsilon"], args["delta"], args["alpha"], args["beta"],
                        args["gamma"], args["n_features"])


@pytest.mark.parametrize("kwargs", [dict(preset="both"), dict(n_phases=0),
                                    dict(slice_size=0), dict(threshold=-1.0),
                                    dict(first_phase_length=1.5)])
def test_invalid_options(kwargs):
    with pytest.raises(ValueError):
        perp_parameters(**SETTING, **kwargs)
