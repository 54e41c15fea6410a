"""Exact output distribution of a DP decision list release (issue 26, item 9).

A release of the net cover (or DP-GreedyCover) is K exponential-mechanism rule steps,
then discrete Laplace noise on the (rule × class) count matrix. Everything but the
noise is a deterministic function of the data and the earlier selections, so the
whole output distribution is computable: enumerate every sequence of selections
(the tree of rule steps, each a softmax of the scores the estimator's own code
computes), and for each leaf the count matrix the estimator's own code would noise.

The estimator's routine runs unmodified; only the two noise draws are replaced, at
the module attributes its code calls (``_net_cover.exponential_mechanism``,
``_frequencies.geometric_mechanism``): the replacement records the scores, ε and
sensitivity it is given and returns the branch being enumerated, or the counts
without noise. The probabilities then come from the mechanisms' own definitions:
softmax of score/scale with the real ``_selection_scale``, and the two-sided
geometric law of the rational scale ``discrete_laplace`` actually uses.

The output compared is the whole release (selections and the full noisy matrix; the
selected label of a rule is part of it, since ``predict_proba``'s prior marks it),
grouped exactly: cells equal under D and D′ contribute the same factor to both sides
and are left out; a cell that differs is enumerated over a range holding all but
≈ 10⁻¹⁶ of its mass (which can only understate ε).
"""

import math
from unittest import mock

import numpy as np
import scipy.sparse as sp
from _decision_list_audit_runs import private_run
from scipy.special import logsumexp

from skdp.audit import exact_epsilon
from skdp.decision_list import _frequencies, _net_cover
from skdp.mechanisms.exponential import _selection_scale
from skdp.mechanisms.laplace import _rational_scale


class _Branch(Exception):
    """Raised by the recording selector at the first step not yet enumerated."""

    def __init__(self, log_probs):
        super().__init__()
        self.log_probs = log_probs


def _leaves(clf, X, y, w=None):
    """{selection path: (log P(path), exact counts the release noises, its ε_h)}."""
    Xc = sp.csr_matrix(X)
    clf.classes_ = np.array([0, 1])
    leaves, stack = {}, [((), 0.0)]
    while stack:
        path, log_p = stack.pop()
        taken, released = [], {}

        def select(scores, epsilon, sensitivity=1.0, *, monotonic=False, random_state=None,
                   path=path, taken=taken):
            logits = np.asarray(scores, float) / _selection_scale(epsilon, sensitivity,
                                                                  monotonic)
            log_probs = logits - logsumexp(logits)
            if len(taken) == len(path):
                raise _Branch(log_probs)
            choice = path[len(taken)]
            taken.append(log_probs[choice])
            return choice

        def counts(rows, epsilon, sensitivity=1, random_state=None, released=released):
            # every discrete Laplace draw of the release, in order (the automatic length's
            # row count, then the histogram): cells and their (ε, Δ), one per cell
            flat = np.array(rows).ravel()
            released["rows"] = np.r_[released.get("rows", np.empty(0, np.int64)), flat]
            released["eps"] = [*released.get("eps", []), *[(epsilon, sensitivity)] * flat.size]
            return np.array(rows)

        try:
            with mock.patch.object(_net_cover, "exponential_mechanism", select), \
                    mock.patch.object(_frequencies, "geometric_mechanism", counts):
                private_run(clf, Xc, y, np.random.default_rng(0), w)
        except _Branch as branch:
            for index, lp in enumerate(branch.log_probs):
                if lp > -80:  # below e⁻⁸⁰ a branch cannot matter at any δ used here
                    stack.append(((*path, index), log_p + lp))
            continue
        leaves[path] = (log_p, released["rows"], released["eps"])
    return leaves


def _dlap_log_pmf(z, epsilon, sensitivity):
    """log P[Z = z] of the discrete Laplace noise geometric_mechanism adds (its rational
    scale t/s ≥ Δ/ε: P ∝ exp(−|z|·s/t))."""
    t, s = _rational_scale(sensitivity / epsilon)
    rate = s / t
    return math.log(-math.expm1(-rate)) - math.log1p(math.exp(-rate)) - rate * np.abs(z)


def exact_release_epsilon(clf, d0, d1, delta=0.0):
    """Exact ε at δ of the whole release (selections + noisy counts) on D vs D′."""
    left, right = _leaves(clf, *d0), _leaves(clf, *d1)
    log_p, log_q = [], []
    for path in left.keys() | right.keys():
        lp, rows0, eps = left.get(path, (-math.inf, None, None))
        lq, rows1, eps1 = right.get(path, (-math.inf, None, None))
        if rows0 is None or rows1 is None:
            log_p.append(lp)
            log_q.append(lq)
            continue
        if eps != eps1:
            raise AssertionError("the count noise must not depend on the data")
        moved = np.flatnonzero(rows0 != rows1)
        if moved.size == 0:
            log_p.append(lp)
            log_q.append(lq)
            continue
        # every value the moved cells can take, within 40 noise scales of both centres
        grids = []
        for i in moved:
            t, s = _rational_scale(eps[i][1] / eps[i][0])
            spread = int(40 * t / s) + 2
            grids.append(np.arange(min(rows0[i], rows1[i]) - spread,
                                   max(rows0[i], rows1[i]) + spread + 1))
        mesh = np.meshgrid(*grids, indexing="ij")
        a_part = sum(_dlap_log_pmf(m - rows0[i], *eps[i]) for m, i in zip(mesh, moved,
                                                                          strict=True))
        b_part = sum(_dlap_log_pmf(m - rows1[i], *eps[i]) for m, i in zip(mesh, moved,
                                                                          strict=True))
        log_p.extend((lp + np.ravel(a_part)).tolist())
        log_q.extend((lq + np.ravel(b_part)).tolist())
    return exact_epsilon(np.array(log_p), np.array(log_q), delta)
