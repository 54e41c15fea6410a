"""ConjunctionFeatures: counts, names, values, the refusal before allocating."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from skdp.decision_list import (
    ConjunctionFeatures,
    DPDecisionListClassifier,
    GreedyDecisionListClassifier,
)
from skdp.decision_list._conjunctions import n_conjunctions


@given(d=st.integers(1, 30), k=st.integers(1, 4), negations=st.booleans())
def test_count_formula_and_prop_23_bound(d, k, negations):
    count = n_conjunctions(d, k, negations)
    brute = sum(
        math.comb(d, j) * (2**j if negations else 1) for j in range(1, min(k, d) + 1)
    )
    assert count == brute
    assert count + 1 <= math.e**2 * d**k  # + the empty (constant-true) conjunction


def test_values_match_brute_force_and_sparse_input():
    rng = np.random.default_rng(0)
    X = (rng.random((50, 5)) < 0.4).astype(int)
    cf = ConjunctionFeatures(k=3).fit(X)
    out = cf.transform(sp.csr_matrix(X))
    assert sp.issparse(out) and out.shape == (50, n_conjunctions(5, 3))
    dense = out.toarray()
    for col, conj in enumerate(cf.conjunctions_):
        expected = np.all([X[:, v] == (1 if pos else 0) for v, pos in conj], axis=0)
        np.testing.assert_array_equal(dense[:, col], expected)
    names = cf.get_feature_names_out()
    assert names[0] == "x0" and names[1] == "~x0"
    assert "x3 & ~x4" in set(names)


def test_names_from_binarizer_are_parenthesised():
    cf = ConjunctionFeatures(k=2, negations=True).fit(np.zeros((1, 2)))
    names = cf.get_feature_names_out(["a > 1", "b"])
    assert "(a > 1) & ~b" in set(names)


def test_refuses_before_allocating():
    # 10^4 features with k = 3 would be ~1.3·10^12 columns: refused instantly
    X = sp.csr_matrix((3, 10_000), dtype=np.int8)
    with pytest.raises(ValueError, match="max_features"):
        ConjunctionFeatures(k=3, max_features=10**6).fit(X)


def test_non_binary_input_is_refused_without_binarize():
    with pytest.raises(ValueError, match="PublicBoundsBinarizer"):
        ConjunctionFeatures(binarize=None).fit([[0.5, 1.0]])
    # The default binarize=0.0 reads it as "x > 0", like BernoulliNB.
    out = ConjunctionFeatures(k=1, negations=False).fit_transform([[0.5, -1.0]])
    assert out.toarray().tolist() == [[1, 0]]


def test_k_decision_list_learned_on_conjunctions():
    rng = np.random.default_rng(0)
    X = (rng.random((4000, 6)) < 0.5).astype(int)
    # 2-decision list: if x1 & ~x2 then 1 elif x4 & x5 then 0 else 1
    y = np.where((X[:, 1] == 1) & (X[:, 2] == 0), 1, np.where(X[:, 4] & X[:, 5], 0, 1))
    Z = ConjunctionFeatures(k=2).fit_transform(X)
    assert GreedyDecisionListClassifier().fit(Z, y).score(Z, y) == 1.0
    scores = [
        DPDecisionListClassifier(epsilon=20.0, max_rules=4, classes=[0, 1], random_state=s)
        .fit(Z, y)
        .score(Z, y)
        for s in range(5)
    ]
    assert np.mean(scores) > 0.8
