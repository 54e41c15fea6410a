"""DP-Winnow (Bun & Fang, Alg 3): sparse vector picks the update rounds, and the
released weights are the empirical distribution of m exponential-mechanism draws."""

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions

from .._streams import keyed_generator
from ..accounting import PrivacyBudget
from ..base import PrivateEstimatorMixin
from ..exceptions import PrivacyWarning
from ..mechanisms import AboveThreshold, exponential_mechanism
from ._base import MultiplicativeWeightsMixin
from ._parameters import solve_dp_winnow_parameters

__all__ = ["DPWinnowClassifier"]

#: Horizon T used by ``partial_fit`` streams when ``n_rounds`` is None.
DEFAULT_STREAM_HORIZON = 10**6

# Sensitivity of the scores S_j = Σ ŷ x̂_j: one example's term moves by ≤ 2.
_SCORE_SENSITIVITY = 2.0


class DPWinnowClassifier(PrivateEstimatorMixin, MultiplicativeWeightsMixin,
                         ClassifierMixin, BaseEstimator):
    """Differentially private Winnow for online large-margin halfspaces (Bun & Fang, Alg 3).

    Predicts with *released* weights w̃ only. Each row's prediction is checked
    against its label; AboveThreshold (threshold L, budget ε̂, monotone sensitivity-1
    queries) watches the count of mistakes since the last update. When it fires,
    the first mistake cached since the last update gets a multiplicative update of
    the private weights w ∝ exp(η·S), and w̃ becomes the empirical distribution of m
    draws j ~ w (the exponential mechanism with scores S, sensitivity 2, ε = 4η).
    After K updates the learner **stops updating** for good and keeps predicting
    with its last released weights (``updates_exhausted_``; one
    :class:`~skdp.exceptions.PrivacyWarning`). If AboveThreshold fires while no
    mistake is cached (possible with a low threshold), the update is a no-op but
    the weights are still redrawn, so what is released never depends on that event.

    Parameters
    ----------
    epsilon : float, default=1.0
        ε of the whole stream (every prediction of every round).
    delta : float, default=1e-6
        δ ∈ (0, 1) of the whole stream (the composition of K·(m + 1) mechanisms needs δ > 0).
    margin : float, default=0.1
        ρ ∈ (0, 1], the assumed margin of the target (utility only: it sizes m and K).
    n_rounds : int, optional
        T, the horizon (utility only: through log(2T/β) in m and L with
        ``setting="theory"``; the practical setting does not use it). ``None``:
        ``len(X)`` in ``fit``, 10⁶ for a ``partial_fit`` stream.
    beta : float, default=0.05
        Failure probability β of the mistake bound (utility only).
    setting : {"practical", "theory"}, default="practical"
        ``"theory"``: K, m, η, ε̂, L of Thm 11–12 (K from the fixed point; refused
        when it exceeds 10⁹ or ε ≥ 1). ``"practical"``: m = ⌈1/ρ⌉ (odd, ≤ 63), L = 1/ε̂
        (practical choices, not the paper's) and K the Thm 12 fixed point for that m
        and the calibrated η. See
        :func:`~skdp.linear.solve_dp_winnow_parameters`.
    max_updates, n_samples : int, optional
        Override K and m; privacy (ε̂, η) is recalibrated for them.
    threshold : float, optional
        Override the sparse-vector threshold L (any public value keeps privacy).
    confidence : float, default=0.5
        c of Lemma 13 (``"theory"`` only; the paper's value).
    beyond_horizon : {"warn", "raise"}, default="warn"
        Rows past ``n_rounds``. Privacy does not depend on T (it is capped by K), so
        ``"warn"`` keeps learning under the same (ε, δ) and warns once that the
        utility guarantee assumed T rows; ``"raise"`` refuses such a block
        (ValueError, nothing spent or changed).
    fit_intercept, double_features : bool, default=True
        Constant coordinate and (x, −x) doubling (Bun & Fang §4.3).
    classes : array-like of shape (2,), default=None
        The label set, a **public** parameter: ``classes_`` is exactly
        ``np.unique(classes)`` whatever ``y`` holds (one label missing from ``y`` is
        fine), and labels of ``y`` outside it raise ``ValueError``. ``None``: read
        from ``y`` as scikit-learn does (``partial_fit`` then needs its own
        ``classes`` on the first call), with a
        :class:`~skdp.exceptions.PrivacyLeakWarning` — the label set is then a
        statistic of the private data that the guarantee does not cover.
    budget : PrivacyBudget, optional
        Charged (ε, δ) by ``fit`` and by the first ``partial_fit`` of a stream.
    random_state : None, int or numpy.random.Generator
        Source of all noise.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    coef_, intercept_ : ndarray
        Effective released weights (w̃⁺ − w̃⁻) on x and on the bias.
    weights_ : ndarray of shape (n_coords,)
        The released w̃ (multiples of 1/m).
    parameters_ : DPWinnowParameters
        K, m, η, ε̂, L, the accounting used and the ε it certifies.
    n_rounds_ : int
        The horizon T used.
    n_updates_ : int
        Sparse-vector firings (= updates) so far, ≤ K.
    updates_exhausted_ : bool
        True once K updates were made: the learner no longer learns.
    n_rounds_seen_ : int
        Rows consumed.
    privacy_spent_ : PrivacyCost
        (ε, δ) of this stream.

    Notes
    -----
    Which defaults are whose: ``confidence=0.5`` and, with ``setting="theory"``,
    K, m, L and the ε̂ : η ratio are Bun & Fang's (Thm 11–12, Lemma 13).
    ``setting="practical"`` (the default) keeps the paper's K fixed point but uses
    m = ⌈1/ρ⌉ and L = 1/ε̂ — practical choices, because the paper's constants do not
    update at all within 10⁶ rows for any ρ < 1 (see
    :func:`~skdp.linear.solve_dp_winnow_parameters`). ``margin=0.1``, ``beta=0.05``,
    ``delta=1e-6`` and the horizon policy are practical defaults. In both settings ε̂
    and η come from the tight accountant, ≈ 2× the paper's two-layer split at the
    same K (and K, the Thm 12 fixed point for that η, ≈ 4–5× smaller). Privacy is
    (ε, δ) in every setting; only utility constants change.

    Internal, non-private state lives in private attributes that must not be released:
    the exact scores and the online mistakes of the released weights (``_n_mistakes``,
    computed from the private labels; an evaluation statistic for synthetic data).

    Even so the private learner is slow to learn: its mistake bound grows like
    1/(ε⁴ρ⁶), and at ε ≤ 1 it stays near chance level for 10⁵–10⁶ rows on
    margins ρ ≤ 1/3 (``benchmarks/winnow.py``). With a large margin (ρ = 1) and
    ε = 4 it learns within ~10⁵ rows.

    Privacy
    -------
    (ε, δ)-DP for the whole sequence of released weights and predictions, for
    *every* stream — realizable or not — against neighbouring streams that differ in
    one row: Bun & Fang, Thm 11 (Appendix C): at most K AboveThreshold instances
    (ε̂-DP each) and mK exponential-mechanism draws (4η-bounded-range each — the paper
    counts 2η, which holds only for {0, 1} features; skdp calibrates for 4η). ε̂ and η
    are calibrated jointly by the tight accountant
    (:func:`skdp.accounting.calibrate_plan`, the paper's relative weights); the
    paper's split — each layer (ε/2, δ/2) by advanced composition — is
    ``solve_dp_winnow_parameters(..., accounting="paper")``, and
    ``parameters_.accounting`` / ``parameters_.privacy_events`` record what was used.
    The cap K is enforced, not assumed.
    ``fit`` and the first ``partial_fit`` of a stream charge (ε, δ); later
    ``partial_fit`` calls continue the same release and cost nothing more. The
    fitted object also holds *private* state needed to continue the stream (the
    exact scores and a cached row): publish predictions or ``coef_``, not the
    pickled estimator. Copies of a fitted stream share a ledger: continuing two
    copies of one stream is refused (:class:`~skdp.exceptions.PrivacyError`).

    Mistakes: with the paper's constants, for a ρ-margin stream, at most
    Õ(log³d · log^{5/2}(T/β) · log²(1/δ) / (ε⁴ρ⁶)) with probability 1 − 2β (Thm 12).

    References
    ----------
    M. Bun, W. Fang. Privately Learning Decision Lists and a Differentially Private
    Winnow, 2025, Alg 3, Thm 11, Thm 12. Dwork & Roth 2014, §3.6 (sparse vector),
    Thm 3.20 (advanced composition).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.linear import DPWinnowClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.choice([-1.0, 1.0], size=(5000, 10))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> clf = DPWinnowClassifier(epsilon=4.0, margin=0.5, random_state=0).fit(X, y)
    >>> clf.n_updates_ <= clf.parameters_.max_updates
    True
    >>> clf.privacy_spent_.epsilon
    4.0
    """

    _parameter_constraints: dict = {
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "delta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "margin": [Interval(numbers.Real, 0, 1, closed="right")],
        "n_rounds": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "beta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "setting": [StrOptions({"practical", "theory"})],
        "max_updates": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_samples": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "threshold": [Interval(numbers.Real, None, None, closed="neither"), None],
        "confidence": [Interval(numbers.Real, 0, 1, closed="neither")],
        "beyond_horizon": [StrOptions({"warn", "raise"})],
        **MultiplicativeWeightsMixin._common_constraints,
        "budget": [PrivacyBudget, None],
        "random_state": ["random_state", np.random.Generator],
        "classes": ["array-like", None],
    }

    def __init__(self, epsilon=1.0, delta=1e-6, margin=0.1, n_rounds=None, beta=0.05, *,
                 setting="practical", max_updates=None, n_samples=None, threshold=None,
                 confidence=0.5, beyond_horizon="warn", fit_intercept=True,
                 double_features=True, budget=None, random_state=None, classes=None):
        self.epsilon = epsilon
        self.delta = delta
        self.margin = margin
        self.n_rounds = n_rounds
        self.beta = beta
        self.setting = setting
        self.max_updates = max_updates
        self.n_samples = n_samples
        self.threshold = threshold
        self.confidence = confidence
        self.beyond_horizon = beyond_horizon
        self.fit_intercept = fit_intercept
        self.double_features = double_features
        self.budget = budget
        self.random_state = random_state
        self.classes = classes

    # ----------------------------------------------------------------- parameters
    def _margin_value(self, n_features):
        return self.margin

    def _resolve_parameters(self, n_features, horizon):
        epsilon, delta = self._check_privacy_params()
        params = solve_dp_winnow_parameters(
            epsilon, delta, self._margin_value(n_features), horizon,
            self._n_coords(n_features), beta=self.beta, confidence=self.confidence,
            setting=self.setting, max_updates=self.max_updates,
            n_samples=self.n_samples, threshold=self.threshold,
        )
        if not params.feasible:
            raise ValueError(f"{type(self).__name__}: no valid parameters: {params.reason}")
        return epsilon, delta, params

    # ----------------------------------------------------------------- stream hooks
    def _start_stream(self, X, first_call, from_fit):
        n = X.shape[0]
        if first_call:
            horizon = self.n_rounds or (n if from_fit else DEFAULT_STREAM_HORIZON)
            epsilon, delta, params = self._resolve_parameters(X.shape[1], horizon)
            beyond = self._check_horizon(0, n, horizon)  # may refuse: before the charge
            self._begin_stream(epsilon, delta, from_fit)
            self.parameters_ = params
            self.n_rounds_ = horizon
            self._generators = (np.random.Generator(np.random.Philox(key=0)),
                                np.random.Generator(np.random.Philox(key=1)))
            self._horizon_warned = False
            if beyond:
                self._warn_horizon(horizon)
            return
        # Compare-and-swap: a stale copy (older pickle, deepcopy branch) is refused here,
        # before it touches its private state.
        self._stream.advance()
        if self._check_horizon(self.n_rounds_seen_, n, self.n_rounds_):
            self._warn_horizon(self.n_rounds_)

    def _check_horizon(self, seen, n, horizon):
        """False if the block fits in the horizon; raise or return True otherwise."""
        if seen + n <= horizon:
            return False
        if self.beyond_horizon == "raise":
            raise ValueError(
                f"{type(self).__name__}: this block would take the stream to {seen + n} "
                f"rows, beyond n_rounds={horizon} (beyond_horizon='raise'); nothing was "
                "processed or spent. Start a new stream with fit, or set a larger n_rounds."
            )
        return True

    def _warn_horizon(self, horizon):
        if not self._horizon_warned:
            warnings.warn(
                f"{type(self).__name__}: the stream passed n_rounds={horizon} rows. "
                "Privacy is unchanged (it is capped by max_updates, not by T), but the "
                "mistake bound assumed T rows.", UserWarning, stacklevel=6)
            self._horizon_warned = True

    def _child_rng(self, update_index, role):
        """The generator of update ``update_index``'s sparse vector (role 0) or draws (1).

        Each (update, role) gets its own Philox stream keyed by (seed, 2·update + role),
        so the randomness a mechanism sees does not depend on how the stream was cut
        into blocks (and re-keying costs microseconds, unlike a new SeedSequence).
        """
        return keyed_generator(self._entropy, 2 * update_index + role, self._generators[role])

    def _new_svt(self):
        p = self.parameters_
        # Mistake counts since the last update, given the released history, move by
        # at most 1 and all in the same direction between neighbours: monotone.
        return AboveThreshold(p.threshold, p.svt_epsilon, sensitivity=1.0, max_positives=1,
                              monotonic=True, random_state=self._child_rng(self.n_updates_, 0))

    def _init_state(self, n_features):
        super()._init_state(n_features)
        self.updates_exhausted_ = False
        self._count = 0
        self._cache = None
        self._svt = self._new_svt()

    def _cap(self):
        return self.parameters_.max_updates

    def _frozen(self):
        return self.updates_exhausted_

    # ----------------------------------------------------------------- the loop
    def _scan(self, margins, ys, X, start):
        wrong = ys * margins <= 0
        counts = self._count + np.cumsum(wrong)
        answers = self._svt.process(counts, stop_after_positive=True)
        fired = answers.size > 0 and bool(answers[-1])
        stop = answers.size
        if self._cache is None and wrong[:stop].any():
            first = int(np.argmax(wrong[:stop]))
            self._cache = (X[start + first].astype(float), float(ys[first]))
        if not fired:
            self._count = int(counts[-1])
            return -1
        return stop - 1

    def _release_weights(self, full_scores):
        """w̃: empirical distribution of m exponential-mechanism draws from w ∝ exp(ηS)."""
        p = self.parameters_
        draws = exponential_mechanism(
            full_scores, 4.0 * p.learning_rate, _SCORE_SENSITIVITY, size=p.n_samples,
            random_state=self._child_rng(self.n_updates_, 1))
        return np.bincount(draws, minlength=full_scores.size) / p.n_samples

    def _apply_update(self, X, ys, row):
        if self._cache is not None:
            self._accumulate(*self._cache)
        self._set_predicting_weights(self._release_weights(self._full_scores()))
        self.n_updates_ += 1
        self._cache, self._count = None, 0
        if self.n_updates_ >= self._cap():
            self.updates_exhausted_ = True
            self._svt = None
            warnings.warn(
                f"{type(self).__name__} made its maximum of {self.n_updates_} updates "
                "(max_updates K): to keep its privacy guarantee it stops learning and "
                "keeps predicting with its last released weights.",
                PrivacyWarning, stacklevel=6)
        else:
            self._svt = self._new_svt()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = True
        tags.classifier_tags.poor_score = True
        return tags
