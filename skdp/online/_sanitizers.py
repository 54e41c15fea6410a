"""Private sanitizers of labelled data over a finite domain, behind one small interface.

A *sanitizer* turns a private batch of n labelled examples (x, y) — x a domain index in
{0, …, N−1}, y = ±1 — into n synthetic labelled examples, under (ε, δ)-differential
privacy with respect to replacing one example of the batch (n is public). It is the
subroutine 𝓑 of Li, Wang & Ye's Algorithm 3 (a simple private online learner): every
row of a stream is sanitized in exactly one batch, so the whole learner inherits the
sanitizer's guarantee by parallel composition and post-processing.

Interface (duck-typed; :class:`Sanitizer` documents it):

* ``sanitize(x, y, n_domain, epsilon, delta, random_state)`` → ``(x', y')`` of the same
  length, or ``None`` when it fails (the paper's "exit if fail"); the failure must be
  decided from the private output only (post-processing);
* ``cost(epsilon, delta)`` → the (ε, δ) one call actually spends (≤ the arguments).

Two implementations:

* :class:`HistogramSanitizer` — the practical one for small domains: exact discrete
  Laplace noise on all 2N (x, y) cell counts, projected onto the counts of n rows
  (``post="project"``, the default) or clipped at 0 (``post="clip"``), n rows allocated
  to cells in proportion (largest remainders). Pure ε-DP. Its error in total
  variation is about 2N·(2/ε)/n, so (Li, Wang & Ye, Thm 4.1) Alg 3 has regret
  O(B·R(T/B) + N·T/(εB)) — Õ(T^{2/3}) with B ∝ T^{1/3} (their §4.2 remark on α = 1/B),
  better in T than the generic Littlestone sanitizer's Õ(T^{3/4}) (Cor 4.3).
* :class:`StableHistogramSanitizer` — for large or sparse domains: skdp's
  :class:`~skdp.mechanisms.histogram.StableHistogram` over the (x, y) items (only cells
  present in the batch can appear), (ε, δ)-DP.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import (
    RandomStateLike,
    check_delta,
    check_epsilon,
    check_generator,
    check_positive_int,
)
from ..mechanisms.histogram import StableHistogram
from ..mechanisms.laplace import discrete_laplace

__all__ = [
    "HistogramSanitizer",
    "Sanitizer",
    "StableHistogramSanitizer",
    "allocate_rows",
    "project_counts",
]


def allocate_rows(weights, n_rows):
    """Split ``n_rows`` among cells in proportion to non-negative ``weights``.

    Largest-remainder (Hamilton) rounding: every cell gets ⌊n·w/Σw⌋ rows and the rows
    left go to the largest fractional parts (ties: lowest cell index). Returns the int64
    counts (summing to ``n_rows``), or ``None`` when every weight is 0. Deterministic:
    post-processing of the weights.
    """
    w = np.asarray(weights, dtype=np.float64)
    total = w.sum()
    if total <= 0.0:
        return None
    share = w * (n_rows / total)
    counts = np.floor(share).astype(np.int64)
    left = n_rows - int(counts.sum())
    if left > 0:
        order = np.lexsort((np.arange(w.size), -(share - counts)))
        counts[order[:left]] += 1
    return counts


def project_counts(noisy, n_rows):
    """Euclidean projection of noisy counts onto {c ≥ 0, Σ c = n_rows}.

    The projection is c = max(noisy − τ, 0) with the one τ that makes the sum n_rows
    (sort-based, O(K log K) for K cells); deterministic post-processing. Against
    clipping at 0 (which keeps the positive half of the noise of every *empty* cell,
    about 1/ε of spurious mass per cell, so most synthetic rows of a small batch are
    noise) it subtracts the common shift τ that the empty cells' noise adds: the
    "norm-sub" post-processing of Wang, Lopuhaä-Zwakenberg & Li (2020).
    """
    v = np.asarray(noisy, dtype=np.float64)
    s = np.sort(v)[::-1]
    excess = np.cumsum(s) - n_rows
    k = np.flatnonzero(s * np.arange(1, s.size + 1) > excess)[-1]
    return np.maximum(v - excess[k] / (k + 1), 0.0)


def _cells_to_rows(counts, n_domain):
    """Synthetic rows from per-cell counts; cell c is (x = c // 2, y = +1 if c odd)."""
    cells = np.repeat(np.arange(counts.size), counts)
    return (cells // 2).astype(np.intp), np.where(cells % 2 == 1, 1, -1).astype(np.int8)


def _check_batch(x: ArrayLike, y: ArrayLike,
                 n_domain: int) -> tuple[NDArray[np.intp], NDArray[Any]]:
    x = np.asarray(x)
    y = np.asarray(y)
    if x.ndim != 1 or y.shape != x.shape or x.size == 0:
        raise ValueError("a sanitizer needs 1-D x and y of the same non-zero length.")
    if x.dtype.kind not in "iu" or x.min() < 0 or x.max() >= n_domain:
        raise ValueError(f"x must hold integer domain indices in [0, {n_domain}).")
    if not np.all((y == 1) | (y == -1)):
        raise ValueError("y must hold labels in {-1, +1}.")
    return x.astype(np.intp), y


class Sanitizer:
    """Interface of a private sanitizer of labelled data over {0, …, N−1} × {−1, +1}.

    Subclasses implement :meth:`sanitize` and may override :meth:`cost`.

    Privacy
    -------
    A subclass must make ``sanitize`` (ε, δ)-DP in its private ``x``, ``y`` with respect
    to replacing one example (the batch length n is public), with ε, δ its arguments or
    less (as reported by :meth:`cost`), and decide failure from its private output only.
    """

    def sanitize(self, x: ArrayLike, y: ArrayLike, n_domain: int, epsilon: float, delta: float,
                 random_state: RandomStateLike = None
                 ) -> tuple[NDArray[np.intp], NDArray[np.int8]] | None:
        """Synthetic ``(x', y')`` of the same length as ``x``, or None on failure.

        Parameters
        ----------
        x : ndarray of int, shape (n,)
            Domain indices of the private batch.
        y : ndarray, shape (n,)
            Labels ±1.
        n_domain : int
            N (public).
        epsilon, delta : float
            Budget of this call.
        random_state : None, int or numpy.random.Generator

        Returns
        -------
        (ndarray of intp, ndarray of int8) or None
        """
        raise NotImplementedError

    def cost(self, epsilon: float, delta: float) -> tuple[float, float]:
        """(ε, δ) one call of :meth:`sanitize` with these arguments spends."""
        return check_epsilon(epsilon), check_delta(delta)


class HistogramSanitizer(Sanitizer):
    """Noisy (x, y)-cell histogram → n synthetic rows (pure ε-DP).

    Every one of the 2N cells gets exact discrete Laplace noise of scale 2/ε (replacing
    one example moves two cell counts by one each: ℓ1-sensitivity 2); the noisy counts
    are made non-negative (``post``) and the n public rows are allocated to cells in
    proportion to them (:func:`allocate_rows`).

    Parameters
    ----------
    post : {"project", "clip"}, default="project"
        How noisy counts become weights. ``"project"``: the Euclidean projection onto
        the counts of n rows, max(count − τ, 0) with Σ = n (:func:`project_counts`);
        never fails. ``"clip"``: negative counts become 0 (the earlier default); fails
        (returns None) iff every noisy count is ≤ 0. Clipping turns about 1/ε of noise
        per empty cell into synthetic rows: on a batch of B rows over 2N cells about
        N/(εB) of the synthetic rows are noise, which the projection mostly removes.
    max_cells : int, default=2**22
        Refuse domains with more than ``max_cells / 2`` points (the noise vector is
        dense); use :class:`StableHistogramSanitizer` there.

    Privacy
    -------
    ε-DP (δ = 0) under replacement of one example: the geometric (discrete Laplace)
    mechanism on a vector of ℓ1-sensitivity 2 (Ghosh, Roughgarden & Sundararajan 2009;
    Canonne, Kamath & Steinke 2020, Thm 13); the projection or clipping, rounding,
    allocation and the failure test read only the noisy vector and the public n: they
    are post-processing.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.online import HistogramSanitizer
    >>> x = np.array([0, 0, 1, 1, 1, 2]); y = np.array([-1, -1, 1, 1, 1, 1])
    >>> xs, ys = HistogramSanitizer().sanitize(x, y, 3, epsilon=50.0, delta=0.0,
    ...                                        random_state=0)
    >>> len(xs), sorted(zip(xs.tolist(), ys.tolist())) == sorted(zip(x.tolist(), y.tolist()))
    (6, True)
    """

    def __init__(self, *, post: str = "project", max_cells: int = 2**22) -> None:
        if post not in ("project", "clip"):
            raise ValueError(f"post must be 'project' or 'clip', got {post!r}.")
        self.post = post
        self.max_cells = max_cells

    def _noise_scale(self, epsilon):
        return 2.0 / epsilon

    def _noisy_counts(self, x, y, n_domain, epsilon, rng):
        cells = 2 * x + (y > 0)
        exact = np.bincount(cells, minlength=2 * n_domain)
        scale = self._noise_scale(epsilon)
        if scale == 0:  # only broken test variants get here
            return exact
        return exact + discrete_laplace(scale, size=exact.size, random_state=rng)

    def sanitize(self, x: ArrayLike, y: ArrayLike, n_domain: int, epsilon: float, delta: float,
                 random_state: RandomStateLike = None
                 ) -> tuple[NDArray[np.intp], NDArray[np.int8]] | None:
        epsilon = check_epsilon(epsilon)
        n_domain = check_positive_int(n_domain, "n_domain")
        if 2 * n_domain > self.max_cells:
            raise ValueError(
                f"HistogramSanitizer: {2 * n_domain} cells exceed max_cells={self.max_cells}; "
                "use StableHistogramSanitizer for large domains."
            )
        x, y = _check_batch(x, y, n_domain)
        rng = check_generator(random_state)
        noisy = self._noisy_counts(x, y, n_domain, epsilon, rng)
        weights = (project_counts(noisy, x.size) if self.post == "project"
                   else np.maximum(noisy, 0))
        counts = allocate_rows(weights, x.size)
        return None if counts is None else _cells_to_rows(counts, n_domain)

    def cost(self, epsilon: float, delta: float) -> tuple[float, float]:
        return check_epsilon(epsilon), 0.0


class StableHistogramSanitizer(Sanitizer):
    """Stable (sparse) histogram of the (x, y) items → n synthetic rows ((ε, δ)-DP).

    Releases the cells whose truncated-discrete-Laplace noisy count clears the stable
    histogram's threshold (:class:`~skdp.mechanisms.histogram.StableHistogram`), then
    allocates the n rows in proportion to the released counts; fails when no cell is
    released (e.g. every cell of a small batch is rare). Memory and time are O(n), not
    O(N): for large domains. Needs δ > 0.

    Privacy
    -------
    (ε, δ)-DP under replacement of one example (the stable histogram; Li, Wang & Ye,
    Thm 2.6; see :mod:`skdp.mechanisms.histogram`); allocation is post-processing.
    """

    def sanitize(self, x: ArrayLike, y: ArrayLike, n_domain: int, epsilon: float, delta: float,
                 random_state: RandomStateLike = None
                 ) -> tuple[NDArray[np.intp], NDArray[np.int8]] | None:
        epsilon = check_epsilon(epsilon)
        n_domain = check_positive_int(n_domain, "n_domain")
        x, y = _check_batch(x, y, n_domain)
        release = StableHistogram(epsilon, delta, random_state=random_state).release(
            2 * x.astype(np.int64) + (y > 0))
        if len(release) == 0:
            return None
        counts = allocate_rows(release.counts, x.size)
        cells = np.repeat(release.items.astype(np.int64), counts)
        return (cells // 2).astype(np.intp), np.where(cells % 2 == 1, 1, -1).astype(np.int8)
