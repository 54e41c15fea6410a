"""The algorithmic core of Li, Wang & Ye's adaptive private online learner (§3, Alg 1–2).

Pure python/numpy, no scikit-learn: :func:`resolve_adaptive_parameters` turns the
paper's parameters (or the practical ones) into an :class:`AdaptiveParameters`, and
:class:`LiWangYeCore` runs Algorithm 2 with the ``Update`` subroutine (Algorithm 1) over
any deterministic mistake-bounded base learner
(:class:`~skdp.online.MistakeBoundedLearner`).

State at layer s (0 ≤ s ≤ D): N_s = N_0 / 2^s sibling sequences, stored as base-learner
states (copy-on-write: all N_0 empty sequences share one fresh learner), grouped in pairs
(2i, 2i + 1); a list L_s of released frequent hypotheses; one AboveThreshold instance
watching the mistakes of the first hypothesis of L_s.

Each round (x_t, y_t): the released h_t errs or not; a data-independent uniform pair i_t
gets (x_t, y_t) appended to its first sequence iff the pair agrees (A(S₂ᵢ) = A(S₂ᵢ₊₁) ≠ ⊥)
and A(S₂ᵢ) errs at x_t — after which the pair collides for the rest of the layer, so a
pair receives at most one input per layer (the paper's |Sᵢˢ| ≤ 2s); the cumulative
mistake count of h_t since the instance started is fed to AboveThreshold. On ⊤ the head
of L_s is dropped; while L_s is empty and s < D: ``Update`` (tournament example with a
uniformly random label for every colliding pair, appended to the pair member that errs
on it, placed at a uniformly random position of layer s + 1; non-colliding pairs give
⊥), s ← s + 1, and a PrivateHistogram of the hypotheses of the agreeing pairs of layer s
gives L_s. If L_D is exhausted the learner halts.
"""

import math
from dataclasses import dataclass

import numpy as np

from ..mechanisms import AboveThreshold, StableHistogram
from ._budget_split import adaptive_split
from ._soa import first_disagreement

__all__ = ["AdaptiveParameters", "LiWangYeCore", "resolve_adaptive_parameters"]

#: Refusal limit on N_0 (sequences at layer 0): memory and the mistakes of layer 0 grow
#: with it.
MAX_SEQUENCES = 2**22
#: Practical default: at most this many layers (histograms).
PRACTICAL_MAX_LAYERS = 1
#: Practical default: layer 1 holds this many histogram release thresholds' worth of pairs.
PRACTICAL_LAYER1_PAIRS = 4
#: Practical default: at least this many sequences (at ε = 16, 16(A + 2) = 96 left 24
#: pairs in layer 1, and its list came out empty).
PRACTICAL_MIN_SEQUENCES = 256


@dataclass(frozen=True)
class AdaptiveParameters:
    """Resolved parameters of Li–Wang–Ye's Alg 2 (see :func:`resolve_adaptive_parameters`).

    Attributes
    ----------
    preset : str
    n_layers : int
        D, the number of layers after layer 0 = the number of PrivateHistogram calls (cap).
    n_sequences : int
        N_0 (a multiple of 2^{D+1}, so every layer has whole pairs).
    epsilon, delta : float
        The (ε, δ) of the whole stream.
    epsilon_svt : float
        ε₀, shared by all AboveThreshold instances (they run on disjoint rounds):
        ε/2 with ``accounting="paper"``.
    hist_epsilon, hist_delta : float
        Of each PrivateHistogram: (ε₀/D, δ/D) with ``accounting="paper"``.
    hist_error : int
        Its probability-1 sup-error.
    horizon : int
        T.
    beta : float
        β.
    svt_margin : float
        α added to N_s (or N_s/2) in the AboveThreshold threshold.
    svt_thresholds : tuple of float
        Threshold of the AboveThreshold instances of layer s, s = 0 … D.
    keep_thresholds : tuple of float
        Keep h in L_s iff its released count ≥ this, s = 0 … D (entry 0 unused).
    max_list_size : int
        Cap on |L_s| (the highest released counts are kept).
    max_switches : int
        Cap on the number of switches (AboveThreshold ⊤ answers) of the whole stream.
    accounting : str
        ``"tight"`` or ``"paper"``: how (ε₀, ε_hist, δ_hist) were calibrated.
    release : str
        ``"histogram"`` (Alg 2's copies and PrivateHistogram) or ``"consistent"``
        (:class:`~skdp.online._consistent_release.ConsistentReleaseCore`: D = N_0 = 0,
        ``hist_epsilon`` is the ε of each release, ``max_switches`` the cap c).
    """

    preset: str
    n_layers: int
    n_sequences: int
    epsilon: float
    delta: float
    epsilon_svt: float
    hist_epsilon: float
    hist_delta: float
    hist_error: int
    horizon: int
    beta: float
    svt_margin: float
    svt_thresholds: tuple
    keep_thresholds: tuple
    max_list_size: int
    max_switches: int
    accounting: str = "tight"
    release: str = "histogram"

    def sequences_at(self, layer):
        """N_s."""
        return self.n_sequences >> layer


def _paper_keep(n_s, layer):
    """3M_s/4 with M_s = 128·2^{−6·2^s}·N_s (Alg 2, line 20), in floating point."""
    return 0.75 * 128.0 * 2.0 ** (-6.0 * 2.0**layer) * n_s


def resolve_adaptive_parameters(epsilon, delta, horizon, beta, mistake_bound, *,
                                preset="practical", n_layers=None, n_sequences=None,
                                max_list_size=None, max_switches=None, accounting="tight"):
    """Parameters of Alg 2 for a base learner with mistake bound d.

    ``preset="paper"`` (Li, Wang & Ye §3 and App. B): D = d layers; ε₀ = ε/2;
    PrivateHistogram with (ε₀/d, δ/d); AboveThreshold threshold
    N_s + 8(ln T + ln(6T/β))/ε₀; keep h with count ≥ 3M_s/4, M_s = 128·2^{−6·2^s}·N_s;
    N_0 the least multiple of 2^{d+1} with N_0 ≥ 2^{6·2^d + d} (App. B) and, at every layer,
    M_s ≥ 4 ln(3T/β) (App. B) and M_s ≥ 4·(histogram error) (so that 3M_s/4 separates
    counts ≥ M_s from counts ≤ M_s/2 — the role of "error 8 ln(8/δ)/ε" in the proof).
    Refused (ValueError) when N_0 exceeds 2²² sequences (memory) or the horizon T
    (layer 0 alone then spends all T rounds): in practice for every d ≥ 2.

    ``preset="practical"``: the same mechanisms and accounting with smaller constants: D = 1
    layer (one histogram: its ε is twice that of D = 2, its noise bound A half);
    AboveThreshold threshold N_s/2 + (4/ε₀)·ln(2T/β) (the union bound over T rounds of the
    two Laplace noises the instance actually draws, scale 2/ε₀ each, instead of the paper's
    8(ln T + ln(6T/β))/ε₀; N_s/2 mistakes cover 1 − e^{−1} of the pairs instead of 1 −
    e^{−2}); keep every hypothesis the histogram releases (its own threshold A + 2 ≈ half
    its error: counts ≤ 1 are never released); N_0 = max(16·(A + 2), 256) rounded up to a
    multiple of 2^{D+1}, i.e. layer 1 has 4 release thresholds' worth of pairs, and at least
    64 pairs. The forced phase — every round until the first switch predicts with A(∅) — is
    the first threshold N_0/2 + (4/ε₀)·ln(2T/β) mistakes, so it shrinks as ε grows (A ∝
    1/ε). Measured against the binary-search adversary on thresholds over 2¹⁶ (ε = 1, T =
    10⁴, SOA skipping contradicting examples): N_0 = 832 → 504–513 mistakes, then flat; the
    former D = 2, N_0 = 64(A + 2) → 3,362. With D = 1 a released hypothesis must be agreed
    on by ≥ A + 2 pairs of sequences that hold one real example and one tournament example
    each, so the preset learns only streams on which one example of the released hypothesis'
    errors nearly pins the target (the binary-search adversary); it stops
    (list exhausted) on spread-out streams and on the mistake-seeking adversary.

    Privacy does not depend on any of these constants (see
    :class:`~skdp.online.AdaptivePrivateOnlineClassifier`): D histograms at (ε_hist, δ_hist)
    and AboveThreshold instances at ε₀ on disjoint rounds give (ε, δ) for any D, N_0 and
    thresholds — by basic composition with ``accounting="paper"`` (ε₀ = ε/2,
    (ε₀/D, δ/D)), by :func:`skdp.accounting.calibrate_plan` with ``"tight"``
    (:func:`~skdp.online._budget_split.adaptive_split`). ``n_layers`` and
    ``n_sequences`` override D and N_0 (N_0 is rounded up to a multiple of 2^{D+1}).

    Returns
    -------
    AdaptiveParameters
    """
    if preset not in ("practical", "paper"):
        raise ValueError(f"preset must be 'practical' or 'paper', got {preset!r}.")
    d = max(1, int(mistake_bound))
    if n_layers is not None:
        n_layers = int(n_layers)
    elif preset == "paper":
        n_layers = d
    else:
        n_layers = min(d, PRACTICAL_MAX_LAYERS)
    if n_layers < 1:
        raise ValueError(f"n_layers must be ≥ 1, got {n_layers}.")
    eps0, hist_eps, hist_delta = adaptive_split(epsilon, delta, n_layers, accounting).values
    probe = StableHistogram(hist_eps, hist_delta, random_state=0)
    hist_error = probe.max_error()
    release_threshold = probe.noise_bound + 2
    unit = 2 ** (n_layers + 1)
    log_t = math.log(horizon)
    if preset == "paper":
        margin = 8.0 * (log_t + math.log(6.0 * horizon / beta)) / eps0
        # M_D = 128·2^{−6·2^D}·N_0·2^{−D} must reach max(4 ln(3T/β), 4·error).
        need = max(4.0 * math.log(3.0 * horizon / beta), 4.0 * hist_error)
        log2_n0 = max(6.0 * 2.0**n_layers + n_layers,
                      6.0 * 2.0**n_layers + n_layers + math.log2(need / 128.0))
    else:
        margin = 4.0 / eps0 * math.log(2.0 * horizon / beta)
        log2_n0 = math.log2(max(4 * PRACTICAL_LAYER1_PAIRS * release_threshold,
                                PRACTICAL_MIN_SEQUENCES))
    if n_sequences is not None:
        log2_n0 = math.log2(max(int(n_sequences), unit))
    if log2_n0 > math.log2(MAX_SEQUENCES):
        raise ValueError(
            f"preset={preset!r} needs N_0 ≈ 2^{log2_n0:.1f} sequences (d = {d}, "
            f"D = {n_layers} layers): more than the {MAX_SEQUENCES} that fit in memory. "
            "The paper's constants are astronomically large for d ≥ 2; use "
            "preset='practical' or set n_layers / n_sequences."
        )
    n0 = unit * math.ceil(2.0**log2_n0 / unit - 1e-9)
    if preset == "paper" and n0 > horizon:
        raise ValueError(
            f"preset='paper' needs N_0 = {n0} sequences: the first hypothesis alone is kept "
            f"for ≥ N_0 mistakes, beyond the horizon n_rounds = {horizon}. Use a longer "
            "horizon, preset='practical', or n_sequences."
        )
    sizes = [n0 >> s for s in range(n_layers + 1)]
    if preset == "paper":
        svt = tuple(float(n) + margin for n in sizes)
        keep = tuple(_paper_keep(n, s) for s, n in enumerate(sizes))
    else:
        svt = tuple(n / 2.0 + margin for n in sizes)
        keep = tuple(float(release_threshold) for _ in sizes)
    if max_list_size is None:
        # A released hypothesis holds ≥ keep − error ≥ 2 pairs: the list cannot be longer.
        max_list_size = max(1, sizes[1] // 4)
    if max_switches is None:
        max_switches = 1 + n_layers * max_list_size
    return AdaptiveParameters(
        preset=preset, n_layers=n_layers, n_sequences=n0, epsilon=float(epsilon),
        delta=float(delta), epsilon_svt=eps0, hist_epsilon=hist_eps,
        hist_delta=hist_delta, hist_error=int(hist_error), horizon=int(horizon),
        beta=float(beta), svt_margin=float(margin), svt_thresholds=svt,
        keep_thresholds=keep, max_list_size=int(max_list_size),
        max_switches=int(max_switches), accounting=accounting,
    )


class LiWangYeCore:
    """Algorithm 2 of Li, Wang & Ye over a base learner (state only; no validation).

    Parameters
    ----------
    prototype : MistakeBoundedLearner
        The fresh base learner A(∅); copied, never mutated.
    params : AdaptiveParameters
    new_rng : callable
        ``new_rng(index)`` returns a NEW numpy Generator for event ``index``, independent of
        the data (the estimator keys it by its stream seed).
    svt_factory, histogram_factory : callable, optional
        Build the AboveThreshold instances / histogram mechanisms (tests swap in broken
        variants).

    Attributes
    ----------
    layer : int
        s.
    hypothesis : MistakeBoundedLearner
        A learner whose hypothesis is the released h_t (the head of L_s).
    n_switches : int
        AboveThreshold ⊤ answers so far.
    n_histograms : int
        PrivateHistogram calls so far (≤ D).
    list_sizes : list of int
        |L_s| as released, s = 0 … layer.
    halted : str or None
        Why the learner stopped updating (a cap), None while it learns.
    """

    # Event indices of the keyed generators: (layer or switch) × roles + role.
    _ROLE_SVT, _ROLE_UPDATE, _ROLE_HIST, _ROLE_INSERT, _N_ROLES = 0, 1, 2, 3, 4

    def __init__(self, prototype, params, new_rng, *, svt_factory=None,
                 histogram_factory=None):
        self._start(prototype, params, new_rng, svt_factory)
        self._histogram_factory = histogram_factory or StableHistogram
        key0 = prototype.hypothesis_key()
        n0 = params.n_sequences
        self._seqs = [prototype] * n0  # copy-on-write: every sequence starts empty
        self._keys = [key0] * n0
        self._open = np.ones(n0 // 2, dtype=bool)
        self._codes = np.zeros(n0 // 2, dtype=np.intp)
        self._reps = [prototype]
        self._list = [(key0, prototype)]
        self._insert_rng = new_rng(self._ROLE_INSERT)
        self._svt = self._new_svt()

    def _start(self, prototype, params, new_rng, svt_factory):
        """The state every release rule starts from: layer 0, h_1 = A(∅), no switch."""
        self.params = params
        self._new_rng = new_rng
        self._svt_factory = svt_factory or AboveThreshold
        self.layer = 0
        self.list_sizes = [1]
        self.hypothesis = prototype
        self.n_switches = 0
        self.n_histograms = 0
        self.halted = None
        self._count = 0

    # ----------------------------------------------------------------- mechanisms
    def _new_svt(self):
        p = self.params
        # Cumulative mistake counts of a fixed released h move by at most 1, all in the
        # same direction, between neighbouring streams: sensitivity 1, monotone.
        return self._svt_factory(
            p.svt_thresholds[self.layer], p.epsilon_svt, sensitivity=1.0, max_positives=1,
            monotonic=True,
            random_state=self._new_rng(self.n_switches * self._N_ROLES + self._ROLE_SVT))

    def predict(self, x):
        """±1 labels of the released hypothesis at domain indices x."""
        return self.hypothesis.predict(x)

    # ----------------------------------------------------------------- one block
    def scan(self, x, y, wrong):
        """Process rounds until AboveThreshold says ⊤; return that row's index, or −1.

        ``wrong`` are the released hypothesis' mistakes at (x, y). Rows up to the returned
        one (all rows for −1) are fully processed: insertions and AboveThreshold queries;
        the caller then calls :meth:`switch`.
        """
        counts = self._count + np.cumsum(wrong)
        answers = self._svt.process(counts, stop_after_positive=True)
        stop = answers.size
        self._insert(x[:stop], y[:stop])
        if answers.size and answers[-1]:
            self._count = 0
            return stop - 1
        self._count = int(counts[-1])
        return -1

    def _insert(self, x, y):
        """Alg 2, lines 7–9 for a block of rounds, vectorised.

        One uniform double per round (so blocks cut anywhere draw the same i_t); pair
        i_t's first sequence gets (x_t, y_t) iff the pair is open (agrees, not ⊥, no input
        yet this layer) and its hypothesis errs at x_t. Only the first such round per pair
        can insert: afterwards the pair collides.
        """
        n_pairs = self._open.size
        u = self._insert_rng.random(x.size)
        pair = np.minimum((u * n_pairs).astype(np.intp), n_pairs - 1)
        rows = np.flatnonzero(self._open[pair])
        if rows.size == 0:
            return
        if len(self._reps) == 1:  # e.g. layer 0: one hypothesis for every open pair
            errs = self._reps[0].predict(x[rows]) != y[rows]
        else:
            codes = self._codes[pair[rows]]
            errs = np.zeros(rows.size, dtype=bool)
            for code in np.unique(codes).tolist():
                sel = codes == code
                errs[sel] = self._reps[code].predict(x[rows[sel]]) != y[rows[sel]]
        rows = rows[errs]
        if rows.size == 0:
            return
        if rows.size == 1:
            pairs, first = pair[rows], np.zeros(1, dtype=np.intp)
        else:
            pairs, first = np.unique(pair[rows], return_index=True)
        for i, r in zip(pairs.tolist(), rows[first].tolist(), strict=True):
            j = 2 * i
            learner = self._seqs[j].copy()
            learner.update(int(x[r]), int(y[r]))
            self._seqs[j] = learner
            self._keys[j] = learner.hypothesis_key()
            self._open[i] = False

    # ----------------------------------------------------------------- switches
    def switch(self):
        """AboveThreshold said ⊤: drop the head of L_s, go up layers while L_s is empty.

        Returns the reason the learner halts (a cap), or None.
        """
        p = self.params
        self.n_switches += 1
        self._list.pop(0)
        while not self._list and self.layer < p.n_layers:
            self._update()
            self._release_list()
        if not self._list:
            self.halted = (f"the list of frequent hypotheses of its last layer (D = "
                           f"{p.n_layers}) is exhausted (the stream may not be realizable "
                           "by the class)")
        elif self.n_switches >= p.max_switches:
            self.halted = f"made its maximum of {p.max_switches} switches"
        if self.halted is not None:
            return self.halted
        self.hypothesis = self._list[0][1]
        self._svt = self._new_svt()
        return None

    def _update(self):
        """Alg 1 (Update): layer s → s + 1."""
        rng = self._new_rng(self.layer * self._N_ROLES + self._ROLE_UPDATE)
        n_next = len(self._seqs) // 2
        # π and every ȳ are drawn whatever the data, so neighbouring streams can be
        # coupled on them (the privacy proof's "one sequence differs per layer").
        perm = rng.permutation(n_next)
        labels = rng.choice(np.array([-1, 1]), size=n_next)
        seqs, keys = self._seqs, self._keys
        new_seqs, new_keys = [None] * n_next, [None] * n_next
        for i in range(n_next):
            a, b = seqs[2 * i], seqs[2 * i + 1]
            ka, kb = keys[2 * i], keys[2 * i + 1]
            if ka is None or kb is None or ka == kb:
                continue
            xbar = first_disagreement(a, b)  # Alg 1 line 6: the first one in domain order
            ybar = int(labels[i])
            loser = a if a.predict_one(xbar) != ybar else b
            learner = loser.copy()
            learner.update(xbar, ybar)
            new_seqs[perm[i]] = learner
            new_keys[perm[i]] = learner.hypothesis_key()
        self._seqs, self._keys = new_seqs, new_keys
        self.layer += 1

    def _release_list(self):
        """Alg 2, lines 18–20: V_s, PrivateHistogram(ε₀/D, δ/D), keep the frequent ones."""
        p, s = self.params, self.layer
        keys = self._keys
        n_pairs = len(keys) // 2
        agree = np.array([ka is not None and ka == kb
                          for ka, kb in zip(keys[0::2], keys[1::2], strict=True)], dtype=bool)
        values = [keys[2 * i + 1] for i in np.flatnonzero(agree).tolist()]
        hist = self._histogram_factory(
            p.hist_epsilon, p.hist_delta,
            random_state=self._new_rng(s * self._N_ROLES + self._ROLE_HIST))
        release = hist.release(values)
        self.n_histograms += 1
        kept = [(int(c), k) for k, c in zip(release.items.tolist(), release.counts.tolist(),
                                             strict=True) if c >= p.keep_thresholds[s]]
        # Highest released counts first (post-processing; ties keep the release's random
        # order), at most max_list_size.
        kept.sort(key=lambda ck: -ck[0])
        kept = kept[: p.max_list_size]
        # Pairs of the new layer: open iff they agree; one code (and one representative
        # learner) per distinct hypothesis.
        codes, learners, code_of = np.zeros(n_pairs, dtype=np.intp), [], {}
        for i in np.flatnonzero(agree).tolist():
            k = keys[2 * i + 1]
            if k not in code_of:
                code_of[k] = len(learners)
                learners.append(self._seqs[2 * i + 1])
            codes[i] = code_of[k]
        self._list = [(k, learners[code_of[k]]) for _, k in kept]
        self.list_sizes.append(len(self._list))
        self._open = agree
        self._codes = codes
        self._reps = learners
