"""PrivatePredictor at realistic n (issue 16): constrained ERM, calibration and band design,
the Stemmer instance across copies, LogisticRegression teachers, the early stop."""

import copy

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from skdp.hypotheses import Halfspaces
from skdp.mechanisms.between_thresholds import BetweenThresholds
from skdp.prediction import PrivatePredictor, QueryBudgetExhaustedError
from skdp.prediction._shrinkage_parameters import design, shrinkage_parameters
from skdp.prediction._teachers import _Blocks, _ClassTeachers, _Constant, make_teachers

EPS, DELTA = 2.0, 1e-3


def _plane(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, (X[:, 0] + 0.5 * X[:, 1] > 0.2).astype(int)


def test_forced_labels_are_hard_constraints_at_the_constrained_optimum():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 2))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0.2, 1, -1)
    blocks = np.arange(200) % 20
    fx = rng.normal(size=(5, 2)) * 0.3
    fy = np.where(fx[:, 0] + 0.5 * fx[:, 1] > 0.2, 1, -1)
    fy[0] = -fy[0]  # a wrong label, as a random ⊤ label can be
    h = Halfspaces(2)
    params = h.fit_blocks(X, y, blocks, 20, forced_X=fx, forced_y=fy)
    assert np.all(h.predict_blocks(params, fx) == fy)
    Zf = np.c_[fx, np.ones(5)]
    for b in range(4):  # the same objective by a generic constrained solver
        Z = np.c_[X[blocks == b], np.ones(10)]
        t = y[blocks == b]

        def loss(theta, Z=Z, t=t):
            return np.sum(np.logaddexp(0, -t * (Z @ theta))) + 0.05 * theta @ theta

        cons = [{"type": "ineq", "fun": lambda th, j=j: fy[j] * Zf[j] @ th - 1e-6}
                for j in range(5)]
        ref = minimize(loss, 0.9 * params[b], constraints=cons, method="SLSQP",
                       options={"ftol": 1e-12, "maxiter": 500})
        assert loss(params[b]) <= ref.fun + 1e-5


def test_a_label_that_empties_the_version_space_is_dropped():
    X, y = _plane(40)
    h = Halfspaces(2)
    fx = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    fy = np.array([1, 1, -1])  # the third contradicts the first
    params = h.fit_blocks(X, 2 * y - 1, np.arange(40) % 4, 4, forced_X=fx, forced_y=fy)
    np.testing.assert_array_equal(h.predict_blocks(params, fx[:2]), np.ones((4, 2)))


def test_stop_at_hard_answers_as_one_query_at_a_time():
    values = np.r_[np.full(10, 0.5), np.zeros(20), np.full(5, 0.5)]  # ≤ 22 ⊤ (cutoff)
    a = BetweenThresholds(0.25, 0.75, 1.0, 1e-2, sensitivity=0.002, calibration="stemmer",
                          random_state=3)
    b = BetweenThresholds(0.25, 0.75, 1.0, 1e-2, sensitivity=0.002, calibration="stemmer",
                          random_state=3)
    together, i = [], 0
    while i < values.size:
        codes = a.process(values[i:], stop_at_hard=True)
        assert np.count_nonzero(codes == 0) <= 1 and (codes[:-1] != 0).all()
        together.extend(codes)
        i += codes.size
    one = [b.test(v) for v in values]
    assert together == one


def test_auto_design_uses_public_inputs_and_needs_fewer_teachers():
    # Stemmer's one instance beats composing 16 BSU instances by a factor > 5 here, and
    # the charged instance (same algorithm, the charged lemma's noise) needs fewer still.
    stemmer = design(1.0, 1e-6, 59, "tight", "stemmer", 20_000)
    assert stemmer["min_teachers"] < shrinkage_parameters(1.0, 1e-6, 16)["min_teachers"] / 5
    auto = design(1.0, 1e-6, 59, "tight", "auto", 20_000)
    assert auto["calibration"] == "charged" and auto["max_hard"] == 59
    assert auto["min_teachers"] < 0.7 * stemmer["min_teachers"]
    bsu = design(1.0, 1e-6, 3, "tight", "bsu", 20_000)
    assert design(1.0, 1e-6, 3, "tight", "auto", 20_000)["min_teachers"] < bsu["min_teachers"]
    clf = PrivatePredictor(Halfspaces(2), mode="halfspace", classes=[0, 1]).fit(*_plane(10))
    assert clf.max_hard_queries_ == 3
    # Oblivious: min(⌈VC·ln T⌉, ⌈4·ln(2/δ)⌉) = ⌈3·ln 10⁴⌉ = 28 for halfspaces in R².
    clf = PrivatePredictor(Halfspaces(2), mode="oblivious", classes=[0, 1],
                           delta=1e-6).fit(*_plane(10))
    assert clf.max_hard_queries_ == 28 and clf.calibration_ == "charged"
    clf = PrivatePredictor(estimator=DecisionTreeClassifier(), classes=[0, 1],
                           delta=1e-6).fit(*_plane(10))  # VC unknown: Stemmer's cutoff
    assert clf.max_hard_queries_ == 59


def test_auto_mode_takes_halfspace_for_halfspace_teachers():
    X, y = _plane(10)
    assert PrivatePredictor(classes=[0, 1]).fit(X, y).mode_ == "halfspace"
    lr = PrivatePredictor(estimator=LogisticRegression(), classes=[0, 1]).fit(X, y)
    assert lr.mode_ == "halfspace" and lr.max_hard_queries_ == 3
    tree = PrivatePredictor(estimator=DecisionTreeClassifier(), classes=[0, 1]).fit(X, y)
    assert tree.mode_ == "oblivious"
    with pytest.raises(ValueError, match="halfspace teachers"):
        PrivatePredictor(estimator=DecisionTreeClassifier(), mode="halfspace",
                         classes=[0, 1]).fit(X, y)
    # LogisticRegression teachers in halfspace mode learn the plane.
    clf = PrivatePredictor(estimator=LogisticRegression(), epsilon=EPS, delta=DELTA,
                           classes=[0, 1], random_state=0, n_queries=2000)
    Xq, yq = _plane(2000, seed=5)
    assert np.mean(clf.fit(*_plane(20_000)).predict(Xq) == yq) > 0.9


def _stemmer(**kw):
    params = dict(epsilon=EPS, delta=DELTA, classes=[0, 1], random_state=0,
                  calibration="stemmer", mode="oblivious")
    return PrivatePredictor(Halfspaces(2), **{**params, **kw})


@pytest.mark.parametrize("calibration", ["stemmer", "charged"])
def test_single_instance_cannot_be_resumed_by_a_copy(calibration):
    X, y = _plane(4000)
    clf = _stemmer(calibration=calibration).fit(X, y)
    assert clf.calibration_ == calibration
    before = copy.deepcopy(clf)
    clf.predict(_plane(50, seed=1)[0])
    spent = clf.budget_.spent
    with pytest.raises(QueryBudgetExhaustedError, match="another copy"):
        before.predict(_plane(5, seed=2)[0])
    assert clf.budget_.spent == spent
    clf.predict(_plane(50, seed=3)[0])  # the original keeps answering, for free
    assert clf.budget_.spent == spent


@pytest.mark.parametrize("calibration", ["stemmer", "charged"])
def test_cap_stays_hard_inside_one_instance(calibration):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(3000, 2)), rng.integers(0, 2, 3000)  # no structure
    clf = _stemmer(max_hard_queries=4, calibration=calibration).fit(X, y)
    with pytest.raises(QueryBudgetExhaustedError) as info:
        clf.predict(rng.normal(size=(20_000, 2)) * 0.01)
    assert clf.n_hard_queries_ == 4 == len(clf.hard_queries_)
    assert info.value.n_answered < 20_000


def test_logistic_regression_teachers_run_as_batched_halfspaces():
    X, y = _plane(50)
    data = _Blocks(X, 2 * y - 1, np.arange(50) % 5, 5)
    teachers = make_teachers(None, LogisticRegression(C=3.0), data)
    assert isinstance(teachers, _ClassTeachers) and teachers.hypotheses.C == 3.0
    other = make_teachers(None, LogisticRegression(class_weight="balanced"), data)
    assert not isinstance(other, _ClassTeachers)
    clf = PrivatePredictor(estimator=LogisticRegression(), epsilon=EPS, delta=DELTA,
                           classes=[0, 1], random_state=0, n_queries=2000)
    X, y = _plane(20_000)
    Xq, yq = _plane(2000, seed=5)
    assert np.mean(clf.fit(X, y).predict(Xq) == yq) > 0.9


def test_one_class_blocks_are_constants_never_fitted():
    X = np.zeros((30, 1))
    y = np.r_[np.ones(10), -np.ones(10), np.r_[np.ones(5), -np.ones(5)]].astype(np.int8)
    data = _Blocks(X, y, np.repeat(np.arange(3), 10), 3)
    teachers = make_teachers(None, DecisionTreeClassifier(max_depth=1), data)
    teachers.fit(None, None)
    assert [type(m) for m in teachers.models[:2]] == [_Constant, _Constant]
    assert not isinstance(teachers.models[2], _Constant)
