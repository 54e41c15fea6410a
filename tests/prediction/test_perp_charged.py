"""RectanglesPERP's ``preset="charged"`` (issue 16): the sharp schedule whose copies'
BetweenThresholds is calibrated, phase by phase, by the sharper of Thm 4.3 and the
charged lemma (skdp.mechanisms._charged_calibration). Its accuracy on a fitted
rectangle is tested with the sharp preset's in ``test_perp_sharp.py``."""

import math
import warnings

import numpy as np
import pytest

from skdp.exceptions import PrivacyWarning
from skdp.mechanisms._charged_calibration import charged_epsilon
from skdp.mechanisms.challenge_bt import ChallengeBT
from skdp.prediction import RectanglesPERPClassifier, perp_parameters

ARGS = (1e-6, 0.1, 0.05)


def _n(eps, d, preset):
    return perp_parameters(eps, *ARGS, 0.5, d, preset=preset).initial_sample_size


def test_first_phase_rows_at_eps_one_d_two_fit_in_ten_million():
    # Issue 16's done-means: ≤ 10⁷ (sharp 2.72·10⁷, practical 7.5·10⁹); measured 6.93·10⁶.
    params = perp_parameters(1.0, *ARGS, 0.5, 2, preset="charged")
    assert params.violations() == []
    assert params.initial_sample_size <= 10**7
    assert _n(1.0, 2, "sharp") / params.initial_sample_size > 3.5  # measured 3.92


@pytest.mark.parametrize(("eps", "d"), [(4.0, 1), (100.0, 2)])
def test_valid_and_never_above_sharp(eps, d):
    params = perp_parameters(eps, *ARGS, 0.5, d, preset="charged", n_phases=3)
    assert params.violations() == []
    assert params.initial_sample_size <= _n(eps, d, "sharp")


@pytest.mark.slow
@pytest.mark.parametrize("eps", [1.0, 4.0, 16.0, 100.0])
@pytest.mark.parametrize("d", [1, 2, 5])
def test_every_cell_valid_and_never_above_sharp(eps, d):
    params = perp_parameters(eps, *ARGS, 0.5, d, preset="charged", n_phases=4)
    assert params.violations() == []
    assert params.initial_sample_size <= _n(eps, d, "sharp")


def test_each_phase_records_a_calibration_challenge_bt_accepts():
    eps = 4.0
    params = perp_parameters(eps, *ARGS, 0.5, 2, preset="charged", n_phases=3)
    for q in (params.initial_copies, *params.phases):
        assert q.bt_calibration == "charged"  # the sharper one at ε = 4
        gap = q.upper_threshold - q.threshold
        assert math.isclose(gap, 3.0 * q.bt_noise_scale)
        assert charged_epsilon(q.bt_noise_scale, gap, q.k_prime, q.delta_instance / 2) <= (
            q.epsilon_instance)
        cbt = ChallengeBT(q.threshold, q.upper_threshold, q.epsilon_instance, q.delta_instance,
                          q.max_hard, q.length + 1, stopper="svt",
                          stopper_epsilon=q.stopper_epsilon, bt_calibration="charged",
                          bt_noise_scale=q.bt_noise_scale, random_state=0)
        assert cbt.k_prime == q.k_prime
        assert cbt._bt._query_noise_scale == q.bt_noise_scale


def test_thm_4_3_where_it_is_sharper():
    # At ε = 100 the lemma's λ ≥ 1 caps it: every phase keeps Thm 4.3 and n equals sharp's.
    params = perp_parameters(100.0, *ARGS, 0.5, 2, preset="charged", n_phases=2)
    assert {q.bt_calibration for q in (params.initial_copies, *params.phases)} == {"stemmer"}
    assert params.initial_sample_size == _n(100.0, 2, "sharp")


def test_run_builds_charged_copies_and_answers():
    rng = np.random.default_rng(0)
    X = rng.random((3000, 1))
    # Under overrides the preset keeps the analysis with the least noise, as it keeps the
    # one with the fewest rows without them: here the charged lemma up to ε ≈ 20 (at
    # ε = 50, k' ≈ 400, Thm 4.3's noise is smaller and the copies are "stemmer").
    clf = RectanglesPERPClassifier(epsilon=20.0, delta=0.05, gamma=1.0, preset="charged",
                                   slice_size=50, max_hard=400, threshold=30.0,
                                   first_phase_length=100, classes=[0, 1], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)  # below the (utility) row guard
        clf.fit(X, np.ones(3000, dtype=int))
    assert set(clf.predict(rng.random((10, 1)))) <= {0, 1}
    copies = clf._state.mechanism.copies
    assert all(c.mechanism.bt_calibration == "charged" for c in copies)



def test_charged_is_the_default_and_its_first_phase_fits_in_ten_million():
    """Issue 26: the reviewed lemma (``_perp_sharp``) makes "charged" the default."""
    from skdp.prediction import DecisionStumpPERPClassifier

    assert RectanglesPERPClassifier().preset == DecisionStumpPERPClassifier().preset == "charged"
    clf = RectanglesPERPClassifier(classes=[0, 1])  # ε = 1, δ* = 1e-6, α, β, γ defaults
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)  # 2 rows: far below the need
        clf.fit([[0.0, 0.0], [1.0, 1.0]], [1, 0])
    assert clf.initial_sample_size_ == 6_928_097 <= 10**7  # measured; practical: 7.5·10⁹
    assert clf.parameters_.first_phase_length == 154_378_926
    assert clf.parameters_.violations() == []


@pytest.mark.parametrize(("eps", "expected"), [(3.0, "charged"), (1e5, "stemmer")])
def test_overrides_keep_the_analysis_with_less_noise(eps, expected):
    # With m, k or t_l given, "charged" keeps whichever certified analysis has the smaller
    # σ — never noisier than "sharp" (Thm 4.3 only) on the same overrides.
    kw = dict(slice_size=1, first_phase_length=1000)
    charged = perp_parameters(eps, 1e-6, 0.9, 0.9, 1.0, 2, preset="charged", **kw)
    sharp = perp_parameters(eps, 1e-6, 0.9, 0.9, 1.0, 2, preset="sharp", **kw)
    for q, s in ((charged.initial_copies, sharp.initial_copies),
                 (charged.phases[0], sharp.phases[0])):
        assert q.bt_calibration == expected
        assert q.bt_noise_scale <= s.bt_noise_scale
    assert charged.violations() == []


@pytest.mark.parametrize("preset", ["charged", "practical"])
def test_restart_runs_on_the_m_mediums_nearest_the_boundary(preset):
    """Issue 26: "charged"/"sharp" restart a halted copy on the m points of D_c nearest
    its side's boundary (mediums deep inside the target would poison it); "practical"
    keeps Alg. 5's restart on all of D_c."""
    rng = np.random.default_rng(0)
    X = rng.random((3000, 1))
    clf = RectanglesPERPClassifier(epsilon=20.0, delta=0.05, gamma=1.0, preset=preset,
                                   slice_size=50, max_hard=400, threshold=30.0,
                                   first_phase_length=100, classes=[0, 1], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        clf.fit(X, np.ones(3000, dtype=int))
    clf.predict(rng.random((10, 1)))
    run = clf._state.mechanism
    pending = rng.random(300)
    for c in (0, 1):
        run.copies[c].pending = [pending[:100], pending[100:]]
        side = run.copies[c].side
        run._reexecute(c)
        got = run.copies[c].values
        if preset == "practical":
            np.testing.assert_array_equal(got, np.sort(pending))
        else:
            m = run.q.slice_size
            ordered = np.sort(pending)
            want = ordered[:m] if side == 0 else ordered[-m:]  # Left_j: smallest
            np.testing.assert_array_equal(got, np.sort(want))
        assert run.copies[c].pending == []
