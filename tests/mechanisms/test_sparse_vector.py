import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from skdp.exceptions import MechanismHaltedError, PrivacyParameterError
from skdp.mechanisms import AboveThreshold

ALPHA = 1e-6


def test_block_processing_equals_one_pass():
    values = np.random.default_rng(0).normal(0, 3, size=500)
    whole = AboveThreshold(4.0, 1.0, max_positives=50, random_state=9).process(values)
    assert whole.size < values.size  # the run halts at its 50th ⊤, inside a chunk
    svt = AboveThreshold(4.0, 1.0, max_positives=50, random_state=9)
    parts = []
    for chunk in np.array_split(values, 7):
        if svt.halted:
            break
        parts.append(svt.process(chunk))
    np.testing.assert_array_equal(whole, np.concatenate(parts))


def test_stop_after_positive_keeps_the_remaining_noise():
    values = np.zeros(200)
    one_pass = AboveThreshold(0.0, 1.0, max_positives=200, random_state=3).process(values)
    svt = AboveThreshold(0.0, 1.0, max_positives=200, random_state=3)
    pieces, rest = [], values
    while rest.size:
        answers = svt.process(rest, stop_after_positive=True)
        pieces.append(answers)
        rest = rest[answers.size:]
    np.testing.assert_array_equal(one_pass, np.concatenate(pieces))


def test_halts_after_cutoff_and_refuses_more():
    svt = AboveThreshold(0.0, 1.0, max_positives=2, random_state=0)
    answers = svt.process(np.full(10, 1e6))
    np.testing.assert_array_equal(answers, [True, True])
    assert svt.halted and svt.n_positives == 2 and svt.n_queries == 2
    with pytest.raises(MechanismHaltedError):
        svt.process([0.0])
    with pytest.raises(MechanismHaltedError):
        svt.test(0.0)


def test_far_below_never_fires():
    svt = AboveThreshold(1e6, 1.0, random_state=0)
    assert not svt.process(np.zeros(1000)).any()
    assert not svt.halted and svt.n_queries == 1000
    assert svt.test(2e6) is True


def test_noise_scales_follow_lyu_su_li():
    svt = AboveThreshold(0.0, 2.0, sensitivity=3.0, max_positives=5, random_state=0)
    assert svt._threshold_noise_scale == pytest.approx(3.0 / 1.0)
    assert svt._query_noise_scale == pytest.approx(2 * 5 * 3.0 / 1.0)
    mono = AboveThreshold(0.0, 2.0, sensitivity=3.0, max_positives=5, monotonic=True)
    assert mono._query_noise_scale == pytest.approx(5 * 3.0 / 1.0)


def test_simulate_matches_process_distribution():
    values = np.array([0.0, 1.0, -1.0, 2.0])
    sim = AboveThreshold.simulate(values, 20_000, 1.0, 1.0, max_positives=2, random_state=0)
    rng = np.random.default_rng(1)
    proc = np.full_like(sim, -1)
    for i in range(sim.shape[0]):
        answers = AboveThreshold(1.0, 1.0, max_positives=2, random_state=rng).process(values)
        proc[i, : answers.size] = answers
    codes_sim = np.unique(sim, axis=0, return_inverse=True)
    patterns = codes_sim[0]
    count_sim = np.bincount(codes_sim[1].ravel(), minlength=len(patterns))
    count_proc = np.array([np.all(proc == p, axis=1).sum() for p in patterns])
    assert count_proc.sum() == proc.shape[0]
    table = np.vstack([count_sim, count_proc])
    assert stats.chi2_contingency(table[:, table.sum(0) > 0]).pvalue > ALPHA


@given(eps=st.one_of(st.floats(max_value=0.0), st.just(float("nan")), st.just(float("inf"))))
def test_bad_epsilon(eps):
    with pytest.raises(PrivacyParameterError):
        AboveThreshold(0.0, eps)


@pytest.mark.parametrize(
    "kwargs",
    [{"threshold": np.nan}, {"threshold": np.inf}, {"max_positives": 0},
     {"max_positives": 1.5}, {"threshold_share": 0.0}, {"threshold_share": 1.0},
     {"sensitivity": -1.0}],
)
def test_bad_parameters(kwargs):
    params = {"threshold": 0.0, "epsilon": 1.0, **kwargs}
    with pytest.raises(ValueError):
        AboveThreshold(params.pop("threshold"), params.pop("epsilon"), **params)


def test_bad_queries_draw_no_noise():
    svt = AboveThreshold(0.0, 1.0, random_state=0)
    state = svt._rng.bit_generator.state
    for bad in ([np.nan], [[1.0]], ["x"]):
        with pytest.raises(ValueError):
            svt.process(bad)
    with pytest.raises(ValueError):
        svt.test([1.0, 2.0])
    assert svt._rng.bit_generator.state == state and svt.n_queries == 0


def test_repr_mentions_state():
    text = repr(AboveThreshold(1.0, 1.0, random_state=0))
    assert "halted=False" in text and "answered=0" in text
