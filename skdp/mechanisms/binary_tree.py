"""The binary mechanism for continual counting (:class:`BinaryTreeCounter`).

Dwork, Naor, Pitassi & Rothblum (2010); Chan, Shi & Song (2011), §3.4 — the
"binary mechanism" that Li, Wang & Ye use (their Fact E.6 / Alg. 5) to sanitise all
intervals of a stream.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import (
    RandomStateLike,
    check_epsilon,
    check_finite_array,
    check_generator,
    check_positive_int,
)
from ..exceptions import MechanismHaltedError
from .laplace import _rational_scale, discrete_laplace

__all__ = ["BinaryTreeCounter"]


class BinaryTreeCounter:
    """Noisy running sums of a stream of values in [0, 1] (the binary mechanism).

    At step t, with i the lowest set bit of t, the p-sum node (t − 2^i, t] is completed
    and gets independent noise of scale L/ε, where L = ⌊log₂ T⌋ + 1 =
    ``n_steps.bit_length()`` (the number of levels); it is never touched again. The
    released sum at step t is the sum of the noisy nodes given by the binary digits
    of t — at most L of them (Chan, Shi & Song 2011, §3.4). T nodes in all, one per step.

    The stream is fixed in length: ``n_steps`` = T is declared up front and a block
    that would go past it is refused (``ValueError``, state unchanged); after T steps
    the counter raises :class:`MechanismHaltedError`. (No doubling policy: start a new
    counter, with new budget, for a longer stream.)

    Privacy
    -------
    ε-differentially private for streams that differ in one step by at most 1
    (any values in [0, 1]): each step lies in at most L released nodes (one per
    level; exactly L for step 1 when the stream is full), so the vector of node sums
    has ℓ1-sensitivity ≤ L and Laplace noise of scale L/ε per node makes it ε-DP;
    every release is post-processing of the noisy nodes. Chan, Shi & Song 2011,
    Thm 3.5 (they write log₂T for L; we use the exact count ⌊log₂T⌋ + 1, which is
    never smaller — at T = 2^k, log₂T misses the root node [1, T] and the audit in
    ``tests/privacy`` catches that). With ``discrete=True`` the values must
    be bits and node noise is exact discrete Laplace of the same scale (the discrete
    Laplace mechanism has the same ε for integer sensitivity; Canonne, Kamath &
    Steinke 2020, Thm 13). Pure DP Laplace mechanisms keep their ε against adaptively
    chosen streams (each value may depend on earlier releases).

    Utility
    -------
    :meth:`error_bound` — from Chan, Shi & Song, Cor. 2.9: the error at step t is a
    sum of k ≤ L independent Lap(b) (b = L/ε), and with ν = b·max(√L, √ln(2/β)),
    P[|error| > ν·√(8 ln(2/β))] ≤ β. Uniformly over all T steps use β/T (union bound).
    For discrete Laplace the same bound holds: its moment generating function is at
    most Laplace's for |λ| ≤ 1/b (sinh(x)/x is increasing), the only range the
    Chernoff argument uses.

    Memory is O(L): per level, the exact sum of the open node and the latest noisy
    node. Each block is processed in numpy with one pass per level (O(m·L) for m
    steps, no Python loop over steps) and one noise draw per step.

    Parameters
    ----------
    n_steps : int
        T ≥ 1, the maximum stream length.
    epsilon : float
        ε > 0 for the whole stream.
    discrete : bool, default=False
        Bits only, exact integer noise and integer outputs.
    random_state : None, int or numpy.random.Generator
        Source of randomness.

    Attributes
    ----------
    n_levels : int
        L = ⌊log₂ T⌋ + 1.
    n_seen : int
        Steps consumed so far.
    total_ : float or int
        The latest released noisy running sum (0 before any step). The exact sum is
        never exposed.

    References
    ----------
    Chan, Shi & Song. Private and continual release of statistics. ACM TISSEC 14(3),
    2011. Dwork, Naor, Pitassi & Rothblum. Differential privacy under continual
    observation. STOC 2010. Li, Wang & Ye. Private online learning against an
    adaptive adversary (Alg. 5, Fact E.6).

    Examples
    --------
    >>> from skdp.mechanisms.binary_tree import BinaryTreeCounter
    >>> counter = BinaryTreeCounter(n_steps=8, epsilon=1.0, random_state=0)
    >>> counter.update([1, 0, 1]).shape
    (3,)
    >>> counter.n_seen
    3
    """

    def __init__(self, n_steps: int, epsilon: float, *, discrete: bool = False,
                 random_state: RandomStateLike = None) -> None:
        self.n_steps = check_positive_int(n_steps, "n_steps")
        self.epsilon = check_epsilon(epsilon)
        self.discrete = bool(discrete)
        self.n_levels = self.n_steps.bit_length()
        if self.discrete:
            _rational_scale(self._node_noise_scale)  # refuse absurd scales up front
        self._rng = check_generator(random_state)
        dtype = np.int64 if self.discrete else float
        self._open = np.zeros(self.n_levels, dtype=dtype)  # exact sums of open nodes
        self._last_noisy = np.zeros(self.n_levels, dtype=dtype)  # latest completed nodes
        self.n_seen = 0
        self.total_ = 0 if self.discrete else 0.0

    @property
    def _node_noise_scale(self) -> float:
        # Each step is in n_levels completed nodes: the node vector has ℓ1-sensitivity L.
        return self.n_levels / self.epsilon

    def _noise(self, size: tuple[int, ...]) -> NDArray[Any]:
        if self.discrete:
            return np.asarray(discrete_laplace(self._node_noise_scale, size=size,
                                               random_state=self._rng))
        return self._rng.laplace(0.0, self._node_noise_scale, size=size)

    def _check_values(self, values: ArrayLike) -> NDArray[np.float64]:
        arr = check_finite_array(values, name="values", allow_empty=True)
        arr = arr.reshape(-1) if arr.ndim == 0 else arr
        if arr.ndim != 1:
            raise ValueError(f"values must be a scalar or 1-dimensional, got shape {arr.shape}.")
        if arr.size and (arr.min() < 0.0 or arr.max() > 1.0):
            raise ValueError(
                "values must lie in [0, 1]: the privacy guarantee assumes one step changes "
                "the stream by at most 1. Clip with PUBLIC bounds first."
            )
        if self.discrete:
            if not np.all((arr == 0.0) | (arr == 1.0)):
                raise ValueError("discrete=True counts bits: values must be 0 or 1.")
            arr = arr.astype(np.int64)
        return arr

    def update(self, values: ArrayLike) -> NDArray[Any]:
        """Consume a block of steps; return the noisy running sum after each of them.

        Parameters
        ----------
        values : float or array-like of shape (m,)
            The next m values of the stream, each in [0, 1] (bits if ``discrete``).

        Returns
        -------
        ndarray of shape (m,)
            Noisy prefix sums Σ_{s ≤ t} x_s for t = n_seen + 1, …, n_seen + m (float,
            or int64 if ``discrete``).

        Raises
        ------
        MechanismHaltedError
            If all ``n_steps`` have been consumed.
        ValueError
            On bad values or a block that would exceed ``n_steps``; state unchanged.
        """
        if self.n_seen >= self.n_steps and np.size(values) > 0:
            raise MechanismHaltedError(
                f"BinaryTreeCounter consumed its n_steps={self.n_steps} steps; releasing more "
                "would exceed its privacy guarantee. Start a new counter."
            )
        x = self._check_values(values)
        m = x.size
        if self.n_seen + m > self.n_steps:
            raise ValueError(
                f"a block of {m} steps would exceed n_steps={self.n_steps} "
                f"({self.n_seen} already consumed); nothing was released."
            )
        if m == 0:
            return x.astype(self._open.dtype)
        out, self._open, self._last_noisy = self._block(
            x, self.n_seen, self._open, self._last_noisy, ()
        )
        self.n_seen += m
        self.total_ = out[-1].item()
        return out

    def _block(self, x, t0, open_sums, last_noisy, runs):
        """Process steps t0+1 … t0+m; ``runs`` = () for one run, (R,) for R independent runs.

        Returns (outputs, new open sums, new latest noisy nodes); ``last_noisy`` and the
        outputs carry the leading ``runs`` axes. Pure function of its inputs and the
        noise drawn, so :meth:`update` and :meth:`simulate` share it.
        """
        m = x.size
        open_sums = open_sums.copy()
        times = np.arange(t0 + 1, t0 + m + 1, dtype=np.int64)
        cums = np.concatenate([np.zeros(1, dtype=x.dtype), np.cumsum(x)])

        # Exact sums of the nodes released in this block, level by level: the node
        # (t − 2^j, t] is released at step t iff j is the lowest set bit of t (Chan,
        # Shi & Song's p-sums) — other dyadic intervals are never used by any output.
        ends, levels, sums = [], [], []
        for j in range(self.n_levels):
            width = 1 << j
            end = times[(times % width == 0) & (((times >> j) & 1) == 1)]
            if end.size == 0:
                continue
            local_start = end - width - t0  # index into cums (may be < 0)
            node = cums[end - t0] - cums[np.maximum(local_start, 0)]
            node[local_start < 0] += open_sums[j]
            ends.append(end)
            levels.append(np.full(end.size, j))
            sums.append(node)
        ends = np.concatenate(ends)
        levels = np.concatenate(levels)
        sums = np.concatenate(sums)
        # Noise is drawn node by node in completion order (time, then level).
        order = np.lexsort((levels, ends))
        noisy = np.empty((*runs, sums.size), dtype=open_sums.dtype)
        noisy[..., order] = sums[order] + self._noise((*runs, sums.size))

        out = np.zeros((*runs, m), dtype=open_sums.dtype)
        new_last = last_noisy.copy()
        for j in range(self.n_levels):
            width = 1 << j
            sel = np.flatnonzero(levels == j)
            # node_vals[..., i] is level-j node number k = (t0 >> j) + i (ending at k·2^j);
            # i = 0 is carried over. Only odd k are released; bit j of t set ⇔ t >> j odd,
            # so the even slots (left at 0) are never read.
            first = t0 >> j
            node_vals = np.zeros((*runs, ((t0 + m) >> j) - first + 1), dtype=open_sums.dtype)
            node_vals[..., 0] = last_noisy[..., j]
            node_vals[..., (ends[sel] >> j) - first] = noisy[..., sel]
            contrib = node_vals[..., (times >> j) - first]
            out += np.where((times & width) != 0, contrib, 0)
            if sel.size:
                new_last[..., j] = noisy[..., sel[-1]]
            # Open-node bookkeeping: the exact sum since the last multiple of 2^j.
            last_end = ((t0 + m) >> j) << j
            if last_end > t0:
                open_sums[j] = cums[m] - cums[last_end - t0]
            else:
                open_sums[j] += cums[m]
        return out, open_sums, new_last

    def simulate(self, values: ArrayLike, n_runs: int) -> NDArray[Any]:
        """Outputs of ``n_runs`` independent fresh counters fed ``values`` as one block.

        Vectorised over runs, for audits and studies; each row is distributed exactly
        as ``BinaryTreeCounter(...).update(values)``. Uses this instance's parameters
        and random generator but not its state.

        Returns
        -------
        ndarray of shape (n_runs, len(values))
        """
        n_runs = check_positive_int(n_runs, "n_runs")
        x = self._check_values(values)
        if x.size > self.n_steps:
            raise ValueError(f"{x.size} values exceed n_steps={self.n_steps}.")
        if x.size == 0:
            return np.zeros((n_runs, 0), dtype=self._open.dtype)
        zeros = np.zeros(self.n_levels, dtype=self._open.dtype)
        last = np.zeros((n_runs, self.n_levels), dtype=self._open.dtype)
        out, _, _ = self._block(x, 0, zeros, last, (n_runs,))
        return out

    def error_bound(self, beta: float, *, uniform: bool = True) -> float:
        """High-probability bound on |released − exact| running sum.

        Parameters
        ----------
        beta : float in (0, 1)
            Failure probability.
        uniform : bool, default=True
            If True the bound holds for all ``n_steps`` steps simultaneously with
            probability ≥ 1 − β; otherwise for any one fixed step.

        Returns
        -------
        float
            b·max(√L, √ln(2/β′))·√(8 ln(2/β′)) with b = L/ε and β′ = β/T (uniform) or β
            (Chan, Shi & Song 2011, Cor. 2.9).
        """
        beta_f = float(beta) if not isinstance(beta, bool) else math.nan
        if not (0.0 < beta_f < 1.0):
            raise ValueError(f"beta must lie in (0, 1), got {beta!r}.")
        if uniform:
            beta_f /= self.n_steps
        log_term = math.log(2.0 / beta_f)
        b = self._node_noise_scale
        if self.discrete:  # the scale the exact sampler uses (rounded up by ≤ 2⁻²⁰)
            t, s = _rational_scale(b)
            b = t / s
        nu = b * max(math.sqrt(self.n_levels), math.sqrt(log_term))
        return nu * math.sqrt(8.0 * log_term)

    def __repr__(self) -> str:
        return (
            f"BinaryTreeCounter(n_steps={self.n_steps}, epsilon={self.epsilon:g}, "
            f"discrete={self.discrete}, n_seen={self.n_seen})"
        )
