"""The anchored version-space learner: DP-SOA's practical base learner.

Every copy in DP-SOA's forest starts from the same public hypothesis (the SOA's A(∅)) and
learns from its own share of the stream. The SOA's next hypothesis depends on both ends
of its version space exactly, so copies that saw different rows of the same stream end on
different hypotheses and no hypothesis gathers the trees a stable histogram needs. This
learner keeps the *whole* version space V of its rows and outputs the public anchor while
the anchor agrees with them, else the hypothesis of V nearest to the anchor: copies that
saw the same informative rows output the same hypothesis, however many other rows they
saw.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..hypotheses.littlestone import PointVersionSpace, ThresholdVersionSpace, version_space
from ._soa import SOALearner

__all__ = ["AnchoredLearner"]


class AnchoredLearner:
    """Version-space learner that keeps a public anchor while its rows allow.

    A deterministic :class:`~skdp.online.MistakeBoundedLearner` whose hypothesis is a
    function of the version space V of *all* its rows (not only its mistakes) and of a
    public anchor a (default: the SOA's initial hypothesis A(∅) on the class):

    * a itself while a agrees with every row seen;
    * otherwise the hypothesis of V nearest to a in Hamming distance on the domain,
      ties broken by the class's order (the lowest row / threshold).

    For thresholds this is a clipped into [lo, hi], the thresholds still consistent: the
    output moves only when a row lands between a and the target, and a copy that saw the
    target's boundary point on a's side outputs the target exactly — whatever else it saw.
    That is what lets many copies of DP-SOA, each fed a different share of one stream,
    agree on one hypothesis (the SOA's binary search does not: its hypothesis depends on
    both ends of V exactly).

    Parameters
    ----------
    hypothesis_class : FiniteClass, label matrix or version space
        As for :class:`~skdp.online.SOALearner` (thresholds and points in closed form,
        any N; a finite class up to the exact-Ldim limits, which only A(∅) needs).
    anchor : array-like of shape (n_domain,), optional
        Public ±1 labels of the anchor (a function of public data only); default A(∅).
        Thresholds and points need an anchor of their own shape (a threshold; all −1 or
        a point), which the default is.
    on_inconsistent : {"skip", "bottom"}, default="skip"
        A row contradicting every hypothesis left is ignored (``"skip"``) or makes the
        learner ⊥ (``"bottom"``, ``hypothesis_key()`` None).
    limits
        Passed to :func:`~skdp.hypotheses.littlestone.version_space`.

    Attributes
    ----------
    version_space : version space
        V of every row seen (immutable; replaced on updates).
    mistake_bound : int
        |C|: a mistake either ends the anchor's agreement (once) or removes the current
        hypothesis from V, and the last hypothesis left never errs on a realizable
        stream. This is far above the SOA's Ldim — the learner trades the worst-case
        mistake bound for copies that agree; DP-SOA's privacy never uses the bound.
    failed : bool
        True once a row contradicted every hypothesis (only with ``"bottom"``).

    Notes
    -----
    Not conservative: a row predicted correctly can still shrink V (it moves an end of
    [lo, hi] away from the anchor), so every row is fed to :meth:`update`.

    Examples
    --------
    >>> from skdp.hypotheses.littlestone import ThresholdVersionSpace
    >>> from skdp.online._dp_soa_anchored import AnchoredLearner
    >>> a, b = (AnchoredLearner(ThresholdVersionSpace(64)) for _ in range(2))
    >>> for x in (40, 20, 25): _ = a.update(x, 1)   # positives: the target is ≤ 20
    >>> for x in (20, 30): _ = b.update(x, 1)
    >>> a.hypothesis_key() == b.hypothesis_key() == ("threshold", 20)
    True
    """

    conservative = False

    def __init__(self, hypothesis_class: Any, *, anchor: ArrayLike | None = None,
                 on_inconsistent: str = "skip", **limits: Any) -> None:
        if on_inconsistent not in ("bottom", "skip"):
            raise ValueError("on_inconsistent must be 'bottom' or 'skip', got "
                             f"{on_inconsistent!r}.")
        self.on_inconsistent = on_inconsistent
        vs = version_space(hypothesis_class, **limits)
        self.version_space = vs
        self.n_domain = vs.n_domain
        self.mistake_bound = int(vs.size)
        self.failed = False
        labels = (SOALearner(vs).predict(np.arange(vs.n_domain)) if anchor is None
                  else np.where(np.asarray(anchor).ravel() > 0, 1, -1).astype(np.int8))
        if labels.shape != (vs.n_domain,):
            raise ValueError(f"anchor must hold {vs.n_domain} labels, got shape "
                             f"{labels.shape}.")
        self._anchor = labels
        self._anchor_ok = True
        self._kind, self._a = _anchor_form(vs, labels)
        self._h = _UNSET

    # ------------------------------------------------------------------ hypothesis
    def _hypothesis(self):
        """("threshold", t) / ("point", i or None) / ("labels", row or None=anchor)."""
        if self._h is _UNSET:
            vs, kind = self.version_space, self._kind
            if self._anchor_ok:
                self._h = (kind, self._a) if kind != "labels" else (kind, None)
            elif kind == "threshold":
                self._h = (kind, min(max(self._a, vs.lo), vs.hi))
            elif kind == "point":  # the anchor is all −1 or a point: the nearest is the
                alive = np.flatnonzero(vs.alive)  # lowest alive point (distance 1 or 2)
                self._h = (kind, int(alive[0]))
            else:
                rows = vs.hypotheses()
                dist = (vs._oracle.label_matrix[rows] != self._anchor).sum(axis=1)
                self._h = (kind, int(rows[np.argmin(dist)]))  # argmin: lowest row on ties
        return self._h

    def _labels(self, x):
        kind, v = self._hypothesis()
        if kind == "threshold":
            return np.where(x >= v, 1, -1).astype(np.int8)
        if kind == "point":
            return np.where(x == v, 1, -1).astype(np.int8)
        source = self._anchor if v is None else self.version_space._oracle.label_matrix[v]
        return source[x].astype(np.int8)

    def predict_one(self, x: int) -> int:
        return int(self._labels(np.asarray(int(x))))

    def predict(self, x: ArrayLike) -> NDArray[np.int8]:
        return self._labels(np.asarray(x))

    def update(self, x: int, y: int) -> bool:
        """Feed one row; True iff the state (V or the anchor's agreement) changed."""
        if self.failed:
            return False
        x, y = int(x), int(y)
        new = self.version_space.restrict(x, y)
        if new.is_empty:
            if self.on_inconsistent == "skip":
                return False
            self.failed = True
            return True
        agree = self._anchor_ok and int(self._anchor[x]) == y
        if agree == self._anchor_ok and _same(new, self.version_space):
            return False
        self.version_space, self._anchor_ok, self._h = new, agree, _UNSET
        return True

    def copy(self) -> AnchoredLearner:
        new = object.__new__(AnchoredLearner)
        new.__dict__.update(self.__dict__)  # version spaces are immutable: sharing is safe
        return new

    def hypothesis_key(self) -> Hashable | None:
        """The hypothesis' identity: equal keys iff equal labels on the domain."""
        if self.failed:
            return None
        kind, v = self._hypothesis()
        if kind == "labels":
            return (kind, self._labels(np.arange(self.n_domain)).tobytes())
        if kind == "point" and v is None:
            return ("point", None)
        return (kind, v)

    def __repr__(self) -> str:
        return (f"AnchoredLearner(n_domain={self.n_domain}, "
                f"hypothesis={self.hypothesis_key() if self._kind != 'labels' else '…'}, "
                f"failed={self.failed})")


_UNSET = object()


def _anchor_form(vs, labels):
    """The anchor in the class's closed form: a threshold, a point (None = all −1) or
    plain labels; refuses anchors of another shape for the closed-form classes."""
    if isinstance(vs, ThresholdVersionSpace):
        t = int(np.argmax(labels > 0)) if (labels > 0).any() else vs.n_domain
        if not np.array_equal(labels, np.where(np.arange(vs.n_domain) >= t, 1, -1)):
            raise ValueError("a threshold class needs a threshold as its anchor.")
        return "threshold", t
    if isinstance(vs, PointVersionSpace):
        pos = np.flatnonzero(labels > 0)
        if pos.size > 1:
            raise ValueError("a point class needs all −1 or a point as its anchor.")
        return "point", int(pos[0]) if pos.size else None
    return "labels", None


def _same(a, b):
    if isinstance(a, ThresholdVersionSpace):
        return (a.lo, a.hi) == (b.lo, b.hi)
    if isinstance(a, PointVersionSpace):
        return a.size == b.size
    return a._mask == b._mask
