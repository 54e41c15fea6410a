"""The Winnow family on scipy.sparse X: learnt without densifying, the same model as on
the dense X (up to the rounding of the dot products), refused with the fix where the
public bounds would fill the zeros."""

import numpy as np
import pytest
import scipy.sparse as sp

from skdp import PrivacyBudget, TestingSeed
from skdp.linear import (
    ConfidentWinnowClassifier,
    DPWinnowClassifier,
    OnlineDecisionListClassifier,
    WinnowClassifier,
)

SPARSE = [WinnowClassifier, ConfidentWinnowClassifier, DPWinnowClassifier]


def _bag_of_words(n=1500, d=3000, seed=0):
    """Counts in {1, 2, 3} at 1% of a wide vocabulary; label: any of 20 marker words."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.01, format="csr", random_state=seed,
                  data_rvs=lambda k: rng.integers(1, 4, k).astype(float))
    marker = np.zeros(d)
    marker[:20] = 1.0
    return X, (X @ marker > 0).astype(int)


def _make(cls, **kw):
    if cls is DPWinnowClassifier:
        kw = {"epsilon": 8.0, "classes": [0, 1], "random_state": TestingSeed(0), **kw}
    return cls(bounds=(-4.0, 4.0), **kw)


@pytest.fixture
def no_densify(monkeypatch):
    """Any densification of a scipy sparse matrix fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("a sparse matrix was densified")
    for cls in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix, sp.csr_array):
        monkeypatch.setattr(cls, "toarray", refuse)
        monkeypatch.setattr(cls, "todense", refuse)


@pytest.mark.parametrize("cls", SPARSE)
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_sparse_input_is_never_densified(cls, fmt, no_densify):
    X, y = _bag_of_words(600)
    X = X.asformat(fmt)
    clf = _make(cls).fit(X, y)
    clf.partial_fit(X[:100] if fmt != "coo" else X.tocsr()[:100], y[:100])
    assert clf.predict(X).shape == (600,)
    assert clf.decision_function(X).shape == (600,)
    assert clf.predict_proba(X).shape == (600, 2)
    assert clf.__sklearn_tags__().input_tags.sparse


@pytest.mark.parametrize("cls", SPARSE)
def test_sparse_and_dense_learn_the_same_model(cls):
    X, y = _bag_of_words()
    sparse, dense = _make(cls).fit(X, y), _make(cls).fit(X.toarray(), y)
    same = np.mean(sparse.predict(X) == dense.predict(X.toarray()))
    # The same algorithm on the same values; only the summation order of ⟨w, x⟩
    # differs (sparse vs BLAS), which can flip a zero-margin tie now and then.
    assert same >= 0.98
    if cls is DPWinnowClassifier:  # weights on a grid of 1/m: the sums agree exactly
        np.testing.assert_array_equal(sparse.decision_function(X),
                                      dense.decision_function(X.toarray()))



def test_winnow_learns_the_marker_words_from_sparse_input():
    X, y = _bag_of_words()
    # bounds (-1, 1) clip counts to word presence, Winnow's classic Boolean features
    clf = WinnowClassifier(learning_rate=1.0, bounds=(-1.0, 1.0)).fit(X, y)
    assert np.mean(clf.predict(X) == y) > 0.95  # measured 0.986; majority label: 0.81


def test_sparse_blocks_equal_one_pass():
    X, y = _bag_of_words(800)
    whole = _make(WinnowClassifier, learning_rate=0.5).fit(X, y)
    blocks = _make(WinnowClassifier, learning_rate=0.5)
    for part in np.array_split(np.arange(800), 4):
        blocks.partial_fit(X[part], y[part], classes=[0, 1])
    np.testing.assert_array_equal(whole.decision_function(X), blocks.decision_function(X))


@pytest.mark.parametrize("cls", SPARSE)
def test_asymmetric_bounds_refused_before_the_charge(cls):
    X, y = _bag_of_words(100)
    budget = PrivacyBudget(10.0, 1e-4)
    kw = {"budget": budget} if cls is DPWinnowClassifier else {}
    clf = _make(cls, **kw).set_params(bounds=(0.0, 3.0))
    with pytest.raises(ValueError, match=r"symmetric around 0.*toarray"):
        clf.fit(X, y)
    assert budget.charges == ()
    # The same bounds on dense X are fine (the map then fills zeros by design).
    clf.fit(X.toarray(), y)


def test_three_classes_on_sparse_input(no_densify):
    X, y = _bag_of_words(900)
    y3 = np.where(X[:, 20:40].getnnz(axis=1) > 0, 2, y)  # a second set of marker words
    clf = _make(WinnowClassifier, learning_rate=0.5).fit(X, y3)
    assert len(clf.estimators_) == 3 and clf.predict(X).shape == (900,)


def test_decision_list_embedding_takes_dense_input_only():
    X, y = _bag_of_words(50)
    assert not OnlineDecisionListClassifier().__sklearn_tags__().input_tags.sparse
    with pytest.raises(TypeError, match="dense data is required"):
        OnlineDecisionListClassifier(random_state=0).fit(X, y)
