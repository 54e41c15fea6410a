"""Random numbers of trials for private hyperparameter search, and their privacy.

Two public stopping distributions (Papernot & Steinke, ICLR 2022):

* the truncated negative binomial ``D_{η,γ}`` (η > −1, 0 < γ < 1) on k ≥ 1,
  ``P[K = k] ∝ (1−γ)^k · Π_{ℓ<k} (ℓ+η)/(ℓ+1)``: η = 1 is the geometric law of
  Liu & Talwar (STOC 2019), η = 0 the logarithmic law;
* the Poisson law with mean μ (K = 0 is possible: the search then releases nothing).

:func:`search_rdp` is the Rényi-DP of "run an ε₀-DP trial K times, release the best"
at every order of :data:`skdp.accounting._rdp.ORDERS`; :mod:`skdp.accounting._rdp`
converts it to (ε, δ). Pure numpy: no scikit-learn.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..accounting import _rdp

__all__ = ["Stopping", "make_stopping", "search_epsilon", "search_rdp"]

STOPPINGS = ("truncated_negative_binomial", "poisson")


class Stopping(NamedTuple):
    """A public stopping law: ``kind``, and (η, γ) for TNB or μ for Poisson."""

    kind: str
    eta: float
    gamma: float
    mu: float

    @property
    def mean(self) -> float:
        """E[K]."""
        if self.kind == "poisson":
            return self.mu
        return _tnb_mean(self.eta, self.gamma)

    def pmf(self, k: np.ndarray) -> np.ndarray:
        """P[K = k] for integer k ≥ 0 (computed in logs: stable far into the tail)."""
        k = np.asarray(k, dtype=float)
        if self.kind == "poisson":
            from scipy.special import gammaln

            return np.exp(k * math.log(self.mu) - self.mu - gammaln(k + 1.0))
        return np.where(k >= 1, np.exp(_tnb_log_pmf(self.eta, self.gamma, np.maximum(k, 1))),
                        0.0)

    def pgf(self, x: np.ndarray) -> np.ndarray:
        """E[x^K] for x in [0, 1] (the law of the best of K draws needs it)."""
        x = np.asarray(x, dtype=float)
        if self.kind == "poisson":
            return np.exp(self.mu * (x - 1.0))
        eta, gamma = self.eta, self.gamma
        base = 1.0 - (1.0 - gamma) * x
        if eta == 0:
            return np.log(base) / math.log(gamma)
        # ((1 − (1−γ)x)^{−η} − 1) / (γ^{−η} − 1), with expm1 for small η·log.
        return np.expm1(-eta * np.log(base)) / math.expm1(-eta * math.log(gamma))

    def sample(self, rng: np.random.Generator) -> int:
        """One draw of K (inverse CDF on the exact pmf recursion)."""
        if self.kind == "poisson":
            return int(rng.poisson(self.mu))
        u = rng.random()
        k, p = 1, float(self.pmf(np.array([1]))[0])
        cdf = p
        # P[K=k+1]/P[K=k] = (1−γ)(k+η)/(k+1) < 1 − γ/2 eventually: the loop ends.
        while cdf < u and p > 0:
            p *= (1.0 - self.gamma) * (k + self.eta) / (k + 1)
            k += 1
            cdf += p
        return k


def _tnb_log_pmf(eta: float, gamma: float, k: np.ndarray) -> np.ndarray:
    from scipy.special import gammaln

    log_q = math.log1p(-gamma)
    if eta == 0:
        return k * log_q - np.log(k) - math.log(math.log(1.0 / gamma))
    # Π_{ℓ<k}(ℓ+η)/(ℓ+1) = η·Γ(k+η)/(Γ(1+η)·Γ(k+1)): its sign is that of η, as is that
    # of the normaliser γ^{−η} − 1, so the ratio of their absolute values is the pmf.
    log_prod = (math.log(abs(eta)) + gammaln(k + eta) - math.lgamma(1.0 + eta)
                - gammaln(k + 1.0))
    return k * log_q + log_prod - math.log(abs(math.expm1(-eta * math.log(gamma))))


def _tnb_mean(eta: float, gamma: float) -> float:
    if eta == 0:
        return (1.0 / gamma - 1.0) / math.log(1.0 / gamma)
    return eta * (1.0 - gamma) / (gamma * -math.expm1(eta * math.log(gamma)))


def make_stopping(kind: str, mean_trials: float, eta: float = 0.0) -> Stopping:
    """The stopping law of ``kind`` with E[K] = ``mean_trials`` (γ found by bisection)."""
    if kind == "poisson":
        return Stopping(kind, math.nan, math.nan, float(mean_trials))
    # E[K] decreases from ∞ (γ → 0) to 1 (γ → 1): bisect on log γ.
    lo, hi = -700.0, -1e-12
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _tnb_mean(eta, math.exp(mid)) > mean_trials:
            lo = mid
        else:
            hi = mid
    return Stopping(kind, float(eta), math.exp(hi), math.nan)


_ORDERS = _rdp.ORDERS
# λ̂ of Papernot–Steinke Thm 2 ranges over [1, ∞]: the grid, 1 and ∞.
_HAT_ORDERS = np.concatenate([[1.0], _ORDERS, [math.inf]])


def _trial_rdp(eps0: float, orders: np.ndarray) -> np.ndarray:
    """D_α of an ε₀-DP trial: randomized response's (every ε₀-DP pair post-processes it)."""
    finite = np.isfinite(orders) & (orders > 1)
    out = np.full(orders.shape, eps0, dtype=float)  # λ = ∞: the max divergence ε₀
    out[finite] = _rdp._randomized_response(eps0, orders[finite])
    out[orders == 1] = eps0 * math.tanh(eps0 / 2.0)  # KL of randomized response
    return out


def search_rdp(eps0: float, stopping: Stopping) -> np.ndarray:
    """Rényi DP of the best of K runs of an ε₀-DP trial, at every order of ``ORDERS``.

    Truncated negative binomial (Papernot & Steinke 2022, Thm 2), with the trial's
    divergences those of ε₀-randomized response at λ and the best λ̂:

        ε'(λ) = D_λ + min_λ̂ [(1+η)(1 − 1/λ̂)·D_λ̂ + (1+η)·log(1/γ)/λ̂] + log E[K]/(λ−1).

    Poisson (ibid., Thm 6, with δ̂ = 0 since the trial is pure): ε'(λ) = D_λ + log μ/(λ−1)
    at the orders with e^{ε₀} ≤ 1 + 1/(λ−1), ∞ at the others.
    """
    d = _trial_rdp(eps0, _ORDERS)
    if stopping.kind == "poisson":
        ok = math.exp(eps0) <= 1.0 + 1.0 / (_ORDERS - 1.0)
        return np.where(ok, d + math.log(stopping.mu) / (_ORDERS - 1.0), math.inf)
    return d + _tnb_hat_term(eps0, stopping) + math.log(stopping.mean) / (_ORDERS - 1.0)


def _tnb_hat_term(eps0: float, stopping: Stopping) -> float:
    """min over λ̂ ∈ [1, ∞] of (1+η)(1 − 1/λ̂)·D_λ̂ + (1+η)·log(1/γ)/λ̂."""
    hat = _HAT_ORDERS
    d_hat = _trial_rdp(eps0, hat)
    inv = np.where(np.isfinite(hat), 1.0 / hat, 0.0)
    one_eta = 1.0 + stopping.eta
    return float(np.min(one_eta * (1.0 - inv) * d_hat
                        + one_eta * math.log(1.0 / stopping.gamma) * inv))


def search_epsilon(eps0: float, stopping: Stopping, delta: float) -> float:
    """ε at ``delta`` of the best of K runs of an ε₀-DP trial (never optimistic).

    Rényi DP converted by :func:`skdp.accounting._rdp.epsilon` (Canonne, Kamath &
    Steinke 2020); for the truncated negative binomial also the pure-DP limit λ → ∞,
    ε₀ + min_λ̂[…] (Papernot & Steinke 2022, Cor. 4: (2+η)ε₀ at λ̂ = ∞), valid at any δ.
    """
    best = _rdp.epsilon(search_rdp(eps0, stopping), delta) if delta > 0 else math.inf
    if stopping.kind != "poisson":
        best = min(best, eps0 + _tnb_hat_term(eps0, stopping))
    return float(best)
