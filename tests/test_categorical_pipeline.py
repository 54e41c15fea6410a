"""Categorical columns and missing values in a private pipeline: public choices only.

The documented way (docs/user_guide/tabular.rst) is scikit-learn's
``OneHotEncoder(categories=<public lists>, handle_unknown="ignore")`` in a
``ColumnTransformer`` next to :class:`~skdp.preprocessing.PublicBoundsBinarizer`, feeding
:class:`~skdp.decision_list.DPDecisionListClassifier`. These tests pin down why that is
private (the fitted encoder and its output do not depend on which categories the rows
contain) and why the alternatives are not (``categories="auto"`` and ``min_frequency``
release facts about the rows; ``handle_unknown="error"`` prints a data value). The same
for missing values: a constant fill with ``keep_empty_features=True`` plus
``MissingIndicator(features="all")`` is public, while a median fill, ``add_indicator=True``
and a constant fill that drops all-missing columns each release something about the rows.
"""

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.compose import ColumnTransformer
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.pipeline import make_pipeline, make_union
from sklearn.preprocessing import OneHotEncoder

from skdp.decision_list import DPDecisionListClassifier
from skdp.preprocessing import PublicBoundsBinarizer

# Public schema: the category lists come from the product's documentation (the tariffs
# on offer), the tenure range from the contract terms. Nothing here is read off rows.
CONTRACTS = ["month-to-month", "one_year", "two_year"]
PAYMENTS = ["electronic_check", "mailed_check", "bank_transfer", "credit_card"]
TENURE_BOUNDS = [(0.0, 72.0)]


def _encoder(**kw):
    return OneHotEncoder(categories=[CONTRACTS, PAYMENTS], handle_unknown="ignore",
                         sparse_output=False, **kw)


def _pipeline(epsilon, seed):
    features = ColumnTransformer([
        ("categories", _encoder(), ["contract", "payment"]),
        ("tenure", PublicBoundsBinarizer(bounds=TENURE_BOUNDS, n_thresholds=3), ["tenure"]),
    ])
    return make_pipeline(features, DPDecisionListClassifier(
        epsilon=epsilon, classes=[0, 1], random_state=seed))


def _churn(rng, n, contracts=CONTRACTS):
    """Churn is decided by the contract (month-to-month churns) with 5 % label noise."""
    frame = pd.DataFrame({
        "contract": rng.choice(contracts, n),
        "payment": rng.choice(PAYMENTS, n),
        "tenure": rng.integers(0, 73, n).astype(float),
    })
    y = (frame["contract"] == "month-to-month").to_numpy().astype(int)
    flip = rng.random(n) < 0.05
    return frame, np.where(flip, 1 - y, y)


def test_pipeline_with_public_categories_learns_the_category_rule():
    rng = np.random.default_rng(0)
    X, y = _churn(rng, 3000)
    X_test, y_test = _churn(rng, 2000)
    model = _pipeline(epsilon=4.0, seed=0).fit(X, y)
    # the rule "contract = month-to-month → churn" is the whole signal (95 % ceiling)
    assert model.score(X_test, y_test) >= 0.9


def test_fitted_encoder_is_the_same_whether_or_not_a_category_occurs():
    """Neighbouring tables, one without any two-year contract: same encoder, same columns."""
    rng = np.random.default_rng(1)
    with_all, _ = _churn(rng, 200)
    without, _ = _churn(rng, 200, contracts=CONTRACTS[:2])
    a = _encoder().fit(with_all[["contract", "payment"]])
    b = _encoder().fit(without[["contract", "payment"]])
    assert [list(c) for c in a.categories_] == [list(c) for c in b.categories_]
    assert list(a.get_feature_names_out()) == list(b.get_feature_names_out())
    probe = with_all[["contract", "payment"]]
    np.testing.assert_array_equal(a.transform(probe), b.transform(probe))


@settings(max_examples=40, deadline=None, derandomize=True)
@given(rows=st.lists(st.tuples(st.sampled_from(CONTRACTS), st.sampled_from(PAYMENTS)),
                     min_size=1, max_size=30))
def test_public_categories_are_all_that_is_fitted(rows):
    """Whatever subset of the categories the rows hold, the fitted state is the public list."""
    frame = pd.DataFrame(rows, columns=["contract", "payment"])
    enc = _encoder().fit(frame)
    assert [list(c) for c in enc.categories_] == [CONTRACTS, PAYMENTS]
    assert enc.transform(frame).shape == (len(rows), len(CONTRACTS) + len(PAYMENTS))


def test_unknown_category_is_an_all_zero_row_and_not_echoed():
    """A value outside the public list (a typo, a new tariff) maps to zeros at fit and at
    predict; the pipeline neither fails nor prints it."""
    rng = np.random.default_rng(2)
    X, y = _churn(rng, 400)
    X.loc[X.index[:5], "contract"] = "SECRET-tariff-for-one-customer"
    model = _pipeline(epsilon=1.0, seed=1).fit(X, y)
    encoded = model[0].named_transformers_["categories"].transform(X[["contract", "payment"]])
    assert not encoded[:5, :len(CONTRACTS)].any()
    assert model.predict(X.iloc[:5]).shape == (5,)


def test_auto_categories_release_the_category_set():
    """The leak the docs list: ``categories="auto"`` stores the set of values present, so
    one customer's rare tariff appears in the released pipeline (and in its width)."""
    rng = np.random.default_rng(3)
    X, _ = _churn(rng, 100, contracts=CONTRACTS[:2])
    neighbour = X.copy()
    neighbour.loc[neighbour.index[0], "contract"] = "two_year"
    auto = OneHotEncoder(sparse_output=False)
    widths = {auto.fit(frame[["contract"]]).transform(frame[["contract"]]).shape[1]
              for frame in (X, neighbour)}
    assert widths == {2, 3}
    assert "two_year" in OneHotEncoder().fit(neighbour[["contract"]]).categories_[0]


def test_min_frequency_releases_which_categories_are_rare():
    """``min_frequency`` / ``max_categories`` group categories by their counts in the rows."""
    frame = pd.DataFrame({"contract": ["month-to-month"] * 10 + ["one_year"] * 2
                          + ["two_year"] * 3})
    neighbour = frame.copy()
    neighbour.loc[0, "contract"] = "one_year"  # one row changed: one_year reaches 3
    grouped = [_encoder_one(min_frequency=3).fit(f).infrequent_categories_[0]
               for f in (frame, neighbour)]
    assert list(grouped[0]) == ["one_year"] and grouped[1] is None


def _encoder_one(**kw):
    return OneHotEncoder(categories=[CONTRACTS], handle_unknown="infrequent_if_exist",
                         sparse_output=False, **kw)


def test_handle_unknown_error_prints_the_value():
    """Why the docs say ``handle_unknown="ignore"``: sklearn's "error" echoes the row's value."""
    frame = pd.DataFrame({"contract": ["SECRET-tariff"]})
    with pytest.raises(ValueError, match="SECRET-tariff"):
        OneHotEncoder(categories=[CONTRACTS]).fit(frame)


# ----------------------------------------------------------------- missing values
def _public_fill(fill_value):
    """The documented recipe: a public constant, every column kept, a flag per column."""
    return make_union(
        SimpleImputer(strategy="constant", fill_value=fill_value, keep_empty_features=True),
        MissingIndicator(features="all"),
    )


def _neighbours_with_an_all_missing_column():
    """Two tables one row apart; in the second, column 1 is missing in every row."""
    X = np.array([[1.0, 20.0, 3.0], [4.0, np.nan, np.nan], [7.0, np.nan, 9.0]])
    neighbour = X.copy()
    neighbour[0, 1] = np.nan
    return X, neighbour


def test_public_fill_has_the_same_shape_and_state_on_neighbours():
    X, neighbour = _neighbours_with_an_all_missing_column()
    a, b = _public_fill(0.0).fit(X), _public_fill(0.0).fit(neighbour)
    probe = np.array([[5.0, np.nan, 1.0]])
    np.testing.assert_array_equal(a.transform(probe), b.transform(probe))
    assert a.transform(X).shape == b.transform(neighbour).shape == (3, 6)


def test_constant_fill_without_keep_empty_features_drops_a_column_the_rows_chose():
    X, neighbour = _neighbours_with_an_all_missing_column()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Skipping features", UserWarning)
        widths = {SimpleImputer(strategy="constant", fill_value=0.0).fit_transform(f).shape[1]
                  for f in (X, neighbour)}
    assert widths == {2, 3}


def test_add_indicator_and_missing_only_release_which_columns_had_missing_values():
    X = np.array([[1.0, 2.0], [np.nan, 4.0]])
    neighbour = np.array([[1.0, np.nan], [np.nan, 4.0]])
    assert [MissingIndicator().fit(f).features_.tolist() for f in (X, neighbour)] == [
        [0], [0, 1]]
    widths = {SimpleImputer(strategy="constant", fill_value=0.0, add_indicator=True)
              .fit_transform(f).shape[1] for f in (X, neighbour)}
    assert widths == {3, 4}


def test_median_fill_releases_a_median_of_the_rows():
    X = np.array([[1.0], [2.0], [np.nan], [10.0]])
    neighbour = X.copy()
    neighbour[0, 0] = 50.0  # one row changed
    medians = [SimpleImputer(strategy="median").fit(f).statistics_[0] for f in (X, neighbour)]
    assert medians == [2.0, 10.0]


def test_pipeline_with_public_fill_learns_with_missing_values():
    """NaN in a numeric column: public fill + flag → binarizer → private list."""
    rng = np.random.default_rng(4)
    X, y = _churn(rng, 3000)
    X_test, y_test = _churn(rng, 1000)
    for frame in (X, X_test):
        frame.loc[rng.random(len(frame)) < 0.2, "tenure"] = np.nan
    features = ColumnTransformer([
        ("categories", _encoder(), ["contract", "payment"]),
        ("tenure", make_pipeline(
            _public_fill(0.0),
            PublicBoundsBinarizer(bounds=[TENURE_BOUNDS[0], (0.0, 1.0)], n_thresholds=3),
        ), ["tenure"]),
    ])
    model = make_pipeline(features, DPDecisionListClassifier(
        epsilon=4.0, classes=[0, 1], random_state=2)).fit(X, y)
    assert model.score(X_test, y_test) >= 0.9


def test_the_tabular_guide_code_runs():
    """docs/user_guide/tabular.rst's code blocks, in order, on a churn-like frame."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "user_guide" / "tabular.rst"
            ).read_text(encoding="utf-8")
    blocks = re.findall(r"\.\. code-block:: python\n\n((?:   .*\n|\n)+)", text)
    assert len(blocks) == 3
    rng = np.random.default_rng(5)
    X, y = _churn(rng, 500)
    frame = X.rename(columns={"payment": "payment_method"})
    frame["monthly_charges"] = np.where(rng.random(500) < 0.1, np.nan, 60.0)
    frame["total_charges"] = frame["tenure"] * 60.0
    namespace = {"frame": frame, "y": y}
    for block in blocks:
        code = "\n".join(line[3:] for line in block.splitlines())
        exec(compile(code, "docs/user_guide/tabular.rst", "exec"), namespace)
    assert namespace["model"].predict(frame).shape == (500,)
    filled = namespace["charges"].fit_transform(frame[namespace["MAY_BE_MISSING"]])
    assert filled.shape[0] == 500 and not np.isnan(filled).any()
