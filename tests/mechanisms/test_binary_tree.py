"""Unit, sampler and accuracy tests for BinaryTreeCounter (the binary mechanism)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from skdp.exceptions import MechanismHaltedError, PrivacyParameterError
from skdp.mechanisms.binary_tree import BinaryTreeCounter

ALPHA = 1e-6


class Noiseless(BinaryTreeCounter):
    """Zero-noise twin, to check the tree arithmetic exactly."""

    def _noise(self, size):
        return np.zeros(size, dtype=self._open.dtype)


def _feed(counter, values, cuts):
    outs, start = [], 0
    for cut in [*sorted(cuts), len(values)]:
        outs.append(counter.update(values[start:cut]))
        start = cut
    return np.concatenate(outs)


@settings(max_examples=80, deadline=None)
@given(
    st.integers(1, 300).flatmap(
        lambda t: st.tuples(
            st.just(t),
            st.integers(0, t),
            st.lists(st.integers(0, t), max_size=8),
            st.integers(0, 2**31),
        )
    )
)
def test_noiseless_running_sums_are_exact(args):
    t, used, cuts, seed = args
    values = np.random.default_rng(seed).random(used)
    cuts = [c for c in cuts if c <= used]
    out = _feed(Noiseless(t, 1.0), values, cuts)
    np.testing.assert_allclose(out, np.cumsum(values), atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 200), st.lists(st.integers(0, 200), max_size=6), st.integers(0, 2**31))
def test_noiseless_discrete_exact(t, cuts, seed):
    bits = np.random.default_rng(seed).integers(0, 2, size=t)
    out = _feed(Noiseless(t, 1.0, discrete=True), bits, [c for c in cuts if c <= t])
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, np.cumsum(bits))


def test_block_split_does_not_change_continuous_outputs():
    values = np.random.default_rng(0).random(100)
    whole = BinaryTreeCounter(100, 1.0, random_state=3).update(values)
    split = _feed(BinaryTreeCounter(100, 1.0, random_state=3), values, [1, 37, 38, 64])
    np.testing.assert_allclose(whole, split, rtol=0, atol=1e-12)


def test_memory_is_logarithmic_and_attributes():
    c = BinaryTreeCounter(10**6, 1.0, random_state=0)
    assert c.n_levels == 20  # ⌊log2 10^6⌋ + 1
    out = c.update(np.random.default_rng(0).random(10**6))
    assert c._open.shape == (20,) and c._last_noisy.shape == (20,)
    assert c.n_seen == 10**6 and c.total_ == out[-1]
    assert c._node_noise_scale == 20.0


@pytest.mark.parametrize(("t", "levels"), [(1, 1), (2, 2), (3, 2), (4, 3), (8, 4), (1023, 10)])
def test_levels(t, levels):
    assert BinaryTreeCounter(t, 1.0).n_levels == levels


def test_output_distribution_step_one():
    # step 1 is a single node: x₁ + Lap(L/ε)
    eps, t = 0.7, 16
    draws = BinaryTreeCounter(t, eps, random_state=1).simulate([0.3], 20_000)[:, 0]
    scale = BinaryTreeCounter(t, eps).n_levels / eps
    assert stats.kstest(draws - 0.3, stats.laplace(scale=scale).cdf).pvalue > ALPHA
    # the loop path has the same distribution as the vectorised one
    rng = np.random.default_rng(1)
    loop = [BinaryTreeCounter(t, eps, random_state=rng).update([0.3])[0] for _ in range(2000)]
    assert stats.kstest(np.array(loop) - 0.3, stats.laplace(scale=scale).cdf).pvalue > ALPHA


def test_discrete_output_distribution_step_one():
    eps, t, n = 1.0, 8, 50_000
    draws = BinaryTreeCounter(t, eps, discrete=True, random_state=2).simulate([1], n)[:, 0] - 1
    scale = 4 / eps
    p = math.exp(-1 / scale)
    support = np.arange(-25, 26)
    probs = (1 - p) / (1 + p) * p ** np.abs(support)
    observed = np.array([(draws == z).sum() for z in support])
    obs = np.append(observed, n - observed.sum())
    exp = np.append(probs * n, n * (1 - probs.sum()))
    assert stats.chisquare(obs, exp).pvalue > ALPHA


def test_output_distribution_last_step_is_sum_of_popcount_nodes():
    # step 15 = 1111₂ sums 4 independent Lap(b); its distribution is that of a sum of 4
    eps, t, runs = 1.0, 15, 20_000
    outs = BinaryTreeCounter(t, eps, random_state=2).simulate(np.zeros(t), runs)[:, -1]
    b = 4 / eps
    ref = np.random.default_rng(3).laplace(0, b, size=(200_000, 4)).sum(axis=1)
    assert stats.ks_2samp(outs, ref).pvalue > ALPHA
    # and step 16 = 10000₂ is a single node
    outs16 = BinaryTreeCounter(16, eps, random_state=4).simulate(np.zeros(16), runs)[:, -1]
    assert stats.kstest(outs16, stats.laplace(scale=5 / eps).cdf).pvalue > ALPHA


@pytest.mark.parametrize("discrete", [False, True])
def test_error_bound_holds_uniformly(discrete):
    t, eps, beta, runs = 64, 1.0, 0.05, 10_000
    x = np.random.default_rng(8).integers(0, 2, size=t)
    counter = BinaryTreeCounter(t, eps, discrete=discrete, random_state=7)
    out = counter.simulate(x, runs)
    exceed = int((np.abs(out - np.cumsum(x)).max(axis=1) > counter.error_bound(beta)).sum())
    assert exceed <= stats.binom.ppf(1 - ALPHA, runs, beta)


@pytest.mark.parametrize("step", [1, 32, 63])
def test_error_bound_single_step(step):
    t, eps, beta, runs = 64, 1.0, 0.1, 10_000
    c = BinaryTreeCounter(t, eps, random_state=9)
    bound = c.error_bound(beta, uniform=False)
    assert bound < c.error_bound(beta)
    errs = c.simulate(np.ones(step), runs)[:, -1] - step
    exceed = int((np.abs(errs) > bound).sum())
    assert exceed <= stats.binom.ppf(1 - ALPHA, runs, beta)


def test_error_bound_formula():
    c = BinaryTreeCounter(1000, 0.5)
    L = 10
    b = L / 0.5
    beta = 0.01 / 1000
    log_term = math.log(2 / beta)
    expected = b * max(math.sqrt(L), math.sqrt(log_term)) * math.sqrt(8 * log_term)
    assert c.error_bound(0.01) == pytest.approx(expected)


def test_halts_after_n_steps_and_refuses_overflow():
    c = BinaryTreeCounter(5, 1.0, random_state=0)
    c.update([0.1, 0.2, 0.3])
    state = c._rng.bit_generator.state
    with pytest.raises(ValueError, match="exceed n_steps"):
        c.update([0.1, 0.2, 0.3])
    assert c.n_seen == 3 and c._rng.bit_generator.state == state
    c.update([1, 1])
    with pytest.raises(MechanismHaltedError):
        c.update([0.0])
    assert c.update([]).shape == (0,)


def test_scalar_and_empty_blocks():
    c = BinaryTreeCounter(4, 1.0, random_state=0)
    assert c.update(0.5).shape == (1,)
    assert c.update([]).shape == (0,) and c.n_seen == 1


@pytest.mark.parametrize(
    "values",
    [[0.5, np.nan], [1.5], [-0.1], [np.inf], [[0.1, 0.2]], ["a"]],
)
def test_bad_values_refused_before_randomness(values):
    c = BinaryTreeCounter(10, 1.0, random_state=0)
    state = c._rng.bit_generator.state
    with pytest.raises(ValueError):
        c.update(values)
    assert c.n_seen == 0 and c._rng.bit_generator.state == state


def test_discrete_requires_bits():
    c = BinaryTreeCounter(10, 1.0, discrete=True, random_state=0)
    with pytest.raises(ValueError, match="bits"):
        c.update([0.5])


@pytest.mark.parametrize("eps", [0.0, -1.0, math.nan, math.inf, "1"])
def test_bad_epsilon(eps):
    with pytest.raises(PrivacyParameterError):
        BinaryTreeCounter(10, eps)


@pytest.mark.parametrize("t", [0, -3, 2.5, True, None])
def test_bad_n_steps(t):
    with pytest.raises(ValueError):
        BinaryTreeCounter(t, 1.0)


@pytest.mark.parametrize("beta", [0.0, 1.0, -0.1, math.nan, True])
def test_bad_beta(beta):
    with pytest.raises(ValueError):
        BinaryTreeCounter(10, 1.0).error_bound(beta)


def test_bad_random_state_after_validation():
    with pytest.raises(ValueError):
        BinaryTreeCounter(10, 1.0, random_state="seed")


@pytest.mark.parametrize("discrete", [False, True])
def test_simulate_matches_update(discrete):
    bits = np.random.default_rng(4).integers(0, 2, size=37)
    one = BinaryTreeCounter(40, 1.0, discrete=discrete, random_state=5).update(bits)
    sim = BinaryTreeCounter(40, 1.0, discrete=discrete, random_state=5).simulate(bits, 1)
    np.testing.assert_array_equal(one, sim[0])
    exact = Noiseless(40, 1.0, discrete=discrete).simulate(bits, 3)
    np.testing.assert_array_equal(exact, np.tile(np.cumsum(bits), (3, 1)))
    assert BinaryTreeCounter(40, 1.0).simulate(bits, 1000).shape == (1000, 37)


def test_simulate_refuses_bad_input():
    c = BinaryTreeCounter(4, 1.0, random_state=0)
    with pytest.raises(ValueError):
        c.simulate(np.zeros(5), 3)
    with pytest.raises(ValueError):
        c.simulate(np.zeros(2), 0)
    with pytest.raises(ValueError):
        c.simulate([2.0], 3)
