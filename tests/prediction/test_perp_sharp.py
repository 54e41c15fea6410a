"""RectanglesPERP's ``preset="sharp"`` (issue 16): schedule, slicing, privacy split."""

import math
import warnings

import numpy as np
import pytest

from skdp.exceptions import PrivacyWarning
from skdp.mechanisms.challenge_bt import ChallengeBT
from skdp.prediction import (
    DecisionStumpPERPClassifier,
    RectanglesPERPClassifier,
    perp_parameters,
)
from skdp.prediction._perp_sharp import STOPPER_SHARES, parts, phase_alpha, strip_rows

ARGS = (1e-6, 0.1, 0.05)


@pytest.mark.parametrize("eps", [1.0, 4.0, 16.0, 100.0])
@pytest.mark.parametrize("d", [1, 2, 5])
def test_schedule_is_valid_and_smaller_than_practical(eps, d):
    sharp = perp_parameters(eps, *ARGS, 0.5, d, preset="sharp", n_phases=4)
    practical = perp_parameters(eps, *ARGS, 0.5, d, preset="practical")
    assert sharp.violations() == []
    assert sharp.initial_sample_size < practical.initial_sample_size


def test_first_phase_rows_at_issue_16_settings():
    # ε = 4, d = 2 and ε = 1, d = 1 fit in 10⁷ rows; ε = 1, d = 2 is ~200× below
    # practical (2.7·10⁷ vs 7.5·10⁹) but above 10⁷ (Thm 4.3's constant, see _perp_sharp).
    assert perp_parameters(4.0, *ARGS, 0.5, 2, preset="sharp").initial_sample_size <= 10**7
    assert perp_parameters(1.0, *ARGS, 0.5, 1, preset="sharp").initial_sample_size <= 10**7
    sharp = perp_parameters(1.0, *ARGS, 0.5, 2, preset="sharp").initial_sample_size
    practical = perp_parameters(1.0, *ARGS, 0.5, 2, preset="practical").initial_sample_size
    assert practical / sharp > 150


def test_privacy_split_and_challenge_bt_accepts_every_phase():
    eps = 2.0
    params = perp_parameters(eps, *ARGS, 0.5, 2, preset="sharp", n_phases=3)
    for q in params.phases:
        assert q.epsilon_instance + q.stopper_epsilon <= eps * (1 + 1e-12)
        assert any(math.isclose(q.stopper_epsilon, s * eps) for s in STOPPER_SHARES)
        assert q.delta_instance == q.delta  # one copy per record: no 8d split
        assert q.threshold < q.upper_threshold < q.slice_size <= q.max_hard
        cbt = ChallengeBT(q.threshold, q.upper_threshold, q.epsilon_instance,
                          q.delta_instance, q.max_hard, q.length + 1, stopper="svt",
                          stopper_epsilon=q.stopper_epsilon, random_state=0)
        assert cbt.k_prime == q.k_prime


def test_sample_and_phase_lengths_pay_the_partition_factor():
    d = 2
    params = perp_parameters(16.0, *ARGS, 0.5, d, preset="sharp")
    init = params.initial_copies
    rows = init.slice_size - init.threshold + init.bt_noise_scale  # strip_rows
    assert math.isclose(strip_rows(init), rows)
    assert params.initial_sample_size >= parts(d) * 2 * d * rows / (0.75 * 0.1)  # α_1 = 3α/4
    q, nxt = params.phases[0], params.phases[1]
    assert nxt.alpha == 0.1 / 8 and sum(phase_alpha(0.1, p) for p in range(1, 60)) <= 0.1
    assert q.length * 0.5 >= parts(d) * 2 * d * strip_rows(nxt) / nxt.alpha * (1 - 1e-12)


def test_initial_copies_run_at_delta_zero_and_cover_a_restart():
    params = perp_parameters(4.0, *ARGS, 0.5, 2, preset="sharp")
    init, first = params.initial_copies, params.phases[0]
    assert init.delta == init.delta_instance == 1e-6 / 4 == params.initial_delta
    assert init.max_hard >= first.slice_size
    assert init.slice_size < first.slice_size  # the gain: ln(4/δ_0) ≈ 17 instead of ≈ 37
    # An initial record pays only the copy's BetweenThresholds (its Stopper counts
    # query records' bits): ε_bt = ε, and a query's ε_s + the restart's ε_bt ≤ ε.
    assert init.epsilon_instance == 4.0
    assert init.stopper_epsilon + first.epsilon_instance <= 4.0 * (1 + 1e-12)


def _small_started_run(n_rows):
    """A sharp predictor on n_rows positives in [0, 1) (overrides), after 10 queries."""
    rng = np.random.default_rng(0)
    X = rng.random((n_rows, 1))
    clf = RectanglesPERPClassifier(epsilon=50.0, delta=0.05, gamma=1.0, preset="sharp",
                                   slice_size=50, max_hard=400, threshold=30.0,
                                   first_phase_length=100, classes=[0, 1], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)  # below the (utility) row guard
        clf.fit(X, np.ones(n_rows, dtype=int))
    clf.predict(rng.random((10, 1)))
    return clf, X


def test_run_uses_initial_copies_then_phase_parameters():
    clf, _ = _small_started_run(3000)
    assert clf.privacy_spent_.delta >= 0.05 / 4  # δ(0) = δ*/4 charged at the start
    run = clf._state.mechanism
    assert all(c.mechanism.delta == 0.05 / 4 for c in run.copies)
    run._reexecute(0)
    assert run.copies[0].mechanism.delta == clf.parameters_.phases[0].delta


def test_overrides_cannot_go_below_challenge_bt_minimum():
    params = perp_parameters(2.0, 0.05, 0.1, 0.05, 1.0, 1, preset="sharp", max_hard=1,
                             threshold=1.0, slice_size=3, first_phase_length=50)
    q = params.phases[0]
    assert q.max_hard >= 4 * math.log(4 / q.delta_instance)
    assert q.upper_threshold - q.threshold >= q.min_gap


def test_slices_come_from_disjoint_parts():
    clf, X = _small_started_run(4000)
    left, right = clf._state.mechanism.copies
    assert left.values.size == right.values.size == 50
    assert np.intersect1d(left.values, right.values).size == 0
    assert np.isin(left.values, X[:, 0]).all() and np.isin(right.values, X[:, 0]).all()


@pytest.mark.parametrize(("preset", "eps"), [("sharp", 100.0), ("charged", 16.0)])
def test_sharp_rectangles_answer_accurately(preset, eps):
    rng = np.random.default_rng(1)
    params = perp_parameters(eps, *ARGS, 1.0, 2, preset=preset)
    X = rng.random((params.initial_sample_size, 2))
    inside = np.all((X > 0.2) & (X < 0.8), axis=1).astype(int)
    clf = RectanglesPERPClassifier(epsilon=eps, gamma=1.0, preset=preset, classes=[0, 1],
                                   random_state=0).fit(X, inside)
    Xq = rng.random((20_000, 2))
    truth = np.all((Xq > 0.2) & (Xq < 0.8), axis=1)
    assert np.mean(clf.predict(Xq) != truth) <= 0.1
    assert clf.privacy_spent_.epsilon == eps


def test_sharp_stumps_use_a_quarter_of_epsilon_inside():
    clf = DecisionStumpPERPClassifier(epsilon=8.0, delta=1e-6, preset="sharp")
    eps_in, delta_in, group = clf._inner_privacy(8.0, 1e-6)
    assert (eps_in, delta_in, group) == (2.0, 5e-7, 2.0)
