"""The online learners read scipy.sparse X through MeanThresholds (the default class)
without densifying: the same bins, so the same stream and model, as on dense X."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from skdp import TestingSeed
from skdp.hypotheses import MeanThresholds
from skdp.hypotheses.littlestone import threshold_class
from skdp.online import (
    AdaptivePrivateOnlineClassifier,
    BatchSanitizedOnlineClassifier,
    DPSOAClassifier,
    PrivateExpertsClassifier,
    SOAClassifier,
)

CLASSES = [SOAClassifier, DPSOAClassifier, AdaptivePrivateOnlineClassifier,
           BatchSanitizedOnlineClassifier, PrivateExpertsClassifier]


def _make(cls, hc):
    param = "experts" if cls is PrivateExpertsClassifier else "hypothesis_class"
    kw = {} if cls is SOAClassifier else {"classes": [0, 1], "random_state": TestingSeed(0)}
    return cls(**kw, **{param: hc})


def _sparse_table(n=400, d=50, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.1, format="csr", random_state=seed,
                  data_rvs=lambda k: rng.uniform(0, 10, k))
    score = np.asarray(X.sum(axis=1)).ravel()
    return X, (score > np.median(score)).astype(int)


def _refuse(*args, **kwargs):
    raise AssertionError("a sparse matrix was densified")


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_sparse_equals_dense_and_is_never_densified(cls, monkeypatch):
    X, y = _sparse_table()
    dense = X.toarray()
    hc = MeanThresholds(bounds=(0.0, 2.0))
    expected = _make(cls, hc).fit(dense, y).predict(dense)
    with monkeypatch.context() as m:
        for kind in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix, sp.csr_array):
            m.setattr(kind, "toarray", _refuse)
            m.setattr(kind, "todense", _refuse)
        clf = _make(cls, hc).fit(X, y)
        got = clf.predict(X)
        assert clf.predict_proba(X.tocsc()).shape == (len(y), 2)
    np.testing.assert_array_equal(got, expected)
    assert cls().__sklearn_tags__().input_tags.sparse


def test_domain_index_classes_take_dense_input_only():
    clf = SOAClassifier(threshold_class(8))
    assert not clf.__sklearn_tags__().input_tags.sparse
    with pytest.raises(TypeError, match="dense data is required"):
        clf.fit(sp.csr_matrix(np.arange(8.0)[:, None]), [0, 1] * 4)


@given(lower=st.floats(-5, 1), width=st.floats(0.5, 10), n_bins=st.integers(2, 40),
       seed=st.integers(0, 10**6))
def test_sparse_bins_equal_dense_bins(lower, width, n_bins, seed):
    X, _ = _sparse_table(60, 7, seed)
    h = MeanThresholds(bounds=(lower, lower + width), n_bins=n_bins)
    sparse, dense = h.to_domain(X), h.to_domain(X.toarray())
    # the same public map; summation order may move a mean sitting on a bin edge by one
    assert np.max(np.abs(sparse - dense)) <= 1 and np.mean(sparse == dense) >= 0.95
