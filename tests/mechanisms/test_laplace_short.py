"""discrete_laplace's short path (Python integers, n ≤ _SHORT) draws exactly what the
vectorised loop draws: same values, same generator state afterwards."""

import numpy as np
import pytest

import skdp.mechanisms.laplace as laplace


@pytest.mark.parametrize("scale", [0.05, 0.3, 1.0, 4.4, 30.0, 1e4])
@pytest.mark.parametrize("size", [0, 1, 2, 5, 17, 64, None])
def test_short_path_equals_vectorised(monkeypatch, scale, size):
    for seed in range(30):
        short, vector = np.random.default_rng(seed), np.random.default_rng(seed)
        got = laplace.discrete_laplace(scale, size, short)
        with monkeypatch.context() as m:
            m.setattr(laplace, "_SHORT", -1)
            expected = laplace.discrete_laplace(scale, size, vector)
        assert type(got) is type(expected)
        assert np.array_equal(got, expected)
        assert short.bit_generator.state == vector.bit_generator.state
