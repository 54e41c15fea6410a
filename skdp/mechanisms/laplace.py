"""Laplace noise: the continuous Laplace mechanism and the exact discrete Laplace
(two-sided geometric) mechanism for integer-valued outputs.

Prefer :func:`geometric_mechanism` for counts and indices: floating-point Laplace
samples have a lattice structure that can leak the unnoised value (Mironov 2012),
whereas the discrete sampler here is exact — every draw is built from unbiased
integer draws, with no float ever rounded into the output.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import (
    RandomStateLike,
    check_epsilon,
    check_finite_array,
    check_generator,
    check_sensitivity,
)

__all__ = [
    "discrete_laplace",
    "geometric_mechanism",
    "laplace_mechanism",
    "laplace_noise",
]

# Scales are rounded *up* to a multiple of 1/_SCALE_DENOMINATOR before exact
# sampling: more noise, never less, so the guarantee only gets stronger (relative
# change ≤ 2**-20 / scale), and numerators stay far inside int64.
_SCALE_DENOMINATOR = 2**20
_MAX_SCALE = 2.0**30


def _shape(size: Any) -> tuple[int, ...]:
    """numpy's ``size`` argument as a shape: None → (), a scalar → (size,)."""
    if size is None:
        return ()
    scalar = np.isscalar(size)  # a TypeGuard: inline, it would narrow size for mypy
    return (size,) if scalar else tuple(size)


def laplace_noise(scale: float, size: int | tuple[int, ...] | None = None,
                  random_state: RandomStateLike = None) -> float | NDArray[np.float64]:
    """Draw Laplace(0, ``scale``) noise (float).

    Parameters
    ----------
    scale : float
        The noise scale b > 0; the density is ``exp(-|z|/b) / (2b)``.
    size : int or tuple of int, optional
        Output shape; a float is returned when omitted.
    random_state : None, int or numpy.random.Generator
        Source of randomness.
    """
    scale = check_sensitivity(scale, name="scale")
    rng = check_generator(random_state)
    return rng.laplace(0.0, scale, size=size)


def _laplace_or_zero(scale: float, size: int | tuple[int, ...] | None,
                     rng: np.random.Generator) -> float | NDArray[np.float64]:
    """Laplace(scale) noise, or exactly 0 without drawing when scale is 0.

    For mechanisms whose calibration may have no noise in one place (Stemmer's
    BetweenThresholds perturbs no threshold) and for test variants that remove it.
    """
    if scale == 0:
        return np.zeros(size) if size is not None else 0.0
    return laplace_noise(scale, size=size, random_state=rng)


def laplace_mechanism(values: ArrayLike, epsilon: float, sensitivity: float = 1.0,
                      random_state: RandomStateLike = None) -> float | NDArray[np.float64]:
    """Release ``values + Laplace(sensitivity / epsilon)`` noise, element-wise.

    Privacy
    -------
    ε-differentially private when ``values`` has ℓ1-sensitivity at most
    ``sensitivity`` (Dwork, McSherry, Nissim & Smith 2006; Dwork & Roth 2014,
    Thm 3.6). For a vector, the sensitivity is of the whole vector in ℓ1 norm.

    Parameters
    ----------
    values : float or array-like of float
        The exact values (finite).
    epsilon : float
        Privacy parameter ε > 0.
    sensitivity : float, default=1.0
        ℓ1-sensitivity Δ of ``values``.
    random_state : None, int or numpy.random.Generator
        Source of randomness.

    Returns
    -------
    noisy : float or ndarray
        Same shape as ``values``.
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_sensitivity(sensitivity)
    arr = check_finite_array(values, allow_empty=True)
    rng = check_generator(random_state)
    noisy = arr + rng.laplace(0.0, sensitivity / epsilon, size=arr.shape)
    return float(noisy) if noisy.ndim == 0 else noisy


def _rational_scale(scale: float) -> tuple[int, int]:
    """The smallest t/s ≥ scale with s = 2**20, as integers (t, s)."""
    scale = check_sensitivity(scale, name="scale")
    if scale > _MAX_SCALE:
        raise ValueError(
            f"scale {scale:g} is above the exact sampler's limit of {_MAX_SCALE:g}; "
            "such noise drowns any signal — check epsilon and sensitivity."
        )
    t = math.ceil(Fraction(scale) * _SCALE_DENOMINATOR)
    return t, _SCALE_DENOMINATOR


def _bernoulli_exp_neg(numerators: NDArray[np.int64], denominator: int,
                       rng: np.random.Generator) -> NDArray[np.bool_]:
    """Exact Bernoulli(exp(-γ)) for each γ = numerators[i] / denominator ∈ [0, 1].

    Canonne, Kamath & Steinke (2020), Alg. 1, vectorised: with K = 1, 2, …, keep
    drawing A ~ Bernoulli(γ/K) while A = 1; return 1 iff the first failure is at an
    odd K. Every live sample shares the same K, so one integer draw per K serves
    them all, and the loop ends after max K (a few dozen at the very most).
    The live samples' numerators are carried along (not gathered again each K):
    the draws are small, so numpy's per-call overhead is most of the cost.
    """
    out = np.zeros(numerators.shape[0], dtype=bool)
    live = np.arange(numerators.shape[0])
    k = 1
    while live.size:
        keep_going = rng.integers(0, denominator * k, size=live.size) < numerators
        if k % 2 == 1:  # stopped at an odd K: 1 (at an even K: 0, already there)
            out[live[~keep_going]] = True
        live = live[keep_going]
        numerators = numerators[keep_going]
        k += 1
    return out


def _count_exp_neg_one_successes(n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """V ~ Geometric on {0, 1, …} with P(V ≥ v) = e^{-v}, exactly (n draws)."""
    counts = np.zeros(n, dtype=np.int64)
    live = np.arange(n)
    ones = np.ones(n, dtype=np.int64)
    while live.size:
        success = _bernoulli_exp_neg(ones[:live.size], 1, rng)
        live = live[success]
        counts[live] += 1
    return counts


#: :func:`discrete_laplace` draws at most this many values with Python integers
#: (:func:`_discrete_laplace_short`) instead of numpy arrays.
_SHORT = 64


def _bernoulli_exp_neg_short(numerators: list[int], denominator: int,
                             rng: np.random.Generator) -> list[bool]:
    """:func:`_bernoulli_exp_neg` on a short list: the same draws in the same order,
    the bookkeeping in Python (numpy's per-call overhead is most of a short draw)."""
    out = [False] * len(numerators)
    live = list(range(len(numerators)))
    k = 1
    while live:
        draws = rng.integers(0, denominator * k, size=len(live)).tolist()
        still, still_numerators = [], []
        for i, numerator, draw in zip(live, numerators, draws, strict=True):
            if draw < numerator:
                still.append(i)
                still_numerators.append(numerator)
            elif k % 2 == 1:  # stopped at an odd K: 1
                out[i] = True
        live, numerators = still, still_numerators
        k += 1
    return out


def _discrete_laplace_short(t: int, s: int, n: int, rng: np.random.Generator) -> list[int]:
    """:func:`discrete_laplace`'s loop for n ≤ ``_SHORT`` values: the same rng calls with
    the same arguments in the same order (so the same draws), on Python integers.

    A guard's check draws 3–5 values per ``partial_fit`` call: the vectorised loop's
    ~100 small numpy operations cost more than SGD's whole update of 1,000 rows.
    """
    out = [0] * n
    pending = list(range(n))
    while pending:
        u = rng.integers(0, t, size=len(pending)).tolist()
        accept = _bernoulli_exp_neg_short(u, t, rng)  # D ~ Bernoulli(exp(-U/t))
        idx = [p for p, a in zip(pending, accept, strict=True) if a]
        u = [x for x, a in zip(u, accept, strict=True) if a]
        # V: successes of Bernoulli(e^-1) trials, as _count_exp_neg_one_successes
        v, live = [0] * len(idx), list(range(len(idx)))
        while live:
            success = _bernoulli_exp_neg_short([1] * len(live), 1, rng)
            live = [i for i, ok in zip(live, success, strict=True) if ok]
            for i in live:
                v[i] += 1
        negative = rng.integers(0, 2, size=len(idx)).tolist()
        rejected = []
        for i, x, vi, neg in zip(idx, u, v, negative, strict=True):
            y = (x + t * vi) // s  # X = U + t·V is geometric; Y = floor(X/s)
            if neg and y == 0:  # (B = 1, Y = 0) is rejected: zero is not counted twice
                rejected.append(i)
            else:
                out[i] = -y if neg else y
        pending = [p for p, a in zip(pending, accept, strict=True) if not a] + rejected
    return out


def discrete_laplace(scale: float, size: int | tuple[int, ...] | None = None,
                     random_state: RandomStateLike = None) -> int | NDArray[np.int64]:
    """Draw exact discrete Laplace noise: P(Z = z) ∝ exp(-|z| / scale) on the integers.

    Also called the two-sided geometric distribution with parameter
    α = exp(-1/scale). The sampler is Canonne, Kamath & Steinke (2020), Alg. 2,
    vectorised: it uses only unbiased integer draws, so the output distribution is
    exact for the rational scale t/s used, which is ``scale`` rounded *up* to a
    multiple of 2⁻²⁰ (never less noise than asked).

    Parameters
    ----------
    scale : float
        The scale t > 0 (for a sensitivity-Δ count, use Δ/ε).
    size : int or tuple of int, optional
        Output shape; an int is returned when omitted.
    random_state : None, int or numpy.random.Generator
        Source of randomness.

    Returns
    -------
    noise : int or ndarray of int64
    """
    t, s = _rational_scale(scale)
    rng = check_generator(random_state)
    shape = _shape(size)
    n = int(np.prod(shape, dtype=np.int64))
    if n <= _SHORT:
        short = np.array(_discrete_laplace_short(t, s, n, rng), dtype=np.int64)
        return int(short[0]) if size is None else short.reshape(shape)
    out = np.empty(n, dtype=np.int64)
    pending = np.arange(n)
    while pending.size:
        m = pending.size
        u = rng.integers(0, t, size=m)
        accept = _bernoulli_exp_neg(u, t, rng)  # D ~ Bernoulli(exp(-U/t))
        idx = pending[accept]
        u = u[accept]
        v = _count_exp_neg_one_successes(idx.size, rng)
        y = (u + t * v) // s  # X = U + t·V is geometric; Y = floor(X/s)
        negative = rng.integers(0, 2, size=idx.size).astype(bool)
        # (B = 1, Y = 0) is rejected so that zero is not counted twice.
        ok = ~(negative & (y == 0))
        out[idx[ok]] = np.where(negative[ok], -y[ok], y[ok])
        pending = np.concatenate([pending[~accept], idx[~ok]])
    return int(out[0]) if size is None else out.reshape(shape)


def geometric_mechanism(values: ArrayLike, epsilon: float, sensitivity: float = 1,
                        random_state: RandomStateLike = None) -> int | NDArray[np.int64]:
    """Release integer ``values`` plus exact discrete Laplace(Δ/ε) noise.

    Privacy
    -------
    ε-differentially private when the integer vector ``values`` has ℓ1-sensitivity
    at most ``sensitivity`` (Ghosh, Roughgarden & Sundararajan 2009; Canonne,
    Kamath & Steinke 2020, Thm 13). The output is an integer, so there is no
    floating-point side channel.

    Parameters
    ----------
    values : int or array-like of int
        Exact integer values (e.g. counts).
    epsilon : float
        Privacy parameter ε > 0.
    sensitivity : int, default=1
        ℓ1-sensitivity Δ of ``values``.
    random_state : None, int or numpy.random.Generator
        Source of randomness.

    Returns
    -------
    noisy : int or ndarray of int64
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_sensitivity(sensitivity)
    arr = np.asarray(values)
    if arr.dtype.kind not in "iub":
        as_float = check_finite_array(arr, allow_empty=True)
        if not np.all(as_float == np.round(as_float)):
            raise ValueError(
                "geometric_mechanism releases integers; values must be integer-valued. "
                "Use laplace_mechanism for real values."
            )
    arr = arr.astype(np.int64)
    noisy = arr + discrete_laplace(sensitivity / epsilon, size=arr.shape, random_state=random_state)
    return int(noisy) if noisy.ndim == 0 else cast("NDArray[np.int64]", noisy)
