"""RectanglesPERP / DecisionPERP estimators: utility, streaming, copies, bad input."""

import contextlib
import copy
import itertools
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline

from skdp import BudgetExhaustedError, PrivacyBudget, PrivacyWarning, TestingSeed
from skdp.prediction import (
    DecisionStumpPERPClassifier,
    QueryBudgetExhaustedError,
    RectanglesPERPClassifier,
    perp_parameters,
)
from skdp.preprocessing import PublicBoundsClipper

# Stemmer's construction needs ε·√n large (6.9·10⁶ rows at ε = 1 with the default
# "charged" preset, see test_perp_parameters): tests run at ε = 1000, where the default's
# first phase needs 2 805 rows (d = 2, γ = 1).
EPS = 1000.0
LO, HI = 0.2, 0.8


def _inside(X):
    return np.all((X > LO) & (X < HI), axis=1).astype(int)


def _need(eps=EPS, gamma=1.0, d=2):
    """The default preset's ("charged") first-phase need."""
    return perp_parameters(eps, 1e-6, 0.1, 0.05, gamma, d, preset="charged").initial_sample_size


def _sample(n, seed=0, d=2):
    X = np.random.default_rng(seed).random((n, d))
    return X, _inside(X)


def _rect(**kw):
    params = dict(epsilon=EPS, gamma=1.0, random_state=TestingSeed(0))
    params.update(kw)
    return RectanglesPERPClassifier(**params)


@pytest.fixture(scope="module")
def fitted():
    return _rect().fit(*_sample(_need()))


# ---------------------------------------------------------------- utility
@pytest.mark.parametrize(("eps", "n_queries"), [(1000.0, 300_000), (100.0, 150_000)])
def test_error_on_distribution_queries_below_alpha(eps, n_queries):
    clf = _rect(epsilon=eps).fit(*_sample(_need(eps), seed=1))
    Xq, yq = _sample(n_queries, seed=2)
    errors = clf.predict(Xq) != yq
    assert errors.mean() <= 0.1
    # Every phase reached is accurate, not only the average.
    ends = np.cumsum(clf.parameters_.t_p).astype(int)
    for a, b in itertools.pairwise([0, *[e for e in ends if e < n_queries]]):
        assert errors[a:b].mean() <= 0.1
    assert clf.privacy_spent_.epsilon == eps
    assert clf.privacy_spent_.delta <= 1e-6


def test_phases_advance_on_schedule(fitted):
    clf = clone(fitted).fit(*_sample(_need()))
    t = clf.parameters_.t_p.astype(int)
    assert clf.phase_ == 1 and clf.next_phase_sample_size_ == t[0]
    clf.predict(_sample(t[0] - 5, seed=3)[0])
    assert clf.phase_ == 1 and clf.next_phase_sample_size_ == 5
    clf.predict(_sample(5, seed=4)[0])
    assert clf.phase_ == 2 and clf.next_phase_sample_size_ == t[1]
    assert clf.queries_answered_ == t[0]


def test_decision_stump_selects_axis_and_direction():
    rng = np.random.default_rng(5)
    for axis, sign in [(1, 1), (2, -1)]:
        X = rng.random((20_000, 3))
        y = (sign * (X[:, axis] - 0.4) > 0).astype(int)
        clf = DecisionStumpPERPClassifier(epsilon=2000.0, gamma=1.0, random_state=0).fit(X, y)
        Xq = rng.random((60_000, 3))
        pred = clf.predict(Xq)
        assert (clf._state.axis, clf._state.sign) == (axis, sign)
        assert np.mean(pred != (sign * (Xq[:, axis] - 0.4) > 0)) <= 0.1
        assert clf.phase_ >= 2


def test_string_labels_positive_class_is_classes_1():
    X, y = _sample(_need(), seed=6)
    clf = _rect().fit(X, np.where(y == 1, "yes", "no"))  # classes_[1] = "yes" = inside
    assert clf.classes_.tolist() == ["no", "yes"]
    Xq, yq = _sample(20_000, seed=7)
    assert np.mean(clf.predict(Xq) == np.where(yq == 1, "yes", "no")) > 0.9


# ---------------------------------------------------------------- streaming
def test_predict_in_blocks_equals_one_call():
    X, y = _sample(_need(), seed=8)
    Xq = _sample(60_000, seed=9)[0]
    one = _rect(random_state=3).fit(X, y)
    full = one.predict(Xq)
    assert one.phase_ >= 3 and one.n_reexecutions_ >= 0
    split = _rect(random_state=3).fit(X, y)
    cuts = [0, 1, 2, 777, 9281, 9282, 30_000, 45_001, 60_000]
    parts = np.concatenate([split.predict(Xq[a:b]) for a, b in itertools.pairwise(cuts)])
    np.testing.assert_array_equal(full, parts)
    assert split.budget_.spent == pytest.approx(one.budget_.spent)


def _need_with(**kw):
    """initial_sample_size_ of ``_rect(**kw)`` (a probe fit below the need spends nothing)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _rect(**kw).fit(*_sample(2)).initial_sample_size_


@pytest.mark.parametrize("kw", [
    # The default: its band t_u − t_l is a few σ, narrow at ε = 1000 (σ ≈ 0.2: almost no
    # query is "medium"); at ε = 30 (σ ≈ 5, charged lemma) copies halt 9 times.
    dict(preset="charged", epsilon=30.0, slice_size=40, first_phase_length=4000),
    dict(preset="practical", slice_size=40, max_hard=120, first_phase_length=4000),
], ids=["charged", "practical"])
def test_blocks_equal_one_call_through_reexecutions(kw):
    # Small slices and k: copies halt and are re-executed many times.
    kw = dict(random_state=4, **kw)
    X, y = _sample(max(4000, _need_with(**kw)), seed=10)
    Xq = np.random.default_rng(11).normal(0.5, 0.25, size=(20_000, 2))  # hits the boundary
    one = _rect(**kw).fit(X, y)
    full = one.predict(Xq)
    assert one.n_reexecutions_ >= 3
    split = _rect(**kw).fit(X, y)
    parts = np.concatenate([split.predict(Xq[a:b]) for a, b in
                            itertools.pairwise([0, 3, 500, 501, 7000, 13_333, 20_000])])
    np.testing.assert_array_equal(full, parts)
    assert split.n_reexecutions_ == one.n_reexecutions_


@pytest.mark.parametrize("preset", ["charged", "practical"])
def test_one_query_per_call_equals_one_call(preset):
    kw = dict(random_state=6, slice_size=40, max_hard=120, first_phase_length=150,
              preset=preset)
    X, y = _sample(max(4000, _need_with(**kw)), seed=26)
    Xq = np.random.default_rng(27).normal(0.5, 0.25, size=(400, 2))
    full = _rect(**kw).fit(X, y).predict(Xq)
    clf = _rect(**kw).fit(X, y)
    singles = np.concatenate([clf.predict(Xq[i : i + 1]) for i in range(len(Xq))])
    np.testing.assert_array_equal(full, singles)
    assert clf.phase_ == 2


@pytest.mark.parametrize("stream", ["boundary", "repeated", "far", "mixed"])
def test_any_stream_keeps_the_guarantee(stream):
    """γ-fraction violated on purpose: privacy accounting and caps still hold."""
    rng = np.random.default_rng(28)
    n = 60_000
    if stream == "boundary":  # every query on the rectangle's edges: many "medium"s
        Xq = np.column_stack([rng.choice([LO, HI], n), rng.random(n)])
    elif stream == "repeated":
        Xq = np.tile([[LO + 1e-3, 0.5]], (n, 1))
    elif stream == "far":
        Xq = rng.normal(0.0, 1e6, size=(n, 2))
    else:
        Xq = np.concatenate([rng.random((n // 2, 2)), np.tile([[HI, HI]], (n // 2, 1))])
        rng.shuffle(Xq)
    clf = _rect().fit(*_sample(_need(), seed=29))
    pred = clf.predict(Xq)
    assert pred.shape == (n,)
    assert clf.privacy_spent_.epsilon == EPS
    assert clf.privacy_spent_.delta <= 0.75e-6
    assert clf.phase_ >= 3
    if stream != "far":  # these streams still carry queries inside the rectangle
        Xd, yd = _sample(20_000, seed=30)
        assert np.mean(clf.predict(Xd) == yd) > 0.5
    # A stream with no positive answers at all (γ = 0) leaves the next phase an empty
    # sample: its copies see no boundary and answer "inside" — utility, not privacy.


def test_partial_fit_before_queries_equals_fit_on_concatenation():
    X, y = _sample(_need(), seed=12)
    Xq = _sample(20_000, seed=13)[0]
    ref = _rect(random_state=5).fit(X, y).predict(Xq)
    clf = _rect(random_state=5)
    with pytest.raises(ValueError, match="classes"):
        clf.partial_fit(X[:10], y[:10])
    with pytest.warns(PrivacyWarning, match="fewer than"):
        clf.partial_fit(X[:1000], y[:1000], classes=[0, 1])
    with pytest.warns(PrivacyWarning):
        clf.partial_fit(X[1000:2000], y[1000:2000])
    clf.partial_fit(X[2000:], y[2000:])
    np.testing.assert_array_equal(clf.predict(Xq), ref)


def test_partial_fit_after_queries_refuses_and_changes_nothing(fitted):
    clf = _rect().fit(*_sample(_need(), seed=14))
    clf.predict(_sample(100, seed=15)[0])
    spent = clf.budget_.spent
    with pytest.raises(ValueError, match="already in use"):
        clf.partial_fit(*_sample(50, seed=16))
    assert clf.budget_.spent == spent and clf.queries_answered_ == 100
    clf.predict(_sample(10, seed=17)[0])  # still answering


# ---------------------------------------------------------------- small samples, paper preset
def test_too_few_rows_warns_and_answers_one_private_majority_label():
    X, y = _sample(500, seed=18)
    y = 1 - y  # majority: classes_[1] (a constant classes_[0] would be wrong here)
    with pytest.warns(PrivacyWarning, match="one majority label"):
        clf = _rect(classes=[0, 1]).fit(X, y)
    assert clf.initial_sample_size_ == _need()
    assert clf.privacy_spent_.epsilon == 0.0  # fit spends nothing
    pred = clf.predict(_sample(1000, seed=19)[0])
    assert np.all(pred == 1) and clf.majority_released_
    assert clf.privacy_spent_.epsilon == EPS and clf.privacy_spent_.delta == 0.0
    assert not clf.mechanism_started_
    clf.predict(_sample(10, seed=20)[0])
    assert clf.privacy_spent_.epsilon == EPS  # released once
    with pytest.warns(PrivacyWarning, match="already released"):
        clf.partial_fit(*_sample(_need(), seed=21))  # enough rows now, but ε is spent
    assert np.all(clf.predict(_sample(10, seed=22)[0]) == 1) and not clf.mechanism_started_


def test_paper_preset_runs_when_the_sample_suffices():
    eps = 1e4  # the paper's constants need ~3 000 rows only at such ε (6·10¹² at ε = 1)
    need = perp_parameters(eps, 1e-6, 0.1, 0.05, 1.0, 2, preset="paper").initial_sample_size
    clf = _rect(epsilon=eps, preset="paper").fit(*_sample(need, seed=31))
    assert clf.initial_sample_size_ == need
    Xq, yq = _sample(30_000, seed=32)
    assert np.mean(clf.predict(Xq) != yq) <= 0.1
    assert clf.phase_ >= 2


def test_paper_preset_refuses_impossible_sample():
    with pytest.raises(ValueError, match=r"preset='paper'.*needs"):
        RectanglesPERPClassifier(preset="paper").fit(*_sample(1000))
    with pytest.raises(ValueError, match="preset='paper'"):
        DecisionStumpPERPClassifier(preset="paper").fit(*_sample(1000))


# ---------------------------------------------------------------- ledger and copies
def test_ledger_charges_epsilon_once_and_delta_per_query(fitted):
    clf = _rect().fit(*_sample(_need()))
    assert clf.privacy_spent_.epsilon == 0.0  # fit spends nothing
    clf.predict(_sample(10, seed=20)[0])
    # δ(0) for the initial sample (the default "charged": δ*/4), then δ_1 per query.
    initial, first = clf.parameters_.initial_delta, clf.parameters_.phases[0].delta
    assert initial == 0.25e-6
    assert clf.privacy_spent_.epsilon == EPS
    assert clf.privacy_spent_.delta == pytest.approx(initial + 10 * first, rel=1e-9)
    clf.predict(_sample(100_000, seed=21)[0])
    assert clf.privacy_spent_.epsilon == EPS  # never more than ε per record
    assert clf.privacy_spent_.delta <= 0.75e-6


def test_user_budget_is_charged_in_step_and_can_refuse():
    shared = PrivacyBudget(2 * EPS, 1e-5)
    X, y = _sample(_need())
    a = _rect(budget=shared).fit(X, y)
    b = _rect(budget=shared).fit(X, y)
    a.predict(X[:10])
    b.predict(X[:10])
    assert shared.spent.epsilon == pytest.approx(2 * EPS)
    c = _rect(budget=shared).fit(X, y)
    with pytest.raises(QueryBudgetExhaustedError) as info:
        c.predict(X[:10])
    assert info.value.n_answered == 0 and not c.mechanism_started_
    assert isinstance(info.value, BudgetExhaustedError)


def test_deepcopy_and_pickle_share_the_ledger_and_never_fork_the_mechanism():
    X, y = _sample(_need())
    clf = _rect().fit(X, y)
    clf.predict(X[:10])
    for twin in (copy.deepcopy(clf), pickle.loads(pickle.dumps(clf))):
        assert twin.budget_.spent == clf.budget_.spent
        with pytest.raises(QueryBudgetExhaustedError, match="copy"):
            twin.predict(X[:5])
        assert twin.phase_ == clf.phase_ and twin.queries_answered_ == 10
    clf.predict(X[:10])  # the original goes on
    assert clf.queries_answered_ == 20


def test_copies_of_an_unstarted_predictor_share_one_epsilon():
    X, y = _sample(_need())
    clf = _rect().fit(X, y)
    twin = copy.deepcopy(clf)
    twin.predict(X[:5])  # the first to start pays ε from the shared ledger
    with pytest.raises(QueryBudgetExhaustedError):
        clf.predict(X[:5])
    assert clf.budget_.spent.epsilon == EPS


def test_copy_gets_a_fresh_generator():
    clf = _rect().fit(*_sample(_need()))
    twin = copy.deepcopy(clf)
    assert not np.allclose(clf._state.rng.random(4), twin._state.rng.random(4))


def test_clone_is_unfitted(fitted):
    with pytest.raises(NotFittedError):
        clone(fitted).predict([[0.5, 0.5]])


def test_grid_search_and_cross_val_charge_one_shared_budget():
    X, y = _sample(3 * _need(), seed=22)
    shared = PrivacyBudget(100 * EPS, 1e-3)
    pipe = make_pipeline(PublicBoundsClipper(lower=0.0, upper=1.0, scale=False),
                         _rect(budget=shared))
    scores = cross_val_score(pipe, X, y, cv=3)
    assert np.all(scores > 0.9)
    assert shared.spent.epsilon == pytest.approx(3 * EPS)
    search = GridSearchCV(pipe, {"rectanglesperpclassifier__alpha": [0.1, 0.2]}, cv=2)
    search.fit(X, y)
    assert shared.spent.epsilon == pytest.approx(3 * EPS + 4 * EPS)  # refit does not predict
    with pytest.raises(BudgetExhaustedError):
        cross_val_score(_rect(budget=PrivacyBudget(EPS, 1e-3)), X, y, cv=2,
                        error_score="raise")


def test_pipeline_with_clipper_scales_raw_features():
    X, y = _sample(_need(), seed=23)
    pipe = make_pipeline(PublicBoundsClipper(lower=0.0, upper=100.0), _rect())
    pipe.fit(100 * X, y)
    Xq, yq = _sample(10_000, seed=24)
    assert pipe.score(100 * Xq, yq) > 0.9


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("cls", [RectanglesPERPClassifier, DecisionStumpPERPClassifier])
@pytest.mark.parametrize(
    "bad",
    [dict(epsilon=0.0), dict(epsilon=-1.0), dict(delta=0.0), dict(delta=1.0),
     dict(alpha=0.0), dict(alpha=1.0), dict(beta=1.5), dict(gamma=0.0), dict(gamma=1.2),
     dict(preset="fast"), dict(slice_size=0), dict(threshold=-3.0)],
)
def test_invalid_parameters_raise_at_fit(cls, bad):
    with pytest.raises(ValueError):
        cls(**bad).fit(*_sample(100))


def test_bad_training_data():
    X, y = _sample(200)
    with pytest.raises(ValueError, match="Only binary"):
        _rect().fit(X, np.arange(200) % 3)
    with pytest.raises(ValueError):
        _rect().fit(X, np.linspace(0, 1, 200))
    with pytest.raises(ValueError):
        _rect().fit(np.where(X > 0.5, np.nan, X), y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        clf = _rect().partial_fit(X, y, classes=[0, 1])
    with pytest.raises(ValueError, match="not in classes"):
        clf.partial_fit(X[:3], np.array([0, 1, 2]))


def test_bad_queries_raise_before_spending(fitted):
    clf = _rect().fit(*_sample(_need()))
    clf.predict([[0.5, 0.5]])
    spent, answered = clf.budget_.spent, clf.queries_answered_
    for bad in ([[np.nan, 0.5]], [[np.inf, 0.5]], np.zeros((3, 3)), np.zeros((0, 2)),
                [["a", "b"]]):
        with pytest.raises(ValueError):
            clf.predict(bad)
    assert clf.budget_.spent == spent and clf.queries_answered_ == answered


@settings(max_examples=30, deadline=None)
@given(values=st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64),
                       min_size=2, max_size=8),
       eps=st.sampled_from([float("nan"), float("inf"), -1.0, 0.0, 1e-300, 1e-3, EPS]))
def test_any_input_is_answered_or_refused_before_spending(values, eps):
    X = np.asarray(values[: len(values) // 2 * 2], dtype=float).reshape(-1, 2)
    clf = _rect(epsilon=eps)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)
            clf.fit(*_sample(50))
    except ValueError:
        # Invalid ε, or one so small that the schedule overflows: refused, unfitted.
        assert not (np.isfinite(eps) and eps >= 1e-3)
        assert not hasattr(clf, "budget_")
        return
    if not np.all(np.isfinite(X)):
        with pytest.raises(ValueError):
            clf.predict(X)
        assert clf.budget_.spent.epsilon == 0.0
    else:
        assert clf.predict(X).shape == (X.shape[0],)


def test_score_spends_like_predict(fitted):
    clf = _rect().fit(*_sample(_need()))
    Xq, yq = _sample(1000, seed=25)
    clf.score(Xq, yq)
    assert clf.queries_answered_ == 1000 and clf.privacy_spent_.epsilon == EPS
    assert hasattr(clf, "predict_proba") and hasattr(clf, "decision_function")  # issue 18
    with contextlib.suppress(AttributeError):
        clf.decision_function  # noqa: B018 - must not exist

