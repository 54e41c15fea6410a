"""The incremental greedy cover shared by the private and the non-private decision lists.

Both estimators run :func:`greedy_cover`; they differ only in the *selection* step:
the non-private list takes the best candidate (argmax), DP-GreedyCover samples one
with the exponential mechanism (Bun & Fang, Alg 1).

Candidates are pairs (f, b) of a feature f (or the constant-true function T) and a
label b, scored q(f, b) = −#{remaining rows with f(x) = 1 and label ≠ b}.

Cost: the per-feature, per-label counts of the *remaining* rows are built once
(O(nnz)) and kept up to date by subtracting each covered row's features when the row
is removed. Every row is removed at most once and every feature's column is scanned
at most once (a feature is used at most once), so a whole fit costs
O(nnz(X) + M·d·C) plus the M selections — never O(M·nnz).
"""

import numpy as np

__all__ = ["CoverResult", "greedy_cover", "predict_codes"]


class CoverResult:
    """Output of :func:`greedy_cover` (plain container).

    Attributes
    ----------
    features : ndarray of int
        Feature index of each rule, in order.
    labels : ndarray of int
        Label code of each rule.
    default : int
        Label code of the final default rule (T, b).
    n_steps : int
        Number of selections made (rules, plus 1 for the default when it needed
        its own step).
    """

    __slots__ = ("default", "features", "labels", "n_steps")

    def __init__(self, features, labels, default, n_steps):
        self.features = np.asarray(features, dtype=np.intp)
        self.labels = np.asarray(labels, dtype=np.intp)
        self.default = int(default)
        self.n_steps = int(n_steps)


def _gather_row_features(X_csr, rows):
    """Column indices of every stored entry of ``rows`` and the row each came from."""
    indptr = X_csr.indptr
    starts = indptr[rows]
    lengths = indptr[rows + 1] - starts
    total = int(lengths.sum())
    if total == 0:
        return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.intp)
    # positions = concat(range(start_i, start_i + len_i)) without a Python loop
    offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    positions = np.arange(total) + offsets
    owner = np.repeat(np.arange(rows.size), lengths)
    return X_csr.indices[positions], owner


def greedy_cover(X_csr, y_codes, n_classes, *, max_rules, select, stop_when_empty=False):
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
        ``select(scores, coverage, is_default_step)`` gets the scores q and the
        coverage (remaining rows the candidate fires on) of the *available*
        candidates, flattened as candidate-major (f, b) blocks of C labels with the
        constant-true function T last (only T on the default step), and returns
        the chosen position.
    stop_when_empty : bool, default=False
        Stop adding rules once every row is covered (non-private use only: for a
        private run the number of steps must not depend on the data).

    Returns
    -------
    CoverResult
    """
    n_samples, n_features = X_csr.shape
    C = int(n_classes)
    indptr, indices = X_csr.indptr, X_csr.indices
    row_of_entry = np.repeat(np.arange(n_samples), np.diff(indptr))
    # counts[f, c] = #{remaining rows with x_f = 1 and label c}; T's row is the totals.
    counts = np.bincount(
        indices * C + y_codes[row_of_entry], minlength=n_features * C
    ).astype(np.int64).reshape(n_features, C)
    totals = np.bincount(y_codes, minlength=C).astype(np.int64)
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
    for _ in range(n_rules):
        if stop_when_empty and totals.sum() == 0:
            break
        avail_idx = np.flatnonzero(available)
        cover = np.empty(avail_idx.size + 1, dtype=np.int64)
        block = np.empty((avail_idx.size + 1, C), dtype=np.int64)
        block[:-1] = counts[avail_idx]
        block[-1] = totals
        cover[:] = block.sum(axis=1)
        scores = (block - cover[:, None]).ravel()  # −(covered rows with another label)
        coverage = np.repeat(cover, C)
        pick = int(select(scores, coverage, False))
        steps += 1
        cand, label = divmod(pick, C)
        if cand == avail_idx.size:  # T chosen: it covers everything; the list ends
            default = label
            break
        f = int(avail_idx[cand])
        features.append(f)
        labels.append(label)
        available[f] = False
        rows_f = col_rows[col_ptr[f] : col_ptr[f + 1]]
        newly = rows_f[remaining[rows_f]]
        if newly.size:
            remaining[newly] = False
            feats, owner = _gather_row_features(X_csr, newly)
            lab = y_codes[newly]
            counts -= np.bincount(
                feats * C + lab[owner], minlength=n_features * C
            ).reshape(n_features, C)
            totals -= np.bincount(lab, minlength=C)
    if default is None:
        # The final default rule (T, b): one more selection over the labels only.
        cover = np.full(C, totals.sum())
        pick = int(select(totals - cover, cover, True))
        steps += 1
        default = pick
    return CoverResult(features, labels, default, steps)


def predict_codes(X_csr, rule_features, rule_labels, default, n_features):
    """Label code of the first rule that fires on each row (``default`` if none)."""
    n_samples = X_csr.shape[0]
    out = np.full(n_samples, default, dtype=np.intp)
    if len(rule_features) == 0 or n_samples == 0:
        return out
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
