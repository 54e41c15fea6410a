"""The non-private Standard Optimal Algorithm and the base-learner protocol.

:class:`MistakeBoundedLearner` is the contract the private learners (DP-SOA of Golowich &
Livni, the adaptive learner of Li, Wang & Ye) rely on: "any deterministic online learner
with a mistake bound" (Golowich & Livni 2021, §2 and footnote 3; Li, Wang & Ye 2024, §3:
"the SOA can be replaced by any deterministic online learner with bounded number of
mistakes"). :class:`SOALearner` implements it; :class:`SOAClassifier` wraps it as a
scikit-learn estimator.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.utils._param_validation import StrOptions

from ..hypotheses.littlestone import PointVersionSpace, ThresholdVersionSpace, version_space
from ._base import OnlineDomainClassifier

__all__ = ["MistakeBoundedLearner", "SOAClassifier", "SOALearner", "first_disagreement"]


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
    conservative : bool, optional
        Not part of the required protocol: a learner whose ``update`` changes the state
        only on mistakes may set it to True, which lets the private learners find the
        rows that change a vertex by one vectorised ``predict`` (otherwise every row
        assigned to a vertex is fed to ``update``).
    """

    n_domain: int
    mistake_bound: int

    def predict_one(self, x: int) -> int:
        """±1 label of the current hypothesis at domain index x."""

    def predict(self, x: ArrayLike) -> NDArray[np.int8]:
        """±1 labels (int8) at an array of domain indices: the state is fixed, so vectorised."""

    def update(self, x: int, y: int) -> bool:
        """Feed one example; return True iff the state (hence possibly the hypothesis) changed."""

    def copy(self) -> MistakeBoundedLearner:
        """An independent learner in the same state."""

    def hypothesis_key(self) -> Hashable | None:
        """Hashable identity of the current hypothesis; None for ⊥ (non-realizable input)."""


def first_disagreement(a: MistakeBoundedLearner, b: MistakeBoundedLearner, *,
                       chunk: int = 256) -> int | None:
    """First domain index where two base learners' hypotheses differ (None if nowhere).

    The tournament step of DP-SOA / Li–Wang–Ye ``Update`` ("choose x̄ with
    A(S₁)(x̄) ≠ A(S₂)(x̄)") for learners on the same domain. Two :class:`SOALearner` on
    thresholds or points answer in closed form; otherwise the domain is scanned in
    vectorised chunks that double from ``chunk``.

    Parameters
    ----------
    a, b : MistakeBoundedLearner
    chunk : int, default=256

    Returns
    -------
    int or None
    """
    if a.n_domain != b.n_domain:
        raise ValueError(f"learners on different domains ({a.n_domain} vs {b.n_domain}).")
    fa = a._closed_form() if isinstance(a, SOALearner) else None
    fb = b._closed_form() if isinstance(b, SOALearner) else None
    if fa is not None and fb is not None and fa[0] == fb[0]:
        if fa == fb:
            return None
        if fa[0] == "threshold":  # labels differ exactly on [min, max)
            return min(fa[1], fb[1])
        return min(p for p in (fa[1], fb[1]) if p is not None)  # the positive point(s)
    start = 0
    while start < a.n_domain:
        x = np.arange(start, min(a.n_domain, start + chunk))
        diff = np.flatnonzero(a.predict(x) != b.predict(x))
        if diff.size:
            return int(x[diff[0]])
        start, chunk = start + chunk, chunk * 2
    return None


def _first_positive_threshold(vs):
    """First x the SOA labels +1 on a non-empty ThresholdVersionSpace (N if none).

    Pure-Python binary search on the closed form of ``ThresholdVersionSpace.predict``
    (labels are monotone in x): a few microseconds instead of numpy calls per probe.
    """
    lo, size = vs.lo, vs.size

    def plus(x):
        n_plus = min(max(x - lo + 1, 0), size)
        n_minus = size - n_plus
        l_plus, l_minus = n_plus.bit_length() - 1, n_minus.bit_length() - 1
        return l_plus > l_minus or (l_plus == l_minus and n_plus > n_minus)

    a, b = 0, vs.n_domain
    while a < b:
        mid = (a + b) // 2
        if plus(mid):
            b = mid
        else:
            a = mid + 1
    return a


_UNSET = object()


def base_learner_for(hypothesis_class: Any, owner: str, *,
                     on_inconsistent: str = "bottom") -> MistakeBoundedLearner:
    """The base learner a private online learner runs on ``hypothesis_class``.

    A :class:`MistakeBoundedLearner` instance plugs in as it is (a copy, so refitting
    starts from the same fresh state); anything else is a class for :class:`SOALearner`
    with ``on_inconsistent``. ``owner`` names the estimator in the error raised when no
    class was given.
    """
    if hypothesis_class is None:
        raise ValueError(
            f"{owner} needs a hypothesis_class (a FiniteClass, a label matrix, "
            "ThresholdVersionSpace(N) / PointVersionSpace(N), or a fresh "
            "MistakeBoundedLearner)."
        )
    if isinstance(hypothesis_class, MistakeBoundedLearner):
        return hypothesis_class.copy()
    return SOALearner(hypothesis_class, on_inconsistent=on_inconsistent)


def estimator_base_learner(estimator: Any, paper_preset: bool) -> MistakeBoundedLearner:
    """The base learner of a private estimator with ``hypothesis_class`` and
    ``on_inconsistent`` parameters: ``on_inconsistent`` defaults to ``"bottom"`` (the
    papers' ⊥) under the paper's preset and to ``"skip"`` under the practical one."""
    mode = estimator.on_inconsistent or ("bottom" if paper_preset else "skip")
    return base_learner_for(estimator._hypotheses(), type(estimator).__name__,
                            on_inconsistent=mode)


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
    on_inconsistent : {"bottom", "skip"}, default="bottom"
        A mistake at an example that contradicts every hypothesis left: ``"bottom"``
        makes the learner fail (⊥, ``hypothesis_key()`` None — the SOA of the papers);
        ``"skip"`` ignores the example (state unchanged, ``update`` returns False). The
        private learners' practical presets use ``"skip"``: a tournament example with
        the wrong random label then cannot destroy a copy that has already pinned the
        target (measured: 3 in 4 of DP-SOA's trees ended ⊥ against the binary-search
        adversary with ``"bottom"``). On realizable sequences the two agree, and the
        mistake bound is the same.
    limits
        Passed to :func:`~skdp.hypotheses.littlestone.version_space`.

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

    #: Updates change the state only on mistakes (lets the private learners skip the
    #: rows a vertex predicts correctly, vectorised).
    conservative = True

    def __init__(self, hypothesis_class: Any, *, on_inconsistent: str = "bottom",
                 **limits: Any) -> None:
        if on_inconsistent not in ("bottom", "skip"):
            raise ValueError("on_inconsistent must be 'bottom' or 'skip', got "
                             f"{on_inconsistent!r}.")
        self.on_inconsistent = on_inconsistent
        self.version_space = version_space(hypothesis_class, **limits)
        self.n_domain = self.version_space.n_domain
        self.mistake_bound = self.version_space.ldim()
        self.n_mistakes = 0
        self.failed = False
        self._form = _UNSET

    def _closed_form(self):
        """``("threshold", s)`` / ``("point", i or None)`` for the closed-form classes
        (the SOA hypothesis is then x ≥ s / x == i), None otherwise; cached per state."""
        if self._form is _UNSET:
            vs = self.version_space
            if isinstance(vs, ThresholdVersionSpace):
                self._form = ("threshold", _first_positive_threshold(vs))
            elif isinstance(vs, PointVersionSpace):
                self._form = vs.soa_key()
            else:
                self._form = None
        return self._form

    def predict_one(self, x: int) -> int:
        form = self._closed_form()
        if form is None:
            return int(self.version_space.predict(x))
        if form[0] == "threshold":
            return 1 if x >= form[1] else -1
        return 1 if x == form[1] else -1

    def predict(self, x: ArrayLike) -> NDArray[np.int8]:
        form = self._closed_form()
        if form is None:
            return self.version_space.predict(x)
        x = np.asarray(x)
        hit = x >= form[1] if form[0] == "threshold" else x == form[1]
        return np.where(hit, 1, -1).astype(np.int8)

    def update(self, x: int, y: int) -> bool:
        if self.failed or self.predict_one(x) == y:
            return False
        new = self.version_space.restrict(x, y)
        if new.is_empty and self.on_inconsistent == "skip":
            return False  # contradicts every hypothesis left: ignored, state unchanged
        self.n_mistakes += 1
        if new.is_empty:
            self.failed = True
        else:
            self.version_space = new
            self._form = _UNSET
        return True

    def copy(self) -> SOALearner:
        new = object.__new__(SOALearner)
        new.__dict__.update(self.__dict__)  # version spaces are immutable: sharing is safe
        return new

    def hypothesis_key(self) -> Hashable | None:
        if self.failed:
            return None
        form = self._closed_form()
        return self.version_space.soa_key() if form is None else form

    def __repr__(self) -> str:
        return (f"SOALearner(n_domain={self.n_domain}, mistake_bound={self.mistake_bound}, "
                f"n_mistakes={self.n_mistakes}, failed={self.failed})")


class SOAClassifier(OnlineDomainClassifier):
    """Standard Optimal Algorithm over a finite class (non-private; the ceiling to compare to).

    X holds real features read through the class's public discretisation (default
    :class:`~skdp.hypotheses.MeanThresholds`), or domain indices (shape (n, 1), integers
    in [0, N)) for a class without one. Each row is predicted with the
    current SOA hypothesis, then used to update (conservatively: only on mistakes). On a
    realizable stream at most Ldim(C) mistakes are made — the optimal deterministic mistake
    bound (Littlestone 1988). ``fit`` runs the stream from a fresh start; ``partial_fit``
    continues it, and any split into blocks gives the same model.

    Parameters
    ----------
    hypothesis_class : FiniteClass, array-like label matrix, version space or None
        E.g. ``FiniteClass(L)``, ``threshold_class(N)``, or the closed-form
        ``ThresholdVersionSpace(N)`` / ``PointVersionSpace(N)`` for large N (from
        :mod:`skdp.hypotheses.littlestone`).
        ``None`` (default): :class:`~skdp.hypotheses.MeanThresholds` () — two-sided
        thresholds on the mean of the features clipped to public bounds ([−1, 1] with a
        warning; pass ``MeanThresholds(bounds=…)``), 16 bins, Ldim 5. A class with a
        public discretisation (``MeanThresholds``, ``RealThresholds``) reads real
        features; any other reads domain indices, X of shape (n, 1).
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
    n_domain_ : int
        N, the size of the domain.
    n_mistakes_, n_updates_, n_rounds_seen_, n_restarts_ : int
        Online mistakes, version-space updates, rows seen, restarts.
    n_features_in_ : int
        d for a class with a discretisation, 1 for domain indices.

    Notes
    -----
    ``predict_proba`` is the hypothesis' label as a smoothed one-hot (γ = 0.1) and
    ``decision_function`` its ±1 label.

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

    def __init__(self, hypothesis_class: Any = None, *, on_inconsistent: str = "restart") -> None:
        self.hypothesis_class = hypothesis_class
        self.on_inconsistent = on_inconsistent

    # ----------------------------------------------------------------- stream hooks
    @property
    def n_mistakes_(self) -> int:
        """Online mistakes on the training stream (exact: this learner is not private)."""
        return self._n_mistakes

    def _base_learner(self):
        return SOALearner(self._hypotheses())

    def _prepare_stream(self, from_fit):
        learner = self._base_learner()
        return learner.n_domain, learner

    def _init_stream(self, learner):
        self.learner_ = learner
        self.mistake_bound_ = learner.mistake_bound
        self.n_updates_ = self.n_restarts_ = 0

    def _released_predict(self, x):
        return self.learner_.predict(x)

    def _frozen(self):
        return self.learner_.failed

    def _fresh_predict_one(self, x):
        return self._base_learner().predict_one(x)

    def _step(self, x, y, wrong):
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
                    UserWarning, stacklevel=2,
                )
