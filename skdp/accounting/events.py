"""Privacy events: what one run of a mechanism costs, in a form an accountant composes.

An *event* names a mechanism's privacy guarantee, not its implementation: an estimator
that runs K AboveThreshold instances and m·K exponential-mechanism draws describes its
run as ``[(PureDP(ε̂), K), (BoundedRange(4η), m·K)]`` and hands that to
:func:`skdp.accounting.account`. Each event is a frozen dataclass (hashable, so equal
events are grouped and composed at once).

Every event here has a *symmetric* dominating pair (the privacy-loss distribution of
(P, Q) equals that of (Q, P)), so one privacy-loss distribution covers both
directions of a neighbouring pair, and every guarantee holds under adaptive
composition (each mechanism may depend on the outputs of the earlier ones).

References
----------
.. [KOV15] P. Kairouz, S. Oh, P. Viswanath. "The Composition Theorem for
   Differential Privacy". ICML 2015. (Randomized response dominates every ε-DP and,
   with an atom δ at infinity, every (ε, δ)-DP mechanism.)
.. [DDR20] J. Dong, D. Durfee, R. Rogers. "Optimal Differential Privacy Composition
   for Exponential Mechanisms". ICML 2020. (Bounded-range mechanisms.)
.. [CR21] M. Cesar, R. Rogers. "Bounding, Concentrating, and Truncating: Unifying
   Privacy Loss Composition for Data Analytics". ALT 2021, Lemma 3.2 (ε-BR implies
   ε²/8-zCDP).
.. [KJH20] A. Koskela, J. Jälkö, A. Honkela. "Computing Tight Differential Privacy
   Guarantees Using FFT". AISTATS 2020. (Privacy-loss distributions of Laplace and
   Gaussian noise.)
"""

from __future__ import annotations

from dataclasses import dataclass

from .._validation import check_delta, check_epsilon, check_positive_int, check_sensitivity
from ..exceptions import PrivacyParameterError

__all__ = ["ApproxDP", "BoundedRange", "DiscreteLaplace", "Gaussian", "Laplace", "PureDP"]


@dataclass(frozen=True)
class PureDP:
    """Any ε-differentially private mechanism.

    Accounted by its dominating pair, randomized response with e^ε/(1+e^ε) [KOV15]:
    exact for the worst ε-DP mechanism, so never optimistic for any other one. Use it
    for AboveThreshold, a Laplace-noised histogram released as a whole, or any
    mechanism whose only guarantee is ε-DP.

    Parameters
    ----------
    epsilon : float
        ε > 0.
    """

    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))

    @property
    def delta(self) -> float:
        return 0.0


@dataclass(frozen=True)
class BoundedRange(PureDP):
    """An ε-bounded-range mechanism: the exponential mechanism run at ε.

    A mechanism is ε-BR when, for neighbouring inputs, its log-likelihood ratio
    ranges over an interval of width at most ε. The exponential mechanism with
    weights ∝ exp(ε·q/(2Δ)) (or exp(ε·q/Δ) for a monotone score q) is ε-BR and ε-DP
    [DDR20]. Accounted both as ε-DP (privacy-loss distributions) and as
    ε²/8-zero-concentrated DP [CR21] (Rényi accounting), whichever gives the smaller
    total; for many small draws the second is about twice as tight in ε.

    Parameters
    ----------
    epsilon : float
        ε > 0, the width of the range (the mechanism's pure-DP guarantee).
    """


@dataclass(frozen=True)
class ApproxDP(PureDP):
    """Any (ε, δ)-differentially private mechanism.

    Accounted by its dominating pair [KOV15]: an atom δ at infinite privacy loss and
    randomized response with (1−δ)·e^ε/(1+e^ε) on the rest. Use it for
    BetweenThresholds, HistSparse or any mechanism whose guarantee is (ε, δ)-DP.

    Parameters
    ----------
    epsilon : float
        ε > 0.
    delta : float
        δ ∈ [0, 1).
    """

    delta: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "delta", check_delta(self.delta))


@dataclass(frozen=True)
class Laplace(PureDP):
    """Laplace noise of scale Δ/ε added to one query of sensitivity Δ.

    ε-DP; accounted by its exact privacy-loss distribution (atoms ±ε and a
    continuous part between them [KJH20]), which is tighter than :class:`PureDP` when
    many such queries compose. Only for a single scalar query per event: a noisy
    *vector* (a histogram whose neighbouring inputs differ in several bins) is a
    :class:`PureDP` event.

    Parameters
    ----------
    epsilon : float
        ε > 0 (noise scale Δ/ε).
    """


@dataclass(frozen=True)
class DiscreteLaplace(PureDP):
    """Discrete Laplace noise P(z) ∝ exp(−ε|z|/Δ) on one integer query of sensitivity Δ.

    ε-DP; accounted by its exact, finitely supported privacy-loss distribution. With
    Δ = 1 it is exactly randomized response, i.e. :class:`PureDP`.

    Parameters
    ----------
    epsilon : float
        ε > 0.
    sensitivity : int, default=1
        The integer sensitivity Δ ≥ 1 of the query.
    """

    sensitivity: int = 1

    def __post_init__(self) -> None:
        super().__post_init__()
        try:
            sensitivity = check_positive_int(self.sensitivity, "sensitivity")
        except ValueError as exc:
            raise PrivacyParameterError(f"DiscreteLaplace: {exc}") from None
        object.__setattr__(self, "sensitivity", sensitivity)


@dataclass(frozen=True)
class Gaussian:
    """Gaussian noise N(0, σ²) added to one query of L2-sensitivity 1.

    Not pure DP: accounted exactly (its privacy loss is N(μ, 2μ) with μ = 1/(2σ²)) by
    privacy-loss distributions and as 1/(2σ²)-zCDP by Rényi accounting.

    Parameters
    ----------
    sigma : float
        σ > 0, in units of the query's sensitivity.
    """

    sigma: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_sensitivity(self.sigma, "sigma"))

    @property
    def delta(self) -> float:
        return 0.0


#: Any accountable privacy event (the type :func:`~skdp.accounting.account` takes).
PrivacyEvent = PureDP | BoundedRange | ApproxDP | Laplace | DiscreteLaplace | Gaussian
