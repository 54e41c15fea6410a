"""Li, Wang & Ye's private online learner against an adaptive adversary (§3, Alg 1–2)."""

import numbers
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval, StrOptions

from .._validation import RANDOM_STATE_CONSTRAINT
from ..accounting import PrivacyBudget
from ._adaptive_core import LiWangYeCore, resolve_adaptive_parameters
from ._base import PrivateOnlineDomainClassifier
from ._budget_split import ACCOUNTING
from ._consistent_release import (
    ConsistentReleaseCore,
    class_errors_for,
    resolve_consistent_parameters,
)
from ._soa import estimator_base_learner

__all__ = ["AdaptivePrivateOnlineClassifier"]

#: Horizon T of a ``partial_fit`` stream when ``n_rounds`` is None.
DEFAULT_STREAM_HORIZON = 10**6


class _KeyedRngs:
    """``new_rng(index)``: event ``index``'s generator of the stream's
    :class:`~skdp._streams.StreamNoise` (once; its key is then erased); picklable."""

    def __init__(self, noise):
        self.noise = noise

    def __call__(self, index):
        return self.noise.generator(index)


class AdaptivePrivateOnlineClassifier(PrivateOnlineDomainClassifier):
    """Private online learner of a Littlestone class against an adaptive adversary.

    Algorithm 2 of Li, Wang & Ye (with their ``Update``, Algorithm 1) over a finite
    class: X holds real features read through the class's public discretisation
    (default :class:`~skdp.hypotheses.MeanThresholds`), or domain indices (shape (n, 1),
    integers in [0, N)) for a class without one; each row is predicted
    with the *released* hypothesis h_t, then used. The learner keeps N_0 sibling sequences
    of a deterministic mistake-bounded base learner (the SOA by default) in layers
    s = 0 … D with N_s = N_0/2^s sequences, and a list L_s of frequent hypotheses released
    by a PrivateHistogram. It releases the head of L_s until AboveThreshold (ε₀ = ε/2, paper)
    sees about N_s (paper; N_s/2 practical) mistakes of it, then the next one; each
    round's example is appended to a uniformly random agreeing pair whose hypothesis errs
    on it. When L_s is exhausted, ``Update`` merges every colliding pair with a
    tournament example (random label) into a randomly permuted layer s + 1, and a
    PrivateHistogram ((ε₀/D, δ/D), paper) of the hypotheses of its agreeing pairs gives L_{s+1}.
    Between switches h_t is fixed, so blocks are processed vectorised; memory is the N_0
    sequences (copy-on-write) and the lists.

    Parameters
    ----------
    epsilon : float, default=1.0
        ε of the whole stream (every released hypothesis of every round).
    delta : float, default=1e-6
        δ ∈ (0, 1) of the whole stream (the histograms need δ > 0).
    hypothesis_class : FiniteClass, label matrix, version space, MistakeBoundedLearner or None
        The class (its SOA is the base learner: ``FiniteClass``/label matrix for small
        classes, ``ThresholdVersionSpace(N)`` / ``PointVersionSpace(N)`` for large N), or
        any fresh :class:`~skdp.online.MistakeBoundedLearner` (copied, never mutated).
        ``None`` (default): :class:`~skdp.hypotheses.MeanThresholds` () — two-sided
        thresholds on the mean of the features clipped to public bounds ([−1, 1] with a
        warning; pass ``MeanThresholds(bounds=…)``), 16 bins, Ldim 5. A class with a
        public discretisation (``MeanThresholds``, ``RealThresholds``) reads real
        features; any other reads domain indices, X of shape (n, 1).
    n_rounds : int, optional
        T, the horizon (utility only: in the AboveThreshold thresholds and, for
        ``preset="paper"``, N_0). None: ``len(X)`` in ``fit``, 10⁶ for a ``partial_fit``
        stream. Rows beyond T are processed under the same (ε, δ), with a warning.
    beta : float, default=0.05
        Failure probability β of the mistake bound (utility only).
    preset : {"practical", "paper"}, default="practical"
        Constants of the paper or practical ones (see Notes); privacy is the same.
    n_layers : int, optional
        Override D, the number of layers = of PrivateHistogram calls.
    n_sequences : int, optional
        Override N_0 (rounded up to a multiple of 2^{D+1}).
    max_list_size : int, optional
        Cap on the list size ``len(L_s)`` (default N_1/4: a released hypothesis holds ≥ 2 pairs).
    max_switches : int, optional
        Cap on the number of switches of the released hypothesis
        (default 1 + D·max_list_size); with ``release="consistent"`` the cap c on
        releases (default 12), a privacy cap.
    on_inconsistent : {"skip", "bottom"}, optional
        The SOA base learner's reaction to an example contradicting its version space
        (:class:`~skdp.online.SOALearner`); ignored for a given MistakeBoundedLearner.
        Default ``"skip"`` (practical: a tournament example with the wrong random label
        cannot destroy a sequence that pinned the target), ``"bottom"`` (paper, ⊥).
    release : {"consistent", "histogram"}, optional
        What a switch releases. ``"histogram"``: Alg 2 (copies, tournament examples, a
        PrivateHistogram of the hypotheses their pairs agree on). ``"consistent"``:
        skdp's variant — one exponential-mechanism draw over the whole class, scored by
        the number of rows so far each hypothesis contradicts, at most c =
        ``max_switches`` (default 12) draws; ``n_layers``, ``n_sequences`` and
        ``max_list_size`` do not apply (lemma and proof in
        :class:`~skdp.online._consistent_release.ConsistentReleaseCore`). Default:
        ``"consistent"`` with ``preset="practical"`` when the class is a threshold,
        point or finite class (``"histogram"`` for a user's MistakeBoundedLearner),
        ``"histogram"`` with ``preset="paper"``.
    accounting : {"tight", "paper"}, default="tight"
        ``"paper"``: ε₀ = ε/2 for the AboveThreshold instances and (ε₀/D, δ/D) per
        histogram (basic composition). ``"tight"``: the same weights scaled as far as
        :func:`skdp.accounting.calibrate_plan` allows, with the split of δ whose
        histogram noise bound is smallest (the paper's split is a candidate: with one
        sparse vector and D ≤ 2 histograms it usually wins, so both give the same
        numbers at the practical defaults).
    classes : array-like of shape (n_classes,), default=None
        Two labels, or C > 2 learnt one-vs-rest (``skdp._multiclass``: C copies
        at the optimal-composition share of (ε, δ), the budget charged once).
        The label set, a **public** parameter: ``classes_`` is exactly
        ``np.unique(classes)`` (``classes_[1]`` is the +1 label) whatever ``y``
        holds, and labels of ``y`` outside it raise ``ValueError``. ``None``: read
        from ``y`` as scikit-learn does (``partial_fit`` then needs its own
        ``classes`` on the first call), with a
        :class:`~skdp.exceptions.PrivacyLeakWarning` — the label set is then a
        statistic of the private data that the guarantee does not cover.
    budget : PrivacyBudget, optional
        Charged (ε, δ) by ``fit`` and by the first ``partial_fit`` of a stream.
    random_state : None, int, numpy Generator, RandomState or TestingSeed, default=None
        ``None``: noise from OS entropy; the stream's keys derive only events not yet
        run and a copy holds none (see :mod:`skdp.base`). A learner that can still
        continue its stream is private running state, not a publishable model. A seed
        is a testing mode: the noise is reproducible from ``get_params()``, a
        :class:`~skdp.exceptions.PrivacyWarning` says so, and with a ``budget`` it is
        refused unless wrapped as ``skdp.TestingSeed(seed)``.
    verbose : int, default=0
        Print each switch and layer change.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[1]`` is the +1 label of the class.
    parameters_ : AdaptiveParameters
        D, N_0, ε₀, the histogram's (ε, δ) and error, the thresholds, the caps.
    mistake_bound_ : int
        d, the base learner's mistake bound (Ldim for the SOA).
    layer_ : int
        Current layer s.
    list_sizes_ : list of int
        List sizes ``len(L_s)`` as released, s = 0 … ``layer_``.
    n_switches_ : int
        Switches of the released hypothesis (AboveThreshold ⊤ answers).
    switch_rounds_ : list of int
        Rounds (0-based) of the switches; the first is the length of the forced phase
        (every earlier round predicts with A(∅)).
    released_is_initial_ : bool
        True while the released hypothesis is A(∅).
    n_histograms_ : int
        PrivateHistogram calls (≤ D).
    status_ : str
        ``"learning"``, or ``"stopped: <reason>"`` once a cap was hit.
    updates_stopped_ : bool
        True once a cap was hit: the learner keeps predicting its last released
        hypothesis and no longer updates (one :class:`~skdp.exceptions.PrivacyWarning`).
    stop_reason_ : str or None
    n_rounds_seen_ : int
    n_rounds_ : int
        The horizon T used.
    n_domain_, n_features_in_ : int
    privacy_spent_ : PrivacyCost
        (ε, δ) of this stream.

    Notes
    -----
    Which constants are whose. ``preset="paper"``: D = d, AboveThreshold threshold
    N_s + 8(ln T + ln(6T/β))/ε₀, keep h with released count ≥ 3M_s/4,
    M_s = 128·2^{−6·2^s}·N_s, N_0 ≥ 2^{6·2^d + d} with M_s ≥ 4 ln(3T/β) and
    M_s ≥ 4·(histogram error) — refused (ValueError, nothing spent) when N_0 exceeds
    2²² sequences or T, i.e. for every d ≥ 2 (N_0 ≈ 2^{26+} already at d = 2).
    ``preset="practical"`` (default) keeps every mechanism and the accounting and
    changes constants: D = 1, threshold N_s/2 + (4/ε₀)·ln(2T/β), keep every
    hypothesis the histogram releases (released counts ≥ A + 2, its own threshold),
    N_0 ≈ 16·(A + 2), and the SOA skips contradicting examples (derivations and
    measurements in ``resolve_adaptive_parameters``).

    The default release (``release="consistent"``, practical preset, threshold / point /
    finite classes) keeps Alg 2's switching rule and replaces the copies and their
    histogram by one exponential-mechanism draw over the class, scored by how many rows
    so far each hypothesis contradicts, at most c = 12 times
    (:class:`~skdp.online._consistent_release.ConsistentReleaseCore`, with its lemma).
    Why: Alg 2 releases only hypotheses that many copies agree on *exactly*; an
    adversary that shows the released hypothesis' errors (legitimately: it sees h_t)
    feeds the copies one side of the target each, they pin different hypotheses, and
    nothing is ever releasable (thresholds on 2¹⁶ points, ε = 1: 9.3·10³ mistakes in 10⁴
    rounds with ``release="histogram"``).

    Where it learns (measured, ``benchmarks/results/online_littlestone.md``), with the
    consistency release: thresholds on 2¹⁶ points at ε = 1 against the binary-search and
    the mistake-seeking adaptive adversaries (a few hundred mistakes over ≤ 8 releases,
    then flat), intervals and rectangles against adaptive adversaries, and oblivious
    streams. Its forced phase (rounds before the first switch) is the AboveThreshold
    margin (4/ε₀)·ln(2T/β) and shrinks as 1/ε. With ``release="histogram"`` it learns
    only streams on which one example of each error pins the target (the binary-search
    adversary: ≈ 500 rounds at ε = 1, then flat); elsewhere its layer-1 list comes out
    empty and it stops. Not realizable streams: use
    :class:`~skdp.online.PrivateExpertsClassifier` or
    :class:`~skdp.online.BatchSanitizedOnlineClassifier`. With D < d the realizable
    mistake bound no longer applies: if L_D is exhausted the learner stops updating
    (``status_``); after c consistency releases it stops too and keeps the last one.
    ``beta=0.05``, ``delta=1e-6`` and the 10⁶ horizon of ``partial_fit`` streams are
    practical defaults.
    The SOA's tie-break and the tournament point (the first disagreement in domain order)
    are skdp's choices; the paper allows any.

    Internal, non-private state is kept in private attributes that must not be
    released: the algorithm's state ``_core`` (the private sequences, the live
    AboveThreshold, the generators) and the exact online mistakes ``_n_mistakes``
    (computed from the private labels; an evaluation statistic for synthetic data).
    The public counters (``layer_``, ``list_sizes_``, ``n_switches_``,
    ``n_histograms_``, ``status_``) are functions of the released outputs.

    Adversary model. An adaptive adversary may choose (x_t, y_t) after seeing the released
    hypotheses h_1, …, h_t — h_t itself included, since h_t is fixed before round t's
    example is read (``AdaptiveThresholdAdversary(sees_current=True)`` probes it). It
    never sees the internal randomness: insertion pairs i_t, permutations π, tournament
    labels ȳ, noise. The privacy guarantee covers this game (below); the O_d(log T) mistake
    bound is the paper's for the paper preset and realizable streams.

    Privacy
    -------
    (ε, δ)-differentially private for the whole sequence of released hypotheses, for
    *every* stream — realizable or not — in the adaptive sense of Li, Wang & Ye, Def 2.4
    (Jain et al. 2023): an adversary that sees h_1 … h_t before choosing each example and
    picks one challenge round with two candidate examples cannot tell which one was used
    beyond (ε, δ). Proof (Li, Wang & Ye, Lemma B.3): the AboveThreshold instances
    (ε₀-DP each, Lyu, Su & Li 2017, Thm 2, on monotone sensitivity-1 mistake counts) run
    on disjoint rounds, so together they are one ε₀-DP interactive mechanism (Lemma A in
    :class:`~skdp.online._consistent_release.ConsistentReleaseCore`, step (i)); given the
    public randomness (i_t, π,
    ȳ, drawn whatever the data), changing one example changes at most one sequence per
    layer, hence one element of each V_s, and each of the at most D PrivateHistograms is
    (ε_hist, δ_hist)-DP (:class:`~skdp.mechanisms.StableHistogram`); one pure ε₀-DP part
    and D (ε_hist, δ_hist)-DP parts compose to (ε, δ) — by basic composition with
    ``accounting="paper"`` ((2ε₀, δ) = (ε, δ) for ε₀ = ε/2, (ε₀/D, δ/D)), by the
    numerical accountant with ``"tight"`` (``parameters_`` holds the split). The
    AboveThreshold part runs across the whole stream, interleaved with the
    histograms, so this is a *concurrent* composition of an interactive mechanism
    with non-interactive ones: basic composition holds for it (Lyu 2022), and so does
    every (ε, δ) / f-DP bound the accountant's PLD computes (Vadhan & Zhang 2023) and
    its Rényi bound (Lyu 2022) — step (iii) of the same lemma. D is a hard
    cap (it bounds the histograms), so the guarantee holds whatever the stream;
    ``max_switches``/``max_list_size`` cap time and memory (privacy needs no cap on
    switches: the instances run on disjoint rounds). ``release="consistent"``: the
    same ε₀-DP AboveThreshold part and at most c = ``max_switches`` exponential
    mechanisms (ε_rel-bounded-range each, score sensitivity 1), composed by the
    accountant (hard cap c; lemma and proof in
    :class:`~skdp.online._consistent_release.ConsistentReleaseCore`). ``fit`` and the first
    ``partial_fit`` of a stream charge (ε, δ); later blocks continue the same release.
    The fitted object holds private state (the sequences): publish predictions, not the
    pickled estimator. Copies of a fitted stream share a ledger: continuing two copies is
    refused (:class:`~skdp.exceptions.PrivacyError`). ``predict_proba`` (the released
    label as a smoothed one-hot, γ = ``PROBA_SMOOTHING`` = 0.1) and ``decision_function``
    (its ±1 label) are post-processing of the released hypothesis: no further cost.

    Mistakes (paper preset, realizable stream, any adaptive adversary): at most
    O(2^{O(2^d)}(log T + log(1/β) + log(1/δ))/ε) with probability 1 − β (Thm 3.1).

    References
    ----------
    B. Li, W. Wang, P. Ye. Private Online Learning against an Adaptive Adversary:
    Realizable and Agnostic Settings, 2025, §3 (Alg 1, Alg 2, Thm 3.1), App. B.
    N. Golowich, R. Livni. Littlestone classes are privately online learnable. NeurIPS
    2021. M. Lyu, D. Su, N. Li. Understanding the sparse vector technique for
    differential privacy. PVLDB 10(6), 2017. X. Lyu. Composition theorems for
    interactive differential privacy. NeurIPS 2022. S. Vadhan, W. Zhang. Concurrent
    composition theorems for differential privacy. STOC 2023.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.hypotheses.littlestone import PointVersionSpace
    >>> from skdp.online import AdaptivePrivateOnlineClassifier
    >>> x = np.random.default_rng(0).integers(0, 64, size=5000)
    >>> y = (x == 7).astype(int)
    >>> clf = AdaptivePrivateOnlineClassifier(epsilon=4.0, hypothesis_class=PointVersionSpace(64),
    ...                                       random_state=0).fit(x[:, None], y)
    >>> clf.privacy_spent_.epsilon, clf.n_histograms_ <= clf.parameters_.n_layers
    (4.0, True)
    """

    _parameter_constraints: dict = {
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "delta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "hypothesis_class": "no_validation",
        "n_rounds": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "beta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "preset": [StrOptions({"practical", "paper"})],
        "n_layers": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_sequences": [Interval(numbers.Integral, 2, None, closed="left"), None],
        "max_list_size": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "max_switches": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "on_inconsistent": [StrOptions({"skip", "bottom"}), None],
        "release": [StrOptions({"consistent", "histogram"}), None],
        "accounting": [StrOptions(set(ACCOUNTING))],
        "budget": [PrivacyBudget, None],
        "random_state": [*RANDOM_STATE_CONSTRAINT],
        "verbose": ["verbose"],
        "classes": ["array-like", None],
    }

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-6, hypothesis_class: Any = None,
                 n_rounds: int | None = None, beta: float = 0.05, *,
                 preset: str = "practical", n_layers: int | None = None,
                 n_sequences: int | None = None, max_list_size: int | None = None,
                 max_switches: int | None = None, on_inconsistent: str | None = None,
                 accounting: str = "tight", budget: PrivacyBudget | None = None,
                 random_state: int | np.random.Generator | np.random.RandomState | None = None,
                 verbose: int = 0,
                 classes: ArrayLike | None = None, release: str | None = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.hypothesis_class = hypothesis_class
        self.n_rounds = n_rounds
        self.beta = beta
        self.preset = preset
        self.n_layers = n_layers
        self.n_sequences = n_sequences
        self.max_list_size = max_list_size
        self.max_switches = max_switches
        self.on_inconsistent = on_inconsistent
        self.accounting = accounting
        self.budget = budget
        self.random_state = random_state
        self.verbose = verbose
        self.classes = classes
        self.release = release

    # ----------------------------------------------------------------- stream hooks
    def _base_learner(self):
        return estimator_base_learner(self, self.preset == "paper")

    def _prepare_stream(self, from_fit):
        self._check_privacy_params()
        learner = self._base_learner()
        scorer = class_errors_for(learner)
        release = self.release or ("consistent" if self.preset == "practical"
                                   and scorer is not None else "histogram")
        if release == "consistent" and (scorer is None or self.preset == "paper"):
            raise ValueError(
                f"{type(self).__name__}: release='consistent' needs preset='practical' "
                "and a threshold, point or finite class (not a MistakeBoundedLearner); "
                "use release='histogram'.")
        return learner.n_domain, {"learner": learner, "from_fit": from_fit,
                                  "scorer": scorer if release == "consistent" else None}

    def _before_block(self, n_rows, first_call, from_fit, plan):
        if first_call:  # resolve (and maybe refuse) the parameters before the charge
            horizon = self.n_rounds or (n_rows if from_fit else DEFAULT_STREAM_HORIZON)
            epsilon, delta = self._check_privacy_params()
            if plan["scorer"] is not None:
                plan["params"] = resolve_consistent_parameters(
                    epsilon, delta, horizon, self.beta, max_switches=self.max_switches,
                    accounting=self.accounting)
            else:
                plan["params"] = resolve_adaptive_parameters(
                    epsilon, delta, horizon, self.beta, plan["learner"].mistake_bound,
                    preset=self.preset, n_layers=self.n_layers,
                    n_sequences=self.n_sequences, max_list_size=self.max_list_size,
                    max_switches=self.max_switches, accounting=self.accounting)
        super()._before_block(n_rows, first_call, from_fit, plan)
        if not first_call:
            seen = self.n_rounds_seen_ + n_rows
            if seen > self.n_rounds_ and not self._horizon_warned:
                self._horizon_warned = True
                warnings.warn(
                    f"{type(self).__name__}: the stream passed n_rounds={self.n_rounds_} "
                    "rows. Privacy is unchanged (it does not depend on T), but the "
                    "AboveThreshold thresholds assumed T rows.", UserWarning, stacklevel=5)

    def _init_stream(self, plan):
        params = plan["params"]
        self.parameters_ = params
        self.n_rounds_ = params.horizon
        self.mistake_bound_ = plan["learner"].mistake_bound
        self._horizon_warned = False
        self._scorer = plan["scorer"]
        self._core = self._make_core(plan["learner"], params)
        self._initial_key = plan["learner"].hypothesis_key()  # A(∅): public
        self.switch_rounds_ = []
        self._sync()

    def _make_core(self, learner, params):
        """The algorithm's state (tests override this to build broken variants)."""
        if params.release == "consistent":
            return ConsistentReleaseCore(learner, params, _KeyedRngs(self._noise),
                                         self._scorer)
        return LiWangYeCore(learner, params, _KeyedRngs(self._noise))

    def _sync(self):
        core = self._core
        self.layer_ = core.layer
        self.list_sizes_ = list(core.list_sizes)
        self.n_switches_ = core.n_switches
        self.n_histograms_ = core.n_histograms
        self.status_ = "learning" if core.halted is None else f"stopped: {core.halted}"
        self.released_is_initial_ = core.hypothesis.hypothesis_key() == self._initial_key

    def _released_predict(self, x):
        return self._core.predict(x)

    def _scan(self, x, y, wrong):
        return self._core.scan(x, y, wrong)

    def _step(self, x, y, wrong):
        layer = self._core.layer
        self.switch_rounds_.append(self.n_rounds_seen_ - 1)
        reason = self._core.switch()
        self._sync()
        if self.verbose:
            print(f"[{type(self).__name__}] round {self.n_rounds_seen_}: switch "
                  f"{self.n_switches_}, layer {layer} -> {self.layer_}, "
                  f"|L_s| = {self.list_sizes_[-1]}, mistakes {self._n_mistakes}")
        if reason is not None:
            self._stop_updating(reason)

    def _fresh_predict_one(self, x):
        return self._base_learner().predict_one(x)
