"""scikit-learn's input validation, with errors that never print a data value.

scikit-learn's ``validate_data`` lets numpy's conversion errors through — ``could not
convert string to float: 'alice@example.com'`` — and prints the whole array it refuses
for 1-d, scalar and complex input (``Expected 2D array, got 1D array instead:
array=[...]``). Error messages end up in logs, notebooks and bug reports, where a value
of X or y is released with no privacy at all. Every skdp estimator validates its input
through :func:`validate_data` (and sample weights through :func:`check_sample_weight`)
here, which keep scikit-learn's checks and its messages that quote no data (shapes,
feature counts, NaN/inf, feature names), and replace every other error by one that says
what is wrong — which column of X holds a non-number, that X is 1-d or complex — without
the value. The replacement is raised outside the ``except`` block, so the original
message is neither the ``__cause__`` nor the ``__context__`` of the error the user sees.

Validation comes first in every ``fit``, ``partial_fit`` and ``predict``, so an input
refused here has spent no privacy.

Missing values (NaN in X) get skdp's own message, written once here for every estimator:
scikit-learn's suggests ``SimpleImputer``/``HistGradientBoostingClassifier``, whose fill
values or bins are statistics of the private rows. It names the free fix instead, a
:class:`~skdp.preprocessing.PublicImputer` with the user's fill values, and an
estimator's own alternative when it has one (its class attribute
``_missing_values_alternative``, e.g. the decision list's ``bounds=`` mode, which reads NaN
as information).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn import get_config
from sklearn.utils.validation import _check_sample_weight
from sklearn.utils.validation import validate_data as _sklearn_validate_data

__all__ = ["check_sample_weight", "missing_values_error", "validate_data"]

#: scikit-learn / numpy messages (of the whole exception chain) that are passed through:
#: they quote shapes, counts, dtypes, estimator and feature names — never a value. Every
#: other message is replaced (a new scikit-learn message gets a generic one until it is
#: checked and added here).
_SAFE_MESSAGES = tuple(re.compile(p, re.DOTALL) for p in (
    r"Input (\w+ )?contains (NaN|infinity or a value too large for dtype\('\w+'\))\.?"
    r"(\n[^\n]*does not accept missing values encoded as NaN natively.*)?",
    r"X has \d+ features, but \w+ is expecting \d+ features as input\.",
    r"Found input variables with inconsistent numbers of samples: \[[\d, ]*\]",
    r"Found array with \d+ (sample|feature)\(s\) \(shape=\([\d, ]*\)\) while a minimum "
    r"of \d+ is required( by \w+)?\.",
    r"Found array with dim \d+, while dim <= 2 is required( by \w+)?\.",
    r"Expected 2D input, got input with shape \([\d, ]*\)\.\nReshape your data [^\n]*",
    r"Expected a 2-dimensional container but got <class '[\w.]+'> instead\. Pass a "
    r"DataFrame containing a single row \(i\.e\. single sample\) or a single column "
    r"\(i\.e\. single feature\) instead\.",
    r"dtype='numeric' is not compatible with arrays of bytes/strings\.Convert your data "
    r"to numeric values explicitly instead\.",
    r"Sparse data was passed( for \w+)?, but dense data is required\. Use '\.toarray\(\)' "
    r"to convert to a dense numpy array\.",
    r"y should be a 1d array, got an array of shape \([\d, ]*\) instead\.",
    r"(This )?\w+ (estimator )?requires y to be passed, but the target y is None\.?",
    r"np\.matrix is not supported\. [^\n]*",
    r"setting an array element with a sequence\.( The requested array has an "
    r"inhomogeneous shape after \d+ dimensions\. The detected shape was \([\d, ]*\) \+ "
    r"inhomogeneous part\.)?",
    r"Expected sequence or array-like, got <class '[\w.]+'>",
    r"Sample weights must contain at least one non-zero number\.",
    r"Negative values in data passed to `?sample_weight`?\.",
    r"sample_weight\.shape == \([\d, ]*\), expected \([\d, ]*\)!",
    r"Sample weights must be 1D array or scalar, got \d+D array\. [^\n]*",
))

#: scikit-learn's NaN-in-X message (from ``_assert_all_finite``), replaced by
#: :func:`missing_values_error`
_NAN_IN_X = re.compile(r"Input X contains NaN\.")

#: appended to every replaced message
_NOT_SHOWN = "(the value is not shown: it may be private data)"
_RESHAPE = ("Reshape your data either using array.reshape(-1, 1) if your data has a single "
            "feature or array.reshape(1, -1) if it contains a single sample.")


def validate_data(estimator: Any, X: Any = "no_validation", y: Any = "no_validation",
                  **kwargs: Any) -> Any:
    """:func:`sklearn.utils.validation.validate_data`, with errors that print no value.

    Same arguments and return value. A ``ValueError``/``TypeError`` whose message (or a
    chained one) could quote the data is replaced by one of the same type that names
    the problem (a column of X, its shape, complex numbers) but no value.
    """
    fast = _plain_arrays(estimator, X, y, kwargs)
    if fast is not None:
        return fast
    name = type(estimator).__name__
    try:
        out = _sklearn_validate_data(estimator, X, y, **kwargs)
    except (TypeError, ValueError, OverflowError) as exc:
        error = _replacement(exc, name, {"X": X, "y": y})
        if error is None and _NAN_IN_X.match(str(exc)):
            error = missing_values_error(estimator)
        if error is None:
            raise
    else:
        validated = out[0] if isinstance(out, tuple) else out
        if not (isinstance(validated, np.ndarray) and validated.dtype == object
                and _numeric(kwargs.get("dtype", "numeric"))):
            return out
        # dtype="numeric" keeps a list of rows holding objects as an object array (numpy
        # makes one; scikit-learn converts only arrays that already had dtype object):
        # refuse a non-number here rather than in the estimator's arithmetic
        error = _diagnose(X, "X", name)
        if error is None:  # all numbers after all: validate them as floats
            return validate_data(estimator, validated.astype(np.float64), y, **kwargs)
    # raised here, outside the except block, so the original is not even its __context__
    raise error


#: ``validate_data`` options :func:`_plain_arrays` handles, with the values it handles
#: (any value for the first group); any other option goes through scikit-learn.
#: (options of both check_array and check_X_y; ``y_numeric``/``multi_output`` with y only)
_FAST_ANY = frozenset({"reset", "accept_sparse", "accept_large_sparse", "ensure_all_finite",
                       "ensure_min_samples", "ensure_min_features", "dtype"})
_FAST_DEFAULT = {"order": None, "copy": False, "ensure_2d": True, "allow_nd": False,
                 "force_writeable": False}
_FAST_Y_DEFAULT = {"y_numeric": False, "multi_output": False}


def _plain_arrays(estimator: Any, X: Any, y: Any, kwargs: dict[str, Any]) -> Any:
    """scikit-learn's result for plain numeric numpy input that passes every check, or
    None (then scikit-learn validates: it raises and warns exactly as it would).

    A prediction or a stream's call validates a block of ~1,000 rows in ~0.35 ms through
    scikit-learn (feature-name detection through narwhals, tags, array-API dispatch) —
    as much as ``SGDClassifier.partial_fit`` spends on the whole block. Here: a 2-d
    ``numpy.ndarray`` (not a subclass) of a real dtype kept as it is (``dtype="numeric"``
    or its own dtype), finite (or NaN-only where NaN is allowed), enough rows and
    features, the fitted feature count if ``reset=False``, no fitted feature names to
    warn about; y, if given, a 1-d numeric or string ndarray of the same length, finite.
    The side effects are scikit-learn's (``n_features_in_`` set and
    ``feature_names_in_`` removed on ``reset``); the arrays are returned as scikit-learn
    returns them (X itself; y as a C-contiguous 1-d array). Equality with scikit-learn's
    path is tested in tests/test_input_fast_path.py.
    """
    if type(X) is not np.ndarray or X.ndim != 2 or X.dtype.kind not in "iuf" \
            or X.dtype.byteorder == ">":
        return None
    no_y = isinstance(y, str) and y == "no_validation"
    defaults = _FAST_DEFAULT if no_y else {**_FAST_DEFAULT, **_FAST_Y_DEFAULT}
    for key, value in kwargs.items():
        if key not in _FAST_ANY and (key not in defaults or value is not defaults[key]):
            return None
    dtype = kwargs.get("dtype", "numeric")
    if not ((isinstance(dtype, str) and dtype == "numeric")
            or (isinstance(dtype, type | np.dtype) and np.dtype(dtype) == X.dtype)):
        return None
    if not no_y and (type(y) is not np.ndarray or y.ndim != 1 or y.dtype.kind not in "biufU"
                     or y.shape[0] != X.shape[0]):
        return None
    if X.shape[0] < kwargs.get("ensure_min_samples", 1) \
            or X.shape[1] < kwargs.get("ensure_min_features", 1):
        return None
    reset = kwargs.get("reset", True)
    if not reset and (hasattr(estimator, "feature_names_in_") or getattr(
            estimator, "n_features_in_", X.shape[1]) != X.shape[1]):
        return None
    config = get_config()
    if config.get("array_api_dispatch", False):
        return None
    finite = kwargs.get("ensure_all_finite", True)
    if not (finite is True or finite is False
            or (isinstance(finite, str) and finite == "allow-nan")):
        return None
    with np.errstate(over="ignore", invalid="ignore"):  # a sum of finite values may overflow
        if X.dtype.kind == "f" and not config.get("assume_finite", False):
            if finite is True and not np.isfinite(X.sum()):
                return None
            if finite == "allow-nan" and np.isinf(X).any():
                return None
        if not no_y and y.dtype.kind == "f" and not np.isfinite(y.sum()):
            return None
    if reset:
        if hasattr(estimator, "feature_names_in_"):
            delattr(estimator, "feature_names_in_")
        estimator.n_features_in_ = X.shape[1]
    if no_y:
        return X
    return X, np.ascontiguousarray(y)


def missing_values_error(estimator: Any) -> ValueError:
    """The error for NaN in X where ``estimator`` (as configured) reads none: the fix that
    costs no privacy, and why the usual imputers are not it. Quotes no value (nor where the
    NaN are, nor how many)."""
    name = type(estimator).__name__
    alternative = getattr(estimator, "_missing_values_alternative", "")
    return ValueError(
        f"{name}: Input X contains NaN (missing values), which it cannot read as "
        "configured. Fill them with public values first, e.g. make_pipeline("
        f"skdp.preprocessing.PublicImputer(fill_value=...), {name}(...)): fill values you "
        f"choose cost no privacy.{' ' + alternative if alternative else ''} Do not use "
        "SimpleImputer(strategy='mean'/'median'/'most_frequent'), KNNImputer or "
        "IterativeImputer: their fill values are statistics of the private rows, released "
        "unprotected inside the fitted pipeline.")


def check_sample_weight(estimator: Any, sample_weight: Any, X: Any, **kwargs: Any) -> Any:
    """scikit-learn's ``_check_sample_weight(sample_weight, X, **kwargs)``, with errors
    that print no weight (see :func:`validate_data`)."""
    try:
        return _check_sample_weight(sample_weight, X, **kwargs)
    except (TypeError, ValueError, OverflowError) as exc:
        error = _replacement(exc, type(estimator).__name__, {"sample_weight": sample_weight})
        if error is None:
            raise
    raise error


def _numeric(dtype: Any) -> bool:
    """``dtype`` asks for numbers: "numeric", a numeric dtype or a list of them."""
    if isinstance(dtype, str) and dtype == "numeric":
        return True
    if isinstance(dtype, list | tuple):
        return any(_numeric(d) for d in dtype)
    return dtype is not None and np.dtype(dtype).kind in "biufc"


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and every exception reachable through ``__cause__`` and ``__context__``
    (a suppressed context is not printed, but a logger or debugger can still read it)."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is not None and not any(e is s for s in seen):
            seen.append(e)
            todo += [e.__cause__, e.__context__]
    return seen


def _is_safe(exc: BaseException) -> bool:
    """Every message of the chain is one scikit-learn writes without quoting a value."""
    return all(isinstance(e, Warning) or any(p.fullmatch(str(e)) for p in _SAFE_MESSAGES)
               for e in _chain(exc))


def _replacement(exc: BaseException, name: str, inputs: dict[str, Any]) -> Exception | None:
    """The error to raise instead of ``exc``, or None to raise ``exc`` itself.

    What is wrong with the inputs comes first (which column holds a non-number, a 1-d or
    complex X: clearer than scikit-learn's messages, and without a value); then
    scikit-learn's own message if it quotes no value; else a generic message.
    """
    inputs = {k: v for k, v in inputs.items()
              if not (isinstance(v, str) and v == "no_validation")}
    for what, value in inputs.items():
        found = _diagnose(value, what, name)
        if found is not None:
            return found
    if _is_safe(exc):
        return None
    cls = TypeError if isinstance(exc, TypeError) else ValueError
    return cls(f"{name}: {' or '.join(inputs)} is not valid input; scikit-learn's message "
               f"({type(exc).__name__}) is not shown because it may quote a value of the "
               "data.")


def _diagnose(value: Any, what: str, name: str) -> Exception | None:
    """An error naming what is wrong with ``value`` (X, y or sample_weight) without a
    value of it, or None if nothing here explains the failure. Labels (y) may be strings,
    so only their shape and complex numbers are checked."""
    if value is None:
        return None
    if sp.issparse(value):
        return _complex(what, name) if np.issubdtype(value.dtype, np.complexfloating) else None
    if what != "y" and getattr(value, "columns", None) is not None and hasattr(value, "iloc"):
        # a DataFrame: column by column, without converting it whole
        return _first_bad_column([value.iloc[:, j] for j in range(value.shape[1])], what, name)
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):  # ragged: nothing more specific to say than numpy
        return None
    if np.iscomplexobj(arr):
        return _complex(what, name)
    if what == "X" and arr.ndim < 2:
        got = "a scalar" if arr.ndim == 0 else f"a 1-d array of shape {arr.shape}"
        return ValueError(f"{name}: Expected 2D array, got {got} instead {_NOT_SHOWN}. "
                          f"{_RESHAPE}")
    if what != "X" and arr.ndim == 0:
        return ValueError(f"{name}: {what} must be a 1-d array, got a scalar {_NOT_SHOWN}.")
    if what == "y" or arr.ndim > 2:
        return None
    return _first_bad_column([arr] if arr.ndim == 1 else list(arr.T), what, name)


def _complex(what: str, name: str) -> ValueError:
    return ValueError(f"{name}: Complex data not supported: {what} holds complex numbers; "
                      f"real numbers are needed {_NOT_SHOWN}.")


def _first_bad_column(columns: list[Any], what: str, name: str) -> Exception | None:
    """An error for the first column that is not all real numbers (its index only)."""
    hint = " Encode non-numeric features as numbers first." if what == "X" else ""
    for j, column in enumerate(columns):
        where = f"column {j} of {what}" if len(columns) > 1 or what == "X" else what
        if np.iscomplexobj(column):
            return _complex(where, name)
        try:
            if hasattr(column, "to_numpy"):  # pandas: missing values (pd.NA) are NaN here
                column.to_numpy(dtype=np.float64, na_value=np.nan)
            else:
                np.asarray(column, dtype=np.float64)
        except TypeError:
            return TypeError(
                f"{name}: {where} holds an object that is not a real number (a float() "
                f"argument must be a string or a real number) {_NOT_SHOWN}.{hint}")
        except (ValueError, OverflowError):
            return ValueError(
                f"{name}: {where} holds a value that is not a real number (a string, bytes "
                f"or a number too large for a float) {_NOT_SHOWN}.{hint}")
    return None
