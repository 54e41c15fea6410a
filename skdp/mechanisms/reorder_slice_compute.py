"""Reorder-Slice-Compute (RSC): private computations on adaptively chosen disjoint slices.

Cohen, Lyu, Nelson, Sarlós & Stemmer (2023), as stated by Stemmer (2024, Alg. 1).
Running one (ε, δ)-DP computation on each of τ *fixed* disjoint slices of a
dataset costs only (ε, δ). When the slices are chosen adaptively (the i-th by an
ordering that may depend on earlier outputs), one record can cascade through
many slices; RSC stops the cascade by adding geometric noise to each slice size.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import (
    RandomStateLike,
    check_delta,
    check_epsilon,
    check_finite_array,
    check_generator,
    check_positive_int,
)
from ..exceptions import MechanismHaltedError
from .laplace import _shape, discrete_laplace

__all__ = ["ReorderSliceCompute", "one_sided_geometric"]


def one_sided_geometric(scale: float, size: int | tuple[int, ...] | None = None,
                        random_state: RandomStateLike = None) -> int | NDArray[np.int64]:
    """Exact geometric noise G on {0, 1, 2, …} with P(G = g) ∝ exp(−g / scale).

    This is Geom(1 − e^{−1/scale}) counted in failures before the first success.
    Drawn exactly as a discrete Laplace(scale) variable conditioned on being ≥ 0
    (rejection; acceptance probability 1/(1 + e^{−1/scale}) ≥ 1/2), so it inherits
    the exactness of :func:`~skdp.mechanisms.laplace.discrete_laplace` (scale
    rounded *up* to a multiple of 2⁻²⁰: never less noise). ``scale = 0`` gives 0.

    Parameters
    ----------
    scale : float
        Scale ≥ 0; for RSC, 1/ε.
    size : int or tuple of int, optional
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    g : int or ndarray of int64
    """
    rng = check_generator(random_state)
    shape = _shape(size)
    n = int(np.prod(shape, dtype=np.int64))
    if scale == 0:
        out = np.zeros(n, dtype=np.int64)
    else:
        out = np.empty(n, dtype=np.int64)
        filled = 0
        while filled < n:
            need = n - filled
            z = np.asarray(discrete_laplace(scale, size=max(2 * need, 16), random_state=rng))
            z = z[z >= 0][:need]
            out[filled : filled + z.size] = z
            filled += z.size
    return int(out[0]) if size is None else out.reshape(shape)


class ReorderSliceCompute:
    """RSC: run (ε, δ)-DP protocols on disjoint, adaptively ordered, noisily sized slices.

    Algorithm RSC (Cohen et al. 2023; Stemmer 2024, Alg. 1) on a dataset D. For
    i = 1, …, τ, :meth:`compute` receives a number mᵢ, an ordering ≺⁽ⁱ⁾ (here a
    ``key`` function, larger first) and an (ε, δ)-DP protocol 𝒜ᵢ, then

    1. m̂ᵢ ← mᵢ + Geom(1 − e^{−ε})  (geometric on {0, 1, …}, P(g) ∝ e^{−εg}),
    2. Sᵢ ← the m̂ᵢ largest elements of D under ≺⁽ⁱ⁾ (all of D if fewer remain),
    3. D ← D \\ Sᵢ,
    4. instantiates 𝒜ᵢ on Sᵢ and returns it (its query interface) to the caller.

    The slice itself is never returned; only what the protocol releases is.

    Privacy
    -------
    If every protocol 𝒜ᵢ is (ε, δ)-DP, then for every δ̂ > 0 RSC is
    (O(ε·log(1/δ̂)), δ̂ + 2τδ)-differentially private (Stemmer 2024, Thm 4.1,
    quoting Cohen et al. 2023) — in particular the ε does not grow with the number
    τ of slices. The theorem's constant is not stated in Stemmer (2024); skdp's
    audit (``tests/privacy/test_rsc_audit.py``) checks the stricter claim with
    constant 1, ε·ln(1/δ̂), and shows that without the geometric noise the loss
    grows linearly in τ and the audit catches it. The caller is responsible for the
    protocols being (ε, δ)-DP with the ε, δ given here, and for ``key`` being a
    fixed function of a record (it may depend on earlier *outputs*, never on D).
    Ties of ``key`` are broken by the records' own lexicographic order, so the
    ordering is a total order over the data domain, as the algorithm requires.

    Parameters
    ----------
    data : array-like of shape (n,) or (n, d)
        The dataset D (finite values).
    epsilon : float
        The protocols' ε, also used for the geometric slice-size noise.
    delta : float
        The protocols' δ.
    max_slices : int
        τ, the number of slices; a further :meth:`compute` raises
        :class:`MechanismHaltedError`.
    random_state : None, int or numpy.random.Generator
        Source of randomness (slice sizes; also handed to the protocols).

    Attributes
    ----------
    n_slices : int
        Slices computed so far.
    slice_sizes_ : list of int
        The noisy sizes m̂ᵢ drawn so far. Not released by the algorithm — keep them
        private (they are for tests and debugging).

    References
    ----------
    E. Cohen, X. Lyu, J. Nelson, T. Sarlós, U. Stemmer. Õptimal Differentially
    Private Learning of Thresholds and Quasi-Concave Optimization. STOC 2023. —
    U. Stemmer. Private Truly-Everlasting Robust-Prediction. ICML 2024, §4.1,
    Algorithm 1 and Theorem 4.1.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms.laplace import laplace_mechanism
    >>> from skdp.mechanisms.reorder_slice_compute import ReorderSliceCompute
    >>> rsc = ReorderSliceCompute(np.arange(100.0), epsilon=1.0, delta=0.0,
    ...                           max_slices=2, random_state=0)
    >>> noisy_count = rsc.compute(10, lambda s, rng: laplace_mechanism(
    ...     len(s), 1.0, random_state=rng))
    """

    def __init__(self, data: ArrayLike, epsilon: float, delta: float, max_slices: int, *,
                 random_state: RandomStateLike = None) -> None:
        arr = check_finite_array(data, name="data", allow_empty=True)
        if arr.ndim not in (1, 2):
            raise ValueError(f"data must be 1-D or 2-D, got shape {arr.shape}.")
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self.max_slices = check_positive_int(max_slices, "max_slices")
        self._rng = check_generator(random_state)
        self._remaining = arr
        self.n_slices = 0
        self.slice_sizes_: list[int] = []

    @property
    def _slice_noise_scale(self) -> float:
        # Geom(1 − e^{−ε}): P(g) ∝ e^{−εg}, i.e. scale 1/ε.
        return 1.0 / self.epsilon

    @property
    def halted(self) -> bool:
        return self.n_slices >= self.max_slices

    @staticmethod
    def _check_m(m: int) -> int:
        if isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 0:
            raise ValueError(f"m must be a non-negative integer, got {m!r}.")
        return int(m)

    def _order(self, key: Callable[[NDArray[Any]], ArrayLike] | None) -> NDArray[np.intp]:
        rows = self._remaining
        if key is None:
            if rows.ndim != 1:
                raise ValueError("key=None orders by value and needs 1-D data; pass a key.")
            scores = rows
        else:
            scores = check_finite_array(key(rows), name="key(rows)", ndim=1, allow_empty=True)
            if scores.shape[0] != rows.shape[0]:
                raise ValueError(
                    f"key must return one score per record, got {scores.shape[0]} for "
                    f"{rows.shape[0]} records."
                )
        if rows.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        cols = rows.reshape(rows.shape[0], -1)
        # lexsort: last key is primary. Descending = sort the negatives ascending.
        sort_keys = [-cols[:, j] for j in range(cols.shape[1] - 1, -1, -1)] + [-scores]
        return np.lexsort(sort_keys)

    def compute(self, m: int, protocol: Callable[[NDArray[Any], np.random.Generator], Any], *,
                key: Callable[[NDArray[Any]], ArrayLike] | None = None) -> Any:
        """Cut the next slice and run ``protocol`` on it.

        Parameters
        ----------
        m : int
            Requested slice size mᵢ ≥ 0 (the slice gets mᵢ + Geom more records).
        protocol : callable
            ``protocol(slice, rng)`` → anything; must be (ε, δ)-DP in ``slice``.
            ``rng`` is the mechanism's Generator.
        key : callable, optional
            ``key(rows)`` → one score per record (larger = taken first). Default:
            the values of 1-D data.

        Returns
        -------
        result
            Whatever ``protocol`` returns.
        """
        if self.halted:
            raise MechanismHaltedError(
                f"ReorderSliceCompute used its {self.max_slices} slices (τ); its guarantee "
                "δ̂ + 2τδ covers no more."
            )
        m = self._check_m(m)
        if not callable(protocol):
            raise ValueError("protocol must be callable as protocol(slice, rng).")
        if key is not None and not callable(key):
            raise ValueError("key must be callable as key(rows) -> scores, or None.")
        order = self._order(key)
        m_hat = m + one_sided_geometric(self._slice_noise_scale, random_state=self._rng)
        take = order[:m_hat]
        keep = np.ones(self._remaining.shape[0], dtype=bool)
        keep[take] = False
        slice_ = self._remaining[take]
        self._remaining = self._remaining[keep]
        self.n_slices += 1
        self.slice_sizes_.append(int(m_hat))
        return protocol(slice_, self._rng)

    @classmethod
    def sample_slice_sizes(cls, sizes: ArrayLike, n_runs: int, epsilon: float, delta: float = 0.0,
                           *, random_state: RandomStateLike = None) -> NDArray[np.int64]:
        """Noisy slice sizes m̂ for ``n_runs`` independent runs, vectorised.

        With a fixed (non-adaptive) ordering, RSC's slices are determined by these
        sizes: slice i is the positions [m̂₁+…+m̂ᵢ₋₁, m̂₁+…+m̂ᵢ) of the sorted data.
        For audits and simulation studies.

        Returns
        -------
        m_hat : ndarray of int64, shape (n_runs, len(sizes))
        """
        n_runs = check_positive_int(n_runs, "n_runs")
        sizes = np.asarray(sizes)
        if sizes.ndim != 1 or sizes.size == 0 or sizes.dtype.kind not in "iu":
            raise ValueError("sizes must be a non-empty 1-D sequence of integers.")
        sizes = np.array([cls._check_m(int(s)) for s in sizes], dtype=np.int64)
        proto = cls(np.zeros(0), epsilon, delta, max_slices=sizes.size, random_state=random_state)
        noise = one_sided_geometric(
            proto._slice_noise_scale, size=(n_runs, sizes.size), random_state=proto._rng
        )
        return cast("NDArray[np.int64]", sizes + noise)

    def __repr__(self) -> str:
        return (
            f"ReorderSliceCompute(epsilon={self.epsilon:g}, delta={self.delta:g}, "
            f"max_slices={self.max_slices}, slices={self.n_slices})"
        )
