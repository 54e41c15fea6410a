import numpy as np
import pytest
from hypothesis import settings

settings.register_profile("skdp", deadline=None, max_examples=60, derandomize=True)
settings.load_profile("skdp")


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
