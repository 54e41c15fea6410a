import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer

from skdp.datasets import (
    RobustPEPStream,
    breast_cancer_public_bounds,
    planted_decision_list,
    play_robust_pep,
)
from skdp.prediction import QueryBudgetExhaustedError


def test_breast_cancer_bounds_cover_the_documented_ranges():
    data = load_breast_cancer()
    bounds = breast_cancer_public_bounds(data.feature_names)
    assert bounds.shape == (30, 2) and np.all(bounds[:, 0] < bounds[:, 1])
    # The published ranges are the dataset's own (rounded) min/max.
    assert np.all(data.data.min(0) >= bounds[:, 0] - 1e-3)
    assert np.all(data.data.max(0) <= bounds[:, 1] + 1e-3)


def test_planted_list_labels_follow_the_rules_without_noise():
    X, y, (rules, default) = planted_decision_list(np.random.default_rng(0), 500, 30)
    expected = np.full(len(y), default)
    for f, b in reversed(rules):
        expected[X[:, f] == 1] = b
    np.testing.assert_array_equal(y, expected)


# ------------------------------------------------------------ robust-PEP streams
ADVERSARIES = ["none", "far", "boundary", "repeat", "challenge"]


class _Box:
    """A fixed box predictor: the adversary's target for the estimate test."""

    def __init__(self, lower, upper):
        self.lower, self.upper = lower, upper

    def predict(self, X):
        points = np.asarray(X)
        return np.all((points >= self.lower) & (points <= self.upper), axis=1).astype(int)


def test_initial_sample_is_labelled_by_the_target():
    stream = RobustPEPStream(3, random_state=0)
    X, y = stream.sample(2000)
    centre, half = stream.target_.mean(axis=0), np.diff(stream.target_, axis=0)[0] / 2
    np.testing.assert_array_equal(y, np.all(np.abs(X - centre) <= half, axis=1))
    assert np.all((X >= 0) & (X <= 1))
    assert 0.2 < y.mean() < 0.6  # target_mass 0.4 under the uniform D


@pytest.mark.parametrize("adversary", ADVERSARIES)
def test_streams_are_reproducible_and_mark_D(adversary):
    blocks = []
    for _ in range(2):
        stream = RobustPEPStream(2, gamma=0.3, adversary=adversary, random_state=7)
        X, from_D = stream.next_block(4000)
        blocks.append((X, from_D, stream.next_block(100, np.zeros(4000))))
    np.testing.assert_array_equal(blocks[0][0], blocks[1][0])
    np.testing.assert_array_equal(blocks[0][2][0], blocks[1][2][0])
    X, from_D = blocks[0][:2]
    if adversary == "none":
        assert from_D.all()
    else:
        # Binomial(4000, 0.3): 7 standard deviations either side.
        assert abs(from_D.sum() - 1200) < 7 * np.sqrt(4000 * 0.3 * 0.7)
    assert np.all((X[from_D] >= 0) & (X[from_D] <= 1))


def test_far_points_leave_the_public_box():
    stream = RobustPEPStream(4, gamma=0.5, adversary="far", random_state=1)
    X, from_D = stream.next_block(3000)
    outside = (X[~from_D] < -1) | (X[~from_D] > 2)
    assert outside.any(axis=1).all()
    assert np.all(np.abs(X[~from_D]) <= 101)


def test_boundary_points_sit_on_a_target_face():
    stream = RobustPEPStream(3, gamma=0.2, adversary="boundary", random_state=2)
    X, from_D = stream.next_block(3000)
    adv = X[~from_D]
    lower, upper = stream.target_
    ulp = np.spacing(np.maximum(np.abs(lower), np.abs(upper)))
    on_face = (np.abs(adv - lower) <= ulp) | (np.abs(adv - upper) <= ulp)
    assert on_face.any(axis=1).all()
    # On, just inside and just outside the face all occur.
    labels = stream.label(adv)
    assert 0.5 < labels.mean() < 0.8  # two of the three positions are inside
    inside_other = (adv >= lower - ulp) & (adv <= upper + ulp)
    assert inside_other.all()


def test_repeated_points_come_from_a_small_pool():
    stream = RobustPEPStream(2, gamma=0.1, adversary="repeat", n_repeated=3, random_state=3)
    X, from_D = stream.next_block(2000)
    assert len(np.unique(X[~from_D], axis=0)) <= 3


@pytest.mark.parametrize("d", [1, 2, 5])
def test_challenge_adversary_finds_the_learned_box_and_attacks_its_strip(d):
    stream = RobustPEPStream(d, gamma=0.5, adversary="challenge", random_state=d)
    lower, upper = stream.target_
    width = upper - lower
    box = _Box(lower + 0.1 * width, upper - 0.05 * width)
    result = play_robust_pep(box, stream, 20_000, block_size=2000)
    assert result["n_answered"] == 20_000
    np.testing.assert_allclose(stream.learned_estimate_, [box.lower, box.upper],
                               atol=0.02 * width.max())
    X, from_D = stream.next_block(2000, result["answers"][-2000:])
    attack = X[~from_D]
    # Every attack point is a true positive; most are answered 0 (the strip) and
    # the rest are the probes (a quarter of the adversary's queries).
    assert stream.label(attack).all()
    assert box.predict(attack).mean() < 0.4


def test_stump_targets_have_one_face():
    stream = RobustPEPStream(4, concept="stump", adversary="challenge", random_state=4)
    assert np.isfinite(stream.target_).sum() == 1
    _, y = stream.sample(1000)
    assert 0.1 < y.mean() < 0.9
    stream.next_block(500)
    stream.next_block(500, np.ones(500))  # one face to estimate: runs


def test_mixture_distribution_stays_in_the_box():
    stream = RobustPEPStream(3, distribution="mixture", adversary="none", random_state=5)
    X, _ = stream.sample(5000)
    assert np.all((X >= 0) & (X <= 1))
    # Not uniform: the mixture concentrates mass around its means.
    assert X.std(axis=0).max() < np.sqrt(1 / 12) - 0.02


def test_given_target_is_used():
    target = [[0.2, 0.3], [0.6, 0.9]]
    stream = RobustPEPStream(2, target=target, random_state=0)
    np.testing.assert_array_equal(stream.target_, target)
    np.testing.assert_array_equal(stream.label([[0.2, 0.9], [0.1, 0.5]]), [1, 0])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"gamma": 0.0}, "gamma"),
        ({"gamma": 1.5}, "gamma"),
        ({"gamma": True}, "gamma"),
        ({"adversary": "sneaky"}, "adversary"),
        ({"distribution": "normal"}, "distribution"),
        ({"concept": "halfspace"}, "concept"),
        ({"target": [[0.0, 0.0]]}, "shape"),
        ({"target": [[0.5, 0.0], [0.4, 1.0]]}, "lower"),
        ({"target": [[-np.inf, -np.inf], [np.inf, np.inf]]}, "finite"),
        ({"n_features": 0}, "n_features"),
        ({"probe_fraction": 0}, "probe_fraction"),
    ],
)
def test_bad_stream_parameters_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RobustPEPStream(**{"n_features": 2, **kwargs})


def test_answers_must_match_the_previous_block():
    stream = RobustPEPStream(2, random_state=0)
    with pytest.raises(ValueError, match="previous block"):
        stream.next_block(10, np.zeros(10))  # there was no previous block
    stream.next_block(10)
    with pytest.raises(ValueError, match="previous block"):
        stream.next_block(10, np.zeros(9))


@settings(max_examples=30, deadline=None)
@given(gamma=st.floats(allow_nan=True, allow_infinity=True).filter(lambda g: not 0 < g <= 1))
def test_any_gamma_outside_unit_interval_raises(gamma):
    with pytest.raises(ValueError, match="gamma"):
        RobustPEPStream(2, gamma=gamma)


class _Refuses:
    """Answers 1500 queries, then refuses part-way through a block."""

    def __init__(self):
        self.used = 0

    def predict(self, X):
        if self.used + len(X) > 1500:
            answers = np.zeros(1500 - self.used, dtype=int)
            self.used = 1500
            raise QueryBudgetExhaustedError("spent", answers=answers)
        self.used += len(X)
        return np.zeros(len(X), dtype=int)


def test_play_stops_at_a_refusal_and_keeps_the_released_answers():
    stream = RobustPEPStream(2, adversary="boundary", random_state=0)
    seen = []
    result = play_robust_pep(_Refuses(), stream, 5000, block_size=1000,
                             callback=lambda done, _: seen.append(done))
    assert isinstance(result["refused"], QueryBudgetExhaustedError)
    assert result["n_answered"] == 1500 == len(result["answers"]) == len(result["truth"])
    assert seen == [1000, 1500]
    np.testing.assert_array_equal(result["block_end"], [1000, 1500])
    # The all-zero predictor errs exactly on the positive D-queries.
    D = result["from_D"]
    assert result["error_D"] == pytest.approx(result["truth"][D].mean())


def test_play_accepts_growing_blocks():
    stream = RobustPEPStream(2, adversary="challenge", random_state=1)
    box = _Box(*stream.target_)
    result = play_robust_pep(box, stream, 10_000, block_size=lambda done: max(100, done // 2))
    np.testing.assert_array_equal(result["block_end"][:4], [100, 200, 300, 450])
    assert result["n_answered"] == 10_000 and result["error_D"] == 0.0
    with pytest.raises(ValueError, match="block_size"):
        play_robust_pep(box, stream, 10, block_size=lambda done: 0)
