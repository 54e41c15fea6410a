"""Rule-level class frequencies: what a decision list's ``predict_proba`` reports.

A decision list with rules r_1 … r_K and a default partitions the input space into
K + 1 *regions*: region k < K holds the rows whose first firing rule is r_k, region K
the rows no rule fires on. :func:`region_counts` counts, for each region and label,
the (weighted) training rows; the probability of label c on a row is the smoothed
frequency of c in its region.

* :class:`GreedyDecisionListClassifier` (non-private) reports the empirical
  frequencies (:func:`empirical_proba`).
* :class:`DPDecisionListClassifier` releases the (K + 1) × C count matrix with
  discrete Laplace noise (:func:`release_counts`) as the last step of its plan —
  the step that used to choose the default label — and reports
  :func:`smoothed_proba` of the noisy counts. Each region's label is the argmax of
  its probabilities, so ``predict`` is the argmax of ``predict_proba`` and the
  noisy counts also (re)label the rules where they have the rows to do so:
  post-processing of released outputs, no extra cost.

**Lemma (the released histogram is ε_h-DP).** Neighbouring datasets differ by
adding or removing one row (the package's relation, :mod:`skdp.base`), and the
row's weight w is clipped to [0, 1]. Fix the rules released by the earlier steps
(they are the same output on both sides of the composition). Then the region of
every row is a function of that row alone, so adding a row z changes exactly one
cell of the weighted count matrix, (region(z), label(z)), by w ∈ [0, 1], and no
other cell. The released cell is ⌊S/u + 1/2⌋ for the cell's weight S in integer
units u = 2²⁰ (weights are ⌊w·u⌋ ≤ u, summed exactly in integers); since
x ↦ ⌊x + 1/2⌋ is non-decreasing and commutes with adding 1, it moves by 0 or 1.
The matrix therefore has ℓ1-sensitivity 1 and only one coordinate ever moves, and
adding independent discrete Laplace noise of scale 1/ε_h to every cell is ε_h-DP
(Ghosh, Roughgarden & Sundararajan 2009; Canonne, Kamath & Steinke 2020): the
privacy-loss distribution is that of a single :class:`~skdp.accounting.DiscreteLaplace`
query, which is how the plan accounts it. Labels, probabilities and every
prediction are post-processing of the released counts and rules. ∎
Under replace-one neighbours two cells move: 2ε_h by group privacy.
"""

from __future__ import annotations

import numpy as np

from ..mechanisms import geometric_mechanism
from ._greedy_cover import predict_codes

__all__ = ["empirical_proba", "region_counts", "region_of", "release_counts",
           "smoothed_proba"]

#: :func:`region_of` densifies X (rows × features) up to this many cells (16 MB as int8):
#: thresholded numeric features (tens of columns) in blocks of up to 10⁵ rows.
_DENSE_CELLS = 2**24


def region_of(X_csr, features, signs, n_features):
    """Index of each row's region: its first firing rule, or ``len(features)`` if none.

    ``signs[k]`` is 1 if rule k fires where x_f = 1, 0 where x_f = 0 (all 1 if None).
    ``X_csr`` is the lists' binary CSR (a stored entry is a 1: no explicit zeros).
    """
    k = len(features)
    n, d = X_csr.shape
    if k and n and signs is not None and not np.all(signs) and n * d <= _DENSE_CELLS:
        # Negated literals on a narrow X (thresholded numeric features): dense columns.
        # The general path slices and converts X with scipy (~0.6 ms of index checks
        # per call on 1,000 × 36, as much as the rest of a prediction; a continual
        # release predicts with up to 8 lists per call); densifying costs ~0.05 ms.
        has = X_csr.toarray()[:, np.asarray(features, dtype=np.intp)] != 0
        fires = has == np.asarray(signs, dtype=bool)[None, :]  # (n, K): rule k fires
        first = np.argmax(fires, axis=1)
        return np.where(fires[np.arange(n), first], first, k)
    return predict_codes(X_csr, features, np.arange(k), k, n_features, signs)


def region_counts(X_csr, codes, n_classes, features, signs, weights=None):
    """(K + 1, C) int64 matrix of the weight of the rows of each region and label.

    ``weights``: integer row weights (units), or ``None`` for plain row counts.
    """
    k = len(features)
    region = region_of(X_csr, features, signs, X_csr.shape[1])
    flat = np.bincount(region * n_classes + codes, minlength=(k + 1) * n_classes,
                       weights=None if weights is None else np.asarray(weights, np.float64))
    return flat.astype(np.int64).reshape(k + 1, n_classes)


def release_counts(counts, unit, epsilon, rng):
    """The counts rounded to whole rows plus discrete Laplace(1/ε) noise (Lemma above)."""
    rows = (counts + unit // 2) // unit if unit != 1 else counts
    return geometric_mechanism(rows, epsilon, sensitivity=1, random_state=rng)


def smoothed_proba(noisy, selected, prior):
    """Noisy counts clipped at 0 plus pseudo-counts, normalised per region.

    Every label gets one pseudo-count; the label the selection step chose for a rule
    (``selected[k]``, −1 for none, e.g. the default region) gets ``prior`` more.
    :class:`DPDecisionListClassifier` passes three noise scales, 3/ε_h, under the net
    and errors scores: the counts overrule a rule's (released) selection only where
    they disagree by more than the noise explains (P(|Z| > 3/ε_h) ≈ e⁻³), so a rule
    covering few rows keeps its label while one with many rows reads its
    probabilities from the counts. Under the lift score it passes 0 (the counts alone
    label every region; ``DPDecisionListClassifier._label_prior`` says why).
    """
    smoothed = np.maximum(np.asarray(noisy, dtype=np.float64), 0.0) + 1.0
    selected = np.asarray(selected, dtype=np.intp)
    rows = np.flatnonzero(selected >= 0)
    smoothed[rows, selected[rows]] += prior
    return smoothed / smoothed.sum(axis=1, keepdims=True)


def empirical_proba(counts):
    """Frequencies of each region; an empty region gets the frequencies of all rows."""
    counts = np.asarray(counts, dtype=np.float64)
    overall = counts.sum(axis=0)
    overall = overall / overall.sum() if overall.sum() > 0 else np.full(
        counts.shape[1], 1.0 / counts.shape[1])
    totals = counts.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        proba = np.where(totals > 0, counts / np.where(totals > 0, totals, 1.0), overall)
    return proba
