"""No data value in any message: bad X or y is refused, before any privacy is spent, by an
error that names what is wrong (a column, a shape, a rule) and never prints a cell of X or a
label of y — not in the message, not in a chained ``__cause__``/``__context__``, not in a
warning.

Issue 26, item 8: a string cell of X was echoed verbatim by all 11 private estimators
(numpy's ``could not convert string to float: 'alice@example.com'``, passed through
scikit-learn's ``validate_data``). scikit-learn also prints the whole array for 1-d, scalar
and complex X. Error messages end up in logs, notebooks and bug reports: a value printed
there is released with no privacy at all.

Every estimator exported by :mod:`skdp` (private or not: a pipeline's transformer sees the
same private rows) and the transformers of :mod:`skdp.preprocessing` are covered; the
secrets are drawn by hypothesis (str, bytes, an object whose ``str``/``repr`` is the secret,
in an ndarray, a list of rows or a DataFrame; labels in y with and without public
``classes``).
"""

import inspect
import re
import traceback
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import BaseEstimator

import skdp
import skdp.preprocessing
from skdp.accounting import PrivacyBudget
from skdp.hypotheses.littlestone import threshold_class

N, D, N_DOMAIN = 40, 3, 8
CLASS = threshold_class(N_DOMAIN)
#: every drawn secret contains this token, so an echo of any part that holds it is caught
#: whatever escaping (repr, bytes repr) the message applied around it
MARK = "SeCrEt"

# name -> (kind of valid X, constructor keyword arguments); "domain" X is one column of
# integer indices in [0, N_DOMAIN), "binary" 0/1, "unit" [-1, 1], "real" [0, 1]
CASES = {
    "AdaptivePrivateOnlineClassifier": (
        "domain", dict(epsilon=2.0, n_sequences=64, hypothesis_class=CLASS)),
    "BatchSanitizedOnlineClassifier": ("domain", dict(epsilon=2.0, hypothesis_class=CLASS)),
    "ConfidentWinnowClassifier": ("unit", {}),
    "ConjunctionFeatures": ("binary", {}),
    "ContinualReleaseClassifier": ("binary", dict(epsilon=5.0)),
    "DPDecisionListClassifier": ("binary", dict(epsilon=5.0)),
    "DPSOAClassifier": ("domain", dict(epsilon=2.0, n_trees=20, hypothesis_class=CLASS)),
    "DPWinnowClassifier": ("unit", {}),
    "DecisionStumpPERPClassifier": ("real", {}),
    "GreedyDecisionListClassifier": ("binary", {}),
    "OnlineDecisionListClassifier": ("binary", {}),
    "PrivateExpertsClassifier": ("domain", dict(epsilon=4.0, experts=CLASS, n_rounds=16)),
    "PrivatePredictor": ("real", {}),
    "PublicBoundsBinarizer": ("real", dict(bounds=(0.0, 1.0), n_thresholds=2)),
    "PublicBoundsClipper": ("real", dict(lower=0.0, upper=1.0)),
    "PublicImputer": ("real", dict(fill_value=0.5)),
    "RectanglesPERPClassifier": ("real", {}),
    "SOAClassifier": ("domain", dict(hypothesis_class=CLASS)),
    "SubsampleAggregatePredictor": ("real", dict(epsilon=50.0, n_queries=1000)),
    "WinnowClassifier": ("unit", {}),
}
NAMES = sorted(CASES)


def _class(name):
    return getattr(skdp, name, None) or getattr(skdp.preprocessing, name)


def _params(name):
    return inspect.signature(_class(name)).parameters


def _is_classifier(name):
    return "predict" in dir(_class(name))


PRIVATE = [n for n in NAMES if "budget" in _params(n)]
CLASSIFIERS = [n for n in NAMES if _is_classifier(n)]
WITH_CLASSES = [n for n in NAMES if "classes" in _params(n)]
# (name, method): "later" is a partial_fit after a valid first partial_fit
METHODS = [(n, m) for n in NAMES for m in ("fit", "partial_fit", "later", "predict")
           if m != "later" or hasattr(_class(n), "partial_fit")
           if m != "partial_fit" or hasattr(_class(n), "partial_fit")]


def test_every_exported_estimator_is_covered():
    exported = {name for name in skdp.__all__
                if inspect.isclass(obj := getattr(skdp, name)) and issubclass(obj, BaseEstimator)}
    exported |= set(skdp.preprocessing.__all__)
    assert exported == set(CASES)


# ------------------------------------------------------------------------ helpers
def _valid(kind, n=N):
    rng = np.random.default_rng(0)
    if kind == "domain":
        X = rng.integers(0, N_DOMAIN, size=(n, 1)).astype(float)
    elif kind == "binary":
        X = rng.integers(0, 2, size=(n, D)).astype(float)
    elif kind == "unit":
        X = rng.uniform(-1, 1, size=(n, D))
    else:
        X = rng.uniform(0, 1, size=(n, D))
    threshold = {"domain": N_DOMAIN // 2, "unit": 0.0}.get(kind, 0.5)
    y = (X[:, 0] >= threshold).astype(int)
    y[:2] = [0, 1]  # both classes always present
    return X, y


class _Secret:
    """A cell whose str() and repr() are the secret (and that is not a number)."""

    def __init__(self, text):
        self.text = text

    def __str__(self):
        return self.text

    def __repr__(self):
        return self.text

    def __format__(self, spec):
        return self.text


def _budget():
    return PrivacyBudget(1e6, 0.5)


def _make(name, **kw):
    params = CASES[name][1]
    if name in PRIVATE:
        kw.setdefault("budget", _budget())
    return _class(name)(**{**params, **kw})


def _fit(est, X, y):
    """fit (transformers ignore y)."""
    return est.fit(X) if not _is_classifier(type(est).__name__) else est.fit(X, y)


def _spent(est):
    """Everything est could have charged: its budget and its own ledger budget_."""
    budgets = [getattr(est, "budget", None), getattr(est, "budget_", None)]
    return [b.spent for b in budgets if isinstance(b, PrivacyBudget)]


def _texts(call):
    """(the raised exception or None, every text the call produced: the full formatted
    traceback — which holds every chained __cause__/__context__ and note — and warnings)."""
    raised = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
        except Exception as exc:  # whatever is raised must be silent
            raised = exc
    texts = [str(w.message) for w in caught]
    if raised is not None:
        texts.append("".join(traceback.format_exception(raised)))
        # a suppressed context (raise ... from None) is not printed, but it is kept on the
        # exception for any logger or debugger to format: walk it too
        todo, seen = [raised], []
        while todo:
            exc = todo.pop()
            if exc is None or any(exc is s for s in seen):
                continue
            seen.append(exc)
            texts += [str(exc), repr(exc.args)]
            todo += [exc.__cause__, exc.__context__]
    return raised, texts


def _assert_silent(texts, forms):
    for text in texts:
        for form in forms:
            assert form not in text, (form, text)


def _forms(secret):
    """Strings a message could print the secret as."""
    if isinstance(secret, int | np.integer):
        return {str(int(secret))}
    text = secret.decode() if isinstance(secret, bytes) else str(secret)
    return {MARK, text, repr(text)[1:-1], repr(secret)}


_FITTED = {}


def _fitted(name, method):
    """A fitted estimator (with a budget when private) to call ``method`` on next."""
    X, y = _valid(CASES[name][0])
    est = _make(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "later":
            est.partial_fit(X, y, classes=[0, 1])
        else:
            _fit(est, X, y)
            if hasattr(est, "predict"):
                est.predict(X[:4])  # predictors start their mechanism on the first answers
    return est


def _call(name, method, X, y):
    """The call under test and the estimator it runs on."""
    if method in ("later", "predict"):
        # one fitted estimator per (name, method): bad input must leave it unchanged
        est = _FITTED.setdefault((name, method), _fitted(name, method))
    else:
        est = _make(name)
    if method == "fit":
        return est, lambda: _fit(est, X, y)
    if method == "partial_fit":
        return est, lambda: est.partial_fit(X, y, classes=[0, 1])
    if method == "later":
        return est, lambda: est.partial_fit(X, y)
    return est, (lambda: est.predict(X)) if hasattr(est, "predict") else (
        lambda: est.transform(X))


# ------------------------------------------------------------------------ strategies
_TEXT = st.text(max_size=12)  # any unicode but surrogates (text() excludes them)


@st.composite
def _secret_text(draw):
    return draw(_TEXT) + MARK + draw(_TEXT)


@st.composite
def _secret_cell(draw):
    text = draw(_secret_text())
    kind = draw(st.sampled_from(["str", "bytes", "object"]))
    if kind == "bytes":
        return text.encode("utf-8")
    return text if kind == "str" else _Secret(text)


def _with_cell(X, row, col, cell, container):
    """X with ``cell`` at (row, col), as an object ndarray, a list of rows or a DataFrame
    (its column ``col`` of object, pandas string or categorical dtype)."""
    obj = X.astype(object)
    obj[row, col] = cell
    if container == "list":
        return obj.tolist()
    if container.startswith("frame"):
        frame = pd.DataFrame(obj, columns=[f"f{j}" for j in range(X.shape[1])])
        dtype = {"frame-string": "string", "frame-category": "category"}.get(container)
        if dtype is not None:
            frame[f"f{col}"] = frame[f"f{col}"].astype(dtype)
        return frame
    return obj


# ------------------------------------------------------------------------ X
@pytest.mark.parametrize(("name", "method"), METHODS)
@settings(max_examples=20)
@given(data=st.data())
def test_secret_cell_of_X_is_never_printed(name, method, data):
    X, y = _valid(CASES[name][0])
    cell = data.draw(_secret_cell(), "cell")
    row = data.draw(st.integers(0, X.shape[0] - 1), "row")
    col = data.draw(st.integers(0, X.shape[1] - 1), "col")
    container = data.draw(st.sampled_from(["array", "list", "frame", "frame-string",
                                           "frame-category"]), "container")
    bad = _with_cell(X, row, col, cell, container)
    est, call = _call(name, method, bad, y)
    before = _spent(est)
    raised, texts = _texts(call)
    assert isinstance(raised, ValueError | TypeError), raised
    _assert_silent(texts, _forms(cell))
    # a clear error: it says which column holds the non-number
    assert re.search(rf"\bcolumn {col}\b", str(raised)), str(raised)
    assert _spent(est) == before


@pytest.mark.parametrize(("name", "method"), METHODS)
@settings(max_examples=10)
@given(secret=st.integers(100_000, 999_999), shape=st.sampled_from(["1-d", "scalar",
                                                                    "complex"]))
def test_whole_X_is_never_printed(name, method, secret, shape):
    # scikit-learn prints the array it refuses ("array=[...]", "Complex data not supported\n[...]")
    X, y = _valid(CASES[name][0])
    if shape == "1-d":
        bad, match = np.full(N, float(secret)), "Reshape your data"
    elif shape == "scalar":
        bad, match = float(secret), "Reshape your data"
    else:
        bad, match = X + 1j * secret, "Complex data not supported"
    est, call = _call(name, method, bad, y)
    before = _spent(est)
    raised, texts = _texts(call)
    assert isinstance(raised, ValueError), raised
    assert match in str(raised)
    _assert_silent(texts, _forms(secret))
    assert _spent(est) == before


# ------------------------------------------------------------------------ y
# fit with the public classes= parameter, the first partial_fit with classes=, a later one
Y_METHODS = [(n, m) for (n, m) in METHODS if n in CLASSIFIERS and m != "predict"
             if m != "fit" or n in WITH_CLASSES]


@st.composite
def _secret_label(draw):
    kind = draw(st.sampled_from(["cell", "int"]))
    return draw(_secret_cell()) if kind == "cell" else draw(st.integers(100_000, 999_999))


@pytest.mark.parametrize(("name", "method"), Y_METHODS)
@settings(max_examples=15)
@given(data=st.data())
def test_secret_label_outside_classes_is_never_printed(name, method, data):
    X, y = _valid(CASES[name][0])
    label = data.draw(_secret_label(), "label")
    bad = y.astype(object)
    bad[data.draw(st.integers(0, N - 1), "row")] = label
    if method == "fit":  # the public label set as the constructor parameter
        est = _make(name, classes=[0, 1])
        call = lambda: est.fit(X, bad)  # noqa: E731
    else:
        est, call = _call(name, method, X, bad)
    before = _spent(est)
    raised, texts = _texts(call)
    assert isinstance(raised, ValueError), raised
    _assert_silent(texts, _forms(label))
    assert _spent(est) == before


@pytest.mark.parametrize("name", CLASSIFIERS)
@settings(max_examples=10)
@given(data=st.data())
def test_secret_label_without_public_classes_is_never_printed(name, data):
    # the label set is read from y (with a PrivacyLeakWarning): a string among integer
    # labels is refused by scikit-learn's label checks, which must not print it either
    X, y = _valid(CASES[name][0])
    label = data.draw(_secret_cell(), "label")
    bad = y.astype(object)
    bad[data.draw(st.integers(0, N - 1), "row")] = label
    est = _make(name)
    before = _spent(est)
    raised, texts = _texts(lambda: est.fit(X, bad))
    _assert_silent(texts, _forms(label))
    if raised is not None:
        assert _spent(est) == before


# ------------------------------------------------------------------------ sample weights
WEIGHTED = [n for n in CLASSIFIERS if "sample_weight" in inspect.signature(
    _class(n).fit).parameters]


def test_weighted_estimators_are_found():
    assert set(WEIGHTED) == {"DPDecisionListClassifier", "GreedyDecisionListClassifier"}


@pytest.mark.parametrize("name", WEIGHTED)
@settings(max_examples=15)
@given(data=st.data())
def test_secret_sample_weight_is_never_printed(name, data):
    X, y = _valid(CASES[name][0])
    weight = data.draw(_secret_cell(), "weight")
    w = np.ones(N, dtype=object)
    w[data.draw(st.integers(0, N - 1), "row")] = weight
    est = _make(name, **({"classes": [0, 1]} if name in WITH_CLASSES else {}))
    before = _spent(est)
    raised, texts = _texts(lambda: est.fit(X, y, sample_weight=w))
    assert isinstance(raised, ValueError | TypeError), raised
    assert "sample_weight" in str(raised)
    _assert_silent(texts, _forms(weight))
    assert _spent(est) == before


# ------------------------------------------------------------------------ the wrapper
class _Unreadable:
    """Array-like whose conversion fails with a message quoting a secret: not a known
    scikit-learn message, so it must be replaced by the generic one."""

    def __len__(self):
        return N

    def __array__(self, *args, **kwargs):
        raise ValueError(f"row 3 is {MARK}-alice@example.com")


@pytest.mark.parametrize("name", ["DPWinnowClassifier", "PrivatePredictor",
                                  "DPDecisionListClassifier", "PublicBoundsClipper"])
def test_unknown_conversion_errors_get_a_generic_message(name):
    _, y = _valid(CASES[name][0])
    est = _make(name)
    raised, texts = _texts(lambda: _fit(est, _Unreadable(), y))
    assert isinstance(raised, ValueError)
    assert "is not valid input" in str(raised)
    _assert_silent(texts, {MARK})


@pytest.mark.parametrize(("bad", "match"), [
    (lambda X: X[:, :2], r"X has 2 features, but \w+ is expecting 3 features as input"),
    (lambda X: np.where(np.arange(X.size).reshape(X.shape) == 4, np.nan, X), "contains NaN"),
    (lambda X: X[:0], r"Found array with 0 sample\(s\)"),
    (lambda X: X[:, :, None], "Found array with dim 3"),
])
def test_messages_that_quote_no_value_are_scikit_learns(bad, match):
    # shapes, counts and NaN are not data values: scikit-learn's own message stays
    X = _valid("unit")[0]
    est = _fitted("DPWinnowClassifier", "predict")
    with pytest.raises(ValueError, match=match):
        est.predict(bad(X))


# ------------------------------------------------------------------------ mechanisms, classes
def _mechanism_calls():
    from skdp import mechanisms as m
    from skdp.hypotheses import Halfspaces, MeanThresholds, RealThresholds, Thresholds

    return {
        "laplace_mechanism": lambda v: m.laplace_mechanism(v, 1.0, 1.0),
        "geometric_mechanism": lambda v: m.geometric_mechanism(v, 1.0, 1.0),
        "report_noisy_max": lambda v: m.report_noisy_max(v, 1.0),
        "exponential_mechanism": lambda v: m.exponential_mechanism(v, 1.0, 1.0),
        "AboveThreshold.process": lambda v: m.AboveThreshold(0.5, 1.0).process(v),
        "Stopper.process": lambda v: m.Stopper(1.0, 1e-6, 5.0).process(v),
        "BinaryTreeCounter.update": lambda v: m.BinaryTreeCounter(16, 1.0).update(v[1]),
        "ReorderSliceCompute": lambda v: m.ReorderSliceCompute(v, 1.0, 1e-6, 3),
        "Thresholds.fit_blocks": lambda v: Thresholds().fit_blocks(
            np.asarray(v, dtype=object)[:, None], [1, -1, 1], [0, 0, 0], 1),
        "Thresholds.vote": lambda v: Thresholds().vote(
            [0.5], np.asarray(v, dtype=object)[:, None]),
        "Halfspaces.vote": lambda v: Halfspaces().vote(
            [[1.0, 0.0]], np.asarray(v, dtype=object)[:, None]),
        "RealThresholds.to_domain": lambda v: RealThresholds((0.0, 1.0), 8).to_domain(
            np.asarray(v, dtype=object)[:, None]),
        "MeanThresholds.to_domain": lambda v: MeanThresholds().to_domain(
            np.asarray(v, dtype=object)[:, None]),
    }


@pytest.mark.parametrize("call", sorted(_mechanism_calls()))
@settings(max_examples=10)
@given(cell=_secret_cell())
def test_mechanisms_and_hypothesis_classes_do_not_print_a_secret(call, cell):
    # mechanisms take private values directly; numpy's conversion error was their
    # __cause__ (raise ... from exc)
    values = np.array([0.25, 0.5, 0.75], dtype=object)
    values[1] = cell
    raised, texts = _texts(lambda: _mechanism_calls()[call](values))
    assert isinstance(raised, ValueError | TypeError), raised
    _assert_silent(texts, _forms(cell))


# ------------------------------------------------------------------------ one edge
_ECHOING = {"validate_data", "check_array", "check_X_y", "_check_sample_weight",
            "column_or_1d", "_check_y"}


def test_estimators_validate_only_through_skdp_input():
    # scikit-learn's validators echo data in their errors; skdp/_input.py wraps them, and
    # a new estimator that imports them directly would bypass the wrapper
    import ast
    from pathlib import Path

    root = Path(skdp.__file__).parent
    direct = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "_input.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sklearn"):
                direct += [f"{path.relative_to(root)}: {alias.name}" for alias in node.names
                           if alias.name in _ECHOING]
            elif isinstance(node, ast.Attribute) and node.attr in _ECHOING and isinstance(
                    node.value, ast.Attribute | ast.Name) and "validation" in ast.unparse(
                    node.value):
                direct.append(f"{path.relative_to(root)}: {ast.unparse(node)}")
    assert direct == []
