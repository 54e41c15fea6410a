"""PublicImputer: user-given fill values, nothing learned from the data (issue 29)."""

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer, PolynomialFeatures
from sklearn.utils.estimator_checks import parametrize_with_checks

import skdp
from skdp import DPWinnowClassifier
from skdp.accounting import PrivacyBudget
from skdp.preprocessing import PublicImputer


@parametrize_with_checks(
    [PublicImputer(fill_value=0.0), PublicImputer(fill_value=-1.0, add_indicator=True),
     PublicImputer(fill_value=2.0, missing_values=-999.0)]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


X = np.array([[np.nan, 1.0, 5.0], [30.0, np.nan, np.nan], [20.0, 2.0, 6.0]])


def test_fills_per_feature_and_leaves_the_rest():
    out = PublicImputer(fill_value=[40.0, 0.0, -1.0]).fit_transform(X)
    np.testing.assert_array_equal(out, [[40, 1, 5], [30, 0, -1], [20, 2, 6]])
    assert np.isnan(X[0, 0])  # copy=True leaves the input alone


def test_fit_learns_nothing_from_values():
    a = PublicImputer(fill_value=[1.0, 2.0, 3.0]).fit(np.zeros((2, 3)))
    b = PublicImputer(fill_value=[1.0, 2.0, 3.0]).fit(np.full((7, 3), np.nan))
    np.testing.assert_array_equal(a.transform(X), b.transform(X))


def test_indicator_covers_every_feature_whatever_the_training_rows():
    # SimpleImputer keeps indicators only for features missing in the training rows (a
    # fact about the data): here the columns are the same with or without NaN at fit
    clean = PublicImputer(fill_value=0.0, add_indicator=True).fit(np.ones((3, 3)))
    dirty = PublicImputer(fill_value=0.0, add_indicator=True).fit(X)
    assert clean.transform(X).shape == dirty.transform(X).shape == (3, 6)
    np.testing.assert_array_equal(clean.transform(X)[:, 3:], np.isnan(X))
    assert list(clean.get_feature_names_out()) == [
        "x0", "x1", "x2", "missingindicator_x0", "missingindicator_x1", "missingindicator_x2"]


def test_sentinel_placeholder():
    Xs = np.array([[-999.0, 1.0], [2.0, -999.0]])
    out = PublicImputer(fill_value=[0.0, 5.0], missing_values=-999).fit_transform(Xs)
    np.testing.assert_array_equal(out, [[0, 1], [2, 5]])
    with pytest.raises(ValueError, match=r"missing_values=np\.nan"):
        PublicImputer(fill_value=0.0, missing_values=-999).fit(X)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_input_stays_sparse(fmt):
    S = sp.random(30, 5, density=0.3, format=fmt, random_state=0)
    S.data[::4] = np.nan
    dense = S.toarray()
    imp = PublicImputer(fill_value=[1.0, 2.0, 3.0, 4.0, 5.0], add_indicator=True)
    out = imp.fit_transform(S)
    assert sp.issparse(out) and out.format == fmt
    np.testing.assert_array_equal(
        out.toarray(), PublicImputer(fill_value=[1.0, 2.0, 3.0, 4.0, 5.0],
                                     add_indicator=True).fit_transform(dense))
    assert np.isnan(S.data[0])  # copied
    with pytest.raises(TypeError, match="Sparse data"):
        PublicImputer(fill_value=1.0, missing_values=0).fit(S)


def test_float32_is_kept():
    assert PublicImputer(fill_value=1.5).fit_transform(X.astype(np.float32)).dtype == np.float32


def test_pandas_names_dict_and_set_output():
    df = pd.DataFrame({"age": [np.nan, 40.0], "income": pd.array([1, None], dtype="Int64")})
    imp = PublicImputer(fill_value={"age": 35.0, "income": 0.0}, add_indicator=True)
    out = imp.set_output(transform="pandas").fit_transform(df)
    assert list(out.columns) == ["age", "income", "missingindicator_age",
                                 "missingindicator_income"]
    np.testing.assert_array_equal(out.to_numpy(), [[35, 1, 1, 0], [40, 0, 0, 1]])


@pytest.mark.parametrize(("fill", "match"), [
    ({"age": 1.0}, r"without a value: \['income'\]"),
    ({"age": 1.0, "income": 2.0, "zip": 3.0}, r"unknown: \['zip'\]"),
    ([1.0, 2.0, 3.0], "one entry per feature"),
    ([1.0, np.nan], "finite"),
    (np.inf, "fill_value"),
    (["a", "b"], "finite real numbers"),
])
def test_bad_fill_values_are_refused_at_fit(fill, match):
    df = pd.DataFrame({"age": [1.0], "income": [2.0]})
    with pytest.raises(ValueError, match=match):
        PublicImputer(fill_value=fill).fit(df)


def test_dict_needs_column_names():
    with pytest.raises(ValueError, match="DataFrame"):
        PublicImputer(fill_value={"a": 1.0}).fit(np.zeros((2, 1)))


@pytest.mark.parametrize("X_fit", [np.zeros((2, 2)), np.full((2, 2), np.nan)])
def test_default_always_warns(X_fit):
    # decided by the parameters only, never by the data
    with pytest.warns(UserWarning, match="no fill_value given"):
        PublicImputer().fit(X_fit)


def test_pipeline_is_exactly_the_learner_on_filled_rows():
    rng = np.random.default_rng(0)
    Xr = rng.uniform(-1, 1, (200, 3))
    y = (Xr[:, 0] > 0).astype(int)
    Xr[rng.random(Xr.shape) < 0.2] = np.nan
    fill = [0.0, 0.5, -0.5]
    budget = PrivacyBudget(10.0, 1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = make_pipeline(PublicImputer(fill_value=fill),
                             DPWinnowClassifier(epsilon=1.0, bounds=(-1, 1), budget=budget,
                                                random_state=skdp.TestingSeed(0))).fit(Xr, y)
        alone = DPWinnowClassifier(epsilon=1.0, bounds=(-1, 1),
                                   random_state=skdp.TestingSeed(0)).fit(
            np.where(np.isnan(Xr), fill, Xr), y)
    # one charge: the learner's; the imputer adds none
    assert [c[:2] for c in budget.charges] == [(1.0, pipe[-1].delta)]
    np.testing.assert_array_equal(pipe.decision_function(Xr),
                                  alone.decision_function(np.where(np.isnan(Xr), fill, Xr)))


_values = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.just(np.nan))


@settings(max_examples=50, deadline=None)
@given(rows=st.lists(st.lists(_values, min_size=3, max_size=3), min_size=1, max_size=8),
       fill=st.lists(st.floats(-1e6, 1e6), min_size=3, max_size=3),
       indicator=st.booleans())
def test_output_is_finite_row_by_row_or_refused(rows, fill, indicator):
    Xh = np.array(rows, dtype=float)
    imp = PublicImputer(fill_value=fill, add_indicator=indicator)
    if np.isinf(Xh).any():  # infinity is not missing: refused, like scikit-learn does
        with pytest.raises(ValueError, match="infinity"):
            imp.fit(Xh)
        return
    out = imp.fit_transform(Xh)
    assert np.all(np.isfinite(out))
    # each output row depends on its own input row only
    for i in range(len(Xh)):
        np.testing.assert_array_equal(out[i], imp.transform(Xh[i:i + 1])[0])


@settings(max_examples=30, deadline=None)
@given(bad=st.one_of(
    st.text(min_size=1, max_size=6),
    st.lists(st.floats(allow_nan=False), min_size=1, max_size=3),
    st.dictionaries(st.text(max_size=3), st.floats(), max_size=2),
    st.sampled_from([np.nan, np.inf, -np.inf, [[1.0]], (1, "a"), object()])))
def test_any_bad_fill_value_is_a_clear_error_before_transform(bad):
    imp = PublicImputer(fill_value=bad)
    try:
        imp.fit(np.zeros((2, 2)))
    except (ValueError, TypeError) as exc:
        assert "fill_value" in str(exc) or "PublicImputer" in str(exc)
        return
    # only a valid one gets through: finite, one per feature
    assert imp.fill_values_.shape == (2,) and np.all(np.isfinite(imp.fill_values_))


# ------------------------------------------------- the leak list (privacy_model.rst)
def test_public_fill_is_the_same_on_neighbours_with_an_all_missing_column():
    # the neighbour has column 1 missing in every row (SimpleImputer drops such a column
    # unless keep_empty_features=True, and its indicators change: see
    # tests/test_categorical_pipeline.py)
    Xa = np.array([[1.0, 20.0, 3.0], [4.0, np.nan, np.nan], [7.0, np.nan, 9.0]])
    Xb = Xa.copy()
    Xb[0, 1] = np.nan
    a = PublicImputer(fill_value=0.0, add_indicator=True).fit(Xa)
    b = PublicImputer(fill_value=0.0, add_indicator=True).fit(Xb)
    probe = np.array([[5.0, np.nan, 1.0]])
    np.testing.assert_array_equal(a.transform(probe), b.transform(probe))
    assert a.transform(Xa).shape == b.transform(Xb).shape == (3, 6)


def _neighbours(n=40, d=3, seed=0):
    """Two tables that differ in one row, the second's row an outlier."""
    rng = np.random.default_rng(seed)
    Xa = rng.uniform(0, 1, (n, d))
    Xb = Xa.copy()
    Xb[0] = 50.0
    return Xa, Xb


def _leaky():
    from sklearn.decomposition import PCA, TruncatedSVD
    from sklearn.kernel_approximation import Nystroem
    from sklearn.preprocessing import (
        KBinsDiscretizer,
        MaxAbsScaler,
        MinMaxScaler,
        PowerTransformer,
        QuantileTransformer,
        RobustScaler,
        SplineTransformer,
        StandardScaler,
    )

    return [StandardScaler(), MinMaxScaler(), MaxAbsScaler(), RobustScaler(),
            QuantileTransformer(n_quantiles=10), PowerTransformer(),
            KBinsDiscretizer(n_bins=3, encode="ordinal", strategy="uniform"),
            SplineTransformer(), PCA(2), TruncatedSVD(2),
            Nystroem(n_components=40, random_state=0)]  # 40: every row is a component


@pytest.mark.parametrize("step", _leaky(), ids=lambda s: type(s).__name__)
def test_listed_leaky_steps_change_with_one_row(step):
    from sklearn.base import clone

    Xa, Xb = _neighbours()
    probe = np.full((1, 3), 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = clone(step).fit(Xa), clone(step).fit(Xb)
    # the same probe row, transformed by the two fitted steps: one row changed the step
    assert not np.allclose(a.transform(probe), b.transform(probe))


def test_vectorizer_vocabulary_is_released_and_hashing_is_not():
    from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer

    docs = ["late payment again", "paid on time"]
    neighbour = [*docs[:1], "paid on time rarediagnosis"]
    assert "rarediagnosis" in CountVectorizer().fit(neighbour).vocabulary_
    probe = ["paid rarediagnosis"]
    np.testing.assert_array_equal(HashingVectorizer().fit(docs).transform(probe).toarray(),
                                  HashingVectorizer().fit(neighbour).transform(probe).toarray())


@pytest.mark.parametrize("make", [
    lambda: Normalizer(),
    lambda: PolynomialFeatures(2),
    lambda: PublicImputer(fill_value=0.0, add_indicator=True),
    lambda: skdp.preprocessing.PublicBoundsClipper(lower=0.0, upper=1.0),
], ids=["Normalizer", "PolynomialFeatures", "PublicImputer", "PublicBoundsClipper"])
def test_listed_row_wise_steps_do_not_change_with_one_row(make):
    Xa, Xb = _neighbours()
    probe = np.array([[0.5, np.nan, 0.2]] if isinstance(make(), PublicImputer) else
                     [[0.5, 0.5, 0.5]])
    np.testing.assert_array_equal(make().fit(Xa).transform(probe),
                                  make().fit(Xb).transform(probe))
