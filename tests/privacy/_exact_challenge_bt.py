"""Exact privacy loss of ChallengeBT on stationary designs (issue 26, item 9).

ChallengeBT (Stemmer Alg. 4, ``stopper="svt"``) answers, at each step, one query of the
never-halting inner BetweenThresholds and then one stopping query; the svt Stopper halts
when (number of ⊤ answers so far) + Lap(b_s) ≥ k + Lap(b_ρ). In a stationary design (every
query at x under D, at x + shift under D′) and with fixed BT thresholds (Stemmer's and the
charged calibration draw no threshold noise) the BT answers are i.i.d. L / ⊤ / R, and the
Stopper's answers are a data-independent function of the ⊤ count path. So a transcript's
likelihood ratio depends only on its answer counts (#L, #⊤, #R): the law of (#L, #⊤, #R,
how it ended) is computed exactly by a dynamic programme over (step, #⊤) for each value of
the Stopper's threshold noise ρ (integrated on a grid), #L/#R split binomially. Grouping
transcripts with one likelihood ratio is exact, and :func:`skdp.audit.exact_epsilon` gives
the pair's exact ε at the claimed δ. A value above the claim *is* a violation.
"""

import numpy as np
from _exact_thresholds import _laplace_cdf, answer_probs
from scipy.special import gammaln, logsumexp


def _stop_probability(t, threshold, mu, b_query):
    """P(t + Lap(b_query) ≥ threshold + μ) for counts t (columns) and grid μ (rows)."""
    return 1.0 - _laplace_cdf((threshold + mu[:, None] - t[None, :]) / b_query)


def transcript_log_probs(x, b, gap, k, n, stop_query_scale, stop_threshold_scale, grid=4001):
    """Log-probability of every (#L, #⊤, #R, ended) cell of a ChallengeBT run of at most
    n steps on queries at x: thresholds 0 and ``gap``, inner query noise Lap(b), the svt
    Stopper at threshold k with Lap(stop_query_scale) per stopping query and
    Lap(stop_threshold_scale) on its threshold. ``ended`` is 1 when the Stopper answered
    ⊤ at the last step, 0 when the n steps (T) ran out. Returns (log_probs, cells)."""
    p_low, p_hard, p_high = (float(v) for v in answer_probs(x, 0.0, gap, b))
    p_soft = p_low + p_high
    if stop_threshold_scale == 0:  # Stemmer's Stopper: no threshold noise
        mu, w = np.zeros(1), np.ones(1)
    else:
        mu = np.linspace(-40 * stop_threshold_scale, 40 * stop_threshold_scale, grid)
        w = np.exp(-np.abs(mu) / stop_threshold_scale)
        w /= w.sum()
    counts = np.arange(n + 1)
    stop = _stop_probability(counts.astype(float), float(k), mu, stop_query_scale)
    alive = np.zeros((mu.size, n + 1))
    alive[:, 0] = 1.0
    halted = np.zeros((n + 1, n + 1))  # [step, #⊤] mass that halted at that step
    for step in range(1, n + 1):
        moved = alive * p_soft
        moved[:, 1:] += alive[:, :-1] * p_hard
        halted[step] = w @ (moved * stop)
        alive = moved * (1.0 - stop)
    never = w @ alive  # [#⊤] at step n: T ran out
    log_p, cells = [], []
    with np.errstate(divide="ignore"):
        for ended, mass_of in ((1, lambda j, t: halted[j, t]), (0, lambda j, t: never[t] if
                                                                   j == n else 0.0)):
            for j in range(1, n + 1):
                for t in range(j + 1):
                    mass = mass_of(j, t)
                    if mass <= 0:
                        continue
                    m = j - t
                    a = np.arange(m + 1)
                    split = (gammaln(m + 1) - gammaln(a + 1) - gammaln(m - a + 1)
                             + a * np.log(p_low / p_soft) + (m - a) * np.log(p_high / p_soft))
                    log_p.append(np.log(mass) + split)
                    cells += [(int(ai), t, m - int(ai), ended) for ai in a]
    return np.concatenate(log_p), cells


def stationary_pair(x, shift, b, gap, k, n, stop_query_scale, stop_threshold_scale):
    """(log P_D, log P_D′) on one common list of cells (−inf where a cell is impossible)."""
    lp, cells_p = transcript_log_probs(x, b, gap, k, n, stop_query_scale, stop_threshold_scale)
    lq, cells_q = transcript_log_probs(x + shift, b, gap, k, n, stop_query_scale,
                                       stop_threshold_scale)
    index = {cell: i for i, cell in enumerate(cells_p)}
    out_q = np.full(lp.size, -np.inf)
    extra = []
    for cell, value in zip(cells_q, lq, strict=True):
        if cell in index:
            out_q[index[cell]] = value
        else:
            extra.append(value)
    return (np.r_[lp, np.full(len(extra), -np.inf)], np.r_[out_q, extra])


def total_log_mass(log_p):
    return float(logsumexp(log_p))
