"""Realizable stream generators (oblivious and adaptive) and a mistake-curve harness.

An *adversary* produces rounds (x_t, y_t) over the domain {0, …, N−1}, labels ±1, always
realizable by its class. Protocol (duck-typed):

* ``reset(rng)`` — start a new game (draws the hidden target, if any);
* ``oblivious`` — True when the whole stream is fixed in advance: then
  ``stream(n_rounds) -> (x, y)`` returns it at once (vectorised);
* otherwise ``next_round(probe) -> (x, y)`` picks the next example from the history, where
  ``probe(x)`` (or None) evaluates the learner's *currently released* hypothesis at one
  point, and ``observe(x, y, y_hat)`` shows it the learner's prediction afterwards. An
  adaptive adversary commits to (x_t, y_t) before seeing ŷ_t.

:func:`run_online` plays a learner against an adversary and returns the cumulative mistakes.

References
----------
N. Littlestone (1988), the adversary argument behind the lower bound Ldim.
N. Golowich, R. Livni. Littlestone classes are privately online learnable. NeurIPS 2021, §3.
Y. Li, Y. Wang, Y. Ye. Private online learning against an adaptive adversary: realizable
and agnostic settings, 2024, §2.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray
from sklearn.utils.validation import check_is_fitted

from .._validation import RandomStateLike, check_generator, check_positive_int
from ..hypotheses.finite import FiniteClass
from ..hypotheses.littlestone import (
    FiniteVersionSpace,
    PointVersionSpace,
    ThresholdVersionSpace,
    version_space,
)
from ._soa import MistakeBoundedLearner, SOALearner

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "AdaptiveFiniteAdversary",
    "AdaptivePointAdversary",
    "AdaptiveThresholdAdversary",
    "ObliviousAdversary",
    "random_finite_class",
    "run_online",
]

#: ``probe(x)``: the learner's released hypothesis at domain index x (None: not known yet).
Probe = Callable[[int], int | None]


def random_finite_class(n_hypotheses: int, n_domain: int, *,
                        random_state: RandomStateLike = None) -> FiniteClass:
    """A class of ``n_hypotheses`` distinct uniformly random ±1 labellings of {0, …, N−1}.

    The "random finite class" of the benchmarks: no structure for the learner to exploit.
    Ldim ≤ ⌊log₂ n_hypotheses⌋ always, with equality in practice once the domain is large
    (e.g. 5 for 32 hypotheses on 64 points, for every seed we tried).

    Parameters
    ----------
    n_hypotheses : int
        At most 2**n_domain (rows are distinct) and, to keep the exact Ldim recursion
        usable, at most 64 (the default refusal limit of
        :class:`~skdp.hypotheses.littlestone.FiniteVersionSpace`).
    n_domain : int
    random_state : None, int or Generator

    Returns
    -------
    FiniteClass

    Examples
    --------
    >>> from skdp.hypotheses import littlestone_dimension
    >>> from skdp.online import random_finite_class
    >>> cls = random_finite_class(32, 64, random_state=0)
    >>> cls.label_matrix.shape, littlestone_dimension(cls)
    ((32, 64), 5)
    """
    n_hypotheses = check_positive_int(n_hypotheses, "n_hypotheses")
    n_domain = check_positive_int(n_domain, "n_domain")
    if n_domain < 63 and n_hypotheses > 2**n_domain:
        raise ValueError(f"n_hypotheses={n_hypotheses} exceeds the 2**{n_domain} distinct "
                         "labellings of the domain.")
    rng = check_generator(random_state)
    rows = np.empty((0, n_domain), dtype=np.int8)
    while rows.shape[0] < n_hypotheses:  # redraw collisions (rare unless N is tiny)
        new = rng.choice(np.array([-1, 1], dtype=np.int8), size=(n_hypotheses, n_domain))
        rows = np.unique(np.vstack([rows, new]), axis=0)
    keep = rng.choice(rows.shape[0], size=n_hypotheses, replace=False)
    return FiniteClass(rows[np.sort(keep)])


def _target_labels(vs, rng, target):
    """±1 labels on the whole domain of a target hypothesis of the class (random if None)."""
    n = vs.n_domain
    x = np.arange(n)
    if isinstance(vs, ThresholdVersionSpace):
        t = int(rng.integers(0, n + 1)) if target is None else int(target)
        if not 0 <= t <= n:
            raise ValueError(f"target threshold must lie in [0, {n}], got {target!r}.")
        return np.where(x >= t, 1, -1).astype(np.int8)
    if isinstance(vs, PointVersionSpace):
        i = int(rng.integers(0, n)) if target is None else int(target)
        if not 0 <= i < n:
            raise ValueError(f"target point must lie in [0, {n}), got {target!r}.")
        return np.where(x == i, 1, -1).astype(np.int8)
    if isinstance(vs, FiniteVersionSpace):
        L = vs._oracle.label_matrix
        h = int(rng.integers(0, L.shape[0])) if target is None else int(target)
        if not 0 <= h < L.shape[0]:
            raise ValueError(f"target row must lie in [0, {L.shape[0]}), got {target!r}.")
        return L[h].copy()
    raise TypeError(f"unsupported version space {type(vs).__name__}.")


class HiddenTargetAdversary:
    """Base of the adversaries that draw a hidden target of the class per game."""

    def _setup(self, hypothesis_class, target):
        self.hypothesis_class = hypothesis_class
        self.target = target
        self._vs = version_space(hypothesis_class)
        self.n_domain = self._vs.n_domain

    def reset(self, rng: RandomStateLike) -> Self:
        """Start a game: draw the target (``labels_`` on the whole domain)."""
        self._rng = check_generator(rng)
        self.labels_ = _target_labels(self._vs, self._rng, self.target)
        return self


class ObliviousAdversary(HiddenTargetAdversary):
    """A stream fixed in advance, labelled by one target hypothesis of the class.

    Parameters
    ----------
    hypothesis_class : FiniteClass, label matrix or version space
    target : int, optional
        Row of the class (threshold t ∈ [0, N] / point i for the closed-form classes);
        random per game if None.
    order : {"random", "worst"}, default="random"
        ``"random"``: i.i.d. uniform domain points. ``"worst"``: first the points on which a
        fresh SOA errs, one after the other (each time, among the points where its
        hypothesis disagrees with the target, one leaving the largest version-space Ldim;
        only the ends and the median of that set when it has more than 256 points). The SOA
        errs on every one of these rounds (an oblivious adversary may simulate a
        deterministic learner); uniform points follow.
    """

    oblivious = True

    def __init__(self, hypothesis_class: Any, *, target: int | None = None,
                 order: str = "random") -> None:
        if order not in ("random", "worst"):
            raise ValueError(f"order must be 'random' or 'worst', got {order!r}.")
        self.order = order
        self._setup(hypothesis_class, target)
        self.reset(None)

    def _progress(self, soa, x):
        """(Ldim, size) left after the SOA's mistake at x: the adversary keeps it large."""
        vs = soa.version_space.restrict(x, int(self.labels_[x]))
        return vs.ldim(), vs.size

    def _worst_prefix(self):
        soa, xs, all_x = SOALearner(self._vs), [], np.arange(self.n_domain)
        while True:
            wrong = np.flatnonzero(soa.predict(all_x) != self.labels_)
            if wrong.size == 0 or soa.failed:
                return np.asarray(xs, dtype=np.intp)
            cands = wrong if wrong.size <= 256 else wrong[[0, wrong.size // 2, -1]]
            x = max((int(c) for c in cands), key=lambda c: self._progress(soa, c))
            xs.append(x)
            soa.update(x, int(self.labels_[x]))

    def stream(self, n_rounds: int) -> tuple[NDArray[np.intp], NDArray[np.int8]]:
        """The first ``n_rounds`` examples: ``x`` (ints) and ``y`` (±1 int8)."""
        n_rounds = check_positive_int(n_rounds, "n_rounds")
        x = self._rng.integers(0, self.n_domain, size=n_rounds)
        if self.order == "worst":
            prefix = self._worst_prefix()[:n_rounds]
            x[: prefix.size] = prefix
        return x.astype(np.intp), self.labels_[x]


class AdaptiveThresholdAdversary:
    """Binary search on the learner's uncertainty, for thresholds on {0, …, N−1}.

    Keeps the range [lo, hi] of thresholds consistent with the labels given so far and
    queries its midpoint; the label is the opposite of what it expects the learner to say
    there — the learner's current hypothesis if ``sees_current`` (``probe``), else what
    the learner's predictions since its last mistake imply for a monotone hypothesis
    (−1 when they imply nothing) — so every round
    is realizable and, against a learner that keeps its predictions, costs a mistake.
    Once the range is a single threshold t, it queries the boundary points t − 1 and t.
    With ``sees_current=True`` every learner makes ⌊log₂(N + 1)⌋ mistakes (the Ldim).

    Parameters
    ----------
    n_domain : int
    sees_current : bool, default=False
        Use ``probe`` (the released hypothesis h_t, a function of the past only).
    pinned : {"random", "seek"}, default="random"
        Which boundary point to query once t is pinned. ``"random"``: t − 1 or t uniformly.
        ``"seek"`` (with ``sees_current`` and a probe): one the released hypothesis labels
        wrongly, if any (random otherwise). A threshold hypothesis s ≠ t is wrong at t − 1
        or at t, so against ``"seek"`` *every* round whose released hypothesis is not the
        target costs a mistake — the adversary that makes a private learner pay for each
        round it keeps releasing a wrong hypothesis (1–2 probes a round).
    """

    oblivious = False

    def __init__(self, n_domain: int, *, sees_current: bool = False,
                 pinned: str = "random") -> None:
        if pinned not in ("random", "seek"):
            raise ValueError(f"pinned must be 'random' or 'seek', got {pinned!r}.")
        self.n_domain = ThresholdVersionSpace(n_domain).n_domain
        self.sees_current = sees_current
        self.pinned = pinned
        self.reset(None)

    def reset(self, rng: RandomStateLike) -> Self:
        """Start a game: the full range of thresholds, no past predictions."""
        self._rng = check_generator(rng)
        self._lo, self._hi = 0, self.n_domain
        self._past_x: list[int] = []
        self._past_pred: list[int] = []
        return self

    def _guess(self, x, probe):
        if self.sees_current and probe is not None:
            got = probe(x)
            if got is not None:
                return int(got)
        # Infer from the predictions made since the learner's last observed mistake
        # (a mistake-driven learner keeps its hypothesis between mistakes), assuming the
        # learner's hypothesis is monotone like the class: +1 left of x ⇒ +1 at x, etc.
        for px, py in zip(self._past_x, self._past_pred, strict=True):
            if (py > 0 and px <= x) or (py < 0 and px >= x):
                return int(py)
        return -1

    def next_round(self, probe: Probe | None = None) -> tuple[int, int]:
        lo, hi = self._lo, self._hi
        if lo < hi:
            x = (lo + hi - 1) // 2  # splits [lo, hi] into t ≤ x and t > x
            y = -self._guess(x, probe)
            if y > 0:
                self._hi = x
            else:
                self._lo = x + 1
            return x, y
        t = lo  # pinned: query the boundary, labels forced
        candidates = [c for c in (t - 1, t) if 0 <= c < self.n_domain]
        if self.pinned == "seek" and self.sees_current and probe is not None:
            order = self._rng.permutation(candidates)
            # the first (in random order) that the released hypothesis gets wrong
            x = next((int(c) for c in order if probe(int(c)) == (-1 if c >= t else 1)),
                     int(order[0]))
        else:
            x = int(candidates[int(self._rng.integers(len(candidates)))])
        return x, (1 if x >= t else -1)

    def observe(self, x: int, y: int, y_hat: int) -> None:
        if y_hat != y:  # the hypothesis may have changed: forget what it said before
            self._past_x, self._past_pred = [], []
        self._past_x.append(x)
        self._past_pred.append(y_hat)
        if len(self._past_x) > 64:  # bounded memory
            del self._past_x[0], self._past_pred[0]


class AdaptivePointAdversary:
    """Query the predicted positive, for point functions on {0, …, N−1}.

    Commits to a hidden target point i*. Each round: if the learner predicted +1 at some
    past query x ≠ i* (a false positive), query that x again (label −1); else, with
    ``sees_current``, probe ``n_probes`` random points and query one the current hypothesis
    calls positive (if it is not i*); else query i* with probability ``reveal`` (label +1)
    or a random other point (−1).

    Parameters
    ----------
    n_domain : int
    target : int, optional
        i*; random per game if None.
    reveal : float, default=0.5
    sees_current : bool, default=False
    n_probes : int, default=16
    """

    oblivious = False

    def __init__(self, n_domain: int, *, target: int | None = None, reveal: float = 0.5,
                 sees_current: bool = False, n_probes: int = 16) -> None:
        self.n_domain = PointVersionSpace(n_domain).n_domain
        if not 0.0 <= reveal <= 1.0:
            raise ValueError(f"reveal must lie in [0, 1], got {reveal!r}.")
        self.target = target
        self.reveal = reveal
        self.sees_current = sees_current
        self.n_probes = n_probes
        self.reset(None)

    def reset(self, rng: RandomStateLike) -> Self:
        """Start a game: draw the target point i* (unless given), forget false positives."""
        self._rng = check_generator(rng)
        labels = _target_labels(PointVersionSpace(self.n_domain), self._rng, self.target)
        self._target = int(np.flatnonzero(labels > 0)[0])
        self._false_positives: list[int] = []
        return self

    def _label(self, x):
        return 1 if x == self._target else -1

    def next_round(self, probe: Probe | None = None) -> tuple[int, int]:
        if self._false_positives:
            x = self._false_positives.pop()
            return x, self._label(x)
        if self.sees_current and probe is not None:
            for x in self._rng.integers(0, self.n_domain, size=self.n_probes):
                x = int(x)
                if x != self._target and probe(x) == 1:
                    return x, -1
        if self.n_domain == 1 or self._rng.random() < self.reveal:
            return self._target, 1
        x = int(self._rng.integers(0, self.n_domain - 1))
        x += x >= self._target
        return x, -1

    def observe(self, x: int, y: int, y_hat: int) -> None:
        if y_hat == 1 and y == -1 and len(self._false_positives) < 64:
            self._false_positives.append(x)


class AdaptiveFiniteAdversary:
    """The mistake-tree adversary for any finite class (Littlestone 1988's lower bound).

    Keeps the version space V of the class consistent with its own labels. While
    Ldim(V) ≥ 1 it queries a point x that splits V into two parts of Ldim ≥ Ldim(V) − 1
    (one exists by definition of Ldim; the first in domain order) and gives the label the
    learner is *not* expected to predict — its current hypothesis via ``probe`` if
    ``sees_current``, else the SOA's label on V — keeping whichever part it chose. Once
    Ldim(V) = 0 every hypothesis left agrees everywhere, and it labels uniform points by
    them. Every round is realizable; with ``sees_current`` every deterministic learner errs
    on at least Ldim(C) rounds (the SOA on exactly Ldim(C)).

    Parameters
    ----------
    hypothesis_class : FiniteClass, label matrix or version space
        The domain is scanned point by point: meant for small domains (N ≤ a few thousand).
    sees_current : bool, default=True
    """

    oblivious = False

    def __init__(self, hypothesis_class: Any, *, sees_current: bool = True) -> None:
        self.hypothesis_class = hypothesis_class
        self.sees_current = sees_current
        self._full = version_space(hypothesis_class)
        self.n_domain = self._full.n_domain
        self.reset(None)

    def reset(self, rng: RandomStateLike) -> Self:
        """Start a game: the version space is the whole class again."""
        self._rng = check_generator(rng)
        self._vs = self._full
        return self

    def _split_point(self):
        d = self._vs.ldim()
        for x in range(self.n_domain):
            plus, minus = self._vs.restrict(x, 1), self._vs.restrict(x, -1)
            if min(plus.ldim(), minus.ldim()) >= d - 1:
                return x
        raise AssertionError("no split point: impossible for Ldim ≥ 1")  # pragma: no cover

    def next_round(self, probe: Probe | None = None) -> tuple[int, int]:
        if self._vs.ldim() >= 1:
            x = self._split_point()
            guess = probe(x) if (self.sees_current and probe is not None) else None
            if guess is None:
                guess = int(self._vs.predict(x))
            y = -int(guess)
            self._vs = self._vs.restrict(x, y)
            return x, y
        x = int(self._rng.integers(0, self.n_domain))
        return x, int(self._vs.predict(x))  # all hypotheses left agree (Ldim 0)

    def observe(self, x: int, y: int, y_hat: int) -> None:
        """The choice of labels already used the prediction it expected; nothing to keep."""


# ----------------------------------------------------------------- harness
def _is_base_learner(learner):
    return isinstance(learner, MistakeBoundedLearner) and not hasattr(learner, "fit")


def _fitted(est):
    try:
        check_is_fitted(est)
    except Exception:
        return False
    return True


def run_online(learner: Any, adversary: Any, n_rounds: int, *,
               random_state: RandomStateLike = None) -> NDArray[np.int64]:
    """Play ``learner`` against ``adversary`` for ``n_rounds``; return the mistake curve.

    Parameters
    ----------
    learner : MistakeBoundedLearner or classifier with ``partial_fit``
        A base learner (``predict_one``/``update``) or an estimator over domain indices with
        classes ``[-1, 1]`` (passed on its first ``partial_fit``). Estimators with a private
        ``_partial_fit_mistakes(X, y, classes)`` (as :class:`SOAClassifier`) are fed
        oblivious streams in one vectorised block; otherwise one round at a time: through the
        unvalidated private ``_online_predict(x)`` / ``_online_step(x, y, classes)`` when the
        estimator has them (as :class:`SOAClassifier`), else ``predict`` then
        ``partial_fit`` on one row.
    adversary : ObliviousAdversary, AdaptiveThresholdAdversary, AdaptivePointAdversary,
        AdaptiveFiniteAdversary, …
        Reset with ``random_state`` at the start.
    n_rounds : int
    random_state : None, int or Generator

    Returns
    -------
    ndarray of int64, shape (n_rounds,)
        Cumulative mistakes after each round.
    """
    n_rounds = check_positive_int(n_rounds, "n_rounds")
    adversary.reset(check_generator(random_state))
    classes = np.array([-1, 1])
    base = _is_base_learner(learner)
    if adversary.oblivious:
        x, y = adversary.stream(n_rounds)
        if base:
            wrong = np.zeros(n_rounds, dtype=bool)
            for t in range(n_rounds):
                xt, yt = int(x[t]), int(y[t])
                wrong[t] = learner.predict_one(xt) != yt
                if wrong[t]:
                    learner.update(xt, yt)
            return np.cumsum(wrong, dtype=np.int64)
        if hasattr(learner, "_partial_fit_mistakes"):
            wrong = learner._partial_fit_mistakes(x[:, None], y, classes=classes)
            return np.cumsum(wrong, dtype=np.int64)
    fast = not base and hasattr(learner, "_online_step")
    wrong = np.zeros(n_rounds, dtype=bool)
    for t in range(n_rounds):
        if base:
            def probe(v):
                return learner.predict_one(v)
        elif fast:
            probe = learner._online_predict
        else:
            def probe(v):
                return int(learner.predict([[v]])[0]) if _fitted(learner) else None
        if adversary.oblivious:
            xt, yt = int(x[t]), int(y[t])
        else:
            xt, yt = adversary.next_round(probe)
        if base:
            y_hat = learner.predict_one(xt)
            learner.update(xt, yt)
        elif fast:
            err = learner._online_step(xt, yt, classes)
            y_hat = -yt if err else yt
        elif hasattr(learner, "_partial_fit_mistakes"):
            err = learner._partial_fit_mistakes([[xt]], [yt], classes=classes)[0]
            y_hat = -yt if err else yt
        else:
            if not _fitted(learner):
                raise ValueError("run_online: fit the estimator (or give it "
                                 "_partial_fit_mistakes) before playing round-by-round.")
            y_hat = int(learner.predict([[xt]])[0])
            learner.partial_fit([[xt]], [yt], classes=classes)
        wrong[t] = y_hat != yt
        if not adversary.oblivious:
            adversary.observe(xt, yt, y_hat)
    return np.cumsum(wrong, dtype=np.int64)
