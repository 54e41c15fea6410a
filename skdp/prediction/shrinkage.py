"""Yan's private predictor via shrinkage (GenericPredictor with G_oblivious / G_halfspace)."""

from __future__ import annotations

import math
import numbers
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Hidden, Interval, StrOptions

from ..accounting import PrivacyBudget
from ..exceptions import PrivacyParameterError, PrivacyWarning
from ..hypotheses import HypothesisClass
from ._base import QueryBudgetedPredictor
from ._scored import _AnswerCache, _ScoredAnswers
from ._shrinkage_answering import _ShrinkageAnswering
from ._shrinkage_config import _ShrinkageConfig
from ._shrinkage_parameters import (
    ACCOUNTING,
    CALIBRATIONS,
    shrinkage_parameters,
)
from ._small_sample import _SmallSampleFallback
from ._state import PredictorState
from ._teachers import (
    TEACHER_PARAMETER_CONSTRAINTS,
    _Blocks,
    _partition,
    make_teachers,
)
from ._tree_votes import FORESTS as _FORESTS

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["PrivatePredictor", "shrinkage_parameters"]


class PrivatePredictor(_ScoredAnswers, _SmallSampleFallback, _ShrinkageAnswering,
                       _ShrinkageConfig, QueryBudgetedPredictor):
    """Yan's private predictor: noisy teacher votes that pay only for hard queries.

    ``fit(X, y)`` splits the labelled sample into ``k`` disjoint random blocks and
    trains one teacher per block. ``predict(X)`` answers the rows of ``X`` in order
    (Yan, Alg. 2 GenericPredictor): the vote q = (1 + mean_i f_i(x))/2 goes to
    BetweenThresholds (thresholds t_l < t_u, sensitivity 1/k); L → ``classes_[0]``,
    R → ``classes_[1]``; a ⊤ ("hard query") gets a uniformly random label and every
    teacher is updated with it. With the BSU calibration (Yan's) a fresh instance
    (fresh noise) answers after each ⊤; with Stemmer's one instance answers up to
    the cap of ⊤.

    * ``mode="oblivious"`` (Alg. 3 G_oblivious): each teacher is the ERM on its
      block among hypotheses agreeing with every hard query's label (hard
      constraints for the built-in classes; see each class for how its ERM is
      exact). Only teachers that disagree with the new label are retrained (the
      others are still constrained ERMs).
    * ``mode="halfspace"`` (Alg. 4 G_halfspace, needs
      :class:`~skdp.hypotheses.Halfspaces`): teachers are restricted to
      halfspaces whose boundary passes through every hard query, and each picks a
      deep point of that restricted space (approximation: see ``Halfspaces``).
    * ``estimator=`` any scikit-learn classifier: teachers are its clones, refit on
      block + forced labels (weighted above the block if ``fit`` takes
      ``sample_weight``; fitted with ``n_jobs`` processes). A binary L2
      ``LogisticRegression`` is run as ``Halfspaces(d, C=estimator.C)`` (the same
      regularised logistic loss, the intercept penalised too) by the batched
      solver, with the forced labels as hard constraints (or, in halfspace mode,
      through the hard queries). Privacy is unchanged: it depends only on the
      disjoint blocks and BetweenThresholds.

    Parameters
    ----------
    hypotheses : HypothesisClass, optional
        Teachers' concept class (e.g. ``Thresholds()``, ``Rectangles(2)``,
        ``Halfspaces(5)``). Default: ``Halfspaces(n_features)``.
    estimator : sklearn classifier, optional
        Use clones of this instead of ``hypotheses`` (``mode="halfspace"`` only for a
        plain binary L2 ``LogisticRegression``).
    epsilon : float, default=1.0
        Total ε of the whole transcript of answers.
    delta : float, default=1e-6
        Total δ.
    n_teachers : int or "auto", default="auto"
        Number k of blocks. ``"auto"``: the fewest the gap condition allows at this
        ε, δ, cap and thresholds (so blocks are as large as possible). An explicit k
        below that minimum is refused with ``PrivacyParameterError``.
    max_hard_queries : int or "auto", default="auto"
        The cap v on hard queries over the whole life of the fitted predictor and
        its copies; the guarantee is computed for v, so it holds for every stream.
        ``"auto"``: d + 1 in ``mode="halfspace"`` (after d affinely independent hard
        queries every teacher's boundary is the same hyperplane, after d + 1 the
        space is a point); oblivious: min(⌈VC·ln T⌉, ⌈4·ln(2/δ)⌉), T =
        ``n_queries`` (Yan's O(VC·log T), constant 1), ⌈4·ln(2/δ)⌉ if VC unknown.
    mode : {"auto", "oblivious", "halfspace"}, default="auto"
        ``"auto"``: ``"halfspace"`` for halfspace teachers (``Halfspaces``, the
        default class, or a plain ``LogisticRegression`` estimator), whose cap of
        d + 1 hard queries needs the fewest teachers; ``"oblivious"`` otherwise.
        Set by the public parameters only; ``mode_`` holds the mode used.
    calibration : {"auto", "bsu", "stemmer", "charged"}, default="auto"
        BetweenThresholds' analysis: ``"bsu"`` (Yan's: one instance per hard
        query, composed over the cap), ``"stemmer"`` (one instance with cutoff
        max(v, ⌈4·ln(2/δ)⌉), Stemmer 2024 Thm 4.3), ``"charged"`` (one instance with
        cutoff v, noise certified by ``skdp.mechanisms._charged_calibration``'s
        lemma), ``"auto"`` the one needing fewest teachers (ε = 1, δ = 10⁻⁶, T = 2·10⁴:
        v = 3: BSU 1 856, charged 928; v = 30: Stemmer 3 387, charged 1 744).
    thresholds : (float, float) or "auto", default="auto"
        (t_l, t_u) on the vote fraction (public); Yan's are (3/8, 5/8). The privacy
        gap makes the teacher count scale as 1/(t_u − t_l), while the noise (a
        fixed fraction of the gap) must leave unanimous votes (q ∈ {0, 1}) outside
        the band. ``"auto"``: the symmetric band and calibration with the fewest
        teachers such that a unanimous vote is ⊤ with probability at most
        1/``n_queries`` (:func:`~skdp.prediction._shrinkage_parameters.design`).
    n_queries : int, default=10_000
        The number of queries T the predictor is planned for (public): the stream
        length the band is designed for (more queries are still answered, with more
        ⊤ from noise). The same name as in
        :class:`~skdp.prediction.SubsampleAggregatePredictor`.
    small_sample : {"majority", "raise"}, default="majority"
        What ``fit`` does with fewer rows than teachers: warn and answer like
        subsample-and-aggregate, whose scores tend to the released majority label
        where its noise dwarfs the votes (see Notes), or raise ``ValueError``.
    n_jobs : int, default=None
        Processes for fitting ``estimator`` teachers (joblib); ignored otherwise.
    teacher_update : {"auto", "refit", "none"}, default="auto"
        What a hard query (x, s) does to an ``estimator`` teacher that disagrees
        with s at x, in oblivious mode. ``"refit"``: fit it again on its block plus
        every hard query (the rule above; one ``fit`` per such teacher, ~half of k,
        seconds to minutes per hard query with forest teachers). ``"none"``: the
        teachers stay as fitted; the hard query's released label is remembered (a
        repeated row is answered from the transcript), nothing is refit, so a hard
        query costs no fit — but nothing shrinks, and Yan's bound on hard queries
        does not apply (the cap still bounds them). Both are private (each teacher is
        a function of its own block and the released transcript; Lemma 3 in
        ``skdp.prediction._shrinkage_answering``); they answer differently
        (``benchmarks/teacher_update.py``). ``"auto"``: ``"none"`` for
        ``RandomForestClassifier`` and ``ExtraTreesClassifier`` teachers (measured
        there: as accurate or more on the answers, at least as many queries answered
        before the cap, no fit per hard query), ``"refit"`` for every other estimator.
        Hypothesis classes (``hypotheses=``) are always refit exactly.
    planned_queries : int, default="deprecated"
        Deprecated alias of ``n_queries`` (renamed in 0.1, removed in 0.3): when
        given it is used, with a ``FutureWarning`` at ``fit``.
    accounting : {"tight", "paper"}, default="tight"
        How ε, δ are split over the ``max_hard_queries`` BSU instances
        (:func:`shrinkage_parameters`; not used by Stemmer's single instance):
        ``"tight"`` through the numerical accountant
        (:func:`skdp.accounting.calibrate_plan`, δ share chosen to need the fewest
        teachers), ``"paper"`` the earlier closed form (δ_bt = δ/(2·cap),
        exact optimal composition) for comparison.
    classes : array-like of shape (2,), default=None
        The label set, a **public** parameter: ``classes_`` is exactly
        ``np.unique(classes)`` whatever ``y`` holds (one label missing from ``y`` is
        fine), and labels of ``y`` outside it raise ``ValueError``. ``None``: read
        from ``y`` as scikit-learn does, with a
        :class:`~skdp.exceptions.PrivacyLeakWarning` — the label set is then a
        statistic of the private data that the guarantee does not cover.
    budget : PrivacyBudget, optional
        Also charged what ``budget_`` is charged, when it is (see ``skdp.base``).
    random_state : None, int, numpy Generator, RandomState or TestingSeed, default=None
        ``None``: noise from OS entropy, and a copy (deepcopy, pickle) draws fresh
        noise. A seed is a testing mode: the noise is reproducible from
        ``get_params()``, a :class:`~skdp.exceptions.PrivacyWarning` says so, and with
        a ``budget`` it is refused unless wrapped as ``skdp.TestingSeed(seed)``.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
    n_teachers_ : int
        Number of teachers k (0 when the sample is too small; see Notes).
    mode_ : str
        ``"oblivious"`` or ``"halfspace"`` (``mode="auto"`` resolved).
    calibration_ : str
        The calibration used, ``"auto"`` resolved: ``"bsu"``, ``"stemmer"`` or
        ``"charged"``.
    max_hard_queries_ : int
        The cap v actually enforced (``"auto"`` resolved).
    thresholds_ : tuple of float
    epsilon_bt_, delta_bt_ : float
        Parameters of each BetweenThresholds instance.
    min_teachers_ : int
        The fewest teachers the gap condition allows for these parameters.
    budget_ : PrivacyBudget
        The query ledger, total (ε, δ). The first answer reserves the whole planned
        cost (the composition of v BSU instances by the chosen ``accounting``, or
        the single instance's (ε, δ)); later hard queries and instances are recorded at zero
        cost. Shared by deep copies and pickles.
    privacy_spent_ : PrivacyCost
        ``budget_.spent``.
    n_hard_queries_ : int
        Hard queries answered by this predictor and its copies — the quantity the
        cap bounds.
    hard_queries_ : ndarray of shape (n_hard, n_features)
        This copy's hard queries, and ``hard_labels_`` their released labels.

    Privacy
    -------
    (ε, δ)-differentially private with respect to the labelled sample, for every
    (adaptive) query stream: one changed row changes one teacher, so every vote has
    sensitivity 1/k; each BetweenThresholds instance is (ε_bt, δ_bt)-DP when the
    gap condition t_u − t_l ≥ 12/(ε_bt·k)·(ln(10/ε_bt) + ln(1/δ_bt) + 1) holds
    (Yan, Lemma 1, after Bun, Steinke & Ullman 2017; enforced by the mechanism);
    the transcript is the composition of at most ``max_hard_queries`` instances
    (Yan, Observation 1 / Claim 1), each an ``ApproxDP(ε_bt, δ_bt)`` event, which
    :func:`skdp.accounting.calibrate_plan` sizes to compose within (ε, δ)
    (``accounting="paper"``: exact optimal composition, Kairouz, Oh & Viswanath
    2015, via :func:`skdp.accounting.calibrate`). With ``calibration="stemmer"``
    the transcript is one (ε, δ)-DP instance (Stemmer 2024, Thm 4.3, cutoff c ≥ v);
    with ``"charged"`` one instance with cutoff v whose noise the mechanism certifies
    by the charged lemma (a Rényi-moment bound charged to ⊤ answers, proved in
    ``skdp.mechanisms._charged_calibration``; new, listed for a second review).
    The cap is enforced whatever the data: after the cap-th ⊤ every further query
    raises :class:`QueryBudgetExhaustedError` (answers released by the failing
    call are in ``error.answers``).

    Stopping Stemmer's instance at the cap and reserving the whole plan at the
    first answer are proved sound in ``skdp.prediction._shrinkage_answering``
    (Lemma 1, Lemma 2).

    Notes
    -----
    *Paper constants:* the BSU noise (μ ~ Lap(2/(ε_bt·k)), ν ~ Lap(6/(ε_bt·k))), the
    gap condition, the random label on ⊤, the two update rules. *Practical choices:*
    the thresholds, the cap (the paper's v = O(VC·log T) holds only under its
    utility assumptions), the Stemmer calibration, the δ share δ_bt, the teacher
    count (the privacy minimum, not the paper's accuracy-driven k), surrogate ERMs.
    *Internal state* (``_state``: teachers, rows, the live instance, the generator)
    is non-private: publish answers, not the fitted object.

    **Scores.** Every answer is one released score p (``predict``: ``classes_[1]``
    iff p > ½; ``predict_proba``: [1 − p, p]; ``decision_function``: p − ½), a
    function of the released code and hard-query label (L → t_l/2, R → (1 + t_u)/2,
    ⊤ → ½ ± (t_u − t_l)/4 on the label's side): post-processing, spent like
    ``predict``. A row asked again is answered from the transcript, free
    (``skdp.prediction._scored``). No ``sample_weight``: the teachers' ERMs are
    unweighted (a weighted form would keep the privacy argument — a row still
    reaches one teacher — but is not implemented).

    **Small samples.** The gap condition needs hundreds to thousands of teachers
    (ε = 1, δ = 10⁻⁶, T = 10⁴: 877 in halfspace mode in R², 1 611 oblivious), one row
    each at least. With fewer rows, ``fit`` warns (``PrivacyWarning``, naming the
    rows needed) and the predictor answers as
    :class:`~skdp.prediction.SubsampleAggregatePredictor` planned for
    ``n_queries`` distinct queries would with ⌊n/2⌋ teachers (⌊n/10⌋, that
    baseline's default, for a non-linear ``estimator``; at most ⌈4/ε_q⌉), the plan
    reserved at the first answer and refused beyond (Lemma F in
    ``skdp.prediction._small_sample``). ``small_sample="raise"`` refuses instead.
    Once the fallback has answered, ``partial_fit`` rows are pooled but it stays.

    ``partial_fit(X, y)`` adds blocks of the original size: k grows and later votes
    have a smaller sensitivity than the instances were calibrated for (still
    private); the ledger is untouched; not the same as ``fit`` on all rows.

    References
    ----------
    Yan, "Private Prediction via Shrinkage", Alg. 2–4, Lemma 1, Observation 1,
    Claims 1, 5, 9. — Bun, Steinke & Ullman, "Make Up Your Mind", SODA 2017. —
    Stemmer, "Private Truly-Everlasting Robust-Prediction", 2024, Thm 4.3. —
    Dwork & Feldman, "Privacy-preserving Prediction", COLT 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.hypotheses import Thresholds
    >>> from skdp.prediction import PrivatePredictor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((200_000, 1)); y = (X[:, 0] >= 0.3).astype(int)
    >>> clf = PrivatePredictor(Thresholds(), epsilon=1.0, random_state=0).fit(X, y)
    >>> clf.n_teachers_, clf.calibration_
    (1166, 'charged')
    >>> Xq = rng.random((1000, 1))
    >>> bool(np.mean(clf.predict(Xq) == (Xq[:, 0] >= 0.3)) > 0.9)
    True
    >>> bool(clf.privacy_spent_.epsilon <= 1.0)
    True
    """

    _parameter_constraints: dict = {
        **QueryBudgetedPredictor._parameter_constraints,
        **TEACHER_PARAMETER_CONSTRAINTS,
        "delta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "max_hard_queries": [Interval(numbers.Integral, 1, 10_000, closed="both"),
                             StrOptions({"auto"})],
        "mode": [StrOptions({"auto", "oblivious", "halfspace"})],
        "calibration": [StrOptions(set(CALIBRATIONS))],
        "thresholds": [tuple, list, StrOptions({"auto"})],
        "n_queries": [Interval(numbers.Integral, 2, None, closed="left")],
        "planned_queries": [Interval(numbers.Integral, 2, None, closed="left"),
                            Hidden(StrOptions({"deprecated"}))],
        "small_sample": [StrOptions({"majority", "raise"})],
        "accounting": [StrOptions(set(ACCOUNTING))],
        "n_jobs": [numbers.Integral, None],
        "teacher_update": [StrOptions({"auto", "refit", "none"})],
    }

    def __init__(
        self,
        hypotheses: HypothesisClass | None = None,
        estimator: Any = None,
        *,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        n_teachers: int | str = "auto",
        max_hard_queries: int | str = "auto",
        mode: str = "auto",
        calibration: str = "auto",
        thresholds: tuple[float, float] | str = "auto",
        n_queries: int = 10_000,
        small_sample: str = "majority",
        accounting: str = "tight",
        budget: PrivacyBudget | None = None,
        random_state: int | np.random.Generator | None = None,
        classes: ArrayLike | None = None,
        n_jobs: int | None = None,
        teacher_update: str = "auto",
        planned_queries: int | str = "deprecated",
    ) -> None:
        self.hypotheses = hypotheses
        self.estimator = estimator
        self.epsilon = epsilon
        self.delta = delta
        self.n_teachers = n_teachers
        self.max_hard_queries = max_hard_queries
        self.mode = mode
        self.calibration = calibration
        self.thresholds = thresholds
        self.n_queries = n_queries
        self.small_sample = small_sample
        self.accounting = accounting
        self.budget = budget
        self.random_state = random_state
        self.classes = classes
        self.n_jobs = n_jobs
        self.teacher_update = teacher_update
        self.planned_queries = planned_queries

    # ------------------------------------------------------------------ fitting
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike) -> Self:
        """Split ``(X, y)`` into disjoint blocks and train one teacher per block.

        Spends no privacy (nothing is released); creates a fresh ledger ``budget_``.
        """
        return self._fit(X, y)

    def _planned_queries(self):
        """T: ``n_queries``, or the deprecated alias ``planned_queries`` when given."""
        return self.n_queries if self.planned_queries == "deprecated" else self.planned_queries

    def _fit(self, X, y, classes=None):
        if self.planned_queries != "deprecated":
            warnings.warn("PrivatePredictor: planned_queries was renamed n_queries (the name "
                          "SubsampleAggregatePredictor uses) in 0.1 and will be removed in "
                          "0.3; pass n_queries= instead.", FutureWarning, stacklevel=4)
        epsilon, delta = self._check_privacy_params()
        if delta == 0:
            raise PrivacyParameterError("PrivatePredictor needs δ > 0 (BetweenThresholds).")
        X, y = self._validate_training_data(X, y, reset=True)
        classes = self._set_classes(y, classes)
        hyp, self.mode_, cap, params, k = self._plan_for(epsilon, delta, X.shape[1])
        k_min = params["min_teachers"]
        if X.shape[0] < k and self.small_sample == "raise":
            raise ValueError(self._too_few_rows_message(X.shape[0], k))
        self.classes_ = classes
        y_pm = self._to_pm(y)
        self.calibration_ = params["calibration"]
        self.max_hard_queries_ = cap
        self.thresholds_ = params["thresholds"]
        self.epsilon_bt_ = params["epsilon_bt"]
        self.delta_bt_ = params["delta_bt"]
        self.min_teachers_ = k_min
        self._plan = params
        state = PredictorState(self._new_ledger(epsilon, delta))
        state.forced_X = np.empty((0, X.shape[1]))
        state.forced_y = np.empty(0, dtype=np.int8)
        state.fallback = None
        state.answers = _AnswerCache()
        self._state = state
        state.hypotheses = hyp
        state.k_target = k
        state.pending = (X, y_pm)
        self.n_teachers_ = 0
        state.teachers = None
        state.block_size = 0
        if X.shape[0] < k:
            warnings.warn(
                self._too_few_rows_message(X.shape[0], k) + " Until partial_fit brings them, "
                "the predictor answers like SubsampleAggregatePredictor planned for "
                f"n_queries={self._planned_queries()} queries (its plan charged at the "
                "first answer).",
                PrivacyWarning,
                stacklevel=3,
            )
            self._build_fallback()
            return self
        self._build_teachers()
        return self

    def _build_teachers(self):
        state = self._state
        X, y_pm = state.pending
        k = state.k_target
        data = _Blocks(X, y_pm, _partition(X.shape[0], k, state.rng), k)
        state.pending = None
        state.block_size = math.ceil(X.shape[0] / k)
        update = self.teacher_update
        if update == "auto":  # measured on forests only (benchmarks/teacher_update.py)
            update = "none" if type(self.estimator) in _FORESTS else "refit"
        state.teachers = make_teachers(state.hypotheses, self.estimator, data, self.n_jobs,
                                       update)
        state.teachers.fit(None, None, None)
        self.n_teachers_ = k

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X: ArrayLike, y: ArrayLike, classes: ArrayLike | None = None) -> Self:
        """Add labelled rows as new disjoint teacher blocks (first call: like ``fit``).

        ``classes`` is required on the first call (here or as the parameter). Later
        calls split the rows into ⌈n/b⌉ new blocks of the first fit's block size b,
        train their teachers with the current hard-query labels, and leave
        ``budget_`` untouched; k grows and the votes' sensitivity 1/k shrinks.
        """
        if not hasattr(self, "budget_"):
            self._check_first_partial_fit(classes)
            return self._fit(X, y, classes=classes)
        return self._add_blocks(X, y, classes)

    def _add_blocks(self, X, y, classes):
        if self._state._durable is not None:
            # Every replica holds the training rows of the model file it loaded; the saved
            # state refers to them, so new rows here would fork the replicas' teachers.
            raise ValueError("PrivatePredictor: a durable predictor (make_durable) takes no "
                             "more partial_fit rows; fit a new predictor on all the rows.")
        X, y_pm = self._later_partial_fit_rows(X, y, classes)
        state = self._state
        if state.teachers is None:
            # Still too few rows: pool them and build the teachers once there are
            # enough — unless the fallback already answered (its plan is reserved).
            state.pending = (
                np.concatenate([state.pending[0], X]),
                np.concatenate([state.pending[1], y_pm]),
            )
            if not self._fallback_started():
                if state.pending[0].shape[0] >= state.k_target:
                    state.fallback = None
                    self._build_teachers()
                else:
                    self._build_fallback()
            return self
        data = state.teachers.data
        n_new = max(1, math.ceil(X.shape[0] / state.block_size))
        n_new = min(n_new, X.shape[0])
        start = data.n_blocks
        data.add(X, y_pm, _partition(X.shape[0], n_new, state.rng), n_new)
        through = state.forced_X if self.mode_ == "halfspace" else None
        forced = (None, None) if self.mode_ == "halfspace" else (state.forced_X, state.forced_y)
        state.teachers.fit(*forced, through, only=np.arange(start, data.n_blocks))
        self.n_teachers_ = data.n_blocks
        return self
