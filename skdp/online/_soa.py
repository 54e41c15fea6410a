"""The non-private Standard Optimal Algorithm and the base-learner protocol.

:class:`MistakeBoundedLearner` is the contract the private learners (DP-SOA of Golowich &
Livni, the adaptive learner of Li, Wang & Ye) rely on: "any deterministic online learner
with a mistake bound" (Golowich & Livni 2021, §2 and footnote 3; Li, Wang & Ye 2024, §3:
"the SOA can be replaced by any deterministic online learner with bounded number of
mistakes"). :class:`SOALearner` implements it; :class:`SOAClassifier` wraps it as a
scikit-learn estimator.
"""

import warnings
from collections.abc import Hashable
from typing import Protocol, runtime_checkable

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets, unique_labels
from sklearn.utils.validation import check_is_fitted, validate_data

from ..hypotheses.littlestone import version_space

__all__ = ["MistakeBoundedLearner", "SOAClassifier", "SOALearner", "first_disagreement"]

_FIRST_CHUNK = 32


@runtime_checkable
class MistakeBoundedLearner(Protocol):
    """Deterministic, mistake-bounded online learner over the domain {0, …, N−1}.

    Labels are ±1. A learner is a *state*; the private learners keep many of them (one per
    tree node / sibling sequence) and rely on:

    * determinism: the state after a sequence S depends on S only, so ``A(S)`` is well
      defined and two copies fed the same sequence agree;
    * a mistake bound ``mistake_bound`` on every realizable sequence;
    * a mistake changes the hypothesis (Golowich & Livni 2021, footnote 3), and
      ``hypothesis_key()`` is a hashable identity of the current hypothesis
      (``A(S₁) = A(S₂)`` iff the keys are equal), ``None`` once the sequence proved
      non-realizable (the papers' ⊥).

    Attributes
    ----------
    n_domain : int
        N, the size of the domain.
    mistake_bound : int
        Mistakes on any realizable sequence are at most this (Ldim for the SOA).
    """

    n_domain: int
    mistake_bound: int

    def predict_one(self, x: int) -> int:
        """±1 label of the current hypothesis at domain index x."""

    def predict(self, x) -> np.ndarray:
        """±1 labels (int8) at an array of domain indices: the state is fixed, so vectorised."""

    def update(self, x: int, y: int) -> bool:
        """Feed one example; return True iff the state (hence possibly the hypothesis) changed."""

    def copy(self) -> "MistakeBoundedLearner":
        """An independent learner in the same state."""

    def hypothesis_key(self) -> Hashable | None:
        """Hashable identity of the current hypothesis; None for ⊥ (non-realizable input)."""


def first_disagreement(a, b, *, chunk=4096):
    """First domain index where two base learners' hypotheses differ (None if nowhere).

    The tournament step of DP-SOA / Li–Wang–Ye ``Update`` ("choose x̄ with
    A(S₁)(x̄) ≠ A(S₂)(x̄)") for learners on the same domain; scans the domain in vectorised
    chunks, so thresholds on 2¹⁶ points cost a few array comparisons.

    Parameters
    ----------
    a, b : MistakeBoundedLearner
    chunk : int, default=4096

    Returns
    -------
    int or None
    """
    if a.n_domain != b.n_domain:
        raise ValueError(f"learners on different domains ({a.n_domain} vs {b.n_domain}).")
    for start in range(0, a.n_domain, chunk):
        x = np.arange(start, min(a.n_domain, start + chunk))
        diff = np.flatnonzero(a.predict(x) != b.predict(x))
        if diff.size:
            return int(x[diff[0]])
    return None


class SOALearner:
    """The (conservative) Standard Optimal Algorithm: a :class:`MistakeBoundedLearner`.

    Keeps the version space V of the hypotheses consistent with the examples it *erred*
    on, predicts the SOA label (see :func:`skdp.hypotheses.littlestone.soa_predict`), and on
    a mistake at (x, y) replaces V by V_x^y. Each mistake lowers Ldim(V) by at least one,
    so at most Ldim(C) mistakes on a realizable sequence (Littlestone 1988); updating only
    on mistakes keeps that bound, makes the state change exactly on mistakes, and lets a
    block be predicted by one vectorised look-up.

    Parameters
    ----------
    hypothesis_class : FiniteClass, label matrix or version space
        See :func:`skdp.hypotheses.littlestone.version_space`.

    Attributes
    ----------
    version_space : version space
        Current V (immutable; replaced on updates).
    n_mistakes : int
        Mistakes made through :meth:`update`.
    failed : bool
        True once an example was inconsistent with V (⊥); the learner then keeps its last
        hypothesis and ignores further updates.

    Notes
    -----
    Being conservative, the learner detects non-realizability only when a *mistake*
    contradicts every hypothesis left: e.g. [(x, +1), (x, −1)] is not flagged if the SOA
    predicted +1 at x. The private learners only rely on the mistake bound on realizable
    sequences (their privacy never depends on it), so an undetected ⊥ costs utility only.
    Copies share the (immutable) version space and the memoised Ldim oracle: ``copy`` is
    O(1).
    """

    def __init__(self, hypothesis_class, **limits):
        self.version_space = version_space(hypothesis_class, **limits)
        self.n_domain = self.version_space.n_domain
        self.mistake_bound = self.version_space.ldim()
        self.n_mistakes = 0
        self.failed = False

    def predict_one(self, x):
        return int(self.version_space.predict(x))

    def predict(self, x):
        return self.version_space.predict(x)

    def update(self, x, y):
        if self.failed or self.predict_one(x) == y:
            return False
        self.n_mistakes += 1
        new = self.version_space.restrict(x, y)
        if new.is_empty:
            self.failed = True
        else:
            self.version_space = new
        return True

    def copy(self):
        new = object.__new__(SOALearner)
        new.__dict__.update(self.__dict__)  # version spaces are immutable: sharing is safe
        return new

    def hypothesis_key(self):
        return None if self.failed else self.version_space.soa_key()

    def __repr__(self):
        return (f"SOALearner(n_domain={self.n_domain}, mistake_bound={self.mistake_bound}, "
                f"n_mistakes={self.n_mistakes}, failed={self.failed})")


class SOAClassifier(ClassifierMixin, BaseEstimator):
    """Standard Optimal Algorithm over a finite class (non-private; the ceiling to compare to).

    X holds domain indices: shape (n, 1), integers in [0, N). Each row is predicted with the
    current SOA hypothesis, then used to update (conservatively: only on mistakes). On a
    realizable stream at most Ldim(C) mistakes are made — the optimal deterministic mistake
    bound (Littlestone 1988). ``fit`` runs the stream from a fresh start; ``partial_fit``
    continues it, and any split into blocks gives the same model.

    Parameters
    ----------
    hypothesis_class : FiniteClass, array-like label matrix, or version space
        E.g. ``FiniteClass(L)``, ``threshold_class(N)``, or the closed-form
        ``ThresholdVersionSpace(N)`` / ``PointVersionSpace(N)`` for large N (from
        :mod:`skdp.hypotheses.littlestone`). Required (None raises at fit).
    on_inconsistent : {"restart", "freeze"}, default="restart"
        What to do when an example contradicts every hypothesis left (the stream is not
        realizable by the class): ``"restart"`` starts again from the full class and
        applies the example (``n_restarts_`` counts this); ``"freeze"`` keeps the last
        hypothesis and stops updating, with a warning.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[1]`` is the +1 label of the class.
    learner_ : SOALearner
        The base learner (a :class:`MistakeBoundedLearner`).
    mistake_bound_ : int
        Ldim of the class.
    n_mistakes_, n_updates_, n_rounds_seen_, n_restarts_ : int
        Online mistakes, version-space updates, rows seen, restarts.
    n_features_in_ : int
        Always 1.

    References
    ----------
    N. Littlestone. Learning quickly when irrelevant attributes abound: a new
    linear-threshold algorithm. Machine Learning 2(4), 1988.
    N. Golowich, R. Livni. Littlestone classes are privately online learnable. NeurIPS 2021.
    Y. Li, Y. Wang, Y. Ye. Private online learning against an adaptive adversary:
    realizable and agnostic settings, 2024.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.hypotheses.littlestone import threshold_class
    >>> from skdp.online import SOAClassifier
    >>> X = np.array([[3], [5], [4], [0], [7]]); y = (X[:, 0] >= 4).astype(int)
    >>> clf = SOAClassifier(threshold_class(8)).fit(X, y)
    >>> clf.n_mistakes_ <= clf.mistake_bound_, clf.predict([[2], [6]])
    (True, array([0, 1]))
    """

    _parameter_constraints: dict = {
        "hypothesis_class": "no_validation",
        "on_inconsistent": [StrOptions({"restart", "freeze"})],
    }

    def __init__(self, hypothesis_class=None, *, on_inconsistent="restart"):
        self.hypothesis_class = hypothesis_class
        self.on_inconsistent = on_inconsistent

    # ----------------------------------------------------------------- inputs
    def _base_learner(self):
        if self.hypothesis_class is None:
            raise ValueError(
                "SOAClassifier needs a hypothesis_class (a FiniteClass, a label matrix, or "
                "ThresholdVersionSpace(N) / PointVersionSpace(N))."
            )
        return SOALearner(self.hypothesis_class)

    def _indices(self, X, n_domain):
        if X.shape[1] != 1:
            raise ValueError(
                f"{type(self).__name__} expects X of shape (n, 1) holding domain indices, "
                f"got {X.shape[1]} features."
            )
        x = X[:, 0]
        bad = (x != np.round(x)) | (x < 0) | (x >= n_domain)
        if bad.any():
            raise ValueError(
                f"{type(self).__name__}: X must hold integer domain indices in "
                f"[0, {n_domain}); got e.g. {x[bad][0]!r}."
            )
        return x.astype(np.intp)

    def _validate_block(self, X, y, classes, first_call):
        X, y = validate_data(self, X, y, reset=first_call, dtype=np.float64,
                             ensure_min_samples=1)
        check_classification_targets(y)
        if first_call:
            found = unique_labels(y) if classes is None else unique_labels(classes)
            if found.size > 2:
                raise ValueError("Only binary classification is supported by SOAClassifier; "
                                 f"got {found.size} classes.")
            if classes is None and found.size < 2:
                raise ValueError("Classifier can't train when only one class is present: "
                                 "pass partial_fit(..., classes=[a, b]).")
            if classes is not None and found.size != 2:
                raise ValueError(f"classes must hold exactly 2 labels, got {found!r}.")
            classes_ = found
        else:
            classes_ = self.classes_
            if classes is not None and not np.array_equal(unique_labels(classes), classes_):
                raise ValueError(f"classes={list(unique_labels(classes))} differs from the "
                                 f"classes of the first partial_fit call, {list(classes_)}.")
        unseen = ~np.isin(y, classes_)
        if unseen.any():
            raise ValueError(f"y contains labels {list(np.unique(y[unseen]))} not in "
                             f"classes {list(classes_)}.")
        return X, np.where(y == classes_[1], 1, -1).astype(np.int8), classes_

    # ----------------------------------------------------------------- fitting
    def _fit_block(self, X, y, classes, *, from_fit, record=False):
        first_call = from_fit or not hasattr(self, "classes_")
        if first_call and classes is None and not from_fit:
            raise ValueError("classes must be passed on the first call to partial_fit "
                             "(e.g. classes=[0, 1]), as for SGDClassifier.")
        learner = self._base_learner() if first_call else self.learner_
        X, ys, classes_ = self._validate_block(X, y, classes, first_call)
        idx = self._indices(X, learner.n_domain)
        if first_call:  # only after all validation
            self.classes_ = classes_
            self.learner_ = learner
            self.mistake_bound_ = learner.mistake_bound
            self.n_mistakes_ = self.n_updates_ = self.n_rounds_seen_ = self.n_restarts_ = 0
        mistakes = self._consume(idx, ys, record)
        self.n_rounds_seen_ += idx.shape[0]
        return mistakes

    def _consume(self, idx, ys, record):
        n = idx.shape[0]
        wrong_at = np.zeros(n, dtype=bool) if record else None
        pos, chunk = 0, _FIRST_CHUNK
        while pos < n:
            end = min(n, pos + chunk)
            wrong = self.learner_.predict(idx[pos:end]) != ys[pos:end]
            if not wrong.any() or self.learner_.failed:
                self.n_mistakes_ += int(np.count_nonzero(wrong))
                if record:
                    wrong_at[pos:end] = wrong
                pos, chunk = end, chunk * 2
                continue
            hit = pos + int(np.argmax(wrong))
            self.n_mistakes_ += 1
            if record:
                wrong_at[hit] = True
            self._update(int(idx[hit]), int(ys[hit]))
            pos, chunk = hit + 1, _FIRST_CHUNK
        return wrong_at

    def _update(self, x, y):
        learner = self.learner_
        learner.update(x, y)
        self.n_updates_ += 1
        if learner.failed:
            if self.on_inconsistent == "restart":
                self.n_restarts_ += 1
                fresh = self._base_learner()
                fresh.update(x, y)
                if fresh.failed:  # no hypothesis labels x as y: keep the full class
                    fresh = self._base_learner()
                self.learner_ = fresh
            else:
                warnings.warn(
                    "SOAClassifier: the stream is not realizable by the class; the learner "
                    "keeps its last hypothesis and stops updating (on_inconsistent='freeze').",
                    UserWarning, stacklevel=4,
                )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Run the SOA over the rows of X in order, from a fresh start.

        Parameters
        ----------
        X : array-like of shape (n_samples, 1)
            Domain indices.
        y : array-like of shape (n_samples,)
            Two class labels.

        Returns
        -------
        self
        """
        self._fit_block(X, y, None, from_fit=True)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None):
        """Continue the stream with the rows of X, in order.

        Parameters
        ----------
        X : array-like of shape (n_samples, 1)
        y : array-like of shape (n_samples,)
        classes : array-like of shape (2,), optional
            Both labels; required on the first call.

        Returns
        -------
        self
        """
        self._fit_block(X, y, classes, from_fit=False)
        return self

    def _partial_fit_mistakes(self, X, y, classes=None):
        """``partial_fit`` that also returns the per-row online mistakes (bool array)."""
        return self._fit_block(X, y, classes, from_fit=False, record=True)

    # Unvalidated one-round fast path for run_online (±1 labels, domain index x already
    # checked by the adversary): ~100× cheaper than partial_fit on one row.
    def _online_predict(self, x):
        """±1 prediction of the current hypothesis at x (before the first fit: of the
        fresh SOA the first round will use)."""
        learner = self.learner_ if hasattr(self, "learner_") else self._base_learner()
        return learner.predict_one(x)

    def _online_step(self, x, y, classes):
        """One round with ±1 label y; returns True iff the prediction was a mistake."""
        if not hasattr(self, "learner_"):
            return bool(self._partial_fit_mistakes([[x]], [y], classes=classes)[0])
        if not np.array_equal(self.classes_, [-1, 1]):
            raise ValueError("run_online needs classes_ == [-1, 1].")
        wrong = self.learner_.predict_one(x) != y
        self.n_rounds_seen_ += 1
        if wrong:
            self.n_mistakes_ += 1
            if not self.learner_.failed:
                self._update(int(x), int(y))
        return bool(wrong)

    def predict(self, X):
        """Labels of the current SOA hypothesis at the domain indices in X.

        Parameters
        ----------
        X : array-like of shape (n_samples, 1)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        idx = self._indices(X, self.learner_.n_domain)
        return self.classes_[(self.learner_.predict(idx) > 0).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = False
        return tags
