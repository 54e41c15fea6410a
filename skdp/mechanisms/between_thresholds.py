"""BetweenThresholds (Bun, Steinke & Ullman 2017) in its calibrations (ChallengeBT, the
never-halting variant with a Stopper, is in :mod:`skdp.mechanisms.challenge_bt`).

BetweenThresholds answers a stream of low-sensitivity queries with L ("below the
lower threshold"), R ("above the upper threshold") or ⊤ ("in between", a *hard*
query) and pays privacy essentially only for the ⊤ answers.

One class carries both calibrations because they are the same algorithm — fresh
Laplace noise per query compared with two thresholds, halting after the k-th ⊤ —
and differ only in three numbers: the threshold noise, the query noise and the
minimum gap the privacy proof needs (plus which k are allowed). Keeping them in
one class means one tested code path for the answering/halting logic; the
calibration-specific numbers live in the small private properties below.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import (
    RandomStateLike,
    check_delta,
    check_epsilon,
    check_finite_array,
    check_generator,
    check_positive_int,
    check_sensitivity,
)
from ..exceptions import MechanismHaltedError, PrivacyParameterError
from ._charged_calibration import charged_epsilon, charged_min_gap, charged_noise_scale
from ._query_noise import BufferedQueryNoise
from .laplace import _laplace_or_zero

__all__ = ["BetweenThresholds"]

LOW, HARD, HIGH = -1, 0, 1
NOT_ANSWERED = 2
_CALIBRATIONS = ("bsu", "stemmer", "charged")


def _certified_scale(noise_scale, epsilon, delta, k, gap, sensitivity):
    """The ``"charged"`` noise scale b: given (checked) or the least the lemma certifies."""
    if noise_scale is None:
        noise_scale = charged_noise_scale(epsilon, delta, k, gap=gap, sensitivity=sensitivity)
    noise_scale = float(check_finite_array(noise_scale, name="noise_scale", ndim=0))
    if not noise_scale > 0:
        raise ValueError(f"noise_scale must be > 0, got {noise_scale!r}.")
    certified = charged_epsilon(noise_scale, gap, k, delta, sensitivity)
    if not certified <= epsilon * (1 + 1e-12):
        raise PrivacyParameterError(
            f"calibration='charged': Lap({noise_scale:g}) noise with gap {gap:g} and k = {k} "
            f"is certified only for ε = {certified:g} > {epsilon:g} at δ = {delta:g} "
            "(the lemma in skdp.mechanisms._charged_calibration). Raise the noise or the gap."
        )
    return noise_scale


class BetweenThresholds(BufferedQueryNoise):
    """BetweenThresholds: answer L / R / ⊤ ("hard") and halt after the k-th ⊤.

    Each query value q(D) gets fresh noise, c = q(D) + ν, and the answer is
    L (code −1) if c < t̂_l, R (code +1) if c > t̂_u, and ⊤ (code 0) otherwise.
    After ``max_hard`` ⊤ answers the mechanism halts and further queries raise
    :class:`MechanismHaltedError`. With Δ the query sensitivity:

    ``calibration="bsu"`` (Bun, Steinke & Ullman 2017, as stated by Yan, Alg. 1)
        μ ~ Lap(2Δ/ε) drawn once, t̂_l = t_l + μ and t̂_u = t_u − μ (the same μ with
        opposite signs); ν ~ Lap(6Δ/ε); halts at the first ⊤ (``max_hard`` = 1).
        Requires ε, δ ∈ (0, 1) and t_u − t_l ≥ (12Δ/ε)·(ln(10/ε) + ln(1/δ) + 1).
        The paper's queries are statistical queries q: Xⁿ → [0, 1], so Δ = 1/n and
        the scales read Lap(2/(εn)), Lap(6/(εn)), gap ≥ 12/(εn)·(…); dividing the
        query values by Δn maps the general case onto it.
    ``calibration="stemmer"`` (Stemmer 2024, Alg. 3, after Bun et al. 2017 and
        Cohen & Lyu 2023)
        no threshold noise (t̂ = t); ν ~ Lap((4Δ/ε)·√(k·ln(2/δ))); halts at the
        k-th ⊤. Requires k ≥ 4·ln(2/δ) and t_u − t_l ≥ (16Δ/ε)·√(k·ln(2/δ)). The
        paper's queries have sensitivity 1 (counts), i.e. Δ = 1.
    ``calibration="charged"`` (additive; issue 16)
        the same algorithm as ``"stemmer"`` (no threshold noise, halts at the k-th
        ⊤) with the noise b certified by the lemma in
        :mod:`skdp.mechanisms._charged_calibration` (a Rényi-moment bound charged to
        ⊤ answers; about half of Stemmer's noise for the same (ε, δ, k) at a gap of
        3–4b). ``noise_scale`` gives b (checked); by default the least b the lemma
        certifies for the given gap. Any k ≥ 1; the gap must exceed
        :func:`~skdp.mechanisms._charged_calibration.charged_min_gap`.

    The constructor REFUSES parameters outside these conditions with
    :class:`~skdp.exceptions.PrivacyParameterError`: the proofs say nothing there.

    Privacy
    -------
    ``"bsu"``: (ε, δ)-differentially private for any adaptively chosen sequence
    of sensitivity-Δ queries, provided the gap condition holds (Yan 2025, Lemma 1,
    quoting Bun, Steinke & Ullman 2017). ``"stemmer"``: (ε, δ)-differentially
    private under the two conditions above (Stemmer 2024, Thm 4.3, citing Bun et
    al. 2017 and Cohen & Lyu 2023). Only the codes are released, never c.
    A run that must go on after a halt needs a new instance, whose cost composes
    (Yan 2025, Observation 1 / Claim 1). ``tests/privacy`` shows the audit catching
    variants that continue after the cutoff, ignore the gap condition, or (Stemmer)
    do not scale the noise with √k.

    Parameters
    ----------
    t_lower, t_upper : float
        Thresholds t_l < t_u (public).
    epsilon : float
        Privacy parameter ε > 0 (ε < 1 for ``"bsu"``).
    delta : float
        Privacy parameter δ ∈ (0, 1).
    sensitivity : float, default=1.0
        Sensitivity Δ of every query (1/n for Yan's vote fractions).
    calibration : {"bsu", "stemmer", "charged"}, default="bsu"
        Which analysis (and hence noise) to use, see above.
    max_hard : int, optional
        The cutoff k on ⊤ answers. ``"bsu"``: must be 1 (the default). ``"stemmer"``
        (and ``"charged"``): defaults to ⌈4·ln(2/δ)⌉, the smallest k Stemmer allows.
    noise_scale : float, optional
        ``"charged"`` only: the query noise b, refused unless the lemma certifies it
        for (ε, δ, k, t_u − t_l); default the least such b.
    random_state : None, int or numpy.random.Generator
        Source of randomness.

    Attributes
    ----------
    min_gap : float
        The smallest t_u − t_l the calibration's proof allows.
    n_queries : int
        Queries answered so far.
    n_hard : int
        ⊤ answers so far.
    halted : bool
        True once ``n_hard == max_hard``.

    References
    ----------
    M. Bun, T. Steinke, J. Ullman. Make Up Your Mind: The Price of Online Queries in
    Differential Privacy. SODA 2017. — U. Stemmer. Private Truly-Everlasting
    Robust-Prediction. ICML 2024, §4.1 (Alg. 3, Thm 4.3). — E. Cohen, X. Lyu. The
    Target-Charging Technique for Privacy Analysis across Interactive Computations.
    NeurIPS 2023. — Yan. Private Prediction via Shrinkage, §3.2.1 (Alg. 1, Lemma 1).

    Examples
    --------
    >>> from skdp.mechanisms.between_thresholds import BetweenThresholds
    >>> bt = BetweenThresholds(0.0, 500.0, epsilon=0.5, delta=1e-6, random_state=0)
    >>> bt.process([-200.0, 700.0, 250.0])
    array([-1,  1,  0], dtype=int8)
    >>> bt.halted
    True
    """

    LOW = LOW
    HARD = HARD
    HIGH = HIGH
    NOT_ANSWERED = NOT_ANSWERED

    def __init__(
        self,
        t_lower: float,
        t_upper: float,
        epsilon: float,
        delta: float,
        *,
        sensitivity: float = 1.0,
        calibration: str = "bsu",
        max_hard: int | None = None,
        noise_scale: float | None = None,
        random_state: RandomStateLike = None,
    ) -> None:
        self.t_lower = float(check_finite_array(t_lower, name="t_lower", ndim=0))
        self.t_upper = float(check_finite_array(t_upper, name="t_upper", ndim=0))
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self.sensitivity = check_sensitivity(sensitivity)
        if calibration not in _CALIBRATIONS:
            raise ValueError(f"calibration must be one of {_CALIBRATIONS}, got {calibration!r}.")
        self.calibration = calibration
        if self.delta == 0:
            raise PrivacyParameterError(
                "BetweenThresholds needs δ > 0: both analyses are (ε, δ) with a gap and "
                "noise that grow with ln(1/δ)."
            )
        if calibration == "bsu":
            if self.epsilon >= 1:
                raise PrivacyParameterError(
                    f"calibration='bsu' needs ε < 1 (Yan, Lemma 1 assumes ε, δ ∈ (0, 1)); got "
                    f"ε = {self.epsilon:g}. Use calibration='stemmer' or a smaller ε."
                )
            k = 1 if max_hard is None else check_positive_int(max_hard, "max_hard")
            if k != 1:
                raise PrivacyParameterError(
                    "calibration='bsu' halts at the first ⊤ (max_hard=1); its proof covers "
                    "nothing beyond. Use calibration='stemmer' for k > 1 ⊤ answers, or start "
                    "a new instance after each ⊤ and compose."
                )
        else:
            k_min = math.ceil(4.0 * math.log(2.0 / self.delta))
            k = k_min if max_hard is None else check_positive_int(max_hard, "max_hard")
            if calibration == "stemmer" and k < 4.0 * math.log(2.0 / self.delta):
                raise PrivacyParameterError(
                    f"calibration='stemmer' needs max_hard k ≥ 4·ln(2/δ) = "
                    f"{4 * math.log(2 / self.delta):.2f} (Stemmer 2024, Thm 4.3); got k = {k}."
                )
        self.max_hard = k
        gap = self.t_upper - self.t_lower
        if not gap >= self._min_gap:
            raise PrivacyParameterError(
                f"the thresholds' gap t_upper − t_lower = {gap:g} is below the {self._min_gap:g} "
                f"that the {calibration!r} privacy proof requires "
                f"({self._gap_rule}). Widen the gap, or raise ε / δ."
            )
        if noise_scale is not None and calibration != "charged":
            raise ValueError("noise_scale is only for calibration='charged'.")
        if calibration == "charged":
            self._charged_scale = _certified_scale(
                noise_scale, self.epsilon, self.delta, k, gap, self.sensitivity)
        self._rng = check_generator(random_state)
        mu = _laplace_or_zero(self._threshold_noise_scale, None, self._rng)
        self._noisy_lower = self.t_lower + mu
        self._noisy_upper = self.t_upper - mu
        self.n_queries = 0
        self.n_hard = 0

    # -- calibration (small properties so tests can build broken variants) ------
    @property
    def _k_for_noise(self):
        return self.max_hard

    @property
    def _threshold_noise_scale(self):
        if self.calibration == "bsu":
            return 2.0 * self.sensitivity / self.epsilon
        return 0.0

    @property
    def _query_noise_scale(self):
        if self.calibration == "bsu":
            return 6.0 * self.sensitivity / self.epsilon
        if self.calibration == "charged":
            return self._charged_scale
        k = self._k_for_noise
        return 4.0 * self.sensitivity / self.epsilon * math.sqrt(k * math.log(2.0 / self.delta))

    @property
    def _min_gap(self):
        eps, delta, s = self.epsilon, self.delta, self.sensitivity
        if self.calibration == "bsu":
            return 12.0 * s / eps * (math.log(10.0 / eps) + math.log(1.0 / delta) + 1.0)
        if self.calibration == "charged":
            return charged_min_gap(eps, delta, self.max_hard, s)
        return 16.0 * s / eps * math.sqrt(self.max_hard * math.log(2.0 / delta))

    @property
    def _gap_rule(self):
        if self.calibration == "bsu":
            return "12Δ/ε·(ln(10/ε) + ln(1/δ) + 1), Yan Lemma 1 / Bun et al. 2017"
        if self.calibration == "charged":
            return ("the gap where the charged lemma's bound, as b → ∞, reaches ε; "
                    "≈ Δ·√(2k·ln(1/δ))/ε")
        return "16Δ/ε·√(k·ln(2/δ)), Stemmer 2024 Thm 4.3"

    @property
    def _cutoff(self):
        return self.max_hard

    @property
    def min_gap(self) -> float:
        return self._min_gap

    @property
    def halted(self) -> bool:
        return self.n_hard >= self._cutoff

    # -- answering ----------------------------------------------------------------
    @staticmethod
    def _classify(noisy, lower, upper):
        # Yan Alg. 1 / Stemmer Alg. 3 test "below t̂_l" first: if the noisy thresholds
        # cross (t̂_l > t̂_u, possible when μ > gap/2), a value below both is L.
        codes = np.full(np.shape(noisy), HARD, dtype=np.int8)
        codes[noisy > upper] = HIGH
        codes[noisy < lower] = LOW
        return codes

    def _refuse_if_halted(self):
        if self.halted:
            raise MechanismHaltedError(
                f"BetweenThresholds halted after {self.n_hard} ⊤ answer(s) (its cutoff); "
                "answering more would exceed its privacy guarantee. Start a new instance."
            )

    def _commit(self, codes, noise, answered):
        self._give_back_noise(noise[answered:])
        self.n_queries += int(answered)
        self.n_hard += int(np.count_nonzero(codes[:answered] == HARD))
        return codes[:answered]

    def process(self, values: ArrayLike, *, stop_at_hard: bool = False) -> NDArray[np.int8]:
        """Answer a block of queries in order, up to and including the halting ⊤.

        Parameters
        ----------
        values : array-like of shape (n_queries,)
            Exact query values q(D), finite, each of sensitivity ``sensitivity``.
        stop_at_hard : bool, default=False
            Stop after the first ⊤ of the block even if the cutoff allows more (for a
            caller whose next queries depend on that answer). The unused noise is kept
            for the next call, exactly as at a halt, so the answers are those of the
            same queries fed one at a time.

        Returns
        -------
        codes : ndarray of int8, shape (n_answered,)
            −1 (L), +1 (R) or 0 (⊤) for the first ``n_answered`` queries; shorter
            than the block only if the mechanism halted inside it.

        Raises
        ------
        MechanismHaltedError
            If the mechanism had already halted.
        """
        self._refuse_if_halted()
        values = check_finite_array(values, name="values", ndim=1, allow_empty=True)
        noise = self._take_noise(values.size)
        codes = self._classify(values + noise, self._noisy_lower, self._noisy_upper)
        hard_at = np.flatnonzero(codes == HARD)
        allowed = 1 if stop_at_hard else self._cutoff - self.n_hard
        answered = hard_at[allowed - 1] + 1 if hard_at.size >= allowed else values.size
        return self._commit(codes, noise, answered)

    def test(self, value: float) -> int:
        """Answer one query: −1 (L), +1 (R) or 0 (⊤)."""
        if np.ndim(value) != 0:
            raise ValueError(f"test() takes one query value, got shape {np.shape(value)}.")
        return int(self.process([value])[0])

    @classmethod
    def simulate(cls, values: ArrayLike, n_runs: int, t_lower: float, t_upper: float,
                 epsilon: float, delta: float, *, random_state: RandomStateLike = None,
                 **params: Any) -> NDArray[np.int8]:
        """Run ``n_runs`` independent instances on one fixed query sequence, vectorised.

        For audits and for studying a configuration; each run is distributed exactly
        as a fresh instance fed ``values`` through :meth:`process`.

        Returns
        -------
        codes : ndarray of int8, shape (n_runs, n_queries)
            −1 / +1 / 0 as in :meth:`process`, and 2 (``NOT_ANSWERED``) for queries
            after the run halted.
        """
        n_runs = check_positive_int(n_runs, "n_runs")
        proto = cls(t_lower, t_upper, epsilon, delta, random_state=random_state, **params)
        values = check_finite_array(values, name="values", ndim=1)
        rng = proto._rng
        mu = _laplace_or_zero(proto._threshold_noise_scale, (n_runs, 1), rng)
        noisy = values + _laplace_or_zero(proto._query_noise_scale, (n_runs, values.size), rng)
        codes = cls._classify(noisy, proto.t_lower + mu, proto.t_upper - mu)
        hard = codes == HARD
        hard_before = np.cumsum(hard, axis=1) - hard
        codes[hard_before >= proto._cutoff] = NOT_ANSWERED
        return codes

    def __repr__(self):
        return (
            f"BetweenThresholds(t_lower={self.t_lower:g}, t_upper={self.t_upper:g}, "
            f"epsilon={self.epsilon:g}, delta={self.delta:g}, calibration={self.calibration!r}, "
            f"max_hard={self.max_hard}, answered={self.n_queries}, hard={self.n_hard}, "
            f"halted={self.halted})"
        )
