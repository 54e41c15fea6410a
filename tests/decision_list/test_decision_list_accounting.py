"""DP-GreedyCover's per-step ε: the tight accountant, EMCover, basic, and the paper's choice.

A release is n_steps − 1 ε̂-bounded-range selections plus the ε̂/2 noisy histogram
(``release_events``) that replaced the paper's default step.
"""

import math

import pytest

from skdp.accounting import account
from skdp.decision_list import emcover_step_epsilon
from skdp.decision_list._accounting import (
    HISTOGRAM_WEIGHT,
    basic_step_epsilon,
    emcover_histogram_step_epsilon,
    release_events,
    step_plan,
    tight_step_epsilon,
)

DELTA = 1e-6
STEPS = [2, 4, 6, 11, 31, 91, 101, 785, 10**4]


def _spent(step, n_steps):
    return account(release_events(step, n_steps)).epsilon(DELTA)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
@pytest.mark.parametrize("n_steps", STEPS)
def test_tight_steps_compose_within_budget_and_beat_basic(epsilon, n_steps):
    step = tight_step_epsilon(epsilon, DELTA, n_steps)
    assert _spent(step, n_steps) <= epsilon * (1 + 1e-9)
    # the accountant is never worse than basic composition's split
    assert step >= epsilon / (n_steps - 1 + HISTOGRAM_WEIGHT) * (1 - 1e-7)
    # and a step larger by 1 % would not fit: the calibration is tight
    assert _spent(1.01 * step, n_steps) > epsilon


def test_basic_split_composes_to_epsilon():
    for n_steps in STEPS:
        step = basic_step_epsilon(2.0, n_steps)
        assert step * (n_steps - 1) + HISTOGRAM_WEIGHT * step == pytest.approx(2.0)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
@pytest.mark.parametrize("n_steps", STEPS)
def test_paper_reproduces_the_old_auto_choice(epsilon, n_steps):
    step, proof, charged = step_plan(epsilon, DELTA, n_steps, "paper")
    emcover = epsilon / (2 * (math.log(1 / DELTA) + 1.5) + HISTOGRAM_WEIGHT)
    basic = epsilon / (n_steps - 1 + HISTOGRAM_WEIGHT)
    if emcover >= basic:
        assert (step, proof, charged) == (pytest.approx(emcover), "emcover", DELTA)
    else:
        assert (step, proof, charged) == (basic, "basic", 0.0)


def test_emcover_with_histogram_is_lemma_18_plus_basic_composition():
    step = emcover_histogram_step_epsilon(1.0, DELTA)
    # Lemma 18 for the selections + the histogram's ε̂/2 by basic composition = ε
    assert 2 * step * (math.log(1 / DELTA) + 1.5) + HISTOGRAM_WEIGHT * step == pytest.approx(1.0)
    assert step < emcover_step_epsilon(1.0, DELTA)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
@pytest.mark.parametrize("n_steps", STEPS)
def test_auto_is_at_least_the_paper_and_charges_what_it_proves(epsilon, n_steps):
    step, proof, charged = step_plan(epsilon, DELTA, n_steps, "auto")
    paper_step = step_plan(epsilon, DELTA, n_steps, "paper")[0]
    assert step >= paper_step / 1.01  # pure basic is kept over a < 1 % gain
    if proof == "basic":
        assert charged == 0.0 and step == basic_step_epsilon(epsilon, n_steps)
    elif proof == "tight":
        assert charged == DELTA
        assert _spent(step, n_steps) <= epsilon * (1 + 1e-9)
    else:
        assert (proof, charged) == ("emcover", DELTA)
        assert step == emcover_histogram_step_epsilon(epsilon, DELTA)


def test_where_each_proof_wins_at_epsilon_one():
    # short lists: pure basic; up to a few hundred steps: the accountant; beyond: EMCover
    assert step_plan(1.0, DELTA, 2, "auto")[1] == "basic"
    assert step_plan(1.0, DELTA, 91, "auto")[1] == "tight"
    assert step_plan(1.0, DELTA, 785, "auto")[1] == "emcover"
    # the accountant's gain at the breast-cancer size (90 bits + histogram): ≈ 1.4× EMCover
    ratio = step_plan(1.0, DELTA, 91, "auto")[0] / emcover_histogram_step_epsilon(1.0, DELTA)
    assert 1.3 < ratio < 1.5


def test_delta_zero_and_explicit_choices():
    assert step_plan(1.0, 0.0, 10, "tight") == (1 / 9.5, "basic", 0.0)
    assert step_plan(1.0, 0.0, 10, "auto") == (1 / 9.5, "basic", 0.0)
    assert step_plan(1.0, DELTA, 10, "basic") == (1 / 9.5, "basic", 0.0)
    assert step_plan(1.0, DELTA, 2, "emcover")[1] == "emcover"  # asked for, even if smaller
    assert step_plan(1.0, DELTA, 11, "tight")[1] == "tight"
