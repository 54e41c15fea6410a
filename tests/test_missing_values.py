"""Every public estimator on X with missing values (NaN): it learns, reading NaN as
information, or refuses before spending any privacy with a message that names the fix
and quotes no data value (issue 29, "Missing values").

Which estimators read NaN is stated here once (``READS_NAN``) and checked both ways: a
configuration listed there must learn from the missingness, every other configuration
must refuse, so an estimator that starts (or stops) reading NaN is noticed.
"""

from __future__ import annotations

import inspect
import traceback
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, is_classifier
from sklearn.pipeline import make_pipeline

import skdp
import skdp.preprocessing
from skdp import ContinualReleaseClassifier, DPDecisionListClassifier
from skdp.accounting import PrivacyBudget
from skdp.preprocessing import PublicImputer

ESTIMATORS = sorted(
    {obj for module in (skdp, skdp.preprocessing) for name in module.__all__
     if inspect.isclass(obj := getattr(module, name)) and issubclass(obj, BaseEstimator)},
    key=lambda c: c.__name__)

#: a value no message may print (it is in every row of X)
SECRET = 987654.321
EPSILON = 4.0


def _table(n=600, seed=0):
    """x0 missing (NaN) in a public 30 % of rows decides the label together with x1:
    y = 1 iff x0 is missing or x1 > 0.5. Values in [-1, 1] plus one secret column."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 4))
    X[:, 3] = SECRET
    missing = rng.random(n) < 0.3
    X[missing, 0] = np.nan
    y = (missing | (X[:, 1] > 0.5)).astype(int)
    return X, y


def _make(cls, budget=None, **kw):
    params = cls().get_params()
    if "epsilon" in params:
        kw = {"epsilon": EPSILON, **kw}
    if "classes" in params:
        kw.setdefault("classes", [0, 1])
    if "budget" in params:
        kw.update(budget=budget, random_state=skdp.TestingSeed(0))
    if cls is PublicImputer:
        kw.setdefault("fill_value", 0.0)
    return cls(**kw)


#: (class, extra constructor arguments) that read NaN; "bounds=" is the decision list's
#: real-valued mode ("x_j is missing" is one of its literals)
READS_NAN = {
    ("DPDecisionListClassifier", "bounds"): dict(bounds=(-1.0, 1.0)),
    ("ContinualReleaseClassifier", "bounds"): dict(
        estimator=DPDecisionListClassifier(bounds=(-1.0, 1.0))),
    ("GreedyDecisionListClassifier", "bounds"): dict(bounds=(-1.0, 1.0)),
    ("PublicImputer", "default"): {},
}
#: the estimator's own way out, named in its refusal besides PublicImputer
ALTERNATIVE = {"DPDecisionListClassifier": "bounds=", "ContinualReleaseClassifier": "bounds="}

CONFIGS = [(cls, "default", {}) for cls in ESTIMATORS] + [
    (getattr(skdp, name), mode, kw) for (name, mode), kw in READS_NAN.items()
    if mode != "default"]
# the real-valued (bounds=) configurations of the Winnow family refuse NaN as well
CONFIGS += [(cls, "bounds", dict(bounds=(-1.0, 1.0))) for cls in ESTIMATORS
            if "bounds" in inspect.signature(cls).parameters
            and (cls.__name__, "bounds") not in READS_NAN]
IDS = [f"{cls.__name__}-{mode}" for cls, mode, _ in CONFIGS]


def _spent(est, budget):
    return [b.charges for b in (budget, getattr(est, "budget_", None))
            if isinstance(b, PrivacyBudget)]


def _fit(est, X, y):
    return est.fit(X, y) if is_classifier(est) else est.fit(X)


def _refusal(call):
    """The ValueError ``call`` raises and every text it carries (traceback, chain)."""
    with pytest.raises(ValueError) as info:
        call()
    texts = ["".join(traceback.format_exception(info.value))]
    todo = [info.value]
    while todo:
        exc = todo.pop()
        if exc is not None:
            texts.append(str(exc))
            todo += [exc.__cause__, exc.__context__]
    return info.value, "\n".join(texts)


def _assert_clear(message, texts, name):
    assert "contains NaN" in message and "PublicImputer(fill_value=" in message, message
    if name in ALTERNATIVE:
        assert ALTERNATIVE[name] in message, message
    for form in (str(SECRET), "987654", f"{SECRET:g}"):
        assert form not in texts


def test_every_public_estimator_is_covered():
    assert len(ESTIMATORS) == 20
    assert {(c.__name__, m) for c, m, _ in CONFIGS} >= set(READS_NAN)


@pytest.mark.parametrize(("cls", "mode", "kw"), CONFIGS, ids=IDS)
def test_learns_from_nan_or_refuses_before_spending(cls, mode, kw):
    X, y = _table()
    budget = PrivacyBudget(100.0, 1e-3)
    est = _make(cls, budget, **kw)
    if (cls.__name__, mode) in READS_NAN:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _fit(est, X, y)
        if cls is PublicImputer:
            assert np.isfinite(est.transform(X)).all()
            return
        accuracy = np.mean(est.predict(X) == y)
        majority = max(np.mean(y), 1 - np.mean(y))
        # measured at ε = 4, seeds 0 (see the report in the commit): the list finds
        # "x0 is missing" and "x1 > 0.5"
        assert accuracy >= majority + 0.15, (accuracy, majority)
        return
    message, texts = _refusal(lambda: _fit(est, X, y))
    _assert_clear(str(message), texts, cls.__name__)
    assert _spent(est, budget) == [()]
    if hasattr(cls, "partial_fit"):
        message, texts = _refusal(lambda: est.partial_fit(X, y, classes=[0, 1]))
        _assert_clear(str(message), texts, cls.__name__)
        assert _spent(est, budget) == [()]


@pytest.mark.parametrize(("cls", "mode", "kw"),
                         [c for c in CONFIGS if (c[0].__name__, c[1]) not in READS_NAN],
                         ids=[i for c, i in zip(CONFIGS, IDS, strict=True)
                              if (c[0].__name__, c[1]) not in READS_NAN])
def test_predict_on_nan_refuses_before_answering(cls, mode, kw):
    X, y = _table(300)
    clean = np.nan_to_num(X, nan=0.0)
    budget = PrivacyBudget(100.0, 1e-3)
    est = _make(cls, budget, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _fit(est, clean, y)
        answer = est.predict if is_classifier(est) else est.transform
        answer(clean[:3])  # query-budgeted predictors start answering (and charging) here
    before = _spent(est, budget)
    message, texts = _refusal(lambda: answer(X[np.isnan(X).any(axis=1)][:5]))
    _assert_clear(str(message), texts, cls.__name__)
    assert _spent(est, budget) == before


def test_public_imputer_in_front_learns_what_the_refusing_learner_could_not():
    # the message's fix works: with the indicator, the missingness stays information
    X, y = _table()
    pipe = make_pipeline(PublicImputer(fill_value=0.0, add_indicator=True),
                         skdp.preprocessing.PublicBoundsBinarizer(thresholds=0.5),
                         _make(DPDecisionListClassifier))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X, y)
    majority = max(np.mean(y), 1 - np.mean(y))
    assert np.mean(pipe.predict(X) == y) >= majority + 0.15


def test_stream_wrapper_reads_nan_only_when_its_learner_does():
    assert not ContinualReleaseClassifier().__sklearn_tags__().input_tags.allow_nan
    wrapped = ContinualReleaseClassifier(DPDecisionListClassifier(bounds=(-1.0, 1.0)))
    assert wrapped.__sklearn_tags__().input_tags.allow_nan
    piped = ContinualReleaseClassifier(
        make_pipeline(PublicImputer(fill_value=0.0, add_indicator=True),
                      skdp.preprocessing.PublicBoundsBinarizer(thresholds=0.5),
                      DPDecisionListClassifier()),
        epsilon=EPSILON, classes=[0, 1], random_state=skdp.TestingSeed(0))
    assert piped.__sklearn_tags__().input_tags.allow_nan
    X, y = _table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        piped.fit(X, y)  # the imputer is a public step: no refusal, and it learns
    assert np.mean(piped.predict(X) == y) >= max(np.mean(y), 1 - np.mean(y)) + 0.15
