"""Functional and bad-input tests for BetweenThresholds (both calibrations) and ChallengeBT."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate, stats

from skdp.exceptions import MechanismHaltedError, PrivacyParameterError
from skdp.mechanisms.between_thresholds import HARD, HIGH, LOW, NOT_ANSWERED, BetweenThresholds
from skdp.mechanisms.challenge_bt import ChallengeBT

ALPHA = 1e-6


def bsu_gap(eps, delta, sens=1.0):
    return 12 * sens / eps * (math.log(10 / eps) + math.log(1 / delta) + 1)


def stemmer_gap(eps, delta, k, sens=1.0):
    return 16 * sens / eps * math.sqrt(k * math.log(2 / delta))


def rng_state(rng):
    return rng.bit_generator.state


# -- calibration constants: exactly the papers' numbers ------------------------------------


def test_bsu_constants_match_yan_lemma1_with_sensitivity_one_over_n():
    n, eps, delta = 500, 0.5, 1e-6
    gap = 12 / (eps * n) * (math.log(10 / eps) + math.log(1 / delta) + 1)
    bt = BetweenThresholds(0.375, 0.375 + gap, eps, delta, sensitivity=1 / n)
    assert bt.min_gap == pytest.approx(gap, rel=1e-12)
    assert bt._threshold_noise_scale == pytest.approx(2 / (eps * n))
    assert bt._query_noise_scale == pytest.approx(6 / (eps * n))
    assert bt.max_hard == 1


def test_stemmer_constants_match_thm_4_3():
    eps, delta = 1.0, 1e-3
    bt = BetweenThresholds(0, 1e4, eps, delta, calibration="stemmer", max_hard=40)
    assert bt._threshold_noise_scale == 0.0
    assert bt._query_noise_scale == pytest.approx(4 / eps * math.sqrt(40 * math.log(2 / delta)))
    assert bt.min_gap == pytest.approx(stemmer_gap(eps, delta, 40))
    default = BetweenThresholds(0, 1e4, eps, delta, calibration="stemmer")
    assert default.max_hard == math.ceil(4 * math.log(2 / delta))


# -- refusals, before any randomness ------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"t_upper": 100.0}, "gap"),  # bsu gap 427 needed
        ({"t_upper": -1.0}, "gap"),
        ({"epsilon": 1.0}, "ε < 1"),
        ({"epsilon": 0.0}, "epsilon"),
        ({"delta": 0.0}, "δ > 0"),
        ({"delta": 1.0}, "delta"),
        ({"max_hard": 2}, "max_hard=1"),
        ({"max_hard": 0}, "max_hard"),
        ({"calibration": "bun"}, "calibration"),
        ({"sensitivity": -1.0}, "sensitivity"),
        ({"t_lower": float("nan")}, "NaN"),
        ({"calibration": "stemmer", "max_hard": 5}, "k ≥ 4·ln"),
        ({"calibration": "stemmer", "t_upper": 400.0}, "gap"),
    ],
)
def test_bad_parameters_are_refused_before_randomness(kwargs, match):
    params = {"t_lower": 0.0, "t_upper": 2000.0, "epsilon": 0.5, "delta": 1e-6}
    params.update(kwargs)
    rng = np.random.default_rng(0)
    before = rng_state(rng)
    with pytest.raises(ValueError, match=match):
        BetweenThresholds(
            params.pop("t_lower"),
            params.pop("t_upper"),
            params.pop("epsilon"),
            params.pop("delta"),
            random_state=rng,
            **params,
        )
    assert rng_state(rng) == before


def test_gap_refusal_is_a_privacy_parameter_error_with_a_clear_message():
    with pytest.raises(PrivacyParameterError, match=r"below the .* requires"):
        BetweenThresholds(0.375, 0.625, 0.5, 1e-6, sensitivity=1 / 100)


@given(
    eps=st.floats(0.01, 0.99),
    log_delta=st.floats(-20, -1),
    frac=st.floats(0.5, 2.0),
    sens=st.floats(1e-4, 10.0),
)
def test_bsu_accepts_exactly_when_gap_suffices(eps, log_delta, frac, sens):
    delta = 10.0**log_delta
    need = bsu_gap(eps, delta, sens)
    if frac >= 1.0:
        bt = BetweenThresholds(0.0, need * frac * (1 + 1e-12), eps, delta, sensitivity=sens)
        assert bt.min_gap == pytest.approx(need)
    else:
        with pytest.raises(PrivacyParameterError):
            BetweenThresholds(0.0, need * frac, eps, delta, sensitivity=sens)


@given(eps=st.floats(0.05, 10.0), log_delta=st.floats(-12, -0.5), extra=st.integers(0, 50))
def test_stemmer_k_condition(eps, log_delta, extra):
    delta = 10.0**log_delta
    k = math.ceil(4 * math.log(2 / delta)) + extra
    bt = BetweenThresholds(
        0.0, stemmer_gap(eps, delta, k) * 1.0001, eps, delta, calibration="stemmer", max_hard=k
    )
    assert bt.max_hard == k
    if k - extra - 1 >= 1 and k - extra - 1 < 4 * math.log(2 / delta):
        with pytest.raises(PrivacyParameterError):
            BetweenThresholds(0.0, 1e9, eps, delta, calibration="stemmer", max_hard=k - extra - 1)


# -- answering ------------------------------------------------------------------------------


def make_bsu(seed=0):
    return BetweenThresholds(0.0, 500.0, 0.5, 1e-6, random_state=seed)


def test_far_values_get_L_and_R_and_middle_gets_top_then_halts():
    bt = make_bsu()
    codes = bt.process([-1e4, 1e4, -1e4, 250.0, 1e4])
    assert codes.tolist() == [LOW, HIGH, LOW, HARD]
    assert bt.halted and bt.n_queries == 4 and bt.n_hard == 1
    with pytest.raises(MechanismHaltedError):
        bt.process([0.0])
    with pytest.raises(MechanismHaltedError):
        bt.test(0.0)


def test_low_is_tested_first_when_noisy_thresholds_cross():
    codes = BetweenThresholds._classify(np.array([5.0, 11.0, -1.0]), 10.0, 0.0)
    assert codes.tolist() == [LOW, HIGH, LOW]


def test_block_split_draws_identical_noise():
    values = np.linspace(-300, 800, 40)
    rng = np.random.default_rng(3)
    values = rng.permutation(values)
    whole = BetweenThresholds(0, 500, 0.5, 1e-6, calibration="bsu", random_state=7)
    a = whole.process(values)
    split = BetweenThresholds(0, 500, 0.5, 1e-6, calibration="bsu", random_state=7)
    parts = []
    for chunk in np.array_split(values, 7):
        if split.halted:
            break
        parts.append(split.process(chunk))
    assert np.concatenate(parts).tolist() == a.tolist()


def test_stemmer_halts_at_kth_hard_answer():
    bt = BetweenThresholds(0.0, 1e4, 1.0, 1e-3, calibration="stemmer", max_hard=31, random_state=0)
    codes = bt.process(np.full(100, 5e3))  # deep inside the gap: ⊤ every time
    assert codes.tolist() == [HARD] * 31
    assert bt.halted
    with pytest.raises(MechanismHaltedError):
        bt.process([0.0])


def test_empty_block_and_bad_values():
    bt = make_bsu()
    assert bt.process([]).size == 0
    with pytest.raises(ValueError, match="NaN"):
        bt.process([0.0, np.inf])
    with pytest.raises(ValueError):
        bt.process([[0.0, 1.0]])
    with pytest.raises(ValueError):
        bt.test([1.0, 2.0])
    assert bt.n_queries == 0


def test_simulate_marks_queries_after_halt():
    codes = BetweenThresholds.simulate(
        np.array([-1e4, 250.0, 1e4]), 50, 0.0, 500.0, 0.5, 1e-6, random_state=0
    )
    assert codes.shape == (50, 3)
    assert np.all(codes[:, 0] == LOW)
    assert np.all(codes[:, 1] == HARD)
    assert np.all(codes[:, 2] == NOT_ANSWERED)


def _bsu_code_probs(v, t_l, t_u, b_mu, b_nu):
    """Exact P(L), P(⊤), P(R) for one BSU query: L iff v + ν < t_l + μ, R iff v + ν > t_u − μ."""
    lap = stats.laplace

    def p_low(mu):
        return lap.cdf(t_l + mu - v, scale=b_nu) * lap.pdf(mu, scale=b_mu)

    def p_high(mu):
        return lap.sf(t_u - mu - v, scale=b_nu) * lap.pdf(mu, scale=b_mu)

    lo = integrate.quad(p_low, -np.inf, np.inf, limit=200)[0]
    hi = integrate.quad(p_high, -np.inf, np.inf, limit=200)[0]
    return np.array([lo, 1 - lo - hi, hi])


@pytest.mark.parametrize("calibration", ["bsu", "stemmer"])
@pytest.mark.parametrize("where", [0.0, 0.5, 1.0])
def test_single_query_code_distribution_chi_square(calibration, where):
    eps, delta = 0.5, 1e-2
    k = None if calibration == "bsu" else math.ceil(4 * math.log(2 / delta))
    proto = BetweenThresholds(0.0, 1e6, eps, delta, calibration=calibration, max_hard=k)
    t_u = proto.min_gap
    b_nu = proto._query_noise_scale
    b_mu = proto._threshold_noise_scale
    v = where * t_u + (-b_nu if where == 0.0 else b_nu if where == 1.0 else 0.0)
    n = 100_000
    codes = BetweenThresholds.simulate(
        [v], n, 0.0, t_u, eps, delta, calibration=calibration, max_hard=k, random_state=11
    )[:, 0]
    counts = np.array([(codes == c).sum() for c in (LOW, HARD, HIGH)])
    if b_mu == 0:
        lap = stats.laplace(scale=b_nu)
        probs = np.array([lap.cdf(0 - v), 0.0, lap.sf(t_u - v)])
        probs[1] = 1 - probs[0] - probs[2]
    else:
        probs = _bsu_code_probs(v, 0.0, t_u, b_mu, b_nu)
    keep = probs * n > 5
    expected = probs[keep] * n
    observed = counts[keep]
    assert observed.sum() > 0.999 * n
    chi2 = ((observed - expected) ** 2 / expected).sum()
    assert stats.chi2.sf(chi2, keep.sum() - 1) > ALPHA


# -- ChallengeBT ----------------------------------------------------------------------------

EPS_C, DELTA_C = 2.0, 0.1
K_C = math.ceil(4 * math.log(4 / DELTA_C))


def cbt(max_steps=50, seed=0, gap=None):
    k_prime = math.ceil(K_C + 8 / EPS_C * math.log(2 / DELTA_C) * math.log(max_steps / DELTA_C))
    need = max(
        32 / EPS_C * math.sqrt(K_C * math.log(4 / DELTA_C)),
        16 / EPS_C * math.sqrt(k_prime * math.log(4 / DELTA_C)),
    )
    return ChallengeBT(
        0.0, need if gap is None else gap, EPS_C, DELTA_C, K_C, max_steps, random_state=seed
    )


def test_challenge_bt_parameters_follow_alg4():
    c = cbt(max_steps=100)
    assert c.k_prime == math.ceil(K_C + 8 / EPS_C * math.log(2 / DELTA_C) * math.log(100 / DELTA_C))
    # inner BetweenThresholds: Stemmer calibration with (ε, δ/2) and k'
    assert c._bt.delta == DELTA_C / 2 and c._bt.max_hard == c.k_prime
    assert c._bt._query_noise_scale == pytest.approx(
        4 / EPS_C * math.sqrt(c.k_prime * math.log(4 / DELTA_C))
    )
    # Stopper with (ε, δ) and threshold k
    assert c._stopper.threshold == K_C and c._stopper.delta == DELTA_C


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ({"max_hard": 5}, "k ≥ 4·ln"),
        ({"t_upper": 100.0}, "gap"),
        ({"max_steps": 0}, "max_steps"),
        ({"delta": 0.0}, "δ > 0"),
        ({"epsilon": -1.0}, "epsilon"),
    ],
)
def test_challenge_bt_refusals(args, match):
    params = {
        "t_lower": 0.0,
        "t_upper": 1e5,
        "epsilon": EPS_C,
        "delta": DELTA_C,
        "max_hard": K_C,
        "max_steps": 50,
    }
    params.update(args)
    rng = np.random.default_rng(0)
    before = rng_state(rng)
    with pytest.raises(ValueError, match=match):
        ChallengeBT(**params, random_state=rng)
    assert rng_state(rng) == before


def test_challenge_bt_gap_must_cover_k_prime_not_only_alg4_line():
    # Alg. 4's 32/ε·√(k ln(4/δ)) is ~119 here, but Thm 4.3 for the inner BT (k' ≈ 100)
    # needs ~150: a gap in between must be refused.
    c = cbt(max_steps=50)
    alg4 = 32 / EPS_C * math.sqrt(K_C * math.log(4 / DELTA_C))
    assert c.t_upper > alg4 + 1
    with pytest.raises(PrivacyParameterError, match="k'"):
        cbt(max_steps=50, gap=alg4 + 1)


def test_challenge_bt_flag_rule_and_halting():
    c = cbt(max_steps=1000, seed=1)
    assert c.bt_query(-1e4) == LOW
    assert c.bt_query(-1e4) is None  # Flag = 0: ignored
    assert c.n_bt_queries == 1
    halted = False
    for _ in range(500):
        if c.stop_query():
            halted = True
            break
        c.bt_query(c.t_upper / 2)  # always "medium" → Stopper counts up to k
    assert halted and c.halted
    with pytest.raises(MechanismHaltedError, match="Stopper"):
        c.stop_query()
    with pytest.raises(MechanismHaltedError):
        c.bt_query(0.0)


def test_challenge_bt_step_cap():
    c = cbt(max_steps=5, seed=0)
    for _ in range(5):
        assert c.stop_query() is False  # nothing counted yet, noise rarely reaches k = 15
    assert c.halted
    with pytest.raises(MechanismHaltedError, match="stopping queries"):
        c.stop_query()


def test_challenge_bt_process_matches_single_queries():
    values = np.concatenate([np.full(20, -1e4), np.full(40, 1e4)])
    a = cbt(max_steps=60, seed=4)
    codes, stops = a.process(values)
    b = cbt(max_steps=60, seed=4)
    codes_b, stops_b = [], []
    for v in values[: codes.size]:
        codes_b.append(b.bt_query(v))
        stops_b.append(b.stop_query())
    assert codes.tolist() == codes_b
    assert stops.tolist() == stops_b


def test_challenge_bt_blocks_give_the_same_answers_as_one_pass():
    # Values around both thresholds, so both noise streams decide answers: the BT and
    # the Stopper draw from separate generators, hence batching cannot reorder draws.
    probe = cbt(max_steps=400, seed=6)
    rng = np.random.default_rng(1)
    values = rng.uniform(probe.t_lower - 50, probe.t_upper + 50, size=300)
    whole = cbt(max_steps=400, seed=6)
    codes, stops = whole.process(values)
    split = cbt(max_steps=400, seed=6)
    got_codes, got_stops, start = [], [], 0
    for size in (1, 7, 2, 50, 3, 300):
        if split.halted or start >= codes.size:
            break
        c, s = split.process(values[start : start + size])
        got_codes.append(c)
        got_stops.append(s)
        start += c.size
    assert np.concatenate(got_codes).tolist() == codes.tolist()
    assert np.concatenate(got_stops).tolist() == stops.tolist()


def test_challenge_bt_process_ignores_first_query_when_flag_is_down():
    c = cbt(max_steps=60, seed=5)
    c.bt_query(-1e4)
    codes, _ = c.process([1e4, 1e4])
    assert codes[0] == NOT_ANSWERED and c.n_bt_queries == 2


def test_challenge_bt_simulate_shapes_and_masking():
    codes, stops = ChallengeBT.simulate(
        np.full(30, 1e6), 200, 0.0, cbt().t_upper, EPS_C, DELTA_C, K_C, 20, random_state=0
    )
    assert codes.shape == stops.shape == (200, 30)
    assert np.all(codes[:, 20:] == NOT_ANSWERED)  # T = 20 stopping queries
    answered = codes != NOT_ANSWERED
    assert np.all(np.isin(codes[answered], [HIGH]))
    # once a stop answer is ⊤, nothing later is answered
    first_top = np.where((stops == 1).any(axis=1), (stops == 1).argmax(axis=1), 30)
    for row, f in zip(answered, first_top, strict=True):
        assert not row[f + 1 :].any()


def _encode(rows):
    """One integer per transcript of codes in {-1, 0, 1, 2}."""
    rows = np.asarray(rows, dtype=np.int64) + 1
    return (rows * 4 ** np.arange(rows.shape[1])).sum(axis=1)


@pytest.mark.parametrize("calibration", ["bsu", "stemmer"])
def test_process_and_simulate_agree_in_distribution(calibration):
    eps, delta = 0.5, 0.05
    k = None if calibration == "bsu" else math.ceil(4 * math.log(2 / delta))
    proto = BetweenThresholds(0.0, 1e6, eps, delta, calibration=calibration, max_hard=k)
    t_u, b = proto.min_gap, proto._query_noise_scale
    values = np.array([0.0, b, -b, t_u])
    n = 3000
    sim = _encode(
        BetweenThresholds.simulate(
            values, n, 0.0, t_u, eps, delta, calibration=calibration, max_hard=k, random_state=1
        )
    )
    rng = np.random.default_rng(2)
    inst = []
    for _ in range(n):
        bt = BetweenThresholds(
            0.0, t_u, eps, delta, calibration=calibration, max_hard=k, random_state=rng
        )
        out = bt.process(values)
        inst.append(np.pad(out, (0, values.size - out.size), constant_values=NOT_ANSWERED))
    inst = _encode(inst)
    keys = np.union1d(sim, inst)
    table = np.array([[np.sum(sim == x) for x in keys], [np.sum(inst == x) for x in keys]])
    table = table[:, table.sum(axis=0) >= 10]
    assert stats.chi2_contingency(table)[1] > ALPHA


def test_challenge_bt_process_and_simulate_agree_in_distribution():
    values = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    t_u = cbt(max_steps=6).t_upper
    n = 2000
    codes, stops = ChallengeBT.simulate(values, n, 0.0, t_u, EPS_C, DELTA_C, K_C, 6, random_state=3)
    sim = _encode(np.concatenate([codes, stops], axis=1))
    rng = np.random.default_rng(4)
    inst = []
    for _ in range(n):
        c = ChallengeBT(0.0, t_u, EPS_C, DELTA_C, K_C, 6, random_state=rng)
        cc, ss = c.process(values)
        pad = values.size - cc.size
        row = np.concatenate(
            [
                np.pad(cc, (0, pad), constant_values=NOT_ANSWERED),
                np.pad(ss.astype(np.int8), (0, pad), constant_values=NOT_ANSWERED),
            ]
        )
        inst.append(row)
    inst = _encode(inst)
    keys = np.union1d(sim, inst)
    table = np.array([[np.sum(sim == x) for x in keys], [np.sum(inst == x) for x in keys]])
    table = table[:, table.sum(axis=0) >= 10]
    assert stats.chi2_contingency(table)[1] > ALPHA
