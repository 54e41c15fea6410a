"""region_of's dense path (negated literals on narrow X) agrees with the general one."""

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from skdp.decision_list._frequencies import region_of
from skdp.decision_list._greedy_cover import predict_codes


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 40), d=st.integers(1, 10), k=st.integers(0, 8),
       density=st.floats(0, 1), seed=st.integers(0, 2**16))
def test_region_of_matches_first_firing_rule(n, d, k, density, seed):
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix((rng.random((n, d)) < density).astype(np.int8))
    k = min(k, d)
    features = rng.permutation(d)[:k]  # a list uses each feature once
    signs = rng.integers(0, 2, k)
    got = region_of(X, features, signs, d)
    expected = predict_codes(X, features, np.arange(k), k, d, signs)
    assert got.dtype == expected.dtype and np.array_equal(got, expected)
    dense = X.toarray() != 0
    for i in range(n):  # the definition, row by row
        fired = [r for r in range(k) if dense[i, features[r]] == bool(signs[r])]
        assert got[i] == (fired[0] if fired else k)
