"""A durable predictor with estimator teachers saves only what changed (issue 32).

The teachers as ``fit`` made them are held by the model file, like the training rows:
the saved state refers to them by token, so a save holds only the teachers a hard
query refitted (``teacher_update="refit"``), none with ``"none"``. A copy loaded from
the model file continues the same mechanism either way.
"""

import io
import pickle
import warnings

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

from skdp import PrivacyBudget, TestingSeed
from skdp.prediction import PrivatePredictor
from skdp.prediction._teachers import _FittedModels

RNG = np.random.default_rng(3)
X = RNG.random((3000, 2))
Y = (X[:, 0] + X[:, 1] > 1).astype(int)
# A few queries on the boundary, so that the stream has hard queries (fewer than the cap).
Q1 = np.concatenate([np.c_[np.linspace(0.3, 0.7, 6), 1 - np.linspace(0.3, 0.7, 6)] + 0.005,
                     RNG.random((30, 2))])
Q2 = RNG.random((40, 2))


def _fitted(tmp_path, update):
    budget = PrivacyBudget(10.0, 1e-5, store="sqlite:///" + str(tmp_path / "ledger.db"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return PrivatePredictor(estimator=DecisionTreeClassifier(random_state=0), epsilon=2.0,
                                max_hard_queries=20, classes=[0, 1], budget=budget,
                                teacher_update=update, random_state=TestingSeed(0)).fit(X, Y)


@pytest.mark.parametrize("update", ["none", "refit"])
def test_saved_state_holds_only_the_changed_teachers(tmp_path, update):
    clf = _fitted(tmp_path, update)
    teachers = clf._state.teachers
    assert isinstance(teachers.base, _FittedModels)
    full = len(pickle.dumps(teachers.models))
    clf.make_durable()
    model = pickle.dumps(clf)  # the model file: holds the fitted teachers
    first = clf.predict_proba(Q1)
    assert clf.n_hard_queries_ >= 1
    payload = clf._state._payload()
    changed = [m for m, b in zip(teachers.models, teachers.base.models, strict=True)
               if m is not b]
    refs = []
    unpickler = pickle.Unpickler(io.BytesIO(payload))
    unpickler.persistent_load = lambda pid: refs.append(pid[0]) or clf._state._stored_once()[
        tuple(pid)]
    unpickler.load()
    # Every unchanged teacher is a reference; the changed ones are saved in full.
    assert refs.count("model") == len(teachers.models) - len(changed)
    if update == "none":
        assert not changed
        assert len(payload) < full / 10
    else:
        assert changed
    # A copy from the model file continues the same mechanism from the saved state.
    back = pickle.loads(model)
    np.testing.assert_array_equal(back.predict_proba(Q1), first)
    new = back.predict_proba(Q2)
    assert np.array_equal(clf.predict_proba(Q2), new)
    assert back.n_hard_queries_ == clf.n_hard_queries_
    for a, b in zip(back._state.teachers.models, clf._state.teachers.models, strict=True):
        assert np.array_equal(a.predict(Q2), b.predict(Q2))


def test_a_state_of_other_teachers_is_refused(tmp_path):
    clf = _fitted(tmp_path, "none")
    other = _fitted(tmp_path / "..", "none")  # fitted again: new tokens
    with pytest.raises(ValueError, match="does not hold"):
        other._state._restore(clf._state._payload(), 1)
