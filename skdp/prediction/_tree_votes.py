"""Exact votes of many tree-ensemble teachers in one vectorised pass.

With ``estimator=RandomForestClassifier(...)`` Yan's predictor and
subsample-and-aggregate hold k ≈ 10³ forests, and ``teacher.predict(X)`` costs a
few milliseconds each (input validation, a joblib dispatch, one call per tree) however
small the batch: seconds per batch of queries. :class:`TreeVotes` stacks every node
of every tree of every teacher into flat arrays and walks all (query, tree) pairs
down together, one depth level per numpy step, dropping the pairs that reached a
leaf; the teachers' votes are then summed from the leaves.

*Lemma T (the stacked vote is the teacher's own prediction).* For a fitted
``RandomForestClassifier`` / ``ExtraTreesClassifier`` with classes (−1, +1) scikit-learn
predicts ``classes_[argmax(P)]`` with P = (Σ_t p_t(x)) / m: p_t(x) the class fractions
stored at the leaf of tree t reached by x, the sum taken in the order of
``estimators_`` starting from 0, m the number of trees (``ForestClassifier.
predict_proba``; a ``DecisionTreeClassifier`` is m = 1 without the division, which is
exact for m = 1). The walk reaches the same leaf: at node n it goes left iff
float32(x_f) ≤ threshold_n, the comparison ``Tree.apply`` makes (X is cast to float32
first, the threshold is a float64). The sums here add the same float64 numbers in the
same order (trees beyond a teacher's m add an exact 0.0), and divide by the same m,
so P is bit-for-bit scikit-learn's, and the argmax picks +1 iff P₊ > P₋ (a tie goes
to the first class, −1, as ``np.argmax`` does). ∎ (With ``n_jobs`` > 1 scikit-learn
sums in thread-completion order, so its own prediction may differ in the last bit
from run to run; the stacked vote is the sequential order's, a fixed function.)

So each vote is a function of one teacher and the query alone: one changed training
row still changes one teacher, the count keeps sensitivity 1, and the predictors'
privacy arguments are untouched. Teachers of any other kind are not stacked.

A refitted teacher is swapped in place (:meth:`TreeVotes.replace`) instead of
rebuilding the stack (a rebuild walks every tree of every teacher: ~0.6 s CPU for
2·10⁴ trees, paid at every hard query before); Lemma T still holds, the sums run over
each teacher's trees by slot wherever they sit in the stack.
"""

from __future__ import annotations

import numpy as np
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier, ExtraTreeClassifier

__all__ = ["FORESTS", "TreeVotes", "stackable"]

FORESTS = (RandomForestClassifier, ExtraTreesClassifier)
_CELLS = 1 << 22  # (query, tree) pairs walked per pass: bounds the working memory


def _trees_of(model):
    """``(trees, divide)`` of a stackable binary tree model with classes (−1, +1), else
    None. Exact types only: a subclass may predict differently."""
    if type(model) is DecisionTreeClassifier:
        trees, divide = [model], False
    elif type(model) in FORESTS:
        trees, divide = list(model.estimators_), True
    else:
        return None
    if getattr(model, "n_outputs_", 1) != 1 or list(getattr(model, "classes_", [])) != [-1, 1]:
        return None
    for tree in trees:
        if type(tree) not in (DecisionTreeClassifier, ExtraTreeClassifier) or (
                tree.tree_.n_outputs != 1 or tree.tree_.max_n_classes != 2):
            return None
    return trees, divide


def stackable(models):
    """Whether :class:`TreeVotes` can vote for these models (tree ensembles with classes
    (−1, +1), or constants with a ``label``), at least one of them a tree model."""
    found = False
    for m in models:
        if hasattr(m, "label") and not hasattr(m, "fit"):
            continue
        if _trees_of(m) is None:
            return False
        found = True
    return found


class TreeVotes:
    """Counts of teachers voting +1, for tree-ensemble and constant teachers.

    Parameters
    ----------
    models : list
        One per teacher: a fitted ``RandomForestClassifier``, ``ExtraTreesClassifier``
        or ``DecisionTreeClassifier`` with ``classes_ == [-1, 1]``, or a constant
        (an object with an int ``label`` and no ``fit``).
    """

    def __init__(self, models):
        self.n_teachers = len(models)
        feature, threshold, left, right, p_minus, p_plus = [], [], [], [], [], []
        roots, owner, slot = [], [], []
        divisor = np.ones(self.n_teachers)
        self.constant = 0
        offset = 0
        n_slots = 1
        forest_rows = []
        for i, m in enumerate(models):
            found = _trees_of(m) if hasattr(m, "fit") else None
            if found is None:
                self.constant += int(m.label > 0)
                continue
            trees, divide = found
            forest_rows.append(i)
            divisor[i] = len(trees) if divide else 1.0
            n_slots = max(n_slots, len(trees))
            for j, tree in enumerate(trees):
                t = tree.tree_
                n = t.node_count
                leaf = t.children_left < 0
                own = np.arange(n) + offset
                # A leaf points to itself and always "goes left": walking it more
                # steps than its depth keeps it there.
                feature.append(np.where(leaf, 0, t.feature))
                threshold.append(np.where(leaf, np.inf, t.threshold))
                left.append(np.where(leaf, own, t.children_left + offset))
                right.append(np.where(leaf, own, t.children_right + offset))
                value = t.value[:, 0, :2]  # class fractions (scikit-learn ≥ 1.4)
                p_minus.append(value[:, 0])
                p_plus.append(value[:, 1])
                roots.append(offset)
                owner.append(i)
                slot.append(j)
                offset += n
        self.is_forest = np.zeros(self.n_teachers, dtype=bool)
        self.is_forest[forest_rows] = True

        def cat(parts, dtype):
            return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)

        self.feature = cat(feature, np.intp)
        self.threshold = cat(threshold, np.float64)
        self.left = cat(left, np.intp)
        self.right = cat(right, np.intp)
        self.p_minus = cat(p_minus, np.float64)
        self.p_plus = cat(p_plus, np.float64)
        self.roots = np.asarray(roots, dtype=np.intp)
        self.owner = np.asarray(owner, dtype=np.intp)
        self.slot = np.asarray(slot, dtype=np.intp)
        self.n_slots = n_slots
        self.divisor = divisor
        self.labels = np.zeros(self.n_teachers, dtype=np.int8)  # constants' labels
        for i, m in enumerate(models):
            if not self.is_forest[i]:
                self.labels[i] = m.label
        self._roots = self._root_table()

    def _root_table(self):
        """(teacher, slot) → the root node of that tree (−1: no such tree)."""
        table = np.full((self.n_teachers, self.n_slots), -1, dtype=np.intp)
        table[self.owner, self.slot] = self.roots
        return table

    # ------------------------------------------------------------------ updates
    def replace(self, i, model):
        """Put ``model`` (a stackable tree model or a constant) in teacher ``i``'s place.

        Its nodes are appended (the old ones stay, unreferenced: a refit teacher costs
        its own nodes, not a rebuild of the stack). The sums of Lemma T run over each
        teacher's trees by slot, so where a tree sits in the stack does not matter.
        """
        keep = self.owner != i
        self.roots, self.owner, self.slot = (self.roots[keep], self.owner[keep],
                                             self.slot[keep])
        if self.is_forest[i]:
            self.is_forest[i] = False
        else:
            self.constant -= int(self.labels[i] > 0)
        found = _trees_of(model) if hasattr(model, "fit") else None
        if found is None:
            self.labels[i] = model.label
            self.constant += int(model.label > 0)
            self.divisor[i] = 1.0
        else:
            piece = TreeVotes([model])
            offset = self.feature.size
            self.feature = np.concatenate([self.feature, piece.feature])
            self.threshold = np.concatenate([self.threshold, piece.threshold])
            self.left = np.concatenate([self.left, piece.left + offset])
            self.right = np.concatenate([self.right, piece.right + offset])
            self.p_minus = np.concatenate([self.p_minus, piece.p_minus])
            self.p_plus = np.concatenate([self.p_plus, piece.p_plus])
            self.roots = np.concatenate([self.roots, piece.roots + offset])
            self.owner = np.concatenate([self.owner,
                                         np.full(piece.roots.size, i, dtype=np.intp)])
            self.slot = np.concatenate([self.slot, piece.slot])
            self.n_slots = max(self.n_slots, piece.n_slots)
            self.divisor[i] = piece.divisor[0]
            self.is_forest[i] = True
        self._roots = self._root_table()

    def _leaves(self, X32):
        """Leaf node reached by every (row, tree) pair, shape (n_rows, n_trees)."""
        n, d = X32.shape
        n_trees = self.roots.size
        node = np.broadcast_to(self.roots, (n, n_trees)).ravel().copy()
        row_base = np.repeat(np.arange(n, dtype=np.intp) * d, n_trees)
        X64 = X32.astype(np.float64).ravel()  # float32 values, compared in float64
        active = np.flatnonzero(self.left[node] != node)
        while active.size:
            at = node[active]
            go_left = X64[row_base[active] + self.feature[at]] <= self.threshold[at]
            nxt = np.where(go_left, self.left[at], self.right[at])
            node[active] = nxt
            active = active[self.left[nxt] != nxt]
        return node.reshape(n, n_trees)

    def _forest_votes(self, X32):
        """(n_rows, n_teachers) booleans: tree teacher i votes +1 on the row (Lemma T);
        False in the columns of constant teachers."""
        leaves = self._leaves(X32)
        m = leaves.shape[0]
        plus = np.zeros((m, self.n_teachers, self.n_slots))
        minus = np.zeros((m, self.n_teachers, self.n_slots))
        plus[:, self.owner, self.slot] = self.p_plus[leaves]
        minus[:, self.owner, self.slot] = self.p_minus[leaves]
        # Sequential sums over the trees, from 0, in estimators_ order (Lemma T).
        sum_plus, sum_minus = np.zeros((m, self.n_teachers)), np.zeros((m, self.n_teachers))
        for j in range(self.n_slots):
            sum_plus += plus[:, :, j]
            sum_minus += minus[:, :, j]
        sum_plus /= self.divisor
        sum_minus /= self.divisor
        return (sum_plus > sum_minus) & self.is_forest

    def counts(self, X):
        """Number of teachers voting +1 on each row of X (exact; see Lemma T)."""
        X32 = np.ascontiguousarray(X, dtype=np.float32)
        n = X32.shape[0]
        out = np.full(n, self.constant, dtype=np.int64)
        if self.roots.size == 0 or n == 0:
            return out
        step = max(1, _CELLS // (self.roots.size + self.n_teachers * self.n_slots))
        for start in range(0, n, step):
            votes = self._forest_votes(X32[start : start + step])
            out[start : start + votes.shape[0]] += np.count_nonzero(votes, axis=1)
        return out

    def teacher_labels(self, x, constants=None):
        """Each teacher's ±1 label on the single row ``x``; ``constants`` (int8, ±1;
        default: the stack's own) holds the constant teachers' labels (other entries are
        ignored)."""
        if constants is None:
            constants = self.labels
        votes = self._forest_votes(np.asarray(x, dtype=np.float32)[None, :])[0]
        return np.where(self.is_forest, np.where(votes, 1, -1), constants).astype(np.int8)

    def vote(self, X):
        """Fraction of all teachers voting +1 on each row of X."""
        return self.counts(X) / self.n_teachers
