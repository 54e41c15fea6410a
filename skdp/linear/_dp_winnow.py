"""DP-Winnow (Bun & Fang, Alg 3): the released weights are the empirical distribution
of m exponential-mechanism draws, redrawn at each update — updates on a public
schedule (default, a practical variant) or where a sparse-vector instance fires."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._validation import RANDOM_STATE_CONSTRAINT
from ..accounting import PrivacyBudget
from ..base import PrivateEstimatorMixin
from ..mechanisms import exponential_mechanism
from ..streams._guard import CHECK_INDEX, ConstantGuard, constant_proba
from ._base import MultiplicativeWeightsMixin, _prediction_errors
from ._horizon import DEFAULT_STREAM_HORIZON, StreamHorizonMixin
from ._scheduled import ScheduledUpdatesMixin
from ._sparse_vector import SparseVectorUpdatesMixin

if TYPE_CHECKING:
    from sklearn.utils import Tags

__all__ = ["DPWinnowClassifier"]

# Sensitivity of the scores S_j = Σ ŷ x̂_j: one example's term moves by ≤ 2.
_SCORE_SENSITIVITY = 2.0


class DPWinnowClassifier(PrivateEstimatorMixin, ScheduledUpdatesMixin,
                         SparseVectorUpdatesMixin, StreamHorizonMixin,
                         MultiplicativeWeightsMixin, ClassifierMixin, BaseEstimator):
    """Differentially private Winnow for online large-margin halfspaces (Bun & Fang, Alg 3).

    Predicts with *released* weights w̃ only: the empirical distribution of m draws
    j ~ w, w ∝ exp(η·S) (the exponential mechanism with scores S, sensitivity 2,
    ε = 4η), S = Σ ŷ·ẑ over the rows used for updates. When to update:

    * ``setting="scheduled"`` (default; a practical variant with its own privacy
      proof, Lemma S below): at the public rows B, 2B, …, (K − 1)B and T. The update
      folds in the
      first ≤ M mistakes of its window (a batched multiplicative-weights step) and
      redraws w̃. No sparse vector: all of ε goes to the draws and, with an
      intercept, to one noisy label count that warm-starts the learner at a
      privately estimated constant. K = ⌈T/B⌉ is sized to the horizon; B, m, η, M come
      from public quantities (:mod:`skdp.linear._schedule`). A **learnability guard** computed
      from (ε, δ, ρ, T, d) alone decides whether the learner can learn within T rows;
      if not, ``fit`` warns and the estimator predicts the private constant instead
      (``constant_fallback_``), spending all of ε (its share, with the stream guard
      below) on that one count of the first call's rows — and, as the stream goes
      on, on a recount of each later ``partial_fit`` call's rows (disjoint rows:
      still ε in all); the newest counts predict, pooled until their rows are 16
      noise widths (``skdp.linear._scheduled.POOL_Z``): a change of the base rate
      is followed from the next call on.
    * ``setting="practical"`` / ``"theory"`` (Alg 3): AboveThreshold (threshold L,
      budget ε̂) watches the count of mistakes since the last update; when it fires,
      the first cached mistake updates S and w̃ is redrawn. ``"theory"`` uses the
      paper's constants (Thm 11–12); ``"practical"`` m = ⌈1/ρ⌉, L = 1/ε̂ and the
      Thm 12 fixed point K. Both are kept as references: at realistic ε they stay at
      chance level for 10⁶ rows (``benchmarks/results/winnow.md``).

    **Never worse than the private constant** (``"scheduled"`` with an intercept):
    once the constant is released (end of window 1), the estimator predicts it, and
    at the end of windows 2, 4, 8, 16, … (public) it releases a noisy comparison of
    the mistakes its released weights and the constant made over the windows since the
    previous check (Lemma C below); until the next check it predicts with whichever
    made fewer (``predicts_constant_``; the constant on ties). The learner keeps
    learning from the mistakes of its released weights either way. The comparison
    costs nothing extra in the plan: it shares the count's ε (its rows are disjoint
    from the count's).

    **The stream guard** (``guard=0.1``, a ``partial_fit`` stream): before each
    call's rows are learned from (every call but the stream's first), the mistakes
    the estimator's answer made on them — what ``predict`` gave for them — and the
    call's two class counts are released with noise at ``guard``·ε (Lemma G below;
    :class:`skdp.streams._guard.ConstantGuard`, shared with
    :class:`~skdp.streams.ContinualReleaseClassifier`). While, on some window of the
    last 1, 2, 4, … ≤ 64 checks, the constant label with the most noisy rows made
    fewer noisy mistakes than the estimator by more than 2 noise widths, the
    estimator answers with that constant (``guard_constant_``); the learner goes on
    learning either way, at ε·(1 − guard). This follows a stream whose base rate
    changes, which the comparison above (one constant, checks on doubling windows)
    does not: the learner forced to run (``window=256``) on a stream sorted by its
    label answers 0.2 error with it, 0.57–0.8 without (``tests/linear/
    test_dp_winnow_guard.py``). ``fit`` is one call, never checked: it runs
    unguarded at the full ε.

    After K updates the learner **stops updating** and keeps predicting with its last
    released weights (``updates_exhausted_``; one
    :class:`~skdp.exceptions.PrivacyWarning` when rows arrive after that).

    Parameters
    ----------
    epsilon : float, default=1.0
        ε of the whole stream (every prediction of every round).
    delta : float, default=1e-6
        δ ∈ (0, 1) of the whole stream.
    margin : float, default=0.1
        ρ ∈ (0, 1], the assumed margin of the target (utility only: it sizes m, M, B
        and the guard; K and L in the sparse-vector settings).
    n_rounds : int, optional
        T, the horizon (utility only): K = ⌈T/B⌉ windows for ``"scheduled"``;
        log(2T/β) in m and L for ``"theory"``. Pass the stream's expected length.
        ``None``: ``len(X)`` in ``fit``; 10⁶ for a ``partial_fit`` stream, with a
        ``UserWarning`` (most of ε would go to releases a shorter stream never
        reaches). ``fit`` on at most T/2 rows also warns; rows past T see
        ``beyond_horizon``.
    beta : float, default=0.05
        Failure probability β of the mistake bound (``"theory"`` only).
    setting : {"scheduled", "practical", "theory"}, default="scheduled"
        When to update (above). See :func:`~skdp.linear.solve_dp_winnow_parameters`
        for the sparse-vector settings.
    max_updates, n_samples : int, optional
        Override K and m; privacy (η, and ε̂) is recalibrated for them. With
        ``"scheduled"`` an override also bypasses the guard's fallback.
    threshold : float, optional
        Override the sparse-vector threshold L (sparse-vector settings only).
    window : int, optional
        Override B, the rows per window (``"scheduled"`` only; bypasses the guard).
    confidence : float, default=0.5
        c of Lemma 13 (``"theory"`` only; the paper's value).
    beyond_horizon : {"warn", "raise"}, default="warn"
        Rows past ``n_rounds``. Privacy does not depend on T (it is capped by K), so
        ``"warn"`` goes on under the same (ε, δ) and warns once that the utility
        guarantee assumed T rows; ``"raise"`` refuses such a block (ValueError,
        nothing spent or changed).
    guard : float in (0, 1) or None, default=0.1
        Share g of ε for the guard's private checks of a ``partial_fit`` stream (the
        learner then runs at ε·(1 − g)); ``None``: no checks. ``fit`` (one call) is
        never guarded and runs at ε.
    fit_intercept, double_features : bool, default=True
        Constant coordinate and (x, −x) doubling (Bun & Fang §4.3). The scheduled
        setting's label count, warm start and fallback need both.
    bounds : (lower, upper), default=None
        Public bounds on the features: X is clipped to them and mapped onto [−1, 1]
        (data-independent, no privacy cost; the privacy proof needs |x_j| ≤ 1, which
        the clip guarantees for any input). ``None``: clip to [−1, 1] and warn at
        ``fit`` (from the parameters only).
    classes : array-like of shape (n_classes,), default=None
        Two labels, or C > 2 learnt one-vs-rest (``skdp._multiclass``: C copies
        at the optimal-composition share of (ε, δ), the budget charged once).
        The label set, a **public** parameter: ``classes_`` is exactly
        ``np.unique(classes)`` whatever ``y`` holds (one label missing from ``y`` is
        fine), and labels of ``y`` outside it raise ``ValueError``. ``None``: read
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

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    coef_, intercept_ : ndarray
        Effective released weights (w̃⁺ − w̃⁻) on x and on the bias.
    weights_ : ndarray of shape (n_coords,)
        The released w̃ (multiples of 1/m; in the guard's fallback (1 ± b)/2 on the
        ±bias coordinates, b = 2c̃/n_c − 1 from the released count).
    parameters_ : DPWinnowSchedule or DPWinnowParameters
        The constants used, the guard's verdict (``learns``, ``rows_to_learn``) and
        ``privacy_events`` (what the run costs, for :func:`skdp.accounting.account`).
    n_rounds_ : int
        The horizon T used.
    n_updates_ : int
        Updates (= releases of w̃) so far, ≤ K.
    updates_exhausted_ : bool
        True once K updates were made: the learner no longer learns.
    predicts_constant_ : bool
        True while the last private comparison (or, before the first, the default)
        says the constant predicts better: ``predict``, ``decision_function`` and
        ``predict_proba`` then give the constant (``coef_`` stays the released w̃).
    n_recounts_ : int
        Recounts of the constant released in the guard's fallback.
    n_checks_ : int
        Private comparisons released so far.
    guard_constant_ : label or None
        The label the guard answers with (``predict``, ``decision_function`` ±1,
        ``predict_proba`` a point mass) instead of the estimator, or None.
    constant_fallback_ : bool
        True when the guard ruled learning out and the estimator predicts the private
        constant (``"scheduled"`` only).
    n_rounds_seen_ : int
        Rows consumed.
    privacy_spent_ : PrivacyCost
        (ε, δ) of this stream.

    Notes
    -----
    Where it learns (``setting="scheduled"``, δ = 10⁻⁶, d = 100 features; the guard's
    verdict, Y = learns within T rows; measured late error and cumulative mistakes
    per cell are in ``benchmarks/results/winnow_map.md``)::

        T      ρ \\ ε   1  2  4  8  16
        10⁵    1       Y  Y  Y  Y  Y
               1/3     Y  Y  Y  Y  Y
               1/5     .  .  Y  Y  Y
               1/11    .  .  .  .  .
        10⁶    1, 1/3, 1/5: Y at every ε;  1/11: ε ≥ 4

    d enters only through ln d′ (d = 500 moves ρ = 1/5 at T = 10⁵ and ρ = 1/11 at
    T = 10⁶ to ε ≥ 8).
    Elsewhere the estimator predicts the private constant and says so at ``fit``.
    Measured on majority and OR targets with these margins (the table in
    ``benchmarks/results/winnow_map.md``): wherever it runs the learner, its late
    mistake rate and its mistakes relative to the best constant in hindsight are
    given there; the fallback cells stay within a few percent of the best constant
    (the first count covers the first call, ``fit``'s every row).
    Decision lists of length r (:class:`OnlineDecisionListClassifier`) have margin
    1, 1/5, 1/13, 1/29 for r = 1, 2, 3, 4: r = 1 learns everywhere above, r = 2
    like ρ = 1/5, r = 3 only at T = 10⁶, ε ≥ 8, r ≥ 4 nowhere on this map.

    Defaults: ``confidence=0.5`` and the ``"theory"`` constants are Bun & Fang's;
    everything else (the schedule, m = ⌈9/ρ²⌉, the guard's model, ``margin=0.1``,
    ``delta=1e-6``) is a practical choice. Internal, non-private state lives in
    private attributes that must not be released: the exact scores and the online
    mistakes of the released weights (``_n_mistakes``, an evaluation statistic for
    synthetic data).

    Privacy
    -------
    (ε, δ)-DP for the whole sequence of released weights and predictions, for
    *every* stream — realizable or not, with any margin, against an adaptive
    adversary — w.r.t. streams that differ in one row (same length). ``fit`` and the
    first ``partial_fit`` of a stream charge (ε, δ); later ``partial_fit`` calls
    continue the same release and cost nothing more. The fitted object also holds
    *private* state needed to continue the stream (exact scores, pending batch):
    publish predictions or ``coef_``, not the pickled estimator. Copies of a fitted
    stream share a ledger: continuing two copies of one stream is refused
    (:class:`~skdp.exceptions.PrivacyError`).

    *Sparse-vector settings* — Bun & Fang, Thm 11 (Appendix C, "view 2"): at most K
    AboveThreshold instances (ε̂-DP each) and mK draws (4η-bounded-range each; the
    paper counts 2η, which holds only for {0, 1} features), calibrated jointly by the
    tight accountant (``accounting="paper"`` in the solver reproduces the paper's
    split). The cap K is enforced, not assumed.

    *Lemma S (scheduled).* Fix the public (T, B, K, m, M, η, ε_c, n_c) (the
    fallback takes n_c = min(T, n), n the first call's public row count). The release
    (c̃, w̃₁, …, w̃_K) — c̃ a geometric count of positive labels among the first n_c
    rows, w̃_k the m draws at the end of window k — is the adaptive composition of
    one ε_c-DP mechanism and mK mechanisms that are each 4η-bounded-range; it is
    therefore (ε, δ)-DP whenever the tight accountant certifies
    [PureDP(ε_c), mK × BoundedRange(4η)] at (ε, δ), which is how η is chosen
    (:func:`skdp.accounting.calibrate_plan`). Predictions, ``coef_``,
    ``decision_function`` and ``predict_proba`` are post-processing.

    *Proof.* Let the streams differ in row t*, in window i*. (1) The count has
    sensitivity 1: Δ = 1 geometric noise is ε_c-DP. (2) Condition on the released
    prefix (c̃, w̃₁, …, w̃_{k−1}); the adversary's rows are functions of it and agree
    off t*. In window i ≤ k the predicting weights are w̃_{i−1}, fixed by the prefix,
    so whether a row is a mistake depends on that row alone; the batch
    G_i = Σ ŷ·ẑ over the first ≤ M mistakes of window i is identical on both streams
    for i ≠ i*. In window i*, the mistake indicators differ at t* only, so the two
    "first ≤ M" sets differ by at most t* entering and one other row leaving (or t*
    changing its value): G_{i*} − G′_{i*} = a − b with a, b single-row terms in
    [−1, 1]^{d′} or 0, ‖·‖_∞ ≤ 2. The warm start is a function of c̃ (in the prefix).
    Hence the scores of release k differ by ‖S − S′‖_∞ ≤ 2, and a draw j ∝ exp(η S_j)
    has log-likelihood ratio η(S_j − S′_j) − log(Z/Z′), whose range over j is ≤ 4η:
    4η-bounded-range (Durfee & Rogers 2019). (3) After K windows nothing more is
    drawn (enforced), and with the guard's fallback only counts are released
    (ε_c = ε, or ε·(1 − guard)): the first over rows 1…n_c, then one recount over
    each later call's rows (public windows: the calls' ends, the adversary's choice
    given the prefix); each row lies in one of them, so given
    the prefix only the count holding t* differs (Δ = 1): ε-DP in all by parallel
    composition (audited exactly in ``tests/privacy/test_winnow_comparison_audit.py``,
    whose twin recounts cumulatively and measures 3ε). Adaptive composition of (1)
    and (2) (bounded-range mechanisms compose as (4η)²/8-zCDP each, Cesar & Rogers
    2021; the accountant uses their exact privacy-loss distribution) gives the claim.
    Nothing uses realizability, the margin or the order of rows beyond the public
    window boundaries. ∎

    *Lemma C (comparisons).* Check j releases D̃_j = D_j + Z_j, D_j = Σ over the rows
    of its windows (2^{j−1}, 2^j] of [w̃ wrong] − [constant wrong], Z_j discrete
    Laplace(2/ε_c). Given the released prefix (c̃, w̃₁, …, D̃₁, …) the weights and the
    constant predicting those rows are fixed, so D_j is a sum of per-row terms in
    {−1, 0, 1} and replacing a row moves it by ≤ 2: D̃_j is ε_c-DP. The count covers
    window 1 and check j windows 2^{j−1}+1 … 2^j: each row lies in at most one of the
    count and the checks, so given the prefix the count and all checks but the one
    (or the count) holding t* have identical laws on both streams, and together they
    are one ε_c-DP mechanism in the adaptive composition of Lemma S — the plan's
    PureDP(ε_c) item pays for them. Predictions are post-processing of (c̃, w̃, D̃). ∎
    Audited exactly in ``tests/privacy/test_winnow_comparison_audit.py`` (its broken
    twin declares sensitivity 1 and measures 2ε_c).

    *Lemma G (the guard).* With ``guard`` = g on a ``partial_fit`` stream the learner
    (every mechanism above: the plan calibrated at ((1 − g)·ε, δ)) and the guard's
    checks together are (ε, δ)-DP. Check j (call j + 1 of the stream, n_j rows)
    releases (M_j, N⁺_j) + Z, Z two independent discrete Laplace draws of scale
    2/(g·ε), and n_j − Ñ⁺_j for the first class: M_j the mistakes on the call's rows
    of the answer ``predict`` gave for them (the released weights', or the released
    constant's while the comparison above prefers it), N⁺_j the call's count of
    ``classes_[1]``. *Proof.* Let the streams differ in row t*, in call c*. Condition
    on everything released before check j; the answer is then fixed, and the call's
    rows (the adversary's choice, a function of that past, so n_j too) agree off t*.
    So for j ≠ c* − 1 the check's law is identical on both streams, and for the check
    holding t*, replacing the row moves M and N⁺ by ≤ 1 each: L1 sensitivity 2, so
    the check is g·ε-DP (n_j − Ñ⁺_j is post-processing with the public n_j). Which
    calls are checked depends on the call count only (public). Hence all checks
    together are one g·ε-DP mechanism in the adaptive composition (parallel
    composition over disjoint calls), the plan's PureDP(g·ε) item
    (``parameters_.privacy_events``); the learner's items are certified at
    ((1 − g)·ε, δ) by the tight accountant, and a pure g·ε item added to any
    interleaved adaptive composition moves its privacy loss by at most g·ε: (ε, δ)
    in all. The answer chosen (``guard_constant_``) is a function of the noisy counts:
    post-processing. ∎ Audited exactly in
    ``tests/privacy/test_winnow_guard_audit.py`` (a twin that noises both class
    counts at the add/remove scale, which a replaced row moves both of, is caught at
    1.5·g·ε; one that runs the learner at the full ε spends (1 + g)·ε).

    Audited in ``tests/privacy/test_winnow_scheduled_audit.py`` with broken twins
    (no cap, η calibrated per window, exact weights, noiseless count).

    *Probabilities.* ``decision_function`` is the margin μ = ⟨w̃, z⟩ of the released
    weights and ``predict_proba`` its vote share (n(1 + μ)/2 + 1)/(n + 2), n = m
    (public): functions of w̃ and public constants, so post-processing at no cost.
    In the guard's fallback w̃ puts (1 ± b)/2 on the ±bias coordinates, b = 2c̃/n_c − 1
    (c̃ the released count clipped to [0, n_c]), so μ = b on every row and, with
    n = n_c, ``predict_proba`` gives ``classes_[1]`` (c̃ + 1)/(n_c + 2): the count,
    never the data. Audited in ``tests/privacy/test_winnow_proba_audit.py``; its
    broken twins (probabilities from the unreleased exact weights; the exact count)
    fail it.

    ``sample_weight`` is not accepted: clipping weights to [0, 1] would keep the
    batch's sensitivity, but a weight k > 1 could then not mean k repeated rows, and
    an online learner depends on row order (see :mod:`skdp.linear._base`).

    Mistakes: with the paper's constants, for a ρ-margin stream, at most
    Õ(log³d · log^{5/2}(T/β) · log²(1/δ) / (ε⁴ρ⁶)) with probability 1 − 2β (Thm 12).
    The scheduled setting has no proven bound; the guard's model and the measured map
    are what it offers.

    References
    ----------
    M. Bun, W. Fang. Privately Learning Decision Lists and a Differentially Private
    Winnow, 2025, Alg 3, Thm 11, Thm 12, Appendix C. Dwork & Roth 2014, §3.6 (sparse
    vector). D. Durfee, R. Rogers. Practical differentially private top-k selection
    with pay-what-you-get composition, NeurIPS 2019. M. Cesar, R. Rogers. Bounding,
    concentrating, and truncating: unifying privacy loss composition for data
    analytics, ALT 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.linear import DPWinnowClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.choice([-1.0, 1.0], size=(20000, 10))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> clf = DPWinnowClassifier(epsilon=4.0, margin=1.0, random_state=0).fit(X, y)
    >>> clf.parameters_.learns, clf.constant_fallback_
    (True, False)
    >>> clf.score(X, y) > 0.95
    True
    >>> clf.privacy_spent_.epsilon
    4.0
    """

    #: The guard's record of checks (the audit's twins substitute a subclass).
    _guard_class = ConstantGuard

    _parameter_constraints: dict = {
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "delta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "margin": [Interval(numbers.Real, 0, 1, closed="right")],
        "n_rounds": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "beta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "setting": [StrOptions({"scheduled", "practical", "theory"})],
        "window": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "max_updates": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_samples": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "threshold": [Interval(numbers.Real, None, None, closed="neither"), None],
        "confidence": [Interval(numbers.Real, 0, 1, closed="neither")],
        "beyond_horizon": [StrOptions({"warn", "raise"})],
        "guard": [Interval(numbers.Real, 0, 1, closed="neither"), None],
        **MultiplicativeWeightsMixin._common_constraints,
        "budget": [PrivacyBudget, None],
        "random_state": [*RANDOM_STATE_CONSTRAINT],
        "classes": ["array-like", None],
    }

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-6, margin: float = 0.1,
                 n_rounds: int | None = None, beta: float = 0.05, *,
                 setting: str = "scheduled", max_updates: int | None = None,
                 n_samples: int | None = None, threshold: float | None = None,
                 window: int | None = None, confidence: float = 0.5,
                 beyond_horizon: str = "warn", guard: float | None = 0.1,
                 bounds: Sequence | None = None,
                 fit_intercept: bool = True, double_features: bool = True,
                 budget: PrivacyBudget | None = None,
                 random_state: int | np.random.Generator | None = None,
                 classes: ArrayLike | None = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.margin = margin
        self.n_rounds = n_rounds
        self.beta = beta
        self.setting = setting
        self.max_updates = max_updates
        self.n_samples = n_samples
        self.threshold = threshold
        self.window = window
        self.confidence = confidence
        self.beyond_horizon = beyond_horizon
        self.guard = guard
        self.bounds = bounds
        self.fit_intercept = fit_intercept
        self.double_features = double_features
        self.budget = budget
        self.random_state = random_state
        self.classes = classes

    # ----------------------------------------------------------------- parameters
    def _margin_value(self, n_features):
        return self.margin

    def _guarded(self, from_fit):
        """Whether the stream's calls are checked: a ``partial_fit`` stream with a
        guard (``fit`` is one call, which nothing released could be checked on). A
        subclass without the parameter (the decision-list embedding) is unguarded."""
        return getattr(self, "guard", None) is not None and not from_fit

    def _resolve_parameters(self, n_features, horizon):
        """(ε, δ) of the stream and the learner's constants: at ε·(1 − guard) when the
        stream being opened is guarded (``_guard_share``, set by ``_start_stream``),
        the guard's share recorded in the plan (Lemma G)."""
        epsilon, delta = self._check_privacy_params()
        solve = (self._solve_schedule if self.setting == "scheduled"
                 else self._solve_sparse_vector)
        share = getattr(self, "_guard_share", None)
        if share is None:
            return epsilon, delta, solve(epsilon, delta, n_features, horizon)
        share = epsilon * share
        params = solve(epsilon - share, delta, n_features, horizon)
        return epsilon, delta, replace(params, guard_epsilon=share,
                                       epsilon_spent=params.epsilon_spent + share)

    # ----------------------------------------------------------------- stream hooks
    def _start_stream(self, X, first_call, from_fit):
        n = X.shape[0]
        if first_call:
            horizon = self.n_rounds or (n if from_fit else DEFAULT_STREAM_HORIZON)
            self._guard_share = self.guard if self._guarded(from_fit) else None
            epsilon, delta, params = self._resolve_parameters(X.shape[1], horizon)
            beyond = self._check_horizon(0, n, horizon)  # may refuse: before the charge
            self._warn_unsized_horizon(n, from_fit)
            self._begin_stream(epsilon, delta, from_fit)
            self.parameters_ = params
            self.n_rounds_ = horizon
            self._horizon_warned = False
            if beyond:
                self._warn_horizon(horizon)
            # The guard (Lemma G): K = 1 predictor (the estimator's own answer), two
            # classes, neighbours that differ by a replaced row.
            self._guard = (self._guard_class(params.guard_epsilon, 1, 2, replace=True)
                           if params.guard_epsilon > 0 else None)
            self._choice = ("model", 0)
            if params.setting == "scheduled":
                self._start_schedule(n, from_fit)
            else:
                self._start_sparse_vector()
            return
        # Compare-and-swap: a stale copy (older pickle, deepcopy branch) is refused here,
        # before it touches its private state.
        self._advance_stream()
        if self._check_horizon(self.n_rounds_seen_, n, self.n_rounds_):
            self._warn_horizon(self.n_rounds_)

    def _child_rng(self, update_index, role):
        """The generator of update ``update_index``'s sparse vector (role 0) or draws (1).

        Event 2·update + role of the stream's forward-secure keys, so the randomness a
        mechanism sees does not depend on how the stream was cut into blocks, and no
        key of an update already made stays in the learner.
        """
        # One live generator per role at a time (the current update's SVT, the current
        # update's draws): the slot is re-keyed, not rebuilt.
        return self._noise.generator(2 * update_index + role, slot=role)

    def _init_state(self, n_features):
        super()._init_state(n_features)
        self.updates_exhausted_ = False
        self.constant_fallback_ = False
        if self.parameters_.setting == "scheduled":
            self._init_schedule()
            return
        self._init_sparse_vector()

    def _n_votes(self) -> float:
        """Votes behind the predictions: m draws, or the n_c counted labels when the
        constant predicts (``predict_proba``'s smoothing)."""
        p = self.parameters_
        if self.constant_fallback_ or self._constant_predicts():
            return float(getattr(self, "_constant_rows", p.count_rows))
        return float(p.n_samples)

    def _constant_predicts(self) -> bool:
        """The last private comparison (or its absence yet) says the constant predicts."""
        return bool(getattr(self, "predicts_constant_", False))

    def decision_function(self, X: ArrayLike) -> NDArray[np.floating[Any]]:
        """The margin ⟨w̃, z⟩ of the released weights, or — while the private comparison
        prefers the constant (``predicts_constant_``) — the constant's margin
        b = 2c̃/n_c − 1 on every row. Post-processing of released values only.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        margins = super().decision_function(X)
        constant = self._guard_constant()
        if constant is not None:  # the guard's answer: the margin of a point mass
            return np.full_like(margins, 2.0 * constant - 1.0)
        if self._constant_predicts():
            return np.full_like(margins, self._balance)
        return margins

    def _answer_margins(self, X):
        """The estimator's own margins on transformed rows (before the guard's
        choice): the released weights', or the constant's while it predicts."""
        if self._constant_predicts():
            return np.full(X.shape[0], self._balance)
        return self._margins(X)

    def _guard_constant(self):
        """The class index the guard answers with instead of the estimator, or None."""
        kind, index = getattr(self, "_choice", ("model", 0))
        return index if kind == "constant" else None

    @property
    def guard_constant_(self) -> object:
        """The label the guard answers with (``predict``, ``predict_proba``,
        ``decision_function``) instead of the estimator, or None while the estimator
        answers. A function of the guard's released noisy counts."""
        check_is_fitted(self, "classes_")
        constant = self._guard_constant()
        return None if constant is None else self.classes_[constant]

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Vote shares of the released weights, smoothed (n(1 + μ)/2 + 1)/(n + 2) with
        μ the margin and n the votes (see the class's *Probabilities*), or a point mass
        on the guard's constant while the guard answers (``guard_constant_``).
        Post-processing: costs nothing.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        proba = super().predict_proba(X)
        constant = self._guard_constant()
        if constant is None:
            return proba
        return constant_proba(proba.shape[0], proba.shape[1], constant)

    def _cap(self):
        return self.parameters_.max_updates

    def _frozen(self):
        return self.updates_exhausted_

    def _check(self, X, ys):
        """The guard's check of this call's rows, before they are learned from: the
        mistakes of what the estimator predicted for them (its released weights, or
        the constant its own comparison chose) and the two class counts, released
        with discrete Laplace noise (Lemma G); then the answer (the estimator or a
        constant label) chosen from the noisy counts only. The stream's first call
        is not checked: nothing released before it predicted its rows."""
        guard = getattr(self, "_guard", None)
        if guard is None or self.n_rounds_seen_ == 0:
            return
        mistakes = _prediction_errors(self._answer_margins(X), ys)
        positives = int(np.count_nonzero(ys > 0))
        counts = np.array([ys.size - positives, positives])
        rng = self._noise.generator(CHECK_INDEX + guard.n_checks)
        guard.check(np.array([mistakes]), counts, rng)
        self._choice = guard.choice()

    def _consume(self, X, ys):
        self._check(X, ys)
        if self.parameters_.setting == "scheduled":
            self._consume_scheduled(X, ys)
        else:
            super()._consume(X, ys)

    def _release_weights(self, full_scores):
        """w̃: empirical distribution of m exponential-mechanism draws from w ∝ exp(ηS)."""
        p = self.parameters_
        draws = exponential_mechanism(
            full_scores, 4.0 * p.learning_rate, _SCORE_SENSITIVITY, size=p.n_samples,
            random_state=self._child_rng(self.n_updates_, 1))
        return np.bincount(draws, minlength=full_scores.size) / p.n_samples

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.non_deterministic = True
        tags.classifier_tags.poor_score = True
        return tags
