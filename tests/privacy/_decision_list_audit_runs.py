"""Shared pieces of the decision-list audits: the private routine, samplers, pairs, a twin."""

import numpy as np
import scipy.sparse as sp

from skdp.decision_list import DPDecisionListClassifier, _net_cover
from skdp.decision_list._thresholds import make_grid

# D: each feature fires on one row of each label, and so do the rows no feature fires
# on, so after any first rule the remaining labels tie. D′ adds a row no feature fires
# on, with label 1: it moves the scores of the constant rule T (DP-GreedyCover) and
# decides the default — the row only the private default step protects (unless
# negated literals cover it).
X0 = np.array([[1, 0], [1, 0], [0, 1], [0, 1], [0, 0], [0, 0]])
Y0 = np.array([0, 1, 0, 1, 0, 1])
D0 = (X0, Y0)
D1 = (np.vstack([X0, [[0, 0]]]), np.r_[Y0, 1])


def private_run(clf, X, y, rng, w=None):
    """``fit``'s private routine on validated data (weights ``w``), noise from ``rng``.

    ``fit`` = validation, the plan and its charge, then ``_release``: the plan is
    computed as ``fit`` computes it, the charge (a ledger write) is left out.
    """
    epsilon, delta = clf._check_privacy_params()
    if clf._real_valued():  # raw values over the public grid (issue 27): dense, as fit has
        X = np.asarray(X.todense() if sp.issparse(X) else X, dtype=np.float64)
        clf._grid = make_grid(clf.bounds, clf.cuts, clf.cut_scale, X.shape[1])
    clf._release_plan = clf._plan(epsilon, delta, X.shape[1])
    clf._release(X, y, w, rng)


def private_sampler(clf, encode, width):
    """Sampler for :func:`skdp.audit.audit_mechanism`: ``encode(clf)`` of n private runs.

    ``data`` is ``(X, y)`` or ``(X, y, sample_weight)``.
    """

    def sample(data, n, rng):
        X, y = data[:2]
        w = data[2] if len(data) > 2 else None
        Xc = sp.csr_matrix(X)
        clf.classes_ = np.array([0, 1])
        outs = np.empty((n, width), dtype=np.int64)
        for i in range(n):
            private_run(clf, Xc, y, rng, w)
            outs[i] = encode(clf)
        return outs

    return sample


def sharp_pair(k):
    """D: 4 rows labelled 0 on which features 0..k−1 all fire, 2 empty rows labelled 1;
    feature k (f*) never fires. D′ adds a row labelled 1 on which 0..k−1 fire."""
    X = np.vstack([np.c_[np.ones((4, k)), np.zeros((4, 1))], np.zeros((2, k + 1))])
    y = np.r_[np.zeros(4), np.ones(2)].astype(np.intp)
    extra = np.r_[np.ones(k), 0.0]
    return (X.astype(int), y), (np.vstack([X, extra]).astype(int), np.r_[y, 1])


class NoiselessCounts(DPDecisionListClassifier):
    """Broken: rules chosen privately, the (rule × class) counts released exactly
    (so the default label is the exact majority of the rows no rule covers)."""

    def _release_counts(self, counts, unit, step_epsilon, rng):
        return (counts + unit // 2) // unit


class TwiceEpsilon(DPDecisionListClassifier):
    """Broken: calibrates every step (selections and counts) for 2ε while claiming (and
    charging) ε — the factor-two twin of issue 26, item 9."""

    def _plan(self, epsilon, delta, n_features):
        return super()._plan(2.0 * epsilon, delta, n_features)


class CountsAtFullStep(DPDecisionListClassifier):
    """Broken: plans the histogram at w·ε̂ (the weight the plan was calibrated for) but
    draws it at ε̂ — the lift score's full-weight histogram without its accounting."""

    def _release_counts(self, counts, unit, step_epsilon, rng):
        return super()._release_counts(counts, unit, self.step_epsilon_, rng)


def lift_pair(n=600, m=40):
    """Sharp for the lift score: D has n rows labelled 0, feature 0 fires on m of them;
    D′ adds a row labelled 1 on which it fires. Label 1's rate is 0 in D, so the rule
    (x0, 1) gains ≈ 1 − κ while (x0, 0), which holds most of the mass, loses ≈ 1: the
    widest move the lemma allows (width 2 − κ)."""
    X = np.zeros((n, 1), dtype=int)
    X[:m] = 1
    y = np.zeros(n, dtype=np.intp)
    return (X, y), (np.vstack([X, [[1]]]), np.r_[y, 1])


class LiftUnitWidth(DPDecisionListClassifier):
    """Broken: samples the lift score ∝ exp(ε̂·q) (sensitivity 1/2, width 1), as if a
    row moved a lift score by at most 1 in one direction — the lemma's width is 2 − κ."""

    def _selector(self, step_epsilon, rng):
        def select(scores, coverage):
            return _net_cover.exponential_mechanism(scores, step_epsilon, sensitivity=0.5,
                                                    monotonic=False, random_state=rng)

        return select
