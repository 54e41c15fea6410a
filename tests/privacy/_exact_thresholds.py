"""Exact privacy loss of BetweenThresholds on stationary designs (issue 26, item 9).

Sampling cannot reach the factor-two twin of a BetweenThresholds calibration: its
violation lives in transcripts of probability ≈ δ. But the output distribution is
computable. Fix the thresholds' noise (none for ``"stemmer"`` / ``"charged"``; one
Laplace draw μ for ``"bsu"``, integrated over numerically) and the queries are answered
independently, each L / ⊤ / R with probabilities given by the Laplace CDF. In a
*stationary* design every query has the value x under D and x + s under D′ (s = ±Δ; a
non-adaptive adversary, which lower-bounds the worst case), so the likelihood ratio of a
transcript depends only on its counts (#L, #⊤, #R): grouping transcripts by counts is
exact, and :func:`skdp.audit.exact_epsilon` gives the pair's exact ε at the claimed δ.
A value above the claim *is* a violation (no sampling error); the honest mechanism's
value is only a lower bound on its true loss (other designs may do better).

The transcript stops at the k-th ⊤ (grouped by the position of that ⊤) or after the
n-th query; more queries never lower the value (the shorter transcript is a prefix).
"""

import math

import numpy as np
from scipy.special import gammaln, logsumexp, xlogy

from skdp.audit import exact_epsilon
from skdp.mechanisms.between_thresholds import BetweenThresholds


def _laplace_cdf(z):
    return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0)), 1 - 0.5 * np.exp(-np.maximum(z, 0)))


def answer_probs(x, lower, upper, b):
    """(P[L], P[⊤], P[R]) of one query x + Lap(b) against (noisy) thresholds, with
    BetweenThresholds._classify's order: L first, so crossed thresholds leave no ⊤."""
    p_low = _laplace_cdf((lower - x) / b)
    p_high = 1 - _laplace_cdf((np.maximum(lower, upper) - x) / b)
    return np.stack([p_low, np.maximum(1 - p_low - p_high, 0.0), p_high])


def _count_terms(k, n):
    """For every count triple (a = #L, t = #⊤, r = #R) a transcript can end with:
    (a, t, r, log of the number of transcripts with those counts)."""
    parts = []
    for t in range(k):  # never halted: all n queries answered
        a = np.arange(n - t + 1)
        r = n - t - a
        parts.append((a, np.full(a.size, t), r,
                      gammaln(n + 1) - gammaln(a + 1) - gammaln(t + 1) - gammaln(r + 1)))
    a, r = np.meshgrid(np.arange(n - k + 1), np.arange(n - k + 1), indexing="ij")
    keep = a + r <= n - k  # halted at the k-th ⊤, the last answer
    a, r = a[keep], r[keep]
    parts.append((a, np.full(a.size, k), r,
                  gammaln(a + r + k) - gammaln(a + 1) - gammaln(k) - gammaln(r + 1)))
    return tuple(np.concatenate(column) for column in zip(*parts, strict=True))


def transcript_log_probs(x, b, gap, k, n, threshold_scale=0.0, grid=2001):
    """Log-probability of each count triple of :func:`_count_terms` for queries at x,
    thresholds 0 and ``gap``, query noise Lap(b), threshold noise Lap(threshold_scale)
    (μ integrated on a fine grid over ±30 scales; 0 means fixed thresholds)."""
    a, t, r, log_ways = _count_terms(k, n)
    if threshold_scale == 0:
        p = answer_probs(x, 0.0, gap, b)
        return log_ways + xlogy(a, p[0]) + xlogy(t, p[1]) + xlogy(r, p[2])
    mu = np.linspace(-30 * threshold_scale, 30 * threshold_scale, grid)
    log_w = -np.abs(mu) / threshold_scale
    log_w -= logsumexp(log_w)  # the discretised Laplace, normalised (mass 1 exactly)
    p = answer_probs(x, mu, gap - mu, b)
    terms = (xlogy(a[:, None], p[0]) + xlogy(t[:, None], p[1]) + xlogy(r[:, None], p[2]))
    return log_ways + logsumexp(terms + log_w, axis=1)


def stationary_epsilon(x, shift, b, gap, k, n, delta, threshold_scale=0.0):
    """Exact ε at δ of the stationary design (x under D, x + shift under D′)."""
    return exact_epsilon(transcript_log_probs(x, b, gap, k, n, threshold_scale),
                         transcript_log_probs(x + shift, b, gap, k, n, threshold_scale), delta)


def worst_stationary_epsilon(b, gap, k, n, delta, threshold_scale=0.0, positions=None):
    """max over the design's position x (in units of b, near the lower threshold: the
    upper one is its mirror image) and shift ±1: (ε, x, shift). The search is the
    benchmark's; tests pin the design it found."""
    positions = np.linspace(-1.5, 0.5, 21) if positions is None else positions
    best = (-math.inf, None, None)
    for x in np.asarray(positions) * b:
        for shift in (1.0, -1.0):
            eps = stationary_epsilon(x, shift, b, gap, k, n, delta, threshold_scale)
            best = max(best, (eps, x, shift), key=lambda item: item[0])
    return best


def calibrated(calibration, epsilon, delta, gap=None, **params):
    """(query scale b, threshold scale, gap, k) of a real instance: the numbers audited."""
    probe = BetweenThresholds(0.0, 1e9 if gap is None else gap, epsilon, delta,
                              calibration=calibration, **params)
    gap = probe.min_gap if gap is None else gap
    probe = BetweenThresholds(0.0, gap, epsilon, delta, calibration=calibration, **params)
    return probe._query_noise_scale, probe._threshold_noise_scale, gap, probe.max_hard


def halting_log_probs(values, threshold, b, threshold_scale=0.0, grid=4001):
    """Log-probability of each halting index of a one-⊤ threshold test (AboveThreshold
    with c = 1, Stopper): query i is ⊤ when values[i] + Lap(b) ≥ threshold + Lap(
    threshold_scale); index len(values) means "never halted". Any value sequence (not
    only stationary); the threshold noise, shared by all queries, is integrated on a grid."""
    values = np.asarray(values, dtype=float)
    if threshold_scale == 0:
        mu, log_w = np.zeros(1), np.zeros(1)
    else:
        mu = np.linspace(-40 * threshold_scale, 40 * threshold_scale, grid)
        log_w = -np.abs(mu) / threshold_scale
        log_w -= logsumexp(log_w)
    below = _laplace_cdf((threshold + mu[None, :] - values[:, None]) / b)  # (n, grid)
    with np.errstate(divide="ignore"):
        log_below, log_above = np.log(below), np.log1p(-below)
    before = np.vstack([np.zeros((1, mu.size)), np.cumsum(log_below, axis=0)])
    terms = np.vstack([before[:-1] + log_above, before[-1:]])
    return logsumexp(terms + log_w, axis=1)


def pooled_chisquare_pvalue(seen, expected, min_expected=5.0):
    """χ² p-value of observed counts against an exact law's expected counts, the cells
    expected fewer than ``min_expected`` times pooled into one (dropped if empty)."""
    from scipy.stats import chisquare

    seen, expected = np.asarray(seen, dtype=float), np.asarray(expected, dtype=float)
    keep = expected >= min_expected
    rest_seen, rest_expected = seen[~keep].sum(), expected[~keep].sum()
    if rest_expected > 0:
        seen, expected = np.r_[seen[keep], rest_seen], np.r_[expected[keep], rest_expected]
    else:
        seen, expected = seen[keep], expected[keep]
    return chisquare(seen, expected * seen.sum() / expected.sum()).pvalue
