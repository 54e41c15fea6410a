"""The incremental greedy cover shared by the private and the non-private decision lists.

Both estimators run :func:`greedy_cover`; they differ only in the *selection* step:
the non-private list takes the best candidate (argmax), DP-GreedyCover samples one
with the exponential mechanism (Bun & Fang, Alg 1).

Candidates are pairs (ℓ, b) of a literal ℓ — a feature x_f, optionally its negation
¬x_f, or the constant-true function T — and a label b. Two scores:

* ``"errors"`` (Bun & Fang's): q(ℓ, b) = −#{remaining rows with ℓ(x) = 1 and label ≠ b};
* ``"net"`` (net coverage, weighted): q(ℓ, b) = #{remaining rows ℓ covers with label b}
  − λ·#{remaining rows ℓ covers with another label}, λ = ``error_weight`` (λ = 1 is
  plain net coverage; λ > 1 asks purer rules of the front of the list).

Cost: the per-feature, per-label counts of the *remaining* rows are built once
(O(nnz)) and kept up to date by subtracting each covered row's features when the row
is removed. Every row is removed at most once and every feature's column is scanned
at most once (a feature is used at most once), so a whole fit costs
O(nnz(X) + M·d·C) plus the M selections — never O(M·nnz).
"""

import numpy as np

__all__ = ["CoverResult", "greedy_cover", "predict_codes", "rule_scores"]


class CoverResult:
    """Output of :func:`greedy_cover` (plain container).

    Attributes
    ----------
    features : ndarray of int
        Feature index of each rule, in order.
    labels : ndarray of int
        Label code of each rule.
    signs : ndarray of int8
        1 if the rule's literal is x_f, 0 if it is ¬x_f.
    default : int
        Label code of T when a rule step chose it (ending the list), else −1.
    n_steps : int
        Number of selections made (one per rule step, T included).
    """

    __slots__ = ("default", "features", "labels", "n_steps", "signs")

    def __init__(self, features, labels, default, n_steps, signs=None):
        self.features = np.asarray(features, dtype=np.intp)
        self.labels = np.asarray(labels, dtype=np.intp)
        self.signs = (np.ones(self.features.size, dtype=np.int8) if signs is None
                      else np.asarray(signs, dtype=np.int8))
        self.default = int(default)
        self.n_steps = int(n_steps)


def greedy_cover(X_csr, y_codes, n_classes, *, max_rules, select, stop_when_empty=False,
                 score="errors", error_weight=1.0, negations=False, allow_true=True,
                 weights=None, unit=1, fallback=None):
    """Run the greedy cover and return the decision list.

    Parameters
    ----------
    X_csr : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        Binary features; every stored entry is a 1 (explicit zeros removed).
    y_codes : ndarray of int of shape (n_samples,)
        Labels encoded 0 .. n_classes − 1.
    n_classes : int
        Number of labels C.
    max_rules : int
        Maximum number of (feature, label) rules before the default rule.
    select : callable
        ``select(scores, coverage)`` gets the scores q and the
        coverage (remaining rows the candidate fires on) of the *available*
        candidates, flattened as candidate-major (ℓ, b) blocks of C labels — the
        literals x_f of the available features, then (with ``negations``) their
        ¬x_f, then the constant-true function T (if ``allow_true``) — and returns
        the chosen position, or −1 to end the list (non-private use only). There is
        no default step: the rows no rule covers are labelled by the caller (the
        private list from its released noisy counts, :mod:`._frequencies`).
    stop_when_empty : bool, default=False
        Stop adding rules once every row is covered (non-private use only: for a
        private run the number of steps must not depend on the data).
    score : {"errors", "net", "lift"}, default="errors"
        The rule score (:func:`rule_scores`).
    error_weight : float, default=1.0
        λ of the ``"net"`` score.
    negations : bool, default=False
        Offer ¬x_f as well as x_f. A used feature leaves the candidates with both
        its literals (on the remaining rows one covers nothing, the other all).
    allow_true : bool, default=True
        Offer T at every rule step (choosing it ends the list with its label).
    weights : ndarray of int64 of shape (n_samples,), optional
        Integer row weights in units of ``unit`` (a row of weight ``unit`` counts as
        one row); every count below is then a sum of weights, and the scores are
        divided by ``unit``. ``None``: every row counts 1.
    unit : int, default=1
        The weight of one whole row.
    fallback : callable, optional
        Non-private use only: when ``select`` returns −1, ``fallback(block, totals)``
        gets the covered weights per label of the available literals (rows, in the
        order above, without T) and of all remaining rows, and returns the position
        to take instead, or −1 to end the list.

    Returns
    -------
    CoverResult
    """
    n_samples, n_features = X_csr.shape
    C = int(n_classes)
    indptr, indices = X_csr.indptr, X_csr.indices
    row_of_entry = np.repeat(np.arange(n_samples), np.diff(indptr))
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    # counts[f, c] = weight of the remaining rows with x_f = 1 and label c (exact: the
    # integer weights' sums stay far below 2**53); T's row is the totals.
    counts = np.bincount(
        indices * C + y_codes[row_of_entry], minlength=n_features * C,
        weights=None if w is None else w[row_of_entry],
    ).astype(np.int64).reshape(n_features, C)
    totals = np.bincount(y_codes, minlength=C, weights=w).astype(np.int64)
    # Column access (rows each feature fires on), built once in O(nnz).
    if indices.size > 50_000:
        X_csc = X_csr.tocsc()
        col_ptr, col_rows = X_csc.indptr, X_csc.indices
    else:
        order = np.argsort(indices, kind="stable")
        col_rows = row_of_entry[order]
        col_ptr = np.zeros(n_features + 1, dtype=np.intp)
        np.cumsum(np.bincount(indices, minlength=n_features), out=col_ptr[1:])
    remaining = np.ones(n_samples, dtype=bool)
    available = np.ones(n_features, dtype=bool)
    features, labels = [], []
    default = None
    steps = 0
    n_rules = min(int(max_rules), n_features)
    signs = []
    for _ in range(n_rules):
        if stop_when_empty and totals.sum() == 0:
            break
        avail_idx = np.flatnonzero(available)
        n_lit = avail_idx.size * (2 if negations else 1)
        block = np.empty((n_lit + int(allow_true), C), dtype=np.int64)
        block[: avail_idx.size] = counts[avail_idx]
        if negations:
            block[avail_idx.size : n_lit] = totals - counts[avail_idx]
        if allow_true:
            block[-1] = totals
        cover = block.sum(axis=1)
        scores = rule_scores(block, totals, score, error_weight, unit).ravel()
        pick = int(select(scores, np.repeat(cover, C)))
        if pick < 0 and fallback is not None:
            pick = int(fallback(block[:n_lit], totals))
        if pick < 0:
            break
        steps += 1
        cand, label = divmod(pick, C)
        if cand == n_lit:  # T chosen: it covers everything; the list ends
            default = label
            break
        positive = cand < avail_idx.size
        f = int(avail_idx[cand % avail_idx.size])
        features.append(f)
        labels.append(label)
        signs.append(int(positive))
        available[f] = False
        rows_f = col_rows[col_ptr[f] : col_ptr[f + 1]]
        if positive:
            newly = rows_f[remaining[rows_f]]
        else:
            fires = remaining.copy()
            fires[rows_f] = False
            newly = np.flatnonzero(fires)
        if newly.size:
            remaining[newly] = False
            covered = X_csr[newly]  # the rows' features, by scipy's row indexing (C code)
            lab = y_codes[newly]
            wn = None if w is None else w[newly]
            counts -= np.bincount(
                covered.indices * C + np.repeat(lab, np.diff(covered.indptr)),
                minlength=n_features * C,
                weights=None if wn is None else np.repeat(wn, np.diff(covered.indptr)),
            ).astype(np.int64).reshape(n_features, C)
            totals -= np.bincount(lab, minlength=C, weights=wn).astype(np.int64)
    if default is None:
        default = -1  # the caller labels the rows no rule covers (e.g. from counts)
    return CoverResult(features, labels, default, steps, signs)


#: κ of the lift score: a rule for label b must be right on more than p_b + κ(1 − p_b) of
#: what it covers (p_b the rate of b among the remaining rows) to score above 0.
LIFT_MARGIN = 0.2


def rule_scores(block, totals, score, error_weight=1.0, unit=1):
    """(L, C) scores q(ℓ, b) of the candidates from their per-class covered weights.

    ``block[ℓ, b]``: weight of the remaining rows ℓ fires on with label b; ``totals[b]``:
    weight of the remaining rows with label b (integer units of ``unit``).

    * ``"errors"``: −(covered weight with another label);
    * ``"net"``: covered right − λ·covered wrong, λ = ``error_weight``;
    * ``"lift"`` (weighted relative accuracy): a_b − p_b·|a|, with p_b = totals[b]/Σ totals
      the label's rate among the remaining rows (0 if none remain): the covered rows of
      b beyond what a rule of the same coverage drawn at random would get. A rule that
      covers everything scores 0, so a broad majority rule does not win by its size.
    """
    block = np.asarray(block, dtype=np.float64)
    cover = block.sum(axis=1, keepdims=True)
    if score == "net":
        scores = (1.0 + error_weight) * block - error_weight * cover
    elif score == "lift":
        total = float(np.sum(totals))
        rate = np.asarray(totals, np.float64) / total if total > 0 else np.zeros(block.shape[1])
        bar = rate + LIFT_MARGIN * (1.0 - rate)
        scores = block - bar[None, :] * cover
    else:
        scores = block - cover
    return scores / unit if unit != 1 else scores


def predict_codes(X_csr, rule_features, rule_labels, default, n_features, signs=None):
    """Label code of the first rule that fires on each row (``default`` if none).

    ``signs[k]`` is 1 if rule k fires where x_f = 1, 0 if where x_f = 0 (all 1 if
    omitted).
    """
    n_samples = X_csr.shape[0]
    out = np.full(n_samples, default, dtype=np.intp)
    if len(rule_features) == 0 or n_samples == 0:
        return out
    if signs is not None and not np.all(signs):
        return _predict_with_negations(X_csr, rule_features, rule_labels, signs, out)
    n_rules = len(rule_features)
    rank = np.full(n_features, n_rules, dtype=np.intp)
    rank[np.asarray(rule_features)] = np.arange(n_rules)
    entry_rank = rank[X_csr.indices]
    indptr = X_csr.indptr
    nonempty = indptr[1:] > indptr[:-1]
    if not nonempty.any():
        return out
    first = np.full(n_samples, n_rules, dtype=np.intp)
    first[nonempty] = np.minimum.reduceat(entry_rank, indptr[:-1][nonempty])
    fired = first < n_rules
    out[fired] = np.asarray(rule_labels, dtype=np.intp)[first[fired]]
    return out


def _predict_with_negations(X_csr, rule_features, rule_labels, signs, out):
    """Rule by rule (lists with negated literals are short): O(nnz + rules·n)."""
    columns = X_csr[:, np.asarray(rule_features)].tocsc()
    open_rows = np.ones(out.size, dtype=bool)
    for k, (label, sign) in enumerate(zip(rule_labels, signs, strict=True)):
        has = np.zeros(out.size, dtype=bool)
        has[columns.indices[columns.indptr[k] : columns.indptr[k + 1]]] = True
        fires = open_rows & (has if sign else ~has)
        out[fires] = label
        open_rows &= ~fires
    return out
