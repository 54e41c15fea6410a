"""DP-SOA's forest (Golowich & Livni 2021, Alg. 1): k₂ trees of k₁ leaves running copies of
a mistake-bounded base learner on a random partition of the stream, merged by tournament
examples. The estimator (:mod:`._dp_soa`) decides what is released from the list of the
trees' outputs; nothing here is private output.
"""

import numpy as np

from .._streams import as_stream_noise
from ._soa import first_disagreement

__all__ = ["BOTTOM", "Forest", "event_key"]

#: Hypothesis id of ⊥ (a non-realizable or abandoned vertex).
BOTTOM = 0
# Roles of the keyed generators (top bits of the Philox key's second word).
ROLE_PI, ROLE_FOREST, ROLE_HIST_SPARSE, ROLE_RELEASE = range(4)
_ROLE_SHIFT = 60


def event_key(role, index):
    """Key of the generator of event ``index`` in role ``role``."""
    return (role << _ROLE_SHIFT) | index


class Forest:
    """The k₂ trees of k₁ leaves of Alg. 1, with copy-on-write base learners.

    Vertex slots are heap-indexed per tree (root 1, leaves k₁ … 2k₁ − 1; slot 0 unused).
    With k₁ = 1 (skdp's flat forest) the root is the only leaf: the tree is one learner
    on its own rows and outputs its hypothesis — no tournament, never abandoned.
    Each pertinent vertex v holds the learner A(S_v) and the id of its hypothesis
    (interned ``hypothesis_key``, reference-counted so that memory follows the forest,
    not T; id 0 is ⊥). ``anc[ℓ]`` is the pertinent ancestor of leaf ℓ, ``out_hid`` the
    list L = (A(S_{v^{(i)}}))_i that HistSparse watches.
    """

    def __init__(self, learner, n_trees, n_leaves, noise):
        self.k1, self.k2, self.width = n_leaves, n_trees, 2 * n_leaves
        n_slots = n_trees * self.width
        self.noise = as_stream_noise(noise)  # the estimator's StreamNoise (an int: a seed)
        self.n_events = 0
        self.conservative = bool(getattr(learner, "conservative", False))
        self.pert = np.zeros(n_slots, dtype=bool)
        self.hid = np.zeros(n_slots, dtype=np.int64)
        self.learners = [None] * n_slots
        leaf_slots = (np.arange(n_trees)[:, None] * self.width
                      + np.arange(n_leaves, self.width)[None, :]).ravel()
        self.anc = leaf_slots.copy()
        self.list_counts = np.zeros(64, dtype=np.int64)  # occurrences of each id in L
        self._keys = {None: BOTTOM}
        self._hid_key = [None]
        self.rep = [None]
        self._refs = [0]
        self._free = []
        first = self._intern(learner, refs=leaf_slots.size)
        self.pert[leaf_slots] = True
        self.hid[leaf_slots] = first
        for slot in leaf_slots.tolist():
            self.learners[slot] = learner  # copy-on-write: never mutated in place
        self.out = leaf_slots[::n_leaves].copy()  # an arbitrary leaf per tree
        self.out_hid = np.full(n_trees, first, dtype=np.int64)
        self.list_counts[first] = n_trees
        self.n_dead = 0
        self._non_root = np.arange(2, self.width)
        self._siblings = self._non_root ^ 1

    # ------------------------------------------------------------- hypothesis ids
    def _intern(self, learner, refs=1):
        key = learner.hypothesis_key()
        h = self._keys.get(key)
        if h is None:
            if self._free:
                h = self._free.pop()
                self._hid_key[h], self.rep[h], self._refs[h] = key, learner, 0
            else:
                h = len(self.rep)
                self._hid_key.append(key)
                self.rep.append(learner)
                self._refs.append(0)
                if h >= self.list_counts.size:
                    self.list_counts = np.r_[self.list_counts,
                                             np.zeros(self.list_counts.size, dtype=np.int64)]
            self._keys[key] = h
        self._refs[h] += refs
        return h

    def pin(self, h):
        self._refs[h] += 1

    def unpin(self, h):
        if h == BOTTOM:
            return
        self._refs[h] -= 1
        if self._refs[h] == 0:
            del self._keys[self._hid_key[h]]
            self._hid_key[h] = self.rep[h] = None
            self._free.append(h)

    def _set(self, slot, learner):
        self.learners[slot] = learner
        self.pert[slot] = True
        self.hid[slot] = self._intern(learner) if learner is not None else BOTTOM

    def _clear(self, slot):
        self.unpin(int(self.hid[slot]))
        self.pert[slot] = False
        self.learners[slot] = None

    def _leaves_under(self, tree, local):
        lo, hi = local, local + 1
        while lo < self.k1:
            lo, hi = 2 * lo, 2 * hi
        return tree * self.k1 + (lo - self.k1), tree * self.k1 + (hi - self.k1)

    # ------------------------------------------------------------- rounds
    def changes(self, leaves, x, y):
        """Which rows (leaf, x, y) would change the forest (vectorised)."""
        v = self.anc[leaves]
        h = self.hid[v]
        alive = h != BOTTOM
        if self.k1 > 1:
            alive &= v % self.width != 1  # a pertinent root is an abandoned tree
        if not self.conservative or not alive.any():
            return alive
        out = np.zeros(leaves.shape[0], dtype=bool)
        idx = np.flatnonzero(alive)
        hs = h[idx]
        for hyp in np.unique(hs).tolist():
            sel = idx[hs == hyp]
            out[sel] = self.rep[hyp].predict(x[sel]) != y[sel]
        return out

    def _event_rng(self):
        rng = self.noise.generator(event_key(ROLE_FOREST, self.n_events))
        self.n_events += 1
        return rng

    def update(self, leaf, x, y):
        """Round (x, y) assigned to ``leaf``; True iff the list L changed."""
        v = int(self.anc[leaf])
        tree, local = divmod(v, self.width)
        base = tree * self.width
        old_h = int(self.hid[v])
        if (local == 1 and self.k1 > 1) or old_h == BOTTOM:
            return False
        new = self.learners[v].copy()
        if not new.update(x, y):
            return False
        self.unpin(old_h)
        self._set(v, new)
        if self.hid[v] == old_h:
            return False  # the state moved, the hypothesis did not: siblings still agree
        if self.k1 == 1:  # a one-leaf tree outputs its only learner: no tournament
            return self._output(tree, v)
        rng = self._event_rng()
        merged = False
        while local != 1:
            sib = base + (local ^ 1)
            if not self.pert[sib] or self.hid[sib] == self.hid[v]:
                break
            parent = self._merge(v, sib, base + local // 2, rng)
            if parent is None:
                break
            v, local, merged = parent, local // 2, True
        return self._choose_output(tree, rng) if merged else False

    def _merge(self, v, sib, parent, rng):
        """Tournament example: the parent gets S_{v_i} + (x̄, ȳ) for the v_i that errs."""
        a, b = self.learners[v], self.learners[sib]
        if self.hid[v] == BOTTOM or self.hid[sib] == BOTTOM:
            merged = None  # A(⊥) = ⊥: a non-realizable child makes the parent ⊥
        else:
            xb = first_disagreement(a, b)
            if xb is None:  # keys differ but the hypotheses agree: not a mistake-bounded key
                return None
            yb = 1 if rng.random() < 0.5 else -1
            merged = (a if a.predict_one(xb) != yb else b).copy()
            merged.update(xb, yb)
        self._clear(v)
        self._clear(sib)
        self._set(parent, merged)
        lo, hi = self._leaves_under(parent // self.width, parent % self.width)
        self.anc[lo:hi] = parent
        return parent

    def _choose_output(self, tree, rng):
        """v^{(i)}: a random vertex whose sibling is pertinent with the same hypothesis;
        none left → the tree is abandoned (its root pertinent with ⊥)."""
        base = tree * self.width
        slots, sibs = base + self._non_root, base + self._siblings
        cand = np.flatnonzero(self.pert[slots] & self.pert[sibs]
                              & (self.hid[slots] == self.hid[sibs]))
        if cand.size:
            v = int(slots[cand[rng.integers(cand.size)]])
        else:
            for slot in (base + np.flatnonzero(self.pert[base:base + self.width])).tolist():
                self._clear(slot)
            v = base + 1
            self._set(v, None)
            self.anc[tree * self.k1:(tree + 1) * self.k1] = v
            self.n_dead += 1
        return self._output(tree, v)

    def _output(self, tree, v):
        """Make vertex v the output of ``tree``; True iff the list L changed."""
        old = self.out_hid[tree]
        self.out[tree] = v
        self.out_hid[tree] = self.hid[v]
        self.list_counts[old] -= 1
        self.list_counts[self.out_hid[tree]] += 1
        return bool(self.out_hid[tree] != old)
