"""The lists' dense-to-CSR conversion equals scipy's (same indices, indptr, dtypes)."""
import numpy as np
import pytest
import scipy.sparse as sp

from skdp.decision_list._base import _binary_csr


@pytest.mark.parametrize("shape", [(200, 40), (1, 5), (0, 3), (5, 0), (3, 4), (100, 1)])
@pytest.mark.parametrize("density", [0.0, 0.3, 1.0])
def test_binary_csr_is_scipys(shape, density):
    mask = np.random.default_rng(0).random(shape) < density
    got, want = _binary_csr(mask), sp.csr_matrix(mask, dtype=np.int8)
    assert type(got) is type(want) and got.shape == want.shape
    for a, b in ((got.data, want.data), (got.indices, want.indices),
                 (got.indptr, want.indptr)):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    assert got.has_sorted_indices
