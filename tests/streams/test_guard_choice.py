"""ConstantGuard.choice (all windows' sums at once) equals the window-by-window rule."""

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from skdp.streams._guard import MAX_WINDOW, Z_SWITCH, ConstantGuard, _variance


def _reference(guard):
    """The rule as the docstring states it, one window at a time."""
    best, best_z = ("model", 0), Z_SWITCH
    history = np.asarray(guard._noisy[-MAX_WINDOW:], dtype=float)
    var, w = _variance(guard.scale), 1
    while w <= history.shape[0]:
        sums = history[-w:].sum(axis=0)
        mistakes, counts = sums[:guard.n_models], sums[guard.n_models:]
        for k in range(1, guard.n_models):
            z = (mistakes[0] - mistakes[k]) / math.sqrt(2 * w * var)
            if z > best_z:
                best, best_z = ("model", k), z
        label = int(np.argmax(counts))
        z = (mistakes[0] - (counts.sum() - counts[label])) / math.sqrt(
            w * var * guard.n_classes)
        if z > best_z:
            best, best_z = ("constant", label), z
        w *= 2
    return best


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 3), c=st.integers(2, 4), eps=st.sampled_from([0.05, 0.1, 1.0]),
       calls=st.integers(0, 90), seed=st.integers(0, 2**16))
def test_choice_equals_window_by_window(k, c, eps, calls, seed):
    rng = np.random.default_rng(seed)
    guard = ConstantGuard(eps, k, c)
    for _ in range(calls):
        # ties between labels (zeros) and large gaps both occur
        guard._noisy.append(rng.integers(-50, 600, k + c) * rng.integers(0, 3))
        assert guard.choice() == _reference(guard)
