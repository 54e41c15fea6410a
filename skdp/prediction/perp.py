"""Stemmer's private truly-everlasting robust predictors (PERP): rectangles and stumps."""

from __future__ import annotations

import math

import numpy as np

from ..mechanisms.exponential import exponential_mechanism
from ..mechanisms.laplace import discrete_laplace
from ._perp_base import _PERPBase

__all__ = ["DecisionStumpPERPClassifier", "RectanglesPERPClassifier"]

_PRIVACY_COMMON = """
    Privacy
    -------
    Truly everlasting (Stemmer 2024, Def. 3.8; Thm 4.6{extra}): for every adaptive
    adversary, the initial sample is protected with (ε, δ(0)) and the i-th query
    with (ε, δ(i)), where δ(i) = δ_p for the t_p queries of phase p,
    Σ_p t_p·δ_p ≤ δ*/2 and δ(0) ≤ δ*/4 — so Σ_i δ(i) ≤ δ* *however long the stream
    runs*; there is no query budget to run out of. ``budget_`` records this: the
    first data-dependent answer charges (ε, δ(0)), every answered query its δ(i)
    (ε is not summed over records — each record's loss is ε). With too few rows
    the first answer charges (ε, 0) for one noisy count instead (see
    :func:`~skdp.prediction._perp_scores.noisy_majority_score`), and the queries
    are never looked at. Privacy holds for
    any query stream, realizable or not, γ-fraction or not; only utility needs the
    assumptions. What is capped: every ChallengeBT copy halts through its Stopper
    (after about k_p "medium" answers) and, as a hard cap, after T = t_p + 1
    stopping queries; phases end after t_p queries whatever the answers; every
    phase cuts exactly 2d slices (a random partition of its positives by default,
    RSC for ``"practical"`` / ``"paper"``). k and the threshold gap are raised to the least
    values ChallengeBT's proof (Alg. 4, Thm 4.3) covers, and ChallengeBT itself
    refuses anything less, so the explicit overrides cannot weaken privacy. The
    per-copy (ε_0, δ_0) and the composition argument (RSC for ``preset="paper"``,
    at most 2d concurrent copies on cascade-neighbouring slices for
    ``"practical"``) are derived in :func:`perp_parameters`; for ``"sharp"`` and
    the default ``"charged"`` one record reaches one copy (a random partition of
    the slices), and the per-record case split — initial record, query that no
    copy called "medium", query that one copy called "medium" — is the reviewed
    lemma of ``skdp.prediction._perp_sharp``.
    Copies: ``clone`` is unfitted; ``deepcopy``/pickle share ``budget_`` but not
    the running mechanism (forking it would reuse or double its noise): a copy of
    a started predictor refuses to answer (:class:`QueryBudgetExhaustedError`).
    The training rows, the running mechanism and the generator live in the private
    attribute ``_state``: non-private state that must not be released. The public
    counters are covered: phases are data-independent, and re-executions are a
    function of the Stoppers' ⊤ outputs, which the guarantee includes.
"""


class RectanglesPERPClassifier(_PERPBase):
    __doc__ = (
        """Stemmer's RectanglesPERP: private everlasting robust prediction for rectangles.

    A private *everlasting* predictor never releases a model: ``fit`` keeps the
    labelled sample, and ``predict`` answers an endless stream of queries, in
    order, phase after phase. Each phase (Alg. 5) cuts 2d boundary slices of
    ≈ m_p positives — the largest (Right_j) and smallest (Left_j) on every axis
    j; by default (``"charged"``, ``"sharp"``) each from its own part of a random
    partition of the positives, in ``"practical"`` / ``"paper"`` with RSC — and
    runs a ChallengeBT copy on each: a query is labelled
    ``classes_[0]`` ("outside") as soon as a copy finds many of its points beyond
    the query (answer "high"), or finds it *inside the boundary* ("medium": the
    query joins that copy's dataset D_j^s, and a copy whose Stopper halts is
    re-executed on D_j^s — by default on its m points nearest the boundary);
    otherwise ``classes_[1]`` ("inside"). The phase's
    positively answered queries are the next phase's sample. Robust: only a γ
    fraction of the queries need to come from the distribution (Def. 3.1).

    Parameters
    ----------
    epsilon : float, default=1.0
        ε of the truly-everlasting guarantee (per record).
    delta : float, default=1e-6
        δ*: Σ_i δ(i) over the initial sample and all queries ever is ≤ δ*.
    alpha, beta : float in (0, 1), default=0.1, 0.05
        Target error on the distribution and failure probability (Def. 3.1);
        phase p uses β_p = β/2^p and α_p = α/2^p (``"charged"``, ``"sharp"``:
        α_1 = 3α/4, then α/2^(p+1)).
    gamma : float in (0, 1], default=0.5
        Fraction of queries assumed to come from the distribution; only the phase
        lengths t_p ∝ 1/γ depend on it.
    preset : {"charged", "sharp", "practical", "paper"}, default="charged"
        Which schedule and constants; :func:`perp_parameters` documents all four
        and ``parameters_`` holds the one in use. First-phase labelled rows at
        ε = 1, δ* = 10⁻⁶, α = 0.1, β = 0.05, γ = 0.5, d = 2 (at ε = 4; ε = 100):
        ``"charged"`` (default) 6,928,097 (5.1·10⁵; 4.1·10³) — the ``"sharp"``
        schedule whose copies' BetweenThresholds noise is certified, phase by
        phase, by the sharper of Stemmer's Thm 4.3 and the charged lemma of
        ``skdp.mechanisms._charged_calibration`` (the two agree on the
        algorithm; from ε ≈ 60 on Thm 4.3 is sharper and the preset equals
        ``"sharp"``); its privacy lemma, reviewed, is in
        ``skdp.prediction._perp_sharp``. A halted copy restarts on the m
        "medium" queries nearest its boundary (Alg. 5: on all of them; see
        ``_perp_sharp``, item 3). ``"sharp"`` 2.7·10⁷ (1.7·10⁶; 4.1·10³):
        slices cut from an independent random partition of the positives into
        2d parts (each copy at ε_bt + ε_s = ε, δ_0 = δ_p), ChallengeBT with the
        pure-DP svt Stopper, thresholds set by margins instead of union bounds,
        the initial sample's copies at δ(0) = δ*/4, α_1 = 3α/4.
        ``"practical"`` 7.5·10⁹ (3.6·10⁸; 3·10⁵): Alg. 5's slicing and Stopper
        with the utility constants cut to what the noise needs and per-copy
        ε_0 = ε/min(2d, ln(2/δ_p)) (the default before issue 26).
        ``"paper"`` about 6·10¹²: the constants of Alg. 5 / Lemma B.7
        (m_p ≥ 4Δ_p, k_p ≥ 2m_p, ε_0 = ε/ln(2/δ_p)); ``fit`` refuses when its
        need exceeds 10⁹ rows.
    slice_size, max_hard : int, optional
        Explicit m (slice size) and k (Stopper threshold) for every phase.
    threshold : float, optional
        Explicit Δ (t_l = Δ, t_u = 2Δ; ``"sharp"``: t_l = Δ, t_u = Δ + 4σ;
        ``"charged"``: t_u = Δ + 3σ where the charged lemma calibrates the copies).
    first_phase_length : int, optional
        Explicit t_1 (phase p has t_1·3^(p−1) queries). The overrides are for
        audits and fast experiments; utility guarantees then lapse, privacy not:
        k and Δ are raised in every phase to the least values ChallengeBT's proof
        covers (see :func:`perp_parameters`).
    classes : array-like of shape (2,), default=None
        The label set, a **public** parameter: ``classes_`` is exactly
        ``np.unique(classes)`` whatever ``y`` holds (one label missing from ``y`` is
        fine), and labels of ``y`` outside it raise ``ValueError``. ``None``: read
        from ``y`` as scikit-learn does, with a
        :class:`~skdp.exceptions.PrivacyLeakWarning` — the label set is then a
        statistic of the private data that the guarantee does not cover.
    budget : PrivacyBudget, optional
        Charged the same amounts as ``budget_`` (shared across clones).
    random_state : None, int, numpy Generator, RandomState or TestingSeed, default=None
        ``None``: noise from OS entropy, and a copy (deepcopy, pickle) draws fresh
        noise. A seed is a testing mode: the noise is reproducible from
        ``get_params()``, a :class:`~skdp.exceptions.PrivacyWarning` says so, and with
        a ``budget`` it is refused unless wrapped as ``skdp.TestingSeed(seed)``.
    verbose : int, default=0
        Print phase transitions (1) and copy re-executions (2).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
    parameters_ : PERPParameters
        The per-phase schedule (α_p, β_p, δ_p, m_p, k_p, t_p, Δ_p) in use.
    initial_sample_size_ : int
        Labelled rows the first phase needs; with fewer (n is the size of the
        user's own input, public), ``fit`` warns and the predictor answers one
        majority label from one ε-DP noisy count, charged at the first answer
        (``majority_released_``).
    budget_ : PrivacyBudget
        Ledger with total (ε, δ*), shared by deep copies and pickles.
    privacy_spent_ : PrivacyCost
        ``budget_.spent``: (ε, δ(0) + Σ_{answered} δ(i)) once answering started.
    phase_ : int
        Current phase p (1-based).
    queries_answered_ : int
        Queries answered so far.
    next_phase_sample_size_ : int
        Queries the current phase still answers before the next phase starts (its
        positive answers are the next phase's sample).
    n_reexecutions_ : int
        ChallengeBT copies re-executed after their Stopper halted.
    mechanism_started_ : bool
        Whether the sample has been handed to the mechanism (after that,
        ``partial_fit`` refuses).
    majority_released_ : bool
        Whether the too-few-rows majority label was released (after that, the
        predictor answers it for ever).
"""
        + _PRIVACY_COMMON.format(extra="")
        + """
    Notes
    -----
    Answers are exactly those of Alg. 5 run one query at a time; they are computed
    in vectorised blocks and do not depend on how the stream is split into
    ``predict`` calls. Memory: the current phase's positively answered queries.
    ``predict_proba`` and ``decision_function`` answer the next queries of the
    stream exactly like ``predict`` (and spend alike), with a score: inside,
    on a boundary band ("medium", P = ½) or outside — the copies' own answers
    (see :meth:`predict_proba` for the privacy argument).
    Only positive examples of the sample are used (slices take positives first and
    the copies count positives).

    References
    ----------
    U. Stemmer. Private Truly-Everlasting Robust-Prediction. ICML 2024 (Alg. 1–5,
    Thm 4.1–4.6, Appendix B). — M. Naor, K. Nissim, U. Stemmer, C. Yan. Private
    Everlasting Prediction. NeurIPS 2023.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.prediction import RectanglesPERPClassifier, perp_parameters
    >>> rng = np.random.default_rng(0)
    >>> inside = lambda X: np.all((X > 0.2) & (X < 0.8), axis=1).astype(int)
    >>> need = perp_parameters(1000.0, 1e-6, 0.1, 0.05, 1.0, 2, preset="charged")
    >>> X = rng.random((need.initial_sample_size, 2))
    >>> clf = RectanglesPERPClassifier(epsilon=1000.0, gamma=1.0, random_state=0)
    >>> clf = clf.fit(X, inside(X))
    >>> Xq = rng.random((20_000, 2))
    >>> bool(np.mean(clf.predict(Xq) != inside(Xq)) <= 0.1)
    True
    >>> clf.phase_, clf.privacy_spent_.epsilon
    (2, 1000.0)
    """
    )

    def _schedule(self, epsilon, delta, n_features):
        return self._perp_parameters(epsilon, delta, self.alpha, self.beta, n_features)

    def _rows_needed(self, params, n_features):
        return params.initial_sample_size

    def _initial_privacy(self):
        return float(self.epsilon), self.parameters_.initial_delta

    def _start_run(self, X, y_pm, rng):
        run = self._run_class(self.parameters_, X[y_pm == 1], rng, verbose=self.verbose)
        return run, np.arange(X.shape[1])


class DecisionStumpPERPClassifier(_PERPBase):
    __doc__ = (
        """Stemmer's DecisionPERP: private everlasting robust prediction for decision stumps.

    Algorithm 7: at the first answer, the exponential mechanism (ε/4, scores =
    minus the fewest errors of a stump on (j, σ), sensitivity 1, monotone) picks
    an axis j and a direction σ; a noisy positive count p̂ = p + discrete Lap(4/ε)
    relabels the sample's projection on axis j (the p̂ largest values positive if
    σ = +1, the p̂ smallest if σ = −1); then the 1-D RectanglesPERP (the same
    :class:`RectanglesPERPClassifier` machinery) answers the queries' j-th
    coordinates with (ε_in, δ_in, α/2, β/2, γ): the paper's (ε/4, δ*/(1 + e^{ε/4}))
    for ``preset="paper"``, (ε/2, δ*/2) for ``"practical"``, (ε/4, δ*/2) for
    ``"sharp"`` and ``"charged"`` (see Privacy).

    Parameters
    ----------
    epsilon, delta, alpha, beta, gamma, preset, slice_size, max_hard, threshold, \
first_phase_length, budget, random_state, verbose, classes
        As for :class:`RectanglesPERPClassifier`; the overrides and ``preset`` apply
        to the inner 1-D RectanglesPERP.

    Attributes
    ----------
    classes_, n_features_in_, budget_, privacy_spent_, phase_, queries_answered_, \
next_phase_sample_size_, n_reexecutions_, mechanism_started_, majority_released_
        As for :class:`RectanglesPERPClassifier`.
    parameters_ : PERPParameters
        The inner 1-D schedule.
    initial_sample_size_ : int
        max(the inner schedule's need, ⌈16·ln(8d/β)/(α·ε)⌉ for the selection and
        the count).
"""
        + _PRIVACY_COMMON.format(extra=", Thm B.12")
        + """    For the initial sample: ε/4 (selection) + ε/4 (count) + the inner run on the
    relabelled sample. With (j, σ, p̂) fixed, adding or removing a row changes the
    relabelled *positives* (the only rows the run uses) by at most one
    replacement. ``"paper"``: group privacy over the two add/remove steps of a
    replacement, (2·ε/4, (1 + e^{ε/4})·δ_in) with δ_in = δ*/(1 + e^{ε/4}).
    ``"practical"``: a replacement moves every slice by at most one replacement,
    so every count by at most 1, and the composition bound of the 2 copies covers
    it directly: ε_in = ε/2, δ_in = δ*/2. ``"sharp"`` (and ``"charged"``): the two
    rows of a replacement may fall in both parts of the partition, so both copies pay
    (ε_bt ≤ ε_in each): ε_in = ε/4, δ_in = δ*/2, and δ(0) = 2·δ_in/4 = δ*/4 (the inner
    initial copies run at δ_in/4). Either way ε in
    total and δ(0) ≤ δ*/4.
    The selected axis and direction are never released directly.

    References
    ----------
    U. Stemmer. Private Truly-Everlasting Robust-Prediction. ICML 2024 (Alg. 7,
    Thm B.12). — F. McSherry, K. Talwar. Mechanism design via differential
    privacy. FOCS 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.prediction import DecisionStumpPERPClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((20_000, 3)); y = (X[:, 1] > 0.4).astype(int)
    >>> clf = DecisionStumpPERPClassifier(epsilon=2000.0, gamma=1.0, random_state=0)
    >>> clf = clf.fit(X, y)
    >>> Xq = rng.random((5000, 3))
    >>> bool(np.mean(clf.predict(Xq) != (Xq[:, 1] > 0.4)) <= 0.1)
    True
    """
    )

    def _inner_privacy(self, epsilon, delta):
        """(ε, δ*) of the inner 1-D run and the group factor on δ(0) (see Privacy)."""
        if self.preset in ("sharp", "charged"):
            # A replacement may hit both parts of the partition: two copies pay.
            return epsilon / 4.0, delta / 2.0, 2.0
        if self.preset == "practical":
            return epsilon / 2.0, delta / 2.0, 1.0
        if epsilon / 4.0 > 600.0:
            raise ValueError(
                "preset='paper' pays group privacy (1 + e^{ε/4}) on δ for the relabelled "
                f"sample; at ε = {epsilon:g} that factor overflows. Use preset='charged'."
            )
        group = 1.0 + math.exp(epsilon / 4.0)
        return epsilon / 4.0, delta / group, group

    def _schedule(self, epsilon, delta, n_features):
        eps_in, delta_in, _ = self._inner_privacy(epsilon, delta)
        return self._perp_parameters(eps_in, delta_in, self.alpha / 2.0, self.beta / 2.0, 1)

    def _rows_needed(self, params, n_features):
        selection = 16.0 * math.log(8.0 * n_features / self.beta) / (self.alpha * self.epsilon)
        return max(params.initial_sample_size, math.ceil(selection))

    def _initial_privacy(self):
        _, _, group = self._inner_privacy(float(self.epsilon), float(self.delta))
        return float(self.epsilon), group * self.parameters_.initial_delta

    @staticmethod
    def _stump_errors(X, y_pm):
        """Fewest training errors of a stump on (j, σ): array of shape (d, 2) for σ = +1, −1."""
        n, d = X.shape
        order = np.argsort(X, axis=0, kind="stable")
        xs = np.take_along_axis(X, order, axis=0)
        pos = (y_pm[order] == 1).astype(np.int64)
        cum_pos = np.vstack([np.zeros((1, d), np.int64), np.cumsum(pos, axis=0)])
        cum_neg = np.arange(n + 1)[:, None] - cum_pos
        n_pos = cum_pos[-1]
        # A cut c puts the c smallest values on one side; cuts inside a run of equal
        # values are not thresholds.
        valid = np.ones((n + 1, d), dtype=bool)
        valid[1:n] = xs[1:] > xs[:-1]
        plus = cum_pos + (n - n_pos - cum_neg)  # σ = +1: positive above the cut
        minus = (n_pos - cum_pos) + cum_neg  # σ = −1: positive below the cut
        big = n + 1
        return np.stack([np.where(valid, plus, big).min(axis=0),
                         np.where(valid, minus, big).min(axis=0)], axis=1)

    def _select(self, scores, rng):
        """Alg. 7 step 1 (a hook for the audit's broken variant)."""
        return exponential_mechanism(scores, float(self.epsilon) / 4.0, 1.0, monotonic=True,
                                     random_state=rng)

    def _start_run(self, X, y_pm, rng):
        errors = self._stump_errors(X, y_pm)
        pick = self._select(-errors.ravel().astype(float), rng)
        j, sign = divmod(int(pick), 2)
        sign = 1 if sign == 0 else -1
        n = X.shape[0]
        count = int(np.count_nonzero(y_pm == 1))
        p_hat = int(np.clip(count + discrete_laplace(4.0 / float(self.epsilon), random_state=rng),
                            0, n))
        order = np.argsort(sign * X[:, j], kind="stable")  # ascending in σ·x_j
        positives = X[order[n - p_hat:], j] if p_hat else np.empty(0)
        self._state.axis, self._state.sign = j, sign
        run = self._run_class(self.parameters_, positives[:, None], rng, verbose=self.verbose)
        return run, np.array([j])
