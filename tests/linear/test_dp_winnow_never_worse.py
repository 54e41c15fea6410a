"""DP-Winnow never worse than its private constant: the public-schedule comparison
(Lemma C) switches predictions to the constant where the learner loses, and back to
the learner where it wins; the horizon warnings."""

import warnings

import numpy as np
import pytest

from skdp.linear import DPWinnowClassifier


def _prequential(clf, X, y, chunk=1000):
    wrong = seen = 0
    for start in range(0, X.shape[0], chunk):
        Xc, yc = X[start:start + chunk], y[start:start + chunk]
        if start:
            wrong += int(np.count_nonzero(clf.predict(Xc) != yc))
            seen += yc.size
        clf.partial_fit(Xc, yc)
    return wrong / seen


def _quiet(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DPWinnowClassifier(bounds=(-1.0, 1.0), classes=[0, 1], **kw)


def test_on_a_stream_without_margin_it_predicts_the_constant():
    """Labels independent of the features, 20 % positive: the learner runs (forced by
    a margin of 1) but cannot beat the constant; the checks hand predictions to it."""
    rng = np.random.default_rng(0)
    X = rng.choice([-1.0, 1.0], size=(60_000, 10))
    y = (rng.uniform(size=60_000) < 0.2).astype(int)
    clf = _quiet(epsilon=4.0, margin=1.0, n_rounds=60_000, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        err = _prequential(clf, X, y)
    assert not clf.constant_fallback_ and clf.n_checks_ >= 3
    assert clf.predicts_constant_
    assert err <= 0.2 + 0.01
    assert (clf.predict(X) == 0).all()
    proba = clf.predict_proba(X[:3])
    np.testing.assert_allclose(proba, proba[[0, 0, 0]])  # one value: the constant's


def test_where_it_learns_the_checks_hand_predictions_back_to_the_learner():
    rng = np.random.default_rng(1)
    X = rng.choice([-1.0, 1.0], size=(40_000, 10))
    y = (X[:, 0] > 0).astype(int)
    clf = _quiet(epsilon=4.0, margin=1.0, n_rounds=40_000, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        err = _prequential(clf, X, y)
    assert not clf.predicts_constant_ and clf.n_checks_ >= 3
    assert err < 0.1
    assert np.array_equal(clf.decision_function(X[:5]) > 0, X[:5, 0] > 0)


def test_the_checks_are_released_at_windows_2_4_8():
    rng = np.random.default_rng(2)
    X = rng.choice([-1.0, 1.0], size=(1000, 3))
    y = (X[:, 0] > 0).astype(int)
    clf = _quiet(epsilon=2.0, margin=1.0, window=50, n_rounds=1000, random_state=0)
    checks = []
    for start in range(0, 1000, 50):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf.partial_fit(X[start:start + 50], y[start:start + 50])
        checks.append(clf.n_checks_)
    # after windows 1, 2, …, 20: checks at the end of windows 2, 4, 8, 16
    assert checks == [0, 1, 1, 2, 2, 2, 2, 3] + [3] * 7 + [4] * 5


def test_horizon_warnings_say_when_n_rounds_is_missing_or_contradicted():
    X = np.ones((100, 2))
    y = np.r_[np.zeros(50), np.ones(50)].astype(int)
    with pytest.warns(UserWarning, match="n_rounds was not given"):
        _quiet(epsilon=1.0).partial_fit(X, y)
    with pytest.warns(UserWarning, match="fit got 100 rows but n_rounds=1000"):
        _quiet(epsilon=1.0, n_rounds=1000).fit(X, y)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        _quiet(epsilon=1.0, n_rounds=150).fit(X, y)  # a horizon the stream agrees with
        _quiet(epsilon=1.0, n_rounds=150).partial_fit(X, y)
    assert not [w for w in record if "n_rounds" in str(w.message)
                and "cannot learn" not in str(w.message)]


def test_the_fallback_constant_follows_a_stream_whose_first_rows_mislead():
    """The guard's constant is recounted on every call's rows (the first count: the
    first call's): a stream whose first 200 rows are all negative, then 80 % positive,
    is followed (the first count alone predicted 0 for ever)."""
    rng = np.random.default_rng(3)
    n = 20_000
    X = rng.choice([-1.0, 1.0], size=(n, 5))
    y = np.r_[np.zeros(200), rng.uniform(size=n - 200) < 0.8].astype(int)
    # guard=None: the fallback's own recounts (the guard, which would also follow this
    # stream, is tested in test_dp_winnow_guard.py)
    clf = _quiet(epsilon=1.0, n_rounds=n, random_state=0, guard=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        err = _prequential(clf, X, y, chunk=500)
    p = clf.parameters_
    assert clf.constant_fallback_ and p.count_rows == 500  # the first call
    assert clf.n_recounts_ == 39  # one per later call
    assert err < 0.2 + 0.02  # the best constant in hindsight: ≈ 0.21
    assert (clf.predict(X[:10]) == 1).all()
