"""TreeVotes (Lemma T): the stacked vote of tree-ensemble teachers is each teacher's own
``predict``, bit for bit, and the estimator teachers use it."""

import numpy as np
import pytest
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.tree import DecisionTreeClassifier

from skdp.prediction._teachers import _Blocks, _Constant, _EstimatorTeachers
from skdp.prediction._tree_votes import TreeVotes, stackable


def _blocks(seed, n=400, k=12, d=3):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = np.where(X[:, 0] + X[:, 1] ** 2 + 0.3 * rng.normal(size=n) > 0.8, 1, -1)
    return rng, _Blocks(X, y.astype(np.int8), np.arange(n) % k, k)


MODELS = [
    RandomForestClassifier(n_estimators=7, random_state=0),
    RandomForestClassifier(n_estimators=5, max_depth=3, bootstrap=False, random_state=1),
    ExtraTreesClassifier(n_estimators=6, random_state=2),
    DecisionTreeClassifier(max_depth=4, random_state=3),
    # Weighted leaves give fractions that tie (½, ½) and sums that round.
    RandomForestClassifier(n_estimators=4, min_samples_leaf=2, random_state=4),
]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: type(m).__name__)
@pytest.mark.parametrize("seed", range(2))
def test_stacked_votes_equal_every_teachers_predict(model, seed):
    rng, data = _blocks(seed)
    teachers = _EstimatorTeachers(model, data)
    forced_X = rng.random((3, data.X.shape[1]))
    teachers.fit(forced_X, np.array([1, -1, 1], dtype=np.int8))
    teachers.models[5] = _Constant(1)  # constants mix in
    teachers.models[6] = _Constant(-1)
    teachers._trees = None
    assert teachers._tree_votes() is not None
    # Rows far outside and exactly on thresholds (float32 rounding at the cut).
    Xq = np.concatenate([rng.random((500, 3)), rng.normal(size=(100, 3)) * 10])
    trees = [e for m in teachers.models if hasattr(m, "fit")
             for e in getattr(m, "estimators_", [m])]
    cuts = np.concatenate([t.tree_.threshold[t.tree_.children_left >= 0] for t in trees])
    feats = np.concatenate([t.tree_.feature[t.tree_.children_left >= 0] for t in trees])
    on = rng.random((len(cuts), 3))
    on[np.arange(len(cuts)), feats] = cuts
    Xq = np.concatenate([Xq, on, np.nextafter(on, np.inf)])
    each = np.array([m.predict(Xq) for m in teachers.models]) > 0
    assert np.array_equal(teachers._tree_votes().counts(Xq), each.sum(axis=0))
    assert np.allclose(teachers.vote(Xq), each.mean(axis=0))
    for x, want in zip(Xq[:50], each.T[:50], strict=True):
        assert np.array_equal(teachers.predict_one(x) > 0, want)


def test_other_models_are_not_stacked_and_the_cache_is_not_pickled():
    import pickle

    _, data = _blocks(0, n=300, k=10)
    boosted = _EstimatorTeachers(GradientBoostingClassifier(n_estimators=3), data)
    boosted.fit(None, None)
    assert boosted._tree_votes() is None and not stackable(boosted.models)
    forest = _EstimatorTeachers(RandomForestClassifier(n_estimators=3, random_state=0), data)
    forest.fit(None, None)
    votes = forest.vote(data.X)
    assert isinstance(forest._trees, TreeVotes)
    copy = pickle.loads(pickle.dumps(forest))
    assert copy._trees is None and np.array_equal(copy.vote(data.X), votes)


def test_replace_keeps_the_stack_equal_to_a_rebuild():
    rng, data = _blocks(6)
    teachers = _EstimatorTeachers(RandomForestClassifier(n_estimators=4, random_state=0),
                                  data)
    teachers.fit(None, None)
    stack = teachers._tree_votes()
    forced = rng.random((2, 3)), np.array([1, -1], dtype=np.int8)
    teachers.fit(*forced, only=[0, 3, 7])
    assert teachers._trees is stack  # updated in place, not rebuilt
    Xq = rng.random((300, 3))
    each = np.array([m.predict(Xq) for m in teachers.models]) > 0
    assert np.array_equal(stack.counts(Xq), each.sum(axis=0))
    stack.replace(4, _Constant(1))
    stack.replace(4, teachers.models[4])
    assert np.array_equal(stack.counts(Xq), each.sum(axis=0))
