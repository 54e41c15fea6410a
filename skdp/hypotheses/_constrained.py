"""Constrained logistic ERM for halfspaces: forced labels as hard linear constraints.

Yan's ``G_oblivious`` (Alg. 3) gives every teacher the ERM on its block *among the
hypotheses that agree with every hard query's label*. For halfspaces θ (h(x) = +1
iff ⟨θ, (x, 1)⟩ ≥ 0) the agreement set is the polyhedral cone

    K = {θ : s_j·⟨θ, z_j⟩ ≥ η for every forced point z_j = (x_j, 1) with label s_j},

(η > 0 a tiny margin, so a forced −1 is strictly negative), shared by every block.
:func:`constrained_logistic_blocks` minimises each block's L2-regularised weighted
logistic loss over K by a batched log-barrier Newton method: every iterate stays
strictly inside K (the forced labels are never violated, unlike weighting the
forced rows, which buys agreement only under 0-1 loss), and the final barrier
weight μ = 1e-7 puts the objective within f·μ of the constrained minimum. Only
the constraints bind, so a forced label changes a teacher minimally.

**Empty version space.** Yan's Claim 4: when BetweenThresholds answers ⊤ accurately,
some teacher — a member of the current agreement set — already predicts the new
label, so the set stays non-empty. When the noise alone produced a ⊤ that no
halfspace consistent with the earlier labels can satisfy, :func:`consistent_prefix`
drops that label from the constraints (it is still released and recorded as a hard
query): the teachers keep the last non-empty agreement set. Which labels are kept
depends only on the public transcript.
"""

import numpy as np
from scipy.optimize import linprog

__all__ = []

_MARGIN = 1e-6
_MUS = (1.0, 1e-2, 1e-4, 1e-7)
_NEWTON_STEPS = 8


def _interior_point(A):
    """θ with min_j ⟨A_j, θ⟩ as large as possible (|θ|∞ ≤ 1), and that minimum."""
    f, D = A.shape
    # Variables (θ, t): maximise t subject to A θ ≥ t, −1 ≤ θ ≤ 1, t ≤ 1.
    res = linprog(
        np.r_[np.zeros(D), -1.0],
        A_ub=np.c_[-A, np.ones(f)],
        b_ub=np.zeros(f),
        bounds=[(-1.0, 1.0)] * D + [(None, 1.0)],
        method="highs",
    )
    if res.status != 0:
        return np.zeros(D), 0.0
    return res.x[:D], float(-res.fun)


def consistent_prefix(Z, s):
    """Indices of the forced constraints kept: each in order, unless it would empty
    the agreement set of the ones kept before it (see the module docstring)."""
    _, depth = _interior_point(s[:, None] * Z)
    if depth > 1e-9:  # the usual case: one LP
        return np.arange(Z.shape[0])
    keep = []
    for j in range(Z.shape[0]):
        trial = [*keep, j]
        _, depth = _interior_point(s[trial, None] * Z[trial])
        if depth > 1e-9:
            keep.append(j)
    return np.asarray(keep, dtype=np.intp)


def constrained_logistic_blocks(Zp, tp, wp, lam, Z_forced, s_forced):
    """Per-block argmin over K of Σ w·logloss + lam/2·|θ|² (see the module docstring).

    Parameters
    ----------
    Zp : ndarray (k, m, D)
        Lifted block rows (padding has weight 0).
    tp, wp : ndarray (k, m)
        Targets in {0, 1} and weights.
    lam : float
    Z_forced : ndarray (f, D)
        Lifted forced points; ``s_forced`` their labels in {−1, +1}.
    """
    keep = consistent_prefix(Z_forced, s_forced)
    A = s_forced[keep, None] * Z_forced[keep]  # constraints A θ ≥ η
    k, _, D = Zp.shape
    theta0, depth = _interior_point(A)
    theta = np.tile(theta0 / depth, (k, 1))  # every slack ≥ 1 − η
    eye = np.eye(D)
    for mu in _MUS:
        for _ in range(_NEWTON_STEPS):
            margin = np.einsum("kmd,kd->km", Zp, theta)
            p = 0.5 * (1.0 + np.tanh(0.5 * margin))
            slack = theta @ A.T - _MARGIN  # (k, f) > 0
            inv = 1.0 / slack
            grad = (np.einsum("km,kmd->kd", wp * (p - tp), Zp) + lam * theta
                    - mu * inv @ A)
            s = wp * p * (1.0 - p)
            hess = (np.matmul(np.swapaxes(Zp * s[:, :, None], 1, 2), Zp) + lam * eye
                    + mu * np.einsum("kf,fd,fe->kde", inv**2, A, A))
            step = -np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
            norm = np.linalg.norm(step, axis=1, keepdims=True)
            step *= np.minimum(1.0, 10.0 / np.maximum(norm, 1e-300))
            # Fraction to the boundary: stay strictly inside K.
            rate = step @ A.T  # change of each slack per unit step
            with np.errstate(divide="ignore", invalid="ignore"):
                limit = np.where(rate < 0, -slack / rate, np.inf).min(axis=1, initial=np.inf)
            alpha = np.minimum(1.0, 0.95 * limit)[:, None]
            theta = theta + alpha * step
    return theta
