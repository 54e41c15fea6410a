"""Statistical privacy audits of BinaryTreeCounter, with negative controls.

Neighbouring streams differ by 1 in one step s. That step lies in at most
L = ⌊log₂T⌋ + 1 released p-sum nodes (exactly L for s = 1), and each released node
can be read off the running sums (node (a, b] is out(b) − out(a)). On the event
"every one of the node estimates containing s is ≥ 1", the likelihood ratio of D′
(with the 1) over D is exactly e^{n_s/b}, n_s the number of those nodes: e^{ε} for
s = 1 with b = L/ε — the worst case, so that audit is near-tight.

Negative controls: per-node noise not scaled by the depth (b = 1/ε), and the
off-by-one of reading "log T" literally (b = log₂T/ε when T is a power of two, so the
root node [1, T] is not paid for).
"""

import math

import numpy as np
import pytest

from skdp.audit import audit_mechanism
from skdp.mechanisms.binary_tree import BinaryTreeCounter

ALPHA = 1e-6
EPS = 1.0
T = 16  # a power of two: step s lies in 5 = log₂16 + 1 completed nodes


class UnscaledNoise(BinaryTreeCounter):
    """Broken: per-node noise Lap(1/ε), as if each step were in one node only."""

    @property
    def _node_noise_scale(self):
        return 1.0 / self.epsilon


class LiteralLogT(BinaryTreeCounter):
    """Broken: scale log₂T/ε (Chan et al.'s "log T" read literally): 4/ε for T = 16."""

    @property
    def _node_noise_scale(self):
        return math.log2(self.n_steps) / self.epsilon


class HalfNoise(BinaryTreeCounter):
    """Broken: half the per-node noise (calibrated for 2ε, claiming ε)."""

    @property
    def _node_noise_scale(self):
        return super()._node_noise_scale / 2


def _nodes_containing(step, n_steps):
    """(start, end] of every released node containing ``step`` (level j, end k·2^j, k odd)."""
    nodes = []
    for j in range(n_steps.bit_length()):
        k = -(-step // (1 << j))
        end = k << j
        if end <= n_steps and k % 2 == 1:
            nodes.append((end - (1 << j), end))
    return nodes


def _all_nodes_at_least_one(step, n_steps):
    nodes = _nodes_containing(step, n_steps)

    def event(out):
        padded = np.concatenate([np.zeros((out.shape[0], 1), dtype=out.dtype), out], axis=1)
        return np.all([padded[:, b] - padded[:, a] >= 1 for a, b in nodes], axis=0)

    return event


def _stream_pair(step):
    d0 = np.zeros(T)
    d1 = d0.copy()
    d1[step - 1] = 1.0
    return d0, d1


def _audit(cls, step, n, discrete=False):
    def sample(data, size, rng):
        return cls(T, EPS, discrete=discrete, random_state=rng).simulate(data, size)

    d0, d1 = _stream_pair(step)
    return audit_mechanism(
        sample,
        d0,
        d1,
        n_samples=n,
        events=[_all_nodes_at_least_one(step, T)],
        alpha=ALPHA,
        random_state=step,
    )


def test_nodes_containing():
    assert _nodes_containing(1, 16) == [(0, 1), (0, 2), (0, 4), (0, 8), (0, 16)]
    assert _nodes_containing(11, 16) == [(10, 11), (8, 12), (0, 16)]
    assert _nodes_containing(11, 12) == [(10, 11), (8, 12)]
    assert _nodes_containing(15, 15) == [(14, 15)]
    for n_steps in (7, 16, 100):
        worst = max(len(_nodes_containing(s, n_steps)) for s in range(1, n_steps + 1))
        assert worst == BinaryTreeCounter(n_steps, 1.0).n_levels


def test_audit_passes_worst_step():
    res = _audit(BinaryTreeCounter, 1, 400_000)
    assert res.epsilon_lower_bound <= EPS, str(res)
    assert res.epsilon_lower_bound > 0.85 * EPS, str(res)  # near-tight


@pytest.mark.parametrize("step", [11, 16])
def test_audit_passes_other_steps(step):
    res = _audit(BinaryTreeCounter, step, 100_000)
    assert res.epsilon_lower_bound <= EPS, str(res)


def test_audit_passes_discrete():
    res = _audit(BinaryTreeCounter, 1, 100_000, discrete=True)
    assert res.epsilon_lower_bound <= EPS, str(res)


@pytest.mark.parametrize("step", [1, 11])
def test_audit_catches_unscaled_noise(step):
    res = _audit(UnscaledNoise, step, 50_000)
    assert res.epsilon_lower_bound > EPS, str(res)


def test_audit_catches_unscaled_noise_discrete():
    res = _audit(UnscaledNoise, 1, 50_000, discrete=True)
    assert res.epsilon_lower_bound > EPS, str(res)


def test_audit_catches_half_noise():
    res = _audit(HalfNoise, 1, 100_000)
    assert res.epsilon_lower_bound > EPS, str(res)


def test_audit_catches_literal_log_t():
    # the true ratio is e^{5/4}: a small leak, so a large sample
    res = _audit(LiteralLogT, 1, 600_000)
    assert res.epsilon_lower_bound > EPS, str(res)


def test_generic_events_audit():
    # events chosen by the audit on a pilot sample, on a short discrete stream
    def sample(cls):
        def run(data, size, rng):
            return cls(4, EPS, discrete=True, random_state=rng).simulate(data, size)[:, [0, 1, 3]]

        return run

    d0, d1 = np.zeros(4), np.array([1.0, 0, 0, 0])
    ok = audit_mechanism(
        sample(BinaryTreeCounter), d0, d1, n_samples=100_000, alpha=ALPHA, random_state=3
    )
    bad = audit_mechanism(
        sample(UnscaledNoise), d0, d1, n_samples=100_000, alpha=ALPHA, random_state=3
    )
    assert ok.epsilon_lower_bound <= EPS, str(ok)
    assert bad.epsilon_lower_bound > EPS, str(bad)


@pytest.mark.slow
@pytest.mark.parametrize("n_steps", [7, 12, 32, 100])
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_sweep(n_steps, eps):
    step = 1

    def sample(data, size, rng):
        return BinaryTreeCounter(n_steps, eps, random_state=rng).simulate(data, size)

    d0 = np.zeros(n_steps)
    d1 = d0.copy()
    d1[step - 1] = 1.0
    res = audit_mechanism(
        sample,
        d0,
        d1,
        n_samples=400_000,
        events=[_all_nodes_at_least_one(step, n_steps)],
        alpha=ALPHA,
        random_state=1,
    )
    assert res.epsilon_lower_bound <= eps, str(res)
