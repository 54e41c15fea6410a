"""Algorithm Stopper (Stemmer, "Private Truly-Everlasting Robust-Prediction", Alg. 2).

Monitors a stream of bits and answers "stop" queries with ⊤ once the (noisy)
number of ones reaches a threshold. It is a special case of AboveThreshold —
every query is the running count of ones, compared with the *un*-noised
threshold t after adding fresh Laplace noise — so it is built on
:class:`~skdp.mechanisms.sparse_vector.AboveThreshold` rather than re-implementing
the noise.
"""

from __future__ import annotations

import math

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
from ..exceptions import MechanismHaltedError, PrivacyParameterError
from .laplace import _laplace_or_zero
from .sparse_vector import AboveThreshold

__all__ = ["Stopper"]

_CALIBRATIONS = ("stemmer", "svt")


class _OwnedAboveThreshold(AboveThreshold):
    """AboveThreshold (cutoff 1) whose noise scales are read from its owner.

    Lets :class:`Stopper` keep its scales in its own small properties (so a test
    can override them on a Stopper subclass) while the sparse-vector bookkeeping —
    the noise buffer, the halting rule, the ⊤/⊥ release — stays in AboveThreshold.
    """

    def __init__(self, owner, threshold, rng):
        self._owner = owner
        super().__init__(threshold, owner.epsilon, max_positives=1, random_state=rng)

    @property
    def _threshold_noise_scale(self):
        return self._owner._threshold_noise_scale

    @property
    def _query_noise_scale(self):
        return self._owner._query_noise_scale


class Stopper:
    """Stopper: halt once the number of ones in a bit stream (roughly) reaches t.

    Stemmer (2024), Algorithm 2. The mechanism holds a dataset D of bits (an
    initial one plus bits added at update times). At each *query*, it computes
    ``sum(D) + Lap(8/ε · ln(2/δ))`` with fresh noise and answers ⊤ and halts if
    that is ≥ t, ⊥ otherwise. The threshold itself is not perturbed.

    Privacy
    -------
    (ε, δ)-differentially private with respect to the input bits, both those in
    the initial dataset and those added at update times (Stemmer 2024, Thm 4.2),
    for any number of queries and updates. Neighbouring inputs differ in one bit,
    so every later count moves by at most 1 in the same direction; the large
    noise scale 8·ln(2/δ)/ε pays for the unbounded number of ⊥ answers, the δ
    covering the unlikely runs in which many ⊥ answers each leak a little.
    ``tests/privacy/test_stopper_audit.py`` audits it and shows that the audit
    catches a Stopper without noise, and one with the noise Lap(1/ε) a naive
    reading of "AboveThreshold with cutoff 1" would suggest.

    ``calibration="svt"`` (additive, used by RectanglesPERP's ``"sharp"`` preset):
    the threshold is perturbed once, ρ ~ Lap(2/ε), every query gets ν ~ Lap(2/ε),
    and the answer is ⊤ iff sum(D) + ν ≥ t + ρ. *Lemma (pure ε-DP).* This is
    AboveThreshold with cutoff c = 1, ε₁ = ε₂ = ε/2, on the queries
    q_i(D) = (number of ones up to query i). For neighbouring inputs (one bit
    differs, whether initial or added at an update time, the other bits being
    any adaptive function of earlier answers) every q_i moves by at most 1 and
    all in the same direction, so the queries are monotone with sensitivity 1
    and Lyu, Su & Li (2017, Thm 2 and §4 on monotone queries: ν ~ Lap(cΔ/ε₂))
    give ε-DP, δ = 0, for any number of queries. *Proof sketch* (the standard
    one): fix the query noises before the ⊤; with ρ' = ρ + 1 every ⊥ stays ⊥ and
    the ⊤ needs ν' ≥ ν (monotone case: no +2), costing e^{ε₁}·e^{ε₂} = e^{ε}.
    The δ argument is then unused (any δ is accepted). Its audit and broken twin
    (no threshold noise) are in the same test file.

    Parameters
    ----------
    epsilon : float
        Privacy parameter ε > 0.
    delta : float
        Privacy parameter δ ∈ (0, 1).
    threshold : float
        The public threshold t on the number of ones.
    initial_bits : array-like of {0, 1}, optional
        The initial dataset D (default: empty, as in ChallengeBT).
    calibration : {"stemmer", "svt"}, default="stemmer"
        ``"stemmer"``: Alg. 2 (no threshold noise, Lap(8·ln(2/δ)/ε) per query).
        ``"svt"``: monotone AboveThreshold, Lap(2/ε) threshold and query noise
        (pure ε-DP, see Privacy).
    random_state : None, int or numpy.random.Generator
        Source of randomness.

    Attributes
    ----------
    count : int
        Current number of ones in D (private: do not release it).
    n_queries : int
        Stopping queries answered so far.
    halted : bool
        True once a query has answered ⊤.

    References
    ----------
    U. Stemmer. Private Truly-Everlasting Robust-Prediction. ICML 2024, §4.1,
    Algorithm 2 and Theorem 4.2.

    Examples
    --------
    >>> from skdp.mechanisms.stopper import Stopper
    >>> s = Stopper(epsilon=1.0, delta=1e-6, threshold=5, random_state=0)
    >>> s.update([1, 1, 0])
    >>> s.query()
    False
    """

    def __init__(self, epsilon: float, delta: float, threshold: float, *,
                 initial_bits: ArrayLike | None = None, calibration: str = "stemmer",
                 random_state: RandomStateLike = None) -> None:
        if calibration not in _CALIBRATIONS:
            raise ValueError(f"calibration must be one of {_CALIBRATIONS}, got {calibration!r}.")
        self.calibration = calibration
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        if self.delta == 0 and calibration == "stemmer":
            raise PrivacyParameterError(
                "Stopper needs δ > 0: its noise scale 8·ln(2/δ)/ε is infinite at δ = 0 "
                "(Stemmer 2024, Alg. 2)."
            )
        self.threshold = float(check_finite_array(threshold, name="threshold", ndim=0))
        bits = np.zeros(0) if initial_bits is None else self._check_bits(initial_bits)
        rng = check_generator(random_state)
        self.count = int(bits.sum())
        self._svt = _OwnedAboveThreshold(self, self.threshold, rng)

    # -- noise scales (overridable by tests building broken variants) ---------
    @property
    def _query_noise_scale(self):
        if self.calibration == "svt":
            return 2.0 / self.epsilon  # Lap(cΔ/ε₂), monotone, c = 1, ε₂ = ε/2
        # Alg. 2, step 2a: Lap((8/ε)·log(2/δ)), natural log.
        return 8.0 * math.log(2.0 / self.delta) / self.epsilon

    @property
    def _threshold_noise_scale(self):
        if self.calibration == "svt":
            return 2.0 / self.epsilon  # Lap(Δ/ε₁), ε₁ = ε/2
        # Alg. 2 compares with t itself: no threshold noise.
        return 0.0

    # -------------------------------------------------------------------------
    @staticmethod
    def _check_bits(bits):
        arr = check_finite_array(np.atleast_1d(bits), name="bits", ndim=1, allow_empty=True)
        if not np.all((arr == 0) | (arr == 1)):
            raise ValueError("Stopper's input must be bits (0 or 1).")
        return arr

    @property
    def halted(self) -> bool:
        return self._svt.halted

    @property
    def n_queries(self) -> int:
        return self._svt.n_queries

    def _refuse_if_halted(self):
        if self.halted:
            raise MechanismHaltedError(
                "Stopper halted (it answered ⊤); its guarantee covers nothing after "
                "the halt. Start a new instance."
            )

    def update(self, bits: ArrayLike) -> None:
        """Add one bit or an array of bits to the dataset (no output, no noise)."""
        self._refuse_if_halted()
        self.count += int(self._check_bits(bits).sum())

    def query(self) -> bool:
        """Answer one stopping query: True (⊤, and the Stopper halts) or False (⊥)."""
        self._refuse_if_halted()
        return bool(self._svt.process([float(self.count)])[0])

    def process(self, increments: ArrayLike) -> NDArray[np.bool_]:
        """Alternate updates and queries: add ``increments[i]`` ones, then query.

        Parameters
        ----------
        increments : array-like of non-negative int, shape (n,)
            Number of one-bits added just before the i-th query (0 for a query
            with no update, or for an update with a 0 bit).

        Returns
        -------
        answers : ndarray of bool, shape (n_answered,)
            ⊥ (False) … and a final ⊤ (True) if the Stopper halted in this block;
            updates after the halting query are discarded.
        """
        self._refuse_if_halted()
        inc = check_finite_array(increments, name="increments", ndim=1, allow_empty=True)
        if np.any(inc < 0) or np.any(inc != np.round(inc)):
            raise ValueError("increments must be non-negative integers (numbers of one-bits).")
        sums = self.count + np.cumsum(inc)
        answers = self._svt.process(sums, stop_after_positive=True)
        if answers.size:
            self.count = int(sums[answers.size - 1])
        return answers

    @classmethod
    def simulate(cls, increments: ArrayLike, n_runs: int, epsilon: float, delta: float,
                 threshold: float, *, initial_count: int = 0, calibration: str = "stemmer",
                 random_state: RandomStateLike = None) -> NDArray[np.int64]:
        """Run ``n_runs`` independent Stoppers on one fixed update/query pattern, vectorised.

        Each run is distributed exactly as a fresh instance (with ``initial_count``
        ones in its initial dataset) fed ``increments`` through :meth:`process`.

        Returns
        -------
        halt_index : ndarray of int64, shape (n_runs,)
            Index of the query that answered ⊤, or ``len(increments)`` if none did.
        """
        n_runs = check_positive_int(n_runs, "n_runs")
        proto = cls(epsilon, delta, threshold, calibration=calibration,
                    random_state=random_state)
        inc = check_finite_array(increments, name="increments", ndim=1)
        rng = proto._svt._rng
        sums = initial_count + np.cumsum(inc)
        noisy_t = threshold + _laplace_or_zero(proto._threshold_noise_scale, (n_runs, 1), rng)
        noisy = sums + _laplace_or_zero(proto._query_noise_scale, (n_runs, inc.size), rng)
        above = noisy >= noisy_t
        return np.where(above.any(axis=1), above.argmax(axis=1), inc.size).astype(np.int64)

    def __repr__(self):
        return (
            f"Stopper(epsilon={self.epsilon:g}, delta={self.delta:g}, "
            f"threshold={self.threshold:g}, queries={self.n_queries}, halted={self.halted})"
        )
