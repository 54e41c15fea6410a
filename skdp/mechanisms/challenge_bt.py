"""ChallengeBT (Stemmer, Alg. 4): BetweenThresholds whose halting is left to a Stopper.

Split from :mod:`skdp.mechanisms.between_thresholds` (one concept per module): that
module holds the BetweenThresholds algorithm and its calibrations; this one the
never-halting variant and the Stopper that decides when a copy is re-executed, which
RectanglesPERP's copies use.
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
from ._charged_calibration import charged_min_gap
from .between_thresholds import (
    HARD,
    HIGH,
    LOW,
    NOT_ANSWERED,
    BetweenThresholds,
    _certified_scale,
)
from .laplace import _laplace_or_zero
from .stopper import Stopper

__all__ = ["ChallengeBT"]


class _NeverHaltingBT(BetweenThresholds):
    """Stemmer's BetweenThresholds "modified so that it never halts" (Alg. 4, step 2).

    Its noise is still calibrated for the k' it is instantiated with; only the
    halting is switched off — ChallengeBT's Stopper does the halting.
    """

    _owner: ChallengeBT  # set by ChallengeBT before __init__ runs

    @property
    def _cutoff(self):
        return math.inf

    @property
    def _query_noise_scale(self):
        # Read from the owning ChallengeBT, so a test can override it there.
        return self._owner._bt_query_noise_scale


class ChallengeBT:
    """ChallengeBT: BetweenThresholds whose halting is left to a Stopper (Stemmer Alg. 4).

    With k' = k + (8/ε)·ln(2/δ)·ln(T/δ) (rounded up to an integer):

    1. a :class:`~skdp.mechanisms.stopper.Stopper` with parameters (ε, δ) and
       threshold k on the empty dataset;
    2. a BetweenThresholds (Stemmer calibration) on the dataset with parameters
       (ε, δ/2) and cutoff k' that never halts;
    3. Flag = 1;
    4. two kinds of queries:

       * **stopping query** (:meth:`stop_query`): Flag ← 1; ask the Stopper and
         return its answer; if it answered ⊤, HALT;
       * **BT query** (:meth:`bt_query`): if Flag = 0 the query is ignored (nothing
         happens, ``None`` is returned). Otherwise Flag ← 0, the query goes to
         BetweenThresholds, its answer a is returned, and the Stopper is updated
         with 1 if a = ⊤ ("medium") and with 0 otherwise.

    So BT queries that count must be separated by stopping queries, and the halt
    leaves ambiguous how many ⊤ answers there were — the point of the construction.

    Parameter conditions (checked; violations raise PrivacyParameterError before
    any randomness): k ≥ 4·ln(4/δ) and t_u − t_l ≥ (32Δ/ε)·√(k·ln(4/δ)) (Alg. 4's
    input line), and also t_u − t_l ≥ (16Δ/ε)·√(k'·ln(4/δ)), the gap Theorem 4.3
    needs for the inner BetweenThresholds with parameters (ε, δ/2, k') — the first
    condition implies the second only when k' ≤ 4k, which Alg. 4 does not guarantee.

    Privacy
    -------
    (ε, δ)-differentially private with respect to the dataset (Stemmer 2024,
    Thm 4.4, proof in App. B, made precise below): the inner BetweenThresholds is
    (ε, δ/2)-DP, the Stopper only post-processes its answers, and switching its
    halting off costs at most δ/2 more. The δ/2 is *not* a total-variation bound
    applied on both sides (that would give δ/2 + δ/2 + e^ε·δ/2); it is a one-sided
    coupling with an ideal mechanism that outputs a marker, the lemma below. Its
    Ē-bound for Stemmer's Stopper (no threshold noise, Lap(b) per query,
    b = (8/ε)·ln(2/δ)): at the first stopping query τ whose count has reached k',
    the Stopper answers ⊥ only if its fresh noise is below −(k' − k), probability
    ≤ ½e^{−(k'−k)/b} ≤ δ/(2T) ≤ δ/2 for k' − k ≥ b·ln(T/δ); Alg. 4's union bound over
    the T stopping queries is not needed, but T is a hard cap anyway: after
    ``max_steps`` stopping queries the mechanism halts whatever the answers.

    ``stopper="svt"`` (additive; RectanglesPERP's ``"sharp"`` preset) replaces
    the Stopper by the pure ε_s-DP :class:`Stopper` ``calibration="svt"`` (noisy
    threshold, Lap(2/ε_s) noises; ε_s = ``stopper_epsilon``, default ε), with
    k' = k + ⌈(4/ε_s)·ln(2/δ)⌉ and only Thm 4.3's gap condition for the inner
    BetweenThresholds, t_u − t_l ≥ (16Δ/ε)·√(k'·ln(4/δ)) (and k ≥ 4·ln(4/δ), so
    k' ≥ 4·ln(2/(δ/2)) as Thm 4.3 needs).

    *Lemma (ChallengeBT is (ε, δ)-DP w.r.t. its dataset; either Stopper).* Let
    BT_{k'} be the inner BetweenThresholds that halts at its k'-th ⊤; it is
    (ε, δ/2)-DP (Thm 4.3, conditions above, or the charged lemma). Let τ be the
    first stopping query whose count (of ⊤ answers) has reached k' — a stopping
    time, fixed before that query's Stopper noise is drawn; counts grow by at most 1
    per stopping query because every stopping query is preceded by at most one BT
    query (Flag), so the count at τ is exactly k', and BT_{k'} has halted exactly
    then. Let E be the event that the Stopper answers ⊤ at or before τ (E holds if τ
    never comes).

    *The ideal mechanism Ĩ* is ChallengeBT with BT_{k'} in place of the
    never-halting BetweenThresholds — the same Flag rule, the same Stopper with the
    same noises, the same T cap — except that if the Stopper answers ⊥ at τ, Ĩ
    outputs a marker † instead and halts. (Between BT_{k'}'s halt and τ no BT query
    is answered — Flag is 0 — so Ĩ never needs BT_{k'} after it halted.) Ĩ is a
    post-processing of BT_{k'}'s interactive transcript: an adversary against
    BT_{k'} can run the Stopper and the Flag rule itself with data-independent coins
    and see BT_{k'} halt. Hence Ĩ is (ε, δ/2)-DP.

    *Coupling.* Run ChallengeBT and Ĩ on the same dataset against the same adversary
    with the same noises: their transcripts are equal up to τ; at τ both halt if the
    Stopper says ⊤, and otherwise Ĩ outputs † while ChallengeBT goes on. So (1) Ĩ's
    transcript contains † exactly on Ē, and (2) on E the two transcripts are equal.
    *P(Ē) ≤ δ/2 on every dataset and against every adaptive query sequence:* for the
    svt Stopper, Ē needs k' + ν_τ < k + ρ, i.e. ρ > x or ν_τ < −x with
    x = (k' − k)/2 ≥ (2/ε_s)·ln(2/δ); ν_τ is drawn at τ, independent of the past,
    so P(Ē) ≤ ½e^{−x·ε_s/2} + ½e^{−x·ε_s/2} ≤ δ/2 (Stemmer's Stopper: above).
    *Conclusion.* For neighbours D, D′ and every set S of ChallengeBT transcripts
    (none contains †): P[CBT(D) ∈ S] ≤ P[CBT(D) ∈ S, E] + δ/2 = P[Ĩ(D) ∈ S] + δ/2
    ≤ e^ε·P[Ĩ(D′) ∈ S] + δ/2 + δ/2 = e^ε·P[CBT(D′) ∈ S, E] + δ ≤
    e^ε·P[CBT(D′) ∈ S] + δ. Both equalities use the marker: a transcript of Ĩ in S has
    no †, so E holds and it is ChallengeBT's. Without it — an ideal mechanism that
    simply stops answering when BT_{k'} halts — a truncated transcript of Ĩ on Ē may
    lie in S while ChallengeBT's continuation does not, and the step
    P[Ĩ(D′) ∈ S] ≤ P[CBT(D′) ∈ S] fails. ∎ The code implements ChallengeBT itself (the
    real mechanism: ``_NeverHaltingBT``, the Stopper, Flag, the T cap); Ĩ exists
    only in the proof, and no code change was needed for it (issue 26). Unlike
    Stemmer's Stopper, whose k' − k grows with ln(T/δ), the svt Stopper's does not
    grow with T. The Stopper's own privacy (ε_s, pure) matters only to callers that
    feed it private bits (RectanglesPERP, case (ii)). Audit and broken twin (k' = k):
    ``tests/privacy/test_between_thresholds_audit.py``.

    ``bt_calibration="charged"`` (additive, with ``stopper="svt"`` only;
    RectanglesPERP's ``"charged"`` preset): the inner BetweenThresholds (ε, δ/2, k')
    uses the ``"charged"`` calibration of :class:`BetweenThresholds` — noise
    ``bt_noise_scale`` (default the least certified for the gap), refused unless
    the lemma in :mod:`skdp.mechanisms._charged_calibration` certifies it for
    (ε, δ/2, k', t_u − t_l) — instead of Thm 4.3's. The lemma above uses only that
    BT_{k'} is (ε, δ/2)-DP, so it holds unchanged (the charged lemma covers the
    halting BT_{k'}: its supermartingale argument stops at the k'-th ⊤). Audit and
    broken twin (a third of the noise):
    ``tests/privacy/test_charged_between_thresholds_audit.py``.

    Parameters
    ----------
    t_lower, t_upper : float
        Thresholds t_l < t_h of the inner BetweenThresholds.
    epsilon, delta : float
        Privacy parameters ε > 0, δ ∈ (0, 1).
    max_hard : int
        k, the Stopper's threshold on the number of "medium" (⊤) answers.
    max_steps : int
        T, the bound on the number of steps (stopping queries).
    sensitivity : float, default=1.0
        Sensitivity Δ of every BT query (1 in the paper).
    stopper : {"stemmer", "svt"}, default="stemmer"
        Which Stopper (and hence which k' and gap condition), see above.
    stopper_epsilon : float, optional
        ε_s of the ``"svt"`` Stopper (default ε); ignored for ``"stemmer"``.
    bt_calibration : {"stemmer", "charged"}, default="stemmer"
        The inner BetweenThresholds' analysis (``"charged"`` needs ``stopper="svt"``).
    bt_noise_scale : float, optional
        ``"charged"`` only: the inner noise b (checked), see above.
    random_state : None, int or numpy.random.Generator
        Source of randomness.

    Attributes
    ----------
    k_prime : int
        The inner BetweenThresholds' k'.
    n_stop_queries, n_bt_queries : int
        Queries of each kind answered so far (ignored BT queries not counted).
    halted : bool
        True once the Stopper answered ⊤ or ``max_steps`` stopping queries were used.

    References
    ----------
    U. Stemmer. Private Truly-Everlasting Robust-Prediction. ICML 2024, §4.1,
    Algorithm 4, Theorem 4.4 and Appendix B.
    """

    LOW = LOW
    HARD = HARD
    HIGH = HIGH
    NOT_ANSWERED = NOT_ANSWERED

    def __init__(self, t_lower: float, t_upper: float, epsilon: float, delta: float,
                 max_hard: int, max_steps: int, *, sensitivity: float = 1.0,
                 stopper: str = "stemmer", stopper_epsilon: float | None = None,
                 bt_calibration: str = "stemmer", bt_noise_scale: float | None = None,
                 random_state: RandomStateLike = None) -> None:
        if stopper not in ("stemmer", "svt"):
            raise ValueError(f"stopper must be 'stemmer' or 'svt', got {stopper!r}.")
        if bt_calibration not in ("stemmer", "charged"):
            raise ValueError(f"bt_calibration must be 'stemmer' or 'charged', got "
                             f"{bt_calibration!r}.")
        if bt_calibration == "charged" and stopper != "svt":
            raise ValueError("bt_calibration='charged' needs stopper='svt'.")
        if bt_noise_scale is not None and bt_calibration != "charged":
            raise ValueError("bt_noise_scale is only for bt_calibration='charged'.")
        self.stopper = stopper
        self.bt_calibration = bt_calibration
        t_lower = float(check_finite_array(t_lower, name="t_lower", ndim=0))
        t_upper = float(check_finite_array(t_upper, name="t_upper", ndim=0))
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        if self.delta == 0:
            raise PrivacyParameterError("ChallengeBT needs δ > 0 (Stemmer 2024, Alg. 4).")
        self.sensitivity = check_sensitivity(sensitivity)
        self.max_hard = check_positive_int(max_hard, "max_hard")
        self.max_steps = check_positive_int(max_steps, "max_steps")
        eps, delta, k = self.epsilon, self.delta, self.max_hard
        if k < 4.0 * math.log(4.0 / delta):
            raise PrivacyParameterError(
                f"ChallengeBT needs max_hard k ≥ 4·ln(4/δ) = {4 * math.log(4 / delta):.2f} "
                f"(Stemmer 2024, Alg. 4); got k = {k}."
            )
        eps_s = eps if stopper_epsilon is None else check_epsilon(stopper_epsilon)
        self.stopper_epsilon = eps_s
        self.k_prime = k + self._stopper_slack(eps, delta)
        gap = t_upper - t_lower
        need = 16.0 * self.sensitivity / eps * math.sqrt(self.k_prime * math.log(4.0 / delta))
        if stopper == "stemmer":
            need = max(need, 32.0 * self.sensitivity / eps * math.sqrt(k * math.log(4.0 / delta)))
        if bt_calibration == "charged":  # checked before any randomness, like the gap
            need = charged_min_gap(eps, delta / 2.0, self.k_prime, self.sensitivity)
            if gap > need:
                self._charged_b = _certified_scale(bt_noise_scale, eps, delta / 2.0,
                                                   self.k_prime, gap, self.sensitivity)
        if not (gap > need if bt_calibration == "charged" else gap >= need):
            rule = ("(≈ Δ·√(2k'·ln(2/δ))/ε [where the charged lemma's bound, as b → ∞, reaches ε"
                    if bt_calibration == "charged" else
                    ("max(32Δ/ε·√(k·ln(4/δ)) [Alg. 4], " if stopper == "stemmer" else "(")
                    + "16Δ/ε·√(k'·ln(4/δ)) [Thm 4.3")
            raise PrivacyParameterError(
                f"ChallengeBT's gap t_upper − t_lower = {gap:g} is below the required {need:g}: "
                f"{rule} for the inner BetweenThresholds with (ε, δ/2, k' = {self.k_prime})])."
            )
        # Separate streams for the two mechanisms: drawn from one generator, their
        # interleaved draws would depend on how the queries are batched into blocks.
        bt_rng, stop_rng = check_generator(random_state).spawn(2)
        self._stopper = Stopper(
            eps if stopper == "stemmer" else eps_s, delta, k, calibration=stopper,
            random_state=stop_rng,
        )
        self._bt = _NeverHaltingBT.__new__(_NeverHaltingBT)
        self._bt._owner = self
        self._bt.__init__(  # type: ignore[misc]  # owner set first, see above
            t_lower,
            t_upper,
            eps,
            delta / 2.0,
            sensitivity=self.sensitivity,
            calibration=bt_calibration,
            max_hard=self.k_prime,
            noise_scale=self._charged_b if bt_calibration == "charged" else None,
            random_state=bt_rng,
        )
        self._flag = True
        self.n_stop_queries = 0
        self._out_of_steps = False

    def _stopper_slack(self, eps, delta):
        """k' − k: Alg. 4's (8/ε)·ln(2/δ)·ln(T/δ), or (4/ε_s)·ln(2/δ) for ``"svt"``."""
        if self.stopper == "svt":
            return math.ceil(4.0 / self.stopper_epsilon * math.log(2.0 / delta))
        return math.ceil(8.0 / eps * math.log(2.0 / delta) * math.log(self.max_steps / delta))

    @property
    def _bt_query_noise_scale(self):
        # Thm 4.3's noise for the inner BetweenThresholds with (ε, δ/2) and cutoff k':
        # Lap((4Δ/ε)·√(k'·ln(2/(δ/2)))); "charged": the certified b.
        if self.bt_calibration == "charged":
            return self._charged_b
        return (
            4.0
            * self.sensitivity
            / self.epsilon
            * math.sqrt(self.k_prime * math.log(4.0 / self.delta))
        )

    @property
    def t_lower(self) -> float:
        return self._bt.t_lower

    @property
    def t_upper(self) -> float:
        return self._bt.t_upper

    @property
    def halted(self) -> bool:
        return self._stopper.halted or self._out_of_steps

    @property
    def n_bt_queries(self) -> int:
        return self._bt.n_queries

    def _refuse_if_halted(self):
        if self.halted:
            why = (
                "its Stopper answered ⊤"
                if self._stopper.halted
                else f"it used its {self.max_steps} stopping queries (T)"
            )
            raise MechanismHaltedError(
                f"ChallengeBT halted because {why}; its guarantee covers nothing after the "
                "halt. Start a new instance."
            )

    def stop_query(self) -> bool:
        """Stopping query: True (⊤ — the mechanism halts) or False (⊥)."""
        self._refuse_if_halted()
        self._flag = True
        answer = self._stopper.query()
        self.n_stop_queries += 1
        if self.n_stop_queries >= self.max_steps:
            self._out_of_steps = True
        return answer

    def bt_query(self, value: float) -> int | None:
        """BT query: −1 (low), +1 (high), 0 (medium), or None if ignored (Flag = 0)."""
        self._refuse_if_halted()
        if np.ndim(value) != 0:
            raise ValueError(f"bt_query() takes one query value, got shape {np.shape(value)}.")
        value = float(check_finite_array(value, name="value", ndim=0))
        if not self._flag:
            return None
        self._flag = False
        code = int(self._bt.process([value])[0])
        self._stopper.update(1 if code == HARD else 0)
        return code

    def process(self, values: ArrayLike) -> tuple[NDArray[np.int8], NDArray[np.bool_]]:
        """Run the pattern (BT query, stopping query) for each value, vectorised.

        If Flag = 0 when the block starts (a :meth:`bt_query` was not followed by a
        stopping query), the first BT query is ignored, as Alg. 4 prescribes.

        Returns
        -------
        codes : ndarray of int8, shape (n_answered,)
            BT answers (−1 / +1 / 0; 2 for an ignored first query).
        stops : ndarray of bool, shape (n_answered,)
            The stopping query's answer after each BT query; a block ends early at a
            ⊤ or when the T stopping queries are used up.
        """
        self._refuse_if_halted()
        values = check_finite_array(values, name="values", ndim=1, allow_empty=True)
        n = min(values.size, self.max_steps - self.n_stop_queries)
        values = values[:n]
        skip = 0 if self._flag else 1
        noise = self._bt._take_noise(n - skip)
        bt_codes = self._bt._classify(
            values[skip:] + noise, self._bt._noisy_lower, self._bt._noisy_upper
        )
        codes = np.concatenate([np.full(skip, NOT_ANSWERED, dtype=np.int8), bt_codes])
        stops = self._stopper.process((codes == HARD).astype(float))
        answered = stops.size
        self._bt._commit(bt_codes, noise, max(answered - skip, 0))
        self.n_stop_queries += answered
        self._flag = True
        if self.n_stop_queries >= self.max_steps:
            self._out_of_steps = True
        return codes[:answered], stops

    @classmethod
    def simulate(cls, values: ArrayLike, n_runs: int, t_lower: float, t_upper: float,
                 epsilon: float, delta: float, max_hard: int, max_steps: int, *,
                 random_state: RandomStateLike = None,
                 **params: Any) -> tuple[NDArray[np.int8], NDArray[np.int8]]:
        """``n_runs`` independent runs of :meth:`process` on fixed ``values``, vectorised.

        Returns
        -------
        codes : ndarray of int8, shape (n_runs, n_queries)
            BT answers, 2 (``NOT_ANSWERED``) after the run halted.
        stops : ndarray of int8, shape (n_runs, n_queries)
            Stopping answers 1 (⊤) / 0 (⊥), 2 after the run halted.
        """
        n_runs = check_positive_int(n_runs, "n_runs")
        proto = cls(
            t_lower,
            t_upper,
            epsilon,
            delta,
            max_hard,
            max_steps,
            random_state=random_state,
            **params,
        )
        values = check_finite_array(values, name="values", ndim=1)
        rng = proto._bt._rng
        bt, st = proto._bt, proto._stopper
        mu = _laplace_or_zero(bt._threshold_noise_scale, (n_runs, 1), rng)  # 0: Stemmer's BT
        noisy = values + _laplace_or_zero(bt._query_noise_scale, (n_runs, values.size), rng)
        codes = bt._classify(noisy, bt.t_lower + mu, bt.t_upper - mu)
        mediums = np.cumsum(codes == HARD, axis=1)
        stop_noise = _laplace_or_zero(st._query_noise_scale, (n_runs, values.size), rng)
        noisy_t = st.threshold + _laplace_or_zero(st._threshold_noise_scale, (n_runs, 1), rng)
        stop = (mediums + stop_noise >= noisy_t).astype(np.int8)
        stop[:, proto.max_steps :] = NOT_ANSWERED
        halted_before = np.cumsum(stop == 1, axis=1) - (stop == 1)
        answered = (halted_before == 0) & (np.arange(values.size) < proto.max_steps)
        codes[~answered] = NOT_ANSWERED
        stop[~answered] = NOT_ANSWERED
        return codes, stop

    def __repr__(self):
        return (
            f"ChallengeBT(t_lower={self.t_lower:g}, t_upper={self.t_upper:g}, "
            f"epsilon={self.epsilon:g}, delta={self.delta:g}, k={self.max_hard}, "
            f"k'={self.k_prime}, T={self.max_steps}, halted={self.halted})"
        )
