"""skdp._input.validate_data's shortcut for plain numpy arrays behaves exactly as
scikit-learn's validation: same arrays, same errors and warnings, same attributes."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import config_context
from sklearn.base import BaseEstimator

import skdp._input as _input
from skdp._input import validate_data


class _Est(BaseEstimator):
    pass


def _run(fast, state, X, y, kwargs):
    """(result or exception, warnings, estimator attributes) of one validation."""
    est = _Est()
    est.__dict__.update(state)
    with pytest.MonkeyPatch.context() as m:
        if not fast:
            m.setattr(_input, "_plain_arrays", lambda *a: None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out = validate_data(est, X, y, **kwargs)
            except (ValueError, TypeError) as exc:
                out = exc
    return out, [(w.category, str(w.message)) for w in caught], est.__dict__


def _same(a, b):
    if isinstance(a, Exception) or isinstance(b, Exception):
        return type(a) is type(b) and str(a) == str(b)
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(_same, a, b))
    return (type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape
            and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
            and a.flags.c_contiguous == b.flags.c_contiguous)


def _check(state, X, y="no_validation", **kwargs):
    fast = _run(True, state, X, y, kwargs)
    slow = _run(False, state, X, y, kwargs)
    assert _same(fast[0], slow[0])
    assert fast[1] == slow[1]
    assert fast[2].keys() == slow[2].keys()
    assert {k: v for k, v in fast[2].items() if k != "feature_names_in_"} == \
        {k: v for k, v in slow[2].items() if k != "feature_names_in_"}
    return fast[0]


_DTYPES = (np.float64, np.float32, np.int64, np.uint8, np.bool_)
_SPECIAL = (0.0, np.nan, np.inf, -np.inf, 1e308)


@settings(max_examples=150, deadline=None)
@given(rows=st.integers(0, 4), cols=st.integers(0, 4), dtype=st.sampled_from(_DTYPES),
       special=st.sampled_from(_SPECIAL), reset=st.booleans(),
       fitted=st.sampled_from([None, 0, 2, 3]), names=st.booleans(),
       finite=st.sampled_from([True, False, "allow-nan"]),
       want=st.sampled_from(["numeric", np.float64, None, [np.float64, np.float32]]),
       min_samples=st.integers(0, 2), with_y=st.sampled_from(["no", "int", "float", "str",
                                                              "short", "2d", "nan"]),
       extra=st.sampled_from([{}, {"copy": True}, {"order": "F"}, {"ensure_2d": True},
                              {"accept_sparse": "csr"}, {"y_numeric": True},
                              {"y_numeric": False}, {"ensure_non_negative": False}]))
def test_plain_arrays_match_scikit_learn(rows, cols, dtype, special, reset,
                                         fitted, names, finite, want, min_samples, with_y,
                                         extra):
    rng = np.random.default_rng(rows * 7 + cols)
    X = (rng.normal(size=(rows, cols)) * 3).astype(dtype)
    if rows and cols and X.dtype.kind == "f":
        if dtype is np.float32 and special == 1e308:
            special = 3e38
        X[0] = special  # a row of 1e308: the sum overflows, the values are finite
    y = {"no": "no_validation", "int": rng.integers(0, 2, rows),
         "float": rng.normal(size=rows), "str": np.array(["a", "b"] * 3)[:rows],
         "short": np.arange(max(rows - 1, 0)), "2d": np.zeros((rows, 1)),
         "nan": np.full(rows, np.nan)}[with_y]
    state = {} if fitted is None else {"n_features_in_": fitted}
    if names:
        state["feature_names_in_"] = np.array(["a", "b", "c"], dtype=object)
    kwargs = dict(reset=reset, ensure_all_finite=finite, ensure_min_samples=min_samples,
                  **extra)
    if want is not None:
        kwargs["dtype"] = want
    _check(state, X, y, **kwargs)


def test_shortcut_taken_and_result_is_the_input(monkeypatch):
    X = np.random.default_rng(0).normal(size=(50, 3))
    y = np.arange(50) % 2
    est = _Est()
    taken = []
    real = _input._plain_arrays
    monkeypatch.setattr(_input, "_plain_arrays", lambda *a: taken.append(1) or real(*a))
    Xv, yv = validate_data(est, X, y)
    assert taken and Xv is X and np.shares_memory(yv, y) and est.n_features_in_ == 3
    assert validate_data(est, X, reset=False) is X


def test_views_subclasses_and_config():
    X = np.arange(24, dtype=float).reshape(6, 4)
    for view in (X[::2], X[:, ::2], X.T, np.asfortranarray(X), X.astype(">f8")):
        _check({}, view)
    _check({}, np.ma.masked_array(X))
    _check({}, X, np.arange(12)[::2])
    bad = X.copy()
    bad[0, 0] = np.nan
    with config_context(assume_finite=True):
        assert _check({}, bad) is bad


@pytest.mark.parametrize("finite", [np.True_, 1, "allow-inf"])
def test_unusual_option_values_go_through_scikit_learn(finite):
    X = np.ones((3, 2))
    X[0, 0] = np.nan
    _check({}, X, ensure_all_finite=finite)
