"""The sparse vector technique: :class:`AboveThreshold` with a cutoff c.

Answers a stream of queries with "above the threshold" (⊤) or "below" (⊥) and
pays only for the ⊤ answers, halting after the c-th one.
"""

from __future__ import annotations

from typing import Any

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
from ..exceptions import MechanismHaltedError
from ._query_noise import BufferedQueryNoise

__all__ = ["AboveThreshold"]


class AboveThreshold(BufferedQueryNoise):
    """Sparse vector technique with cutoff c (Lyu, Su & Li 2017, Alg. 1).

    With ε₁ = ``threshold_share``·ε and ε₂ = ε − ε₁, the threshold is perturbed
    once, ρ ~ Lap(Δ/ε₁); each query gets fresh noise ν ~ Lap(2cΔ/ε₂) (Lap(cΔ/ε₂)
    for monotone queries); the answer is ⊤ iff q + ν ≥ T + ρ. After the c-th ⊤ the
    mechanism halts, and further queries raise :class:`MechanismHaltedError`.

    Privacy
    -------
    ε-differentially private for any number of adaptively chosen queries, each of
    sensitivity Δ, provided only the ⊤/⊥ answers are released (Lyu, Su & Li 2017,
    Thm 2). The query noise grows with c; the threshold noise does not, because ρ
    is drawn once — a variant that re-draws ρ after each ⊤ must scale it with c
    (Dwork & Roth 2014, Alg. 2). Releasing the noisy value q + ν, dropping the
    query noise or the cutoff all break the guarantee; ``tests/privacy`` shows the
    audit catching each of these.

    Parameters
    ----------
    threshold : float
        The public threshold T.
    epsilon : float
        Total privacy parameter ε > 0 of the whole run (all ⊤ and ⊥ answers).
    sensitivity : float, default=1.0
        Sensitivity Δ of every query.
    max_positives : int, default=1
        The cutoff c: number of ⊤ answers after which the mechanism halts.
    monotonic : bool, default=False
        True if, between neighbouring datasets, all queries move in the same direction
        (halves the query noise).
    threshold_share : float, default=0.5
        Fraction ε₁/ε of the budget spent on the threshold. Lyu et al. suggest
        1 / (1 + (2c)^{2/3}) for utility; 1/2 is the textbook choice (Dwork & Roth).
    random_state : None, int or numpy.random.Generator
        Source of randomness.

    Attributes
    ----------
    n_queries : int
        Queries answered so far.
    n_positives : int
        ⊤ answers so far.
    halted : bool
        True once ``n_positives == max_positives``.

    References
    ----------
    Lyu, Su & Li. Understanding the Sparse Vector Technique for Differential Privacy.
    PVLDB 10(6), 2017. Dwork & Roth. The Algorithmic Foundations of Differential
    Privacy, 2014, §3.6.

    Examples
    --------
    >>> from skdp.mechanisms import AboveThreshold
    >>> svt = AboveThreshold(threshold=10.0, epsilon=1.0, random_state=0)
    >>> svt.process([0.0, 1.0, 50.0, 2.0], stop_after_positive=True)
    array([False, False,  True])
    >>> svt.halted
    True
    """

    def __init__(
        self,
        threshold: float,
        epsilon: float,
        *,
        sensitivity: float = 1.0,
        max_positives: int = 1,
        monotonic: bool = False,
        threshold_share: float = 0.5,
        random_state: RandomStateLike = None,
    ) -> None:
        self.threshold = float(check_finite_array(threshold, name="threshold", ndim=0))
        self.epsilon = check_epsilon(epsilon)
        self.sensitivity = check_sensitivity(sensitivity)
        self.max_positives = check_positive_int(max_positives, "max_positives")
        self.monotonic = bool(monotonic)
        share = float(threshold_share)
        if not 0.0 < share < 1.0:
            raise ValueError(f"threshold_share must lie in (0, 1), got {threshold_share!r}.")
        self.threshold_share = share
        self._rng = check_generator(random_state)
        self._noisy_threshold = self.threshold + self._rng.laplace(
            0.0, self._threshold_noise_scale
        )
        self.n_queries = 0
        self.n_positives = 0

    @property
    def _threshold_noise_scale(self) -> float:
        return self.sensitivity / (self.threshold_share * self.epsilon)

    @property
    def _query_noise_scale(self) -> float:
        c = self.max_positives
        factor = c if self.monotonic else 2 * c
        return factor * self.sensitivity / ((1.0 - self.threshold_share) * self.epsilon)

    @property
    def _cutoff(self) -> int:
        return self.max_positives

    @property
    def halted(self) -> bool:
        return self.n_positives >= self._cutoff

    def _release(self, above: NDArray[np.bool_], noisy_values: NDArray[np.float64]) -> NDArray[Any]:
        # Only the ⊤/⊥ bits leave the mechanism: the noisy values q + ν must not.
        return above

    def process(self, values: ArrayLike, *, stop_after_positive: bool = False) -> NDArray[np.bool_]:
        """Answer a block of queries in order; return the answers given.

        Parameters
        ----------
        values : array-like of shape (n_queries,)
            Exact query values q(D), finite.
        stop_after_positive : bool, default=False
            Stop right after the first ⊤ of this block, e.g. because the caller must
            recompute the remaining queries after acting on it. Otherwise the block is
            answered up to the end or up to the c-th ⊤, whichever comes first.

        Returns
        -------
        answers : ndarray of bool, shape (n_answered,)
            ⊤ (True) / ⊥ (False) for the first ``n_answered`` queries; ``n_answered``
            is shorter than the block only if the block was cut at a ⊤.

        Raises
        ------
        MechanismHaltedError
            If the mechanism had already halted.
        """
        if self.halted:
            raise MechanismHaltedError(
                f"AboveThreshold halted after its cutoff of {self.max_positives} ⊤ answers; "
                "answering more would exceed its privacy guarantee. Start a new instance."
            )
        values = check_finite_array(values, name="values", ndim=1, allow_empty=True)
        noise = self._take_noise(values.size)
        noisy_values = values + noise
        above = noisy_values >= self._noisy_threshold
        positives = np.flatnonzero(above)
        allowed = 1 if stop_after_positive else self._cutoff - self.n_positives
        answered = positives[allowed - 1] + 1 if positives.size >= allowed else values.size
        self._give_back_noise(noise[answered:])
        self.n_queries += answered
        self.n_positives += int(above[:answered].sum())
        return self._release(above[:answered], noisy_values[:answered])

    @classmethod
    def simulate(cls, values: ArrayLike, n_runs: int, threshold: float, epsilon: float, *,
                 random_state: RandomStateLike = None, **params: Any) -> NDArray[np.int8]:
        """Run ``n_runs`` independent instances on one fixed query sequence, vectorised.

        For studying a configuration (how often does it fire, and where) and for
        privacy audits: each run is distributed exactly as a fresh instance fed
        ``values`` through :meth:`process`.

        Parameters
        ----------
        values : array-like of shape (n_queries,)
            The (non-adaptive) query values.
        n_runs : int
            Number of independent runs.
        threshold, epsilon, **params
            As for the constructor.
        random_state : None, int or numpy.random.Generator
            Source of randomness for all runs.

        Returns
        -------
        answers : ndarray of int8, shape (n_runs, n_queries)
            1 for ⊤, 0 for ⊥, and -1 for queries after the run halted.
        """
        n_runs = check_positive_int(n_runs, "n_runs")
        proto = cls(threshold, epsilon, random_state=random_state, **params)
        values = check_finite_array(values, name="values", ndim=1)
        rng = proto._rng
        noisy_thresholds = threshold + rng.laplace(
            0.0, proto._threshold_noise_scale, size=(n_runs, 1)
        )
        noisy_values = values + rng.laplace(
            0.0, proto._query_noise_scale, size=(n_runs, values.size)
        )
        above = noisy_values >= noisy_thresholds
        positives_before: NDArray[Any] = np.cumsum(above, axis=1) - above
        released = np.asarray(proto._release(above, noisy_values))
        answers = np.where(positives_before < proto._cutoff, released, -1)
        return answers.astype(np.int8) if released.dtype == bool else answers

    def test(self, value: float) -> bool:
        """Answer one query: True (⊤) or False (⊥)."""
        if np.ndim(value) != 0:
            raise ValueError(f"test() takes one query value, got shape {np.shape(value)}.")
        return bool(self.process([value])[0])

    def __repr__(self) -> str:
        return (
            f"AboveThreshold(threshold={self.threshold:g}, epsilon={self.epsilon:g}, "
            f"max_positives={self.max_positives}, answered={self.n_queries}, "
            f"positives={self.n_positives}, halted={self.halted})"
        )
