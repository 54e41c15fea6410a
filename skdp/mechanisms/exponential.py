"""Private selection: the exponential mechanism and report-noisy-max.

Both choose an index among candidates with a utility score, favouring high scores.
Implementations never exponentiate raw scores, so scores spanning 10⁶ or more
neither overflow nor underflow: Gumbel-max and permute-and-flip (in its
report-noisy-max-with-exponential-noise form) add noise on the score scale and
take an argmax.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import (
    RandomStateLike,
    check_epsilon,
    check_finite_array,
    check_generator,
    check_positive_int,
    check_sensitivity,
)

__all__ = ["exponential_mechanism", "report_noisy_max"]

_METHODS = ("gumbel", "permute_and_flip")
_NOISES = ("laplace", "exponential", "gumbel")


def _check_scores(scores: ArrayLike) -> NDArray[np.float64]:
    return check_finite_array(scores, name="scores", ndim=1)


def _selection_scale(epsilon: float, sensitivity: float, monotonic: bool) -> float:
    """Noise scale of the selection: 2Δ/ε in general, Δ/ε for monotone scores.

    Monotone means that moving to a neighbouring dataset moves every score in the
    same direction (e.g. counts), which halves the sensitivity of score *gaps*
    (McSherry & Talwar 2007; Dwork & Roth 2014, Thm 3.10 remark).
    """
    return (1.0 if monotonic else 2.0) * sensitivity / epsilon


def _gumbel_max(scores: NDArray[np.float64], scale: float, size: int | None,
                rng: np.random.Generator) -> int | NDArray[np.int64]:
    logits = scores / scale
    if size is None:
        # Gumbel(0, 1) is −log(Exp(1)): one log per candidate instead of two.
        return int(np.argmax(logits - np.log(rng.standard_exponential(logits.shape))))
    # Many draws: sample the same softmax distribution by inversion rather than
    # size × n Gumbel variates; log-sum-exp keeps it stable for any score span.
    shifted = logits - logits.max()
    cdf = np.cumsum(np.exp(shifted))
    cdf /= cdf[-1]
    picks = np.searchsorted(cdf, rng.random(size), side="right")
    return np.minimum(picks, scores.size - 1)


def _exponential_noise_max(scores: NDArray[np.float64], scale: float,
                           rng: np.random.Generator) -> int:
    # Permute-and-flip (McKenna & Sheldon 2020) — visit candidates in random order,
    # accept r with probability exp((s_r − s*)/scale) — has exactly the distribution
    # of argmax(s + Exp(scale)) (Ding, Kifer, Zhang et al. 2021), which needs no
    # permutation and never exponentiates a score.
    return int(np.argmax(scores + rng.exponential(scale, size=scores.shape)))


def exponential_mechanism(
    scores: ArrayLike,
    epsilon: float,
    sensitivity: float = 1.0,
    *,
    monotonic: bool = False,
    method: str = "gumbel",
    size: int | None = None,
    random_state: RandomStateLike = None,
) -> int | NDArray[np.int64]:
    """Select an index with probability ∝ exp(ε·score / (2Δ)) (or exp(ε·score/Δ) if monotone).

    Privacy
    -------
    ε-differentially private when each score has sensitivity at most Δ
    (McSherry & Talwar 2007; Dwork & Roth 2014, Thm 3.10). ``method="permute_and_flip"``
    (McKenna & Sheldon 2020, Thm 1) has the same guarantee and never worse expected
    utility. With ``size=m`` the m draws are independent: the release is mε-DP by
    basic composition (the caller accounts for that).

    Parameters
    ----------
    scores : array-like of shape (n_candidates,)
        Finite utility of each candidate; higher is better.
    epsilon : float
        Privacy parameter ε > 0 (per draw).
    sensitivity : float, default=1.0
        Sensitivity Δ of every score.
    monotonic : bool, default=False
        True if neighbouring datasets move all scores in the same direction.
    method : {"gumbel", "permute_and_flip"}, default="gumbel"
        ``"gumbel"`` samples the exponential mechanism exactly (Gumbel-max trick);
        ``"permute_and_flip"`` is a different ε-DP selection rule with better utility.
    size : int, optional
        Number of independent draws (``"gumbel"`` only). Omit for a single int.
    random_state : None, int or numpy.random.Generator
        Source of randomness.

    Returns
    -------
    index : int or ndarray of int
    """
    scores = _check_scores(scores)
    epsilon = check_epsilon(epsilon)
    sensitivity = check_sensitivity(sensitivity)
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}.")
    if size is not None:
        size = check_positive_int(size, "size")
        if method != "gumbel":
            raise ValueError("size is only supported with method='gumbel'.")
    rng = check_generator(random_state)
    scale = _selection_scale(epsilon, sensitivity, monotonic)
    if method == "gumbel":
        return _gumbel_max(scores, scale, size, rng)
    return _exponential_noise_max(scores, scale, rng)


def report_noisy_max(scores: ArrayLike, epsilon: float, sensitivity: float = 1.0, *,
                     monotonic: bool = False, noise: str = "laplace",
                     random_state: RandomStateLike = None) -> int:
    """Return the index of the largest noisy score.

    Privacy
    -------
    ε-differentially private when each score has sensitivity at most Δ:
    with ``noise="laplace"`` the noise is Lap(2Δ/ε), or Lap(Δ/ε) for monotone scores
    such as counts (Dwork & Roth 2014, Claim 3.9); ``noise="exponential"`` adds
    Exp(2Δ/ε) (Exp(Δ/ε) if monotone) noise, which is distributed exactly as
    permute-and-flip (Ding, Kifer, Zhang et al. 2021); ``noise="gumbel"`` is the
    exponential mechanism.

    Parameters
    ----------
    scores : array-like of shape (n_candidates,)
        Finite scores; higher is better.
    epsilon : float
        Privacy parameter ε > 0.
    sensitivity : float, default=1.0
        Sensitivity Δ of every score.
    monotonic : bool, default=False
        True if neighbouring datasets move all scores in the same direction.
    noise : {"laplace", "exponential", "gumbel"}, default="laplace"
        Noise distribution.
    random_state : None, int or numpy.random.Generator
        Source of randomness.

    Returns
    -------
    index : int
    """
    scores = _check_scores(scores)
    epsilon = check_epsilon(epsilon)
    sensitivity = check_sensitivity(sensitivity)
    if noise not in _NOISES:
        raise ValueError(f"noise must be one of {_NOISES}, got {noise!r}.")
    rng = check_generator(random_state)
    scale = _selection_scale(epsilon, sensitivity, monotonic)
    if noise == "exponential":
        return _exponential_noise_max(scores, scale, rng)
    if noise == "gumbel":
        return int(_gumbel_max(scores, scale, None, rng))
    return int(np.argmax(scores + rng.laplace(0.0, scale, size=scores.shape)))
