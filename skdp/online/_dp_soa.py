"""DP-SOA (Golowich & Livni 2021, Alg. 1): a forest of tournament trees over a mistake-bounded
base learner, whose frequent hypothesis is published by HistSparse (Alg. 2)."""

import math
import numbers
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._streams import keyed_generator
from ..accounting import PrivacyBudget
from ..mechanisms import HistSparse, StableHistogram, stable_histogram_min_size
from ._base import PrivateOnlineDomainClassifier
from ._budget_split import ACCOUNTING, hist_sparse_split, per_round_histogram_split
from ._soa import base_learner_for, first_disagreement

__all__ = ["DPSOAClassifier", "DPSOAParameters"]

#: Horizon T assumed by the "theory" preset when ``n_rounds`` is None (utility only).
DEFAULT_THEORY_HORIZON = 10**6
#: Refuse forests with more vertex slots than this (each slot holds a few words).
MAX_FOREST_SLOTS = 2**24
#: Cap of the default ``n_trees`` (the histogram's sample size can be astronomical).
MAX_AUTO_TREES = 2**15
# Rounds per block of the random leaf assignment π (one generator per block).
_PI_PAGE = 4096
# Rounds per batch of per-round histogram noise in the adaptive variant.
_RELEASE_BATCH = 64
# Roles of the keyed generators (top bits of the Philox key's second word).
_ROLE_PI, _ROLE_FOREST, _ROLE_HIST_SPARSE, _ROLE_RELEASE = range(4)
_ROLE_SHIFT = 60
_BOTTOM = 0  # hypothesis id of ⊥ (a non-realizable or abandoned vertex)


def _key(role, index):
    return (role << _ROLE_SHIFT) | index


@dataclass(frozen=True)
class DPSOAParameters:
    """The resolved parameters of one DP-SOA stream.

    Attributes
    ----------
    n_trees, n_leaves, max_switches : int
        k₂, k₁ and the HistSparse cutoff c.
    eta, threshold : float
        η and the sparse-vector threshold θ = 1 − 3η/32.
    svt_epsilon, hist_epsilon, hist_delta : float
        HistSparse's budget split (``adaptive=False``).
    release_epsilon, release_delta : float
        Per-round histogram (ε′, δ′) (``adaptive=True``; else 0).
    n_rounds : int or None
        The horizon T (a hard cap on rounds with ``adaptive=True``).
    adaptive : bool
    preset : str
    accounting : str
        ``"tight"`` or ``"paper"``: how the split was calibrated.
    """

    n_trees: int
    n_leaves: int
    max_switches: int
    eta: float
    threshold: float
    svt_epsilon: float
    hist_epsilon: float
    hist_delta: float
    release_epsilon: float
    release_delta: float
    n_rounds: int | None
    adaptive: bool
    preset: str
    accounting: str = "tight"


def _theory_sizes(ldim, epsilon, delta, horizon):
    """k₁, η, c and log₂ k₂ of Golowich & Livni, Alg. 1 and Lemma A.3 (with β = 1/T)."""
    k1 = 1 << max(math.ceil(math.log2(max(2 ** (ldim + 1), 20))), 1)
    log2_eta = -4 * k1 - math.log2(4 * k1)
    log2_c = math.log2(4 * k1) - log2_eta
    # Θ₍₆₎ = 2^{8k₁+6} k₁² log(5T log k₁ / β) dominates Θ₍₄₎ = Õ(c ln(T/βδ)/(ηε))
    log2_theta6 = 8 * k1 + 6 + 2 * math.log2(k1) + math.log2(
        math.log(5 * horizon * math.log(k1) * horizon))
    log2_theta4 = log2_c - log2_eta + math.log2(8 * math.log(2 * horizon**2 / delta) / epsilon)
    return k1, log2_eta, log2_c, max(log2_theta6, log2_theta4)


class _Forest:
    """The k₂ trees of k₁ leaves of Alg. 1, with copy-on-write base learners.

    Vertex slots are heap-indexed per tree (root 1, leaves k₁ … 2k₁ − 1; slot 0 unused).
    Each pertinent vertex v holds the learner A(S_v) and the id of its hypothesis
    (interned ``hypothesis_key``, reference-counted so that memory follows the forest,
    not T; id 0 is ⊥). ``anc[ℓ]`` is the pertinent ancestor of leaf ℓ, ``out_hid`` the
    list L = (A(S_{v^{(i)}}))_i that HistSparse watches.
    """

    def __init__(self, learner, n_trees, n_leaves, entropy):
        self.k1, self.k2, self.width = n_leaves, n_trees, 2 * n_leaves
        n_slots = n_trees * self.width
        self.entropy = entropy
        self.n_events = 0
        self._rng = None
        self.conservative = bool(getattr(learner, "conservative", False))
        self.pert = np.zeros(n_slots, dtype=bool)
        self.hid = np.zeros(n_slots, dtype=np.int64)
        self.learners = [None] * n_slots
        leaf_slots = (np.arange(n_trees)[:, None] * self.width
                      + np.arange(n_leaves, self.width)[None, :]).ravel()
        self.anc = leaf_slots.copy()
        self.list_counts = np.zeros(64, dtype=np.int64)  # occurrences of each id in L
        self._keys = {None: _BOTTOM}
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
        if h == _BOTTOM:
            return
        self._refs[h] -= 1
        if self._refs[h] == 0:
            del self._keys[self._hid_key[h]]
            self._hid_key[h] = self.rep[h] = None
            self._free.append(h)

    def _set(self, slot, learner):
        self.learners[slot] = learner
        self.pert[slot] = True
        self.hid[slot] = self._intern(learner) if learner is not None else _BOTTOM

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
        alive = (v % self.width != 1) & (h != _BOTTOM)
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
        self._rng = keyed_generator(self.entropy, _key(_ROLE_FOREST, self.n_events), self._rng)
        self.n_events += 1
        return self._rng

    def update(self, leaf, x, y):
        """Round (x, y) assigned to ``leaf``; True iff the list L changed."""
        v = int(self.anc[leaf])
        tree, local = divmod(v, self.width)
        base = tree * self.width
        old_h = int(self.hid[v])
        if local == 1 or old_h == _BOTTOM:
            return False
        new = self.learners[v].copy()
        if not new.update(x, y):
            return False
        self.unpin(old_h)
        self._set(v, new)
        if self.hid[v] == old_h:
            return False  # the state moved, the hypothesis did not: siblings still agree
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
        if self.hid[v] == _BOTTOM or self.hid[sib] == _BOTTOM:
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
        old = self.out_hid[tree]
        if cand.size:
            v = int(slots[cand[rng.integers(cand.size)]])
        else:
            for slot in (base + np.flatnonzero(self.pert[base:base + self.width])).tolist():
                self._clear(slot)
            v = base + 1
            self._set(v, None)
            self.anc[tree * self.k1:(tree + 1) * self.k1] = v
            self.n_dead += 1
        self.out[tree] = v
        self.out_hid[tree] = self.hid[v]
        self.list_counts[old] -= 1
        self.list_counts[self.out_hid[tree]] += 1
        return bool(self.out_hid[tree] != old)


class DPSOAClassifier(PrivateOnlineDomainClassifier):
    """Differentially private online learner for Littlestone classes (DP-SOA).

    Golowich & Livni's Alg. 1. A forest of ``n_trees`` (k₂) full binary trees with
    ``n_leaves`` (k₁) leaves runs copies of a deterministic mistake-bounded base learner A
    (the SOA by default) on a random partition of the stream: round t goes to a random
    leaf π(t) and from there to its pertinent ancestor v, whose sequence S_v it extends.
    When two pertinent siblings come to disagree, a *tournament example* (x̄ where they
    disagree, a random label ȳ) is appended to the one erring on it and handed to their
    parent; each tree outputs A(S_v) for a random pair of agreeing pertinent siblings.
    The published hypothesis comes from :class:`~skdp.mechanisms.HistSparse` (Alg. 2)
    over the list of the k₂ tree outputs: it changes only when the sparse vector
    reports that the current one became rare, and then becomes the mode of a stable
    histogram. Predictions between switches are one vectorised call.

    X holds domain indices (shape (n, 1), integers in [0, N)); ``fit`` starts a stream,
    ``partial_fit`` continues it (any split into blocks gives the same model for the same
    seed), and ``predict`` is post-processing of the last released hypothesis.

    Parameters
    ----------
    epsilon : float, default=1.0
        ε of the whole stream (every prediction of every round).
    delta : float, default=1e-6
        δ ∈ (0, 1) of the whole stream (the stable histogram needs δ > 0).
    hypothesis_class : FiniteClass, label matrix, version space or MistakeBoundedLearner
        The class (its SOA is the base learner), e.g. ``ThresholdVersionSpace(N)``, or
        any :class:`~skdp.online.MistakeBoundedLearner` in its initial state (copied,
        never mutated). Required.
    n_trees : int, optional
        k₂. Default (practical): the smallest list size for which the stable histogram
        releases every element of frequency > η and only elements of frequency > η/4
        (:func:`~skdp.mechanisms.stable_histogram_min_size`), at least 64 and at most
        2¹⁵ (with a warning: e.g. ``adaptive=True`` at large T needs far more).
    n_leaves : int, optional
        k₁, a power of two ≥ 2. Default: 2^{min(d, 3)+1} for the base learner's mistake
        bound d (the paper's 2^{d+1} without its floor of 20, capped at 16: a tree can
        only learn log₂ k₁ mistakes deep, and every leaf costs mistakes).
    max_switches : int, optional
        c, the cutoff of HistSparse: the number of histogram releases after which the
        learner stops updating. Default 8 (practical; the paper's c = 4k₁/η).
    eta : float in (0, 1], optional
        η, the frequency HistSparse looks for (threshold θ = 1 − 3η/32, histogram
        threshold ηk₂/2). Default 0.25 (practical; the paper's η = 2^{−4k₁}/(4k₁)).
    adaptive : bool, default=False
        The variant of Thm 4.2 for adaptive adversaries: no sparse vector; every round's
        hypothesis is a fresh stable histogram at (ε′, δ′) — with ``accounting="paper"``
        (ε/(2√(2T ln(1/δ))), δ/(2T)) (Lemma 5.4), with ``"tight"`` the largest ε′ whose
        T-fold composition the accountant puts within (ε, δ) — for at most
        T = ``n_rounds`` rounds (hard cap), after which it stops updating. Needs
        ``n_rounds``. The paper re-runs DP-SOA from scratch every round (O(T²) work);
        skdp keeps one forest (same privacy proof for every fixed forest randomness; the
        regret reduction of Thm 4.2 assumed fresh randomness per round).
    n_rounds : int, optional
        T. Required with ``adaptive=True`` (the composition is over T rounds); with
        ``preset="theory"`` it sizes k₂ (default 10⁶); otherwise unused.
    preset : {"practical", "theory"}, default="practical"
        ``"theory"``: k₁, η, c, k₂ from Alg. 1 and Lemma A.3 for the class's Littlestone
        dimension d, for every parameter not given — refused with a clear ValueError
        when the forest cannot fit in memory (always, unless k₂ and k₁ are given: k₂ ≥
        2^{8k₁+6}). ``"practical"``: the defaults above.
    accounting : {"tight", "paper"}, default="tight"
        How (ε, δ) is split over the mechanisms. ``"paper"``: basic composition of
        HistSparse's sparse vector (2ε/3) and c histograms (ε/(3c), δ/c), or Lemma 5.4
        (advanced composition) with ``adaptive=True``. ``"tight"``: the same relative
        weights, scaled as far as :func:`skdp.accounting.calibrate_plan` allows (PLD /
        Rényi accounting of one pure ε_svt-DP sparse vector and c (ε_hist, δ_hist)-DP
        histograms, or of T per-round histograms), with the split of δ between the
        histograms and the composition whose histogram noise bound is smallest (the
        paper's split is a candidate, so it is never worse). See ``parameters_``.
    classes : array-like of shape (2,), default=None
        The label set, a **public** parameter: ``classes_`` is exactly
        ``np.unique(classes)`` (``classes_[1]`` is the +1 label) whatever ``y``
        holds, and labels of ``y`` outside it raise ``ValueError``. ``None``: read
        from ``y`` as scikit-learn does (``partial_fit`` then needs its own
        ``classes`` on the first call), with a
        :class:`~skdp.exceptions.PrivacyLeakWarning` — the label set is then a
        statistic of the private data that the guarantee does not cover.
    budget : PrivacyBudget, optional
        Charged (ε, δ) at the start of each stream.
    random_state : None, int or numpy.random.Generator
        Source of all randomness (π, tournament labels, output choices, noise).
    verbose : int, default=0
        Print switches and the stop.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    parameters_ : DPSOAParameters
        The resolved k₂, k₁, c, η, θ and budget split.
    mistake_bound_ : int
        The base learner's mistake bound (Ldim for the SOA).
    n_switches_ : int
        Changes of the released hypothesis (≤ c with ``adaptive=False``).
    updates_stopped_ : bool
        True once a hard cap was hit (c switches, or T rounds with ``adaptive=True``);
        ``stop_reason_`` says which. The learner then predicts with its last release.
    n_rounds_seen_, n_domain_, n_features_in_ : int
    privacy_spent_ : PrivacyCost

    Notes
    -----
    Which defaults are whose: the algorithm (forest, pertinent vertices, tournament
    examples, HistSparse with θ = 1 − 3η/32 and the abort after c switches) is the
    paper's. Its constants are not usable: Lemma A.3 needs k₁ ≥ max(2^{d+1}, 20),
    η = 2^{−4k₁}/(4k₁), c = 4k₁/η and k₂ ≥ 2^{8k₁+6}k₁² log(5T² log k₁), i.e. more than
    2^{166} trees even for d ≤ 3. ``preset="theory"`` computes them and refuses.
    The defaults of ``n_leaves``, ``max_switches``, ``eta`` and ``n_trees`` are practical
    choices; the budget split of HistSparse (2/3 of ε to the sparse vector) keeps the
    paper's ratio. Departures: the first hypothesis is A(∅), which is public, instead of
    a first histogram of the data-independent list L₁; ⊥ is never released (when the
    histogram releases only ⊥ the hypothesis stays); a ⊥ child makes its parent ⊥; the
    sparse vector draws its threshold noise once (Lyu et al. 2017) instead of after each
    switch. None of these affects the privacy proof.

    Internal, non-private state is kept in private attributes that must not be
    released: the forest, the learner behind the released hypothesis (``_hypothesis``:
    its version space holds private tournament examples; publish its predictions
    only), the counts of forest updates and abandoned trees (``_n_forest_updates``,
    ``_n_abandoned_trees``) and the exact online mistakes (``_n_mistakes``, computed
    from the private labels), the mechanisms and their generators.

    Utility: on an oblivious realizable stream the paper's constants give
    E[mistakes] = Õ(2^{8·2^d} ln(T/δ)/ε) (Thm 4.1). With practical constants there is no
    guarantee; expect many more mistakes than the SOA (each switch needs a large share
    of the k₂ trees to move, each move needs mistakes).

    Privacy
    -------
    (ε, δ)-DP for the whole sequence of released hypotheses (hence of all predictions), for
    *every* stream — realizable or not — against neighbouring streams fixed in advance that
    differ in one row (Golowich & Livni 2021, Lemma A.1 with Lemma 5.3): one row changes the
    sequence of one tree only, so every list L_t changes in at most one of k₂ positions, and
    :class:`~skdp.mechanisms.HistSparse` is (ε, δ)-DP on such lists — its whole transcript,
    including the rounds it switched at: a pure ε_svt-DP sparse vector and c stable
    histograms, (ε_hist, δ_hist)-DP each, whose adaptive composition is within (ε, δ) by
    basic composition (``accounting="paper"``: ε_svt = 2ε/3, (ε/(3c), δ/c)) or by the
    numerical accountant (``"tight"``, :func:`skdp.accounting.calibrate_plan`). The cutoff
    c is enforced. ``adaptive=True``: every round's histogram is (ε′, δ′)-DP on a
    1-sensitive list, and T of them compose to (ε, δ) by advanced composition (Lemma 5.4;
    checked numerically at fit, refused if it does not hold) or by the accountant; at
    most T rounds are released. ``fit`` and the first ``partial_fit`` of a stream charge (ε,
    δ); later blocks cost nothing more. The fitted object holds private state (the forest):
    publish predictions, not the pickled estimator. Copies of a fitted stream share a
    ledger: continuing two copies is refused (:class:`~skdp.exceptions.PrivacyError`).

    References
    ----------
    N. Golowich, R. Livni. Littlestone classes are privately online learnable.
    NeurIPS 2021, Alg. 1–2, Thm 4.1–4.2, Lemmas 5.3, 5.4, A.1, A.3.
    M. Bun, R. Livni, S. Moran. An equivalence between private classification and
    online prediction. FOCS 2020 (tournament examples).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.hypotheses.littlestone import PointVersionSpace
    >>> from skdp.online import DPSOAClassifier
    >>> rng = np.random.default_rng(0)
    >>> x = rng.integers(0, 4, size=20000); y = (x == 2).astype(int)
    >>> clf = DPSOAClassifier(8.0, 1e-6, PointVersionSpace(4), n_trees=200,
    ...                       max_switches=2, random_state=0).fit(x[:, None], y)
    >>> clf.predict([[0], [1], [2], [3]])
    array([0, 0, 1, 0])
    >>> clf.n_switches_, clf.privacy_spent_.epsilon
    (1, 8.0)
    """

    # the mechanism publishing the hypotheses (tests substitute broken variants)
    _hist_sparse_class = HistSparse

    _parameter_constraints: dict = {
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "delta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "hypothesis_class": "no_validation",
        "n_trees": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_leaves": [Interval(numbers.Integral, 2, None, closed="left"), None],
        "max_switches": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "eta": [Interval(numbers.Real, 0, 1, closed="right"), None],
        "adaptive": ["boolean"],
        "n_rounds": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "preset": [StrOptions({"practical", "theory"})],
        "accounting": [StrOptions(set(ACCOUNTING))],
        "budget": [PrivacyBudget, None],
        "random_state": ["random_state", np.random.Generator],
        "verbose": ["verbose"],
        "classes": ["array-like", None],
    }

    def __init__(self, epsilon=1.0, delta=1e-6, hypothesis_class=None, *, n_trees=None,
                 n_leaves=None, max_switches=None, eta=None, adaptive=False, n_rounds=None,
                 preset="practical", accounting="tight", budget=None, random_state=None,
                 verbose=0, classes=None):
        self.epsilon = epsilon
        self.delta = delta
        self.hypothesis_class = hypothesis_class
        self.n_trees = n_trees
        self.n_leaves = n_leaves
        self.max_switches = max_switches
        self.eta = eta
        self.adaptive = adaptive
        self.n_rounds = n_rounds
        self.preset = preset
        self.accounting = accounting
        self.budget = budget
        self.random_state = random_state
        self.verbose = verbose
        self.classes = classes

    # ----------------------------------------------------------------- parameters
    def _base_learner(self):
        return base_learner_for(self.hypothesis_class, type(self).__name__)

    def _resolve(self, learner):
        epsilon, delta = self._check_privacy_params()
        name = type(self).__name__
        if self.adaptive and self.n_rounds is None:
            raise ValueError(f"{name}(adaptive=True) needs n_rounds: its privacy is a "
                             "composition over T rounds.")
        k1, eta, c, k2 = self.n_leaves, self.eta, self.max_switches, self.n_trees
        if self.preset == "theory":
            horizon = self.n_rounds or DEFAULT_THEORY_HORIZON
            t_k1, log2_eta, log2_c, log2_k2 = _theory_sizes(
                max(learner.mistake_bound, 0), epsilon, delta, horizon)
            k1 = t_k1 if k1 is None else k1
            if k2 is None and log2_k2 + math.log2(2 * k1) > math.log2(MAX_FOREST_SLOTS):
                raise ValueError(
                    f"{name}(preset='theory'): Golowich & Livni's constants for Ldim "
                    f"{learner.mistake_bound} need k₁ = {t_k1} leaves, η = 2^{log2_eta:.0f}, "
                    f"c = 2^{log2_c:.0f} switches and k₂ ≈ 2^{log2_k2:.0f} trees — far "
                    f"beyond memory (limit {MAX_FOREST_SLOTS} vertices). Use "
                    "preset='practical', or pass n_trees and n_leaves."
                )
            eta = 2.0**log2_eta if eta is None else eta
            c = math.ceil(2.0**log2_c) if c is None else c
            k2 = math.ceil(2.0**log2_k2) if k2 is None else k2
        k1 = 2 ** (min(max(learner.mistake_bound, 1), 3) + 1) if k1 is None else k1
        eta = 0.25 if eta is None else float(eta)
        c = 8 if c is None else c
        if k1 & (k1 - 1):
            raise ValueError(f"n_leaves must be a power of two (full binary trees), got {k1}.")
        if self.adaptive:
            try:
                split = per_round_histogram_split(epsilon, delta, self.n_rounds,
                                                  self.accounting)
            except ValueError as exc:
                raise ValueError(f"{name}(adaptive=True): {exc}") from None
            rel_eps, rel_delta = split.values
            hist_eps, hist_delta, svt_eps = rel_eps, rel_delta, 0.0
        else:
            svt_eps, hist_eps, hist_delta = hist_sparse_split(epsilon, delta, c,
                                                              self.accounting).values
            rel_eps = rel_delta = 0.0
        # refuses unusable noise scales now, before the charge (no randomness is used)
        StableHistogram(hist_eps, hist_delta, eta=eta, random_state=0)
        if k2 is None:
            k2 = max(64, stable_histogram_min_size(eta, hist_eps, hist_delta))
            if k2 > MAX_AUTO_TREES:
                warnings.warn(
                    f"{name}: the stable histogram at (ε, δ) = ({hist_eps:.3g}, "
                    f"{hist_delta:.3g}) needs about {k2} trees to release a hypothesis of "
                    f"frequency η = {eta}; n_trees is capped at {MAX_AUTO_TREES}, so the "
                    "learner may never switch from its initial hypothesis (pass n_trees to "
                    "choose).", UserWarning, stacklevel=4)
                k2 = MAX_AUTO_TREES
        if k2 * 2 * k1 > MAX_FOREST_SLOTS:
            raise ValueError(f"{name}: a forest of {k2} trees × {k1} leaves exceeds the "
                             f"memory limit of {MAX_FOREST_SLOTS} vertices; pass a smaller "
                             "n_trees or n_leaves.")
        return DPSOAParameters(
            n_trees=int(k2), n_leaves=int(k1), max_switches=int(c), eta=eta,
            threshold=1.0 - 3.0 * eta / 32.0, svt_epsilon=svt_eps, hist_epsilon=hist_eps,
            hist_delta=hist_delta, release_epsilon=rel_eps, release_delta=rel_delta,
            n_rounds=self.n_rounds, adaptive=bool(self.adaptive), preset=self.preset,
            accounting=self.accounting,
        )

    # ----------------------------------------------------------------- stream hooks
    def _prepare_stream(self, from_fit):
        learner = self._base_learner()
        return learner.n_domain, (learner, self._resolve(learner))

    def _init_stream(self, plan):
        learner, params = plan
        self.parameters_ = params
        self.mistake_bound_ = learner.mistake_bound
        self._forest = _Forest(learner, params.n_trees, params.n_leaves, self._entropy)
        self._released_hid = int(self._forest.out_hid[0])  # A(∅): public
        self._forest.pin(self._released_hid)
        self._hypothesis = learner
        self.n_switches_ = self._n_forest_updates = self._n_abandoned_trees = 0
        self._pending = None
        self._page_id, self._page = -1, None
        if params.adaptive:
            self._run_id, self._run_start, self._batch = 0, 0, (-1, None)
            hist = StableHistogram(params.release_epsilon, params.release_delta,
                                   eta=params.eta, random_state=0)
            # a count below τ − A is never released (|noise| ≤ A): such items need no noise
            self._least_releasable = (hist.max_error(params.n_trees) + 1
                                      - 2 * hist.noise_bound)
        else:
            self._hist_sparse = self._make_hist_sparse(params)

    def _make_hist_sparse(self, params):
        epsilon, delta = self._check_privacy_params()
        return self._hist_sparse_class(
            epsilon, delta, params.n_trees, params.eta, params.max_switches,
            initial=self._released_hid, ignore=_BOTTOM,
            split=(params.svt_epsilon, params.hist_epsilon, params.hist_delta),
            random_state=keyed_generator(self._entropy, _key(_ROLE_HIST_SPARSE, 0)))

    def _released_predict(self, x):
        return self._hypothesis.predict(x)

    def _fresh_predict_one(self, x):
        return self._base_learner().predict_one(x)

    def _leaves(self, t0, n):
        """π(t) for rounds t0 … t0 + n − 1: a uniform leaf of the forest, fixed per round."""
        total = self.parameters_.n_trees * self.parameters_.n_leaves
        out = np.empty(n, dtype=np.int64)
        pos = 0
        while pos < n:
            page, off = divmod(t0 + pos, _PI_PAGE)
            if page != self._page_id:
                gen = keyed_generator(self._entropy, _key(_ROLE_PI, page))
                self._page, self._page_id = gen.integers(0, total, size=_PI_PAGE), page
            m = min(n - pos, _PI_PAGE - off)
            out[pos:pos + m] = self._page[off:off + m]
            pos += m
        return out

    def _switch(self, hid):
        """Release hypothesis ``hid`` (already chosen by a private mechanism)."""
        forest = self._forest
        if hid != self._released_hid:
            forest.pin(hid)
            forest.unpin(self._released_hid)
            self._released_hid = hid
            self._hypothesis = forest.rep[hid]
            self.n_switches_ += 1
            if self.verbose:
                print(f"[{type(self).__name__}] round {self.n_rounds_seen_}: switch "
                      f"{self.n_switches_} to {forest.rep[hid].hypothesis_key()!r}")

    # ----------------------------------------------------------------- the loop
    def _scan(self, x, y, wrong):
        t0, n = self.n_rounds_seen_, x.shape[0]
        adaptive = self.parameters_.adaptive
        if adaptive:
            n = min(n, self.parameters_.n_rounds - t0)
        leaves = self._leaves(t0, n)
        changes = self._forest.changes(leaves, x[:n], y[:n])
        f = int(np.argmax(changes)) if changes.any() else n
        hit = self._release(t0, f)  # rows before f leave the list as it is
        if hit >= 0:
            return hit
        if f < n:
            self._pending = int(leaves[f])
            return f
        if adaptive and t0 + n >= self.parameters_.n_rounds:
            self._stop_at_horizon()  # later rows: predicted by the last release only
        return -1

    def _step(self, x, y, wrong):
        leaf, self._pending = self._pending, None
        if leaf is not None:
            t = self.n_rounds_seen_ - 1
            self._n_forest_updates += 1
            forest = self._forest
            if forest.update(leaf, x, y) and self.parameters_.adaptive:
                self._run_id, self._run_start = self._run_id + 1, t
            self._n_abandoned_trees = forest.n_dead
            self._release(t, 1)
        if self.parameters_.adaptive and self.n_rounds_seen_ >= self.parameters_.n_rounds:
            self._stop_at_horizon()

    def _stop_at_horizon(self):
        self._stop_updating(f"released its n_rounds={self.parameters_.n_rounds} per-round "
                            "histograms (the horizon of its composition)")

    def _release(self, t0, n):
        """Answer the rounds t0 … t0 + n − 1 whose list is unchanged; return the index
        (from t0) of the first one that switched the hypothesis, or −1."""
        if self.parameters_.adaptive:
            return self._release_per_round(t0, n)
        hs = self._hist_sparse
        answered, switched = hs.process(self._forest.out_hid, n)
        if not switched:
            return -1
        self._switch(int(hs.current))
        if hs.halted:
            self._stop_updating(f"made its maximum of c = {hs.max_switches} hypothesis "
                                "switches (HistSparse abort)")
        return answered - 1

    def _release_per_round(self, t0, n):
        """Adaptive variant: round t's hypothesis is the mode of a fresh stable histogram.

        Rounds of one run of an unchanged list draw their noise in fixed batches from a
        generator keyed by (run, batch), so the draws do not depend on block boundaries.
        """
        if n == 0:
            return -1
        counts = self._forest.list_counts
        items = np.flatnonzero(counts >= self._least_releasable)
        items = items[items != _BOTTOM]
        if items.size == 0:
            return -1
        data = self._forest.out_hid
        offsets = np.arange(t0, t0 + n) - self._run_start
        chosen = np.empty(n, dtype=np.int64)
        for b in np.unique(offsets // _RELEASE_BATCH).tolist():
            sel = offsets // _RELEASE_BATCH == b
            chosen[sel] = self._batch_modes(data, items, b)[offsets[sel] % _RELEASE_BATCH]
        moved = np.flatnonzero((chosen >= 0) & (chosen != self._released_hid))
        if moved.size == 0:
            return -1
        self._switch(int(chosen[moved[0]]))
        return int(moved[0])

    def _batch_modes(self, data, items, batch):
        if self._batch[0] != (self._run_id, batch):
            p = self.parameters_
            gen = keyed_generator(self._entropy,
                                  _key(_ROLE_RELEASE, (self._run_id << 24) | batch))
            hist = StableHistogram(p.release_epsilon, p.release_delta, eta=p.eta,
                                   random_state=gen)
            counts = hist.simulate(data, _RELEASE_BATCH, items.tolist())
            # ties among the largest noisy counts are broken uniformly at random
            best = np.argmax(counts + gen.random(counts.shape), axis=1)
            modes = np.where(counts[np.arange(_RELEASE_BATCH), best] > 0, items[best], -1)
            self._batch = ((self._run_id, batch), modes)
        return self._batch[1]
