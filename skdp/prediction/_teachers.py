"""Teachers: one hypothesis per disjoint block, retrained with forced labels.

Two backends with one interface — ``fit(forced_X, forced_y, through, only=None)``
and ``vote(X)`` (fraction of teachers voting +1):

* :class:`_ClassTeachers` wraps a :class:`~skdp.hypotheses.HypothesisClass`
  (vectorised over all blocks);
* :class:`_EstimatorTeachers` wraps any scikit-learn classifier, one clone per
  block, forced labels appended as rows (weighted above the block when the
  estimator's ``fit`` takes ``sample_weight``), fitted in ``n_jobs`` processes.
  Blocks (plus forced rows) holding one class are constants, never fitted. Linear
  teachers are stacked into one matrix for voting.

:func:`make_teachers` picks the backend; a binary L2 ``LogisticRegression`` goes to
:class:`~skdp.hypotheses.Halfspaces` with the same C (one batched Newton solve for
all blocks, forced labels as hard constraints).
"""

import numbers
import uuid

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import has_fit_parameter

from ..hypotheses import Halfspaces, HypothesisClass
from ._linear_votes import LinearVotes
from ._tree_votes import TreeVotes, stackable

__all__ = []

# Constraints of the teacher parameters every ensemble predictor takes.
TEACHER_PARAMETER_CONSTRAINTS = {
    "hypotheses": [HypothesisClass, None],
    "estimator": "no_validation",
    "n_teachers": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
}

_CHUNK = 4096


class _Blocks:
    """The private rows, their ±1 labels and block ids (grows with partial_fit).

    ``token`` names this exact set of rows (a new one at every ``add``): a durable
    predictor's saved state refers to its rows by it instead of storing them again
    (``skdp.prediction._state``).
    """

    def __init__(self, X, y, blocks, n_blocks):
        self.X = X
        self.y = y
        self.blocks = blocks
        self.n_blocks = int(n_blocks)
        self.token = uuid.uuid4().hex

    def add(self, X, y, blocks_local, n_new):
        self.X = np.concatenate([self.X, X])
        self.y = np.concatenate([self.y, y])
        self.blocks = np.concatenate([self.blocks, blocks_local + self.n_blocks])
        self.n_blocks += int(n_new)
        self.token = uuid.uuid4().hex


def _as_hypothesis_class(estimator, n_features):
    """``Halfspaces(d, C)`` for an estimator whose per-block fit is that class's
    batched logistic ERM (plain binary L2 LogisticRegression), else None."""
    if type(estimator) is not LogisticRegression:
        return None
    params = estimator.get_params()
    if params["penalty"] not in ("l2", "deprecated") or params.get("l1_ratio") not in (None, 0):
        return None
    if not params["fit_intercept"] or params["class_weight"] is not None:
        return None
    return Halfspaces(n_features, C=float(params["C"]))


def make_teachers(hypotheses, estimator, data, n_jobs=None, update="refit"):
    """The teachers backend for a hypothesis class or an sklearn estimator (``update``:
    see :class:`_EstimatorTeachers`; a hypothesis class's teachers are always its exact
    ERMs)."""
    if hypotheses is None:
        hypotheses = _as_hypothesis_class(estimator, data.X.shape[1])
        if hypotheses is None:
            return _EstimatorTeachers(estimator, data, n_jobs, update)
    return _ClassTeachers(hypotheses, data)


def _partition(n, k, rng):
    """Block ids for n rows: a uniformly random split into k blocks of sizes ⌊n/k⌋ or ⌈n/k⌉."""
    blocks = np.empty(n, dtype=np.intp)
    blocks[rng.permutation(n)] = np.arange(n) % k
    return blocks


class _ClassTeachers:
    def __init__(self, hypotheses, data):
        self.hypotheses = hypotheses
        self.data = data
        self.params = None
        self._votes = None

    def fit(self, forced_X, forced_y, through=None, only=None):
        d = self.data
        if only is None:
            self.params = self.hypotheses.fit_blocks(
                d.X, d.y, d.blocks, d.n_blocks, forced_X=forced_X, forced_y=forced_y,
                through=through,
            )
            self._votes = self._linear_votes()
            return
        only = np.asarray(only, dtype=np.intp)
        if only.size == 0:
            return
        remap = np.full(d.n_blocks, -1, dtype=np.intp)
        remap[only] = np.arange(only.size)
        rows = remap[d.blocks] >= 0
        new = self.hypotheses.fit_blocks(
            d.X[rows], d.y[rows], remap[d.blocks[rows]], only.size,
            forced_X=forced_X, forced_y=forced_y, through=through,
        )
        if self.params is None or len(self.params) < d.n_blocks:
            grown = np.zeros((d.n_blocks, *np.shape(new)[1:]), dtype=np.asarray(new).dtype)
            if self.params is not None:
                grown[: len(self.params)] = self.params
            self.params = grown
        self.params[only] = new
        self._votes = self._linear_votes()

    def _linear_votes(self):
        """Halfspace teachers vote through :class:`LinearVotes` (θ·(x, 1) ≥ 0)."""
        if not isinstance(self.hypotheses, Halfspaces):
            return None
        return LinearVotes(self.params, 0, len(self.params))

    def predict_one(self, x):
        return self.hypotheses.predict_blocks(self.params, x[None, :])[:, 0]

    def vote(self, X):
        if self._votes is not None:
            return self._votes.vote(X)
        return self.hypotheses.vote(self.params, X)


class _Constant:
    """A teacher whose block (plus forced rows) holds one class only."""

    def __init__(self, label):
        self.label = int(label)

    def predict(self, X):
        return np.full(X.shape[0], self.label, dtype=np.int8)


def _training_set(X, y, forced_X, forced_y):
    """Block rows plus forced rows (weighted above the whole block)."""
    w = np.ones(y.size)
    if forced_X is not None and len(forced_X):
        w = np.concatenate([w, np.full(len(forced_y), float(y.size + 1))])
        X = np.concatenate([X, forced_X])
        y = np.concatenate([y, forced_y])
    return X, y, w


def _fit_clone(estimator, weighted, X, y, w):
    model = clone(estimator)
    if weighted:
        return model.fit(X, y, sample_weight=w)
    return model.fit(X, y)


class _FittedModels:
    """The teachers as the first ``fit`` made them, named by a token (a new one at every
    full fit).

    A durable predictor's saved state refers to these models by token and index
    instead of storing them again (``skdp.prediction._state``), so a save writes only
    the teachers a hard query refitted — none with ``update="none"``.
    """

    def __init__(self, models):
        self.models = list(models)
        self.token = uuid.uuid4().hex


class _EstimatorTeachers:
    """Teachers that are clones of an sklearn classifier, one per block.

    ``update`` is what a hard query (x, s) does to a teacher that disagrees with s at x:
    ``"refit"`` fits it again on its block plus every hard query so far; ``"none"``
    leaves it as fitted (the predictor answers x from its transcript if asked again).
    """

    def __init__(self, estimator, data, n_jobs=None, update="refit"):
        self.estimator = estimator
        self.data = data
        self.models = []
        self.n_jobs = n_jobs
        self.update = update
        self.base = None
        self._weighted = has_fit_parameter(estimator, "sample_weight")
        self._stack = None
        self._trees = None

    def __getstate__(self):
        # The stacked trees are a cache of the models (rebuilt on demand): not saved
        # with a durable predictor's state or a pickle.
        state = self.__dict__.copy()
        state["_trees"] = None
        return state

    def __setstate__(self, state):
        state.setdefault("_trees", None)
        state.setdefault("update", "refit")
        state.setdefault("base", None)
        self.__dict__.update(state)

    def _tree_votes(self):
        """The teachers stacked for voting (:class:`TreeVotes`) if every one is a tree
        ensemble or a constant, else None; built on first use (False: known not to be
        stackable) and kept in step by later fits (:meth:`TreeVotes.replace`)."""
        if self._trees is None:
            self._trees = (self._stack is None and stackable(self.models)
                           and TreeVotes(self.models))
        return self._trees or None

    def to_refit(self, teachers):
        """The teachers a hard query refits: all that disagree with its label
        (``update="refit"``), none (``"none"``)."""
        return teachers if self.update == "refit" else teachers[:0]

    def fit(self, forced_X, forced_y, through=None, only=None):
        if through is not None and len(through):
            raise ValueError("estimator teachers do not support mode='halfspace'.")
        d = self.data
        order = np.argsort(d.blocks, kind="stable")
        bounds = np.searchsorted(d.blocks[order], np.arange(d.n_blocks + 1))
        todo = range(d.n_blocks) if only is None else np.asarray(only, dtype=np.intp)
        while len(self.models) < d.n_blocks:
            self.models.append(None)
        jobs = []
        for b in todo:
            rows = order[bounds[b] : bounds[b + 1]]
            X, y, w = _training_set(d.X[rows], d.y[rows], forced_X, forced_y)
            if y.size == 0 or np.all(y == y[0]):  # one class: a constant, no fit
                self.models[b] = _Constant(y[0] if y.size else 1)
            else:
                jobs.append((b, X, y, w))
        fitted = Parallel(n_jobs=self.n_jobs)(
            delayed(_fit_clone)(self.estimator, self._weighted, X, y, w) for _, X, y, w in jobs
        )
        for (b, *_), model in zip(jobs, fitted, strict=True):
            self.models[b] = model
        if only is None:
            self.base = _FittedModels(self.models)
        self._stack = self._linear_stack()
        trees = self._trees
        if (trees and only is not None and trees.n_teachers == d.n_blocks
                and all(isinstance(self.models[b], _Constant) or stackable([self.models[b]])
                        for b in todo)):
            for b in todo:  # in step without a rebuild (TreeVotes.replace)
                trees.replace(b, self.models[b])
        else:
            self._trees = None

    def _linear_stack(self):
        """(LinearVotes, W, c, lo, hi) if every teacher is a binary linear model or a
        constant (a constant: W = 0 and lo = hi = its label), else None."""
        k, d = len(self.models), self.data.X.shape[1]
        W, c = np.zeros((k, d)), np.zeros(k)
        lo, hi = np.zeros(k, dtype=np.int8), np.zeros(k, dtype=np.int8)
        linear = np.zeros(k, dtype=bool)
        for i, m in enumerate(self.models):
            if isinstance(m, _Constant):
                lo[i] = hi[i] = m.label
                continue
            coef = getattr(m, "coef_", None)
            classes = getattr(m, "classes_", None)
            if (coef is None or np.shape(coef)[0] != 1 or classes is None
                    or list(classes) != [-1, 1]):
                return None
            W[i], c[i] = np.ravel(coef), np.ravel(m.intercept_)[0]
            lo[i], hi[i], linear[i] = -1, 1, True
        # decision_function > 0 votes +1 (strict); constants are a vote offset.
        votes = LinearVotes(np.c_[W[linear], c[linear]],
                            int(np.count_nonzero(~linear & (hi > 0))), k, strict=True)
        return votes, W, c, lo, hi

    def predict_one(self, x):
        if self._stack is not None:
            _, W, c, lo, hi = self._stack
            return np.where(W @ x + c > 0, hi, lo).astype(np.int8)
        trees = self._tree_votes()
        if trees is not None:
            return trees.teacher_labels(x)
        return np.array([int(m.predict(x[None, :])[0]) for m in self.models], dtype=np.int8)

    def vote(self, X):
        if self._stack is not None:
            return self._stack[0].vote(X)
        trees = self._tree_votes()
        if trees is not None:
            return trees.vote(X)
        k = len(self.models)
        total = np.zeros(X.shape[0])
        for m in self.models:
            total += np.asarray(m.predict(X)) > 0
        return total / k
