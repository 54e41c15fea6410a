"""Fitted private estimators expose only releases; error messages never echo the data.

Issue 13, items 5 and 6:

* no public fitted attribute (name ending in ``_``, not starting with ``_``) of a
  private estimator may hold non-private state: a random generator, a live mechanism
  from :mod:`skdp.mechanisms`, a scikit-learn estimator fitted on the data, the
  training rows, or an object through which exact teacher votes can be read;
* a ValueError (or warning) raised on bad input names the column and the rule or
  bound it breaks, never a value of X.
"""

import contextlib
import inspect
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

import skdp
import skdp.mechanisms
from skdp.accounting import PrivacyBudget
from skdp.base import PrivateEstimatorMixin
from skdp.hypotheses.littlestone import threshold_class
from skdp.preprocessing import PublicBoundsBinarizer, PublicBoundsClipper, PublicImputer

N, D, N_DOMAIN = 40, 3, 8
CLASS = threshold_class(N_DOMAIN)

# kind of valid input: "real" (any finite reals in [0, 1]), "unit" ([-1, 1]),
# "binary" (0/1), "domain" (one column of integer indices in [0, N_DOMAIN))
CASES = {
    "AdaptivePrivateOnlineClassifier": (
        "domain", dict(epsilon=2.0, delta=1e-6, n_sequences=64, hypothesis_class=CLASS)),
    "BatchSanitizedOnlineClassifier": ("domain", dict(epsilon=2.0, hypothesis_class=CLASS)),
    "ContinualReleaseClassifier": ("binary", dict(
        estimator=skdp.DPDecisionListClassifier(), epsilon=5.0)),
    "DPDecisionListClassifier": ("binary", dict(epsilon=5.0)),
    "DPSOAClassifier": ("domain", dict(epsilon=2.0, delta=1e-6, n_trees=20,
                                       hypothesis_class=CLASS)),
    "DPWinnowClassifier": ("unit", dict()),
    "DecisionStumpPERPClassifier": ("real", dict()),
    "OnlineDecisionListClassifier": ("binary", dict()),
    "PrivateExpertsClassifier": ("domain", dict(epsilon=4.0, experts=CLASS, n_rounds=16)),
    "PrivatePredictor": ("real", dict()),
    "RectanglesPERPClassifier": ("real", dict()),
    "SubsampleAggregatePredictor": ("real", dict(epsilon=50.0, n_queries=1000)),
}
NAMES = sorted(CASES)


def _private_estimators():
    return sorted(
        name for name in skdp.__all__
        if inspect.isclass(obj := getattr(skdp, name)) and issubclass(obj, BaseEstimator)
        and "epsilon" in inspect.signature(obj).parameters
    )


def test_every_exported_private_estimator_is_covered():
    assert _private_estimators() == NAMES


def _valid_X(kind, rng, n=N):
    if kind == "domain":
        return rng.integers(0, N_DOMAIN, size=(n, 1)).astype(float)
    if kind == "binary":
        return rng.integers(0, 2, size=(n, D)).astype(float)
    if kind == "unit":
        return rng.uniform(-1, 1, size=(n, D))
    return rng.uniform(0, 1, size=(n, D))


def _labels(X, kind):
    col = X[:, 0]
    threshold = N_DOMAIN // 2 if kind == "domain" else (0.0 if kind == "unit" else 0.5)
    y = (col >= threshold).astype(int)
    y[:2] = [0, 1]  # both classes always present
    return y


def _make(name, **kw):
    _kind, params = CASES[name]
    return getattr(skdp, name)(**{**params, "random_state": 0, **kw})


def _fitted(name):
    kind = CASES[name][0]
    rng = np.random.default_rng(0)
    X = _valid_X(kind, rng)
    y = _labels(X, kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = _make(name).fit(X, y)
        est.predict(X[:4])  # predictors start their mechanism on the first answers
    return est, X, y


# ----------------------------------------------------------------- item 5: public state
_MECHANISM_TYPES = tuple(
    obj for obj in vars(skdp.mechanisms).values()
    if inspect.isclass(obj) and obj.__module__.startswith("skdp.mechanisms")
    and not issubclass(obj, BaseException)
)
_LEAF_TYPES = (str, bytes, int, float, bool, complex, type(None), np.generic, PrivacyBudget,
               type)


def _public_attributes(est):
    names = {k for k in vars(est) if k.endswith("_") and not k.startswith("_")}
    names |= {k for k, v in inspect.getmembers(type(est))
              if isinstance(v, property) and k.endswith("_") and not k.startswith("_")}
    out = {}
    for k in sorted(names):
        try:
            out[k] = getattr(est, k)
        except (AttributeError, NotFittedError):
            continue
    return out


def _is_fitted_estimator(obj):
    if not isinstance(obj, BaseEstimator):
        return False
    try:
        check_is_fitted(obj)
    except (NotFittedError, TypeError):
        return False
    return True


def _walk(obj, path, seen, depth=0):
    """Yield (path, object) for obj and everything reachable through its attributes."""
    if id(obj) in seen or depth > 6:
        return
    seen.add(id(obj))
    yield path, obj
    if isinstance(obj, _LEAF_TYPES) or (callable(obj) and not hasattr(obj, "__dict__")):
        return
    if isinstance(obj, np.ndarray):
        if obj.dtype == object:
            for i, item in enumerate(obj.ravel()[:50]):
                yield from _walk(item, f"{path}[{i}]", seen, depth + 1)
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _walk(v, f"{path}[{k!r}]", seen, depth + 1)
        return
    if isinstance(obj, (list, tuple, set, frozenset)):
        for i, item in enumerate(list(obj)[:200]):
            yield from _walk(item, f"{path}[{i}]", seen, depth + 1)
        return
    attrs = getattr(obj, "__dict__", None)
    if attrs is None and hasattr(obj, "__slots__"):
        attrs = {s: getattr(obj, s) for s in obj.__slots__ if hasattr(obj, s)}
    for k, v in (attrs or {}).items():
        yield from _walk(v, f"{path}.{k}", seen, depth + 1)


def _holds_training_rows(arr, X):
    if not isinstance(arr, np.ndarray) or arr.dtype == object or arr.ndim != 2:
        return False
    if arr.shape[1] != X.shape[1] or arr.shape[0] < 4:
        return False
    rows = {tuple(r) for r in X.tolist()}
    return sum(tuple(r) in rows for r in arr.tolist()) >= min(len(rows), X.shape[0] // 2)


def _leaks(est, X):
    found = []
    for name, value in _public_attributes(est).items():
        for path, obj in _walk(value, name, set()):
            if isinstance(obj, np.random.Generator | np.random.BitGenerator
                          | np.random.RandomState):
                found.append((path, "random generator"))
            elif isinstance(obj, _MECHANISM_TYPES):
                found.append((path, f"mechanism {type(obj).__name__}"))
            elif _is_fitted_estimator(obj) and not isinstance(obj, PrivateEstimatorMixin):
                # (a released private model — ContinualReleaseClassifier.estimators_ — is
                # a release; everything it holds is still walked)
                found.append((path, f"fitted estimator {type(obj).__name__}"))
            elif _holds_training_rows(obj, X):
                found.append((path, "training rows"))
            elif callable(getattr(obj, "vote", None)):
                found.append((path, "teacher ensemble (exact votes)"))
    return found


@pytest.mark.parametrize("name", NAMES)
def test_public_fitted_attributes_hold_no_private_state(name):
    est, X, _ = _fitted(name)
    assert _leaks(est, X) == []


@pytest.mark.parametrize("estimator", ["hypotheses", "sklearn"])
def test_private_predictor_exposes_no_teacher_votes(estimator):
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, size=(2200, 1))
    y = (X[:, 0] > 0.5).astype(int)
    kw = {} if estimator == "hypotheses" else dict(estimator=DecisionTreeClassifier(max_depth=1),
                                                   hypotheses=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = skdp.PrivatePredictor(epsilon=8.0, delta=1e-3, max_hard_queries=1,
                                    random_state=0, **kw)
        clf.fit(X, y)
        with contextlib.suppress(skdp.BudgetExhaustedError):
            clf.predict(X[:5])
    assert clf.n_teachers_ > 0  # the teachers exist (privately held)
    for name, value in _public_attributes(clf).items():
        for path, obj in _walk(value, name, set()):
            assert not callable(getattr(obj, "vote", None)), path
            assert not hasattr(obj, "teachers"), path
            assert not hasattr(obj, "models"), path
    assert _leaks(clf, X) == []


# ----------------------------------------------------------------- item 6: messages
SENTINELS = [17.987654, -3.112233, 1234.5678, 2.718282, 9731.0, -4242.0,
             math.nan, math.inf, -math.inf]


def _forms(value):
    """String forms a message could print ``value`` in."""
    if not math.isfinite(value):
        return set()  # "nan"/"inf" name the rule, they are not a private value
    forms = {repr(value), str(value), repr(np.float64(value)), repr(np.float32(value))}
    forms |= {f"{value:.{p}g}" for p in range(4, 10)}
    forms |= {f"{value:.{p}f}" for p in range(1, 7)}
    if value == int(value):
        forms.add(str(int(value)))
    return forms


@st.composite
def _bad_input(draw, kind):
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    n = draw(st.integers(4, 12))
    X = _valid_X(kind, rng, n)
    used = []
    for _ in range(draw(st.integers(1, 3))):
        value = draw(st.sampled_from(SENTINELS))
        X[draw(st.integers(0, n - 1)), draw(st.integers(0, X.shape[1] - 1))] = value
        used.append(value)
    return X, _labels(np.nan_to_num(X), kind), used


def _assert_silent(call, used):
    forms = set().union(*(_forms(v) for v in used))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
        except (ValueError, TypeError, skdp.PrivacyError, RuntimeError) as exc:
            messages = [str(exc)]
        else:
            messages = []
    messages += [str(w.message) for w in caught]
    for message in messages:
        for form in forms:
            assert form not in message, (form, message)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=25)
@given(data=st.data())
def test_errors_on_bad_input_do_not_echo_values(name, data):
    kind = CASES[name][0]
    X, y, used = data.draw(_bad_input(kind))
    _assert_silent(lambda: _make(name, budget=PrivacyBudget(1e6, 0.5)).fit(X, y), used)


@pytest.mark.parametrize("name", [n for n in NAMES if CASES[n][0] in ("domain", "unit",
                                                                       "binary")])
@settings(max_examples=15)
@given(data=st.data())
def test_predict_on_bad_input_does_not_echo_values(name, data):
    est = _FITTED.setdefault(name, _fitted(name)[0])
    X, _, used = data.draw(_bad_input(CASES[name][0]))
    _assert_silent(lambda: est.predict(X), used)


_FITTED = {}


@pytest.mark.parametrize("make", [
    lambda: PublicBoundsClipper(lower=0.0, upper=1.0),
    lambda: PublicBoundsBinarizer(bounds=(0.0, 1.0), n_thresholds=2),
    lambda: PublicBoundsBinarizer(thresholds=[[0.5]] * D),
    lambda: PublicImputer(fill_value=0.5, add_indicator=True),
], ids=["clipper", "binarizer-bounds", "binarizer-thresholds", "imputer"])
@settings(max_examples=25)
@given(data=st.data())
def test_preprocessing_errors_do_not_echo_values(make, data):
    X, _, used = data.draw(_bad_input("real"))
    _assert_silent(lambda: make().fit(X), used)
    fitted = make().fit(np.zeros((2, D)))
    _assert_silent(lambda: fitted.transform(X), used)
    _assert_silent(lambda: fitted.transform(X[:, :2]), used)
