import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from skdp.exceptions import PrivacyParameterError
from skdp.mechanisms import exponential_mechanism, report_noisy_max

ALPHA = 1e-6
SCORES = np.array([3.0, 1.0, 0.0, 2.5])


def _softmax(scores, eps, sens=1.0, monotonic=False):
    logits = eps * scores / ((1 if monotonic else 2) * sens)
    p = np.exp(logits - logits.max())
    return p / p.sum()


def _permute_and_flip_pmf(scores, eps):
    # Exact, by enumerating every visiting order.
    accept = np.exp(eps * (scores - scores.max()) / 2)
    pmf = np.zeros(scores.size)
    perms = list(itertools.permutations(range(scores.size)))
    for perm in perms:
        reach = 1.0
        for r in perm:
            pmf[r] += reach * accept[r]
            reach *= 1 - accept[r]
    return pmf / len(perms)


def _chisquare_ok(picks, pmf):
    observed = np.bincount(picks, minlength=pmf.size)
    return stats.chisquare(observed, pmf * picks.size).pvalue > ALPHA


@pytest.mark.parametrize("monotonic", [False, True])
def test_gumbel_single_draws_follow_softmax(monotonic):
    rng = np.random.default_rng(0)
    picks = np.array([exponential_mechanism(SCORES, 1.0, monotonic=monotonic, random_state=rng)
                      for _ in range(20_000)])
    assert _chisquare_ok(picks, _softmax(SCORES, 1.0, monotonic=monotonic))


def test_gumbel_many_draws_follow_softmax():
    picks = exponential_mechanism(SCORES, 1.0, sensitivity=2.0, size=200_000, random_state=1)
    assert _chisquare_ok(picks, _softmax(SCORES, 1.0, sens=2.0))


def test_permute_and_flip_matches_exact_pmf():
    rng = np.random.default_rng(2)
    picks = np.array([exponential_mechanism(SCORES, 1.0, method="permute_and_flip",
                                            random_state=rng) for _ in range(20_000)])
    assert _chisquare_ok(picks, _permute_and_flip_pmf(SCORES, 1.0))


def test_report_noisy_max_exponential_is_permute_and_flip():
    rng = np.random.default_rng(3)
    picks = np.array([report_noisy_max(SCORES, 1.0, noise="exponential", random_state=rng)
                      for _ in range(20_000)])
    assert _chisquare_ok(picks, _permute_and_flip_pmf(SCORES, 1.0))


@pytest.mark.parametrize("method", ["gumbel", "permute_and_flip"])
def test_scores_spanning_a_million_are_stable(method):
    scores = np.array([-1e6, 0.0, 1e6, 1e6 - 1.0])
    picks = [exponential_mechanism(scores, 1.0, method=method, random_state=s) for s in range(50)]
    assert set(picks) <= {2, 3}
    many = exponential_mechanism(scores, 1.0, size=1000, random_state=0)
    assert set(many.tolist()) <= {2, 3}
    huge = np.linspace(-1e12, 1e12, 10**6)
    assert exponential_mechanism(huge, 1.0, method=method, random_state=0) == 10**6 - 1


def test_single_candidate():
    assert exponential_mechanism([5.0], 1.0, random_state=0) == 0
    assert report_noisy_max([5.0], 1.0, random_state=0) == 0


@pytest.mark.parametrize("bad", [[], [np.nan, 1.0], [np.inf], [[1.0, 2.0]]])
def test_bad_scores_rejected(bad):
    with pytest.raises(ValueError):
        exponential_mechanism(bad, 1.0)
    with pytest.raises(ValueError):
        report_noisy_max(bad, 1.0)


@given(eps=st.one_of(st.floats(max_value=0.0), st.just(float("nan")), st.just(float("inf"))))
def test_bad_epsilon_rejected(eps):
    with pytest.raises(PrivacyParameterError):
        exponential_mechanism([1.0, 2.0], eps)


@given(sens=st.floats(max_value=0.0))
def test_bad_sensitivity_rejected(sens):
    with pytest.raises(PrivacyParameterError):
        exponential_mechanism([1.0, 2.0], 1.0, sensitivity=sens)


def test_bad_options_rejected():
    with pytest.raises(ValueError, match="method"):
        exponential_mechanism([1.0], 1.0, method="softmax")
    with pytest.raises(ValueError, match="size"):
        exponential_mechanism([1.0], 1.0, method="permute_and_flip", size=3)
    with pytest.raises(ValueError, match="noise"):
        report_noisy_max([1.0], 1.0, noise="gaussian")


def test_nothing_random_drawn_before_validation():
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError):
        exponential_mechanism([np.nan], 1.0, random_state=rng)
    assert rng.bit_generator.state == state
