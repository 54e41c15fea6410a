"""Yan's private predictor via shrinkage (GenericPredictor with G_oblivious / G_halfspace)."""

import math
import numbers
import warnings

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..exceptions import BudgetExhaustedError, PrivacyParameterError, PrivacyWarning
from ..hypotheses import Halfspaces
from ..mechanisms.between_thresholds import BetweenThresholds
from ._base import QueryBudgetedPredictor, QueryBudgetExhaustedError, _StreamState
from ._shrinkage_parameters import ACCOUNTING, T_LOWER, T_UPPER, shrinkage_parameters
from ._teachers import (
    TEACHER_PARAMETER_CONSTRAINTS,
    _Blocks,
    _ClassTeachers,
    _EstimatorTeachers,
    _partition,
)

__all__ = ["PrivatePredictor", "shrinkage_parameters"]

_CHUNK_MIN, _CHUNK_MAX = 256, 16384


class PrivatePredictor(QueryBudgetedPredictor):
    """Yan's private predictor: noisy teacher votes that pay only for hard queries.

    ``fit(X, y)`` splits the labelled sample into ``k`` disjoint random blocks and
    trains one teacher per block. ``predict(X)`` answers the rows of ``X`` in order
    (Yan, Alg. 2 GenericPredictor): the vote q = (1 + mean_i f_i(x))/2 goes to
    BetweenThresholds (BSU calibration, t_l = 3/8, t_u = 5/8, sensitivity 1/k);
    L → ``classes_[0]``, R → ``classes_[1]``; a ⊤ ("hard query") gets a uniformly
    random label, every teacher is updated with it, and a fresh BetweenThresholds
    instance (fresh noise) answers the next query.

    * ``mode="oblivious"`` (Alg. 3 G_oblivious): each teacher is the ERM on its
      block among hypotheses agreeing with every hard query's label. Only teachers
      that disagree with the new label are retrained (the others are still ERMs).
    * ``mode="halfspace"`` (Alg. 4 G_halfspace, needs
      :class:`~skdp.hypotheses.Halfspaces`): teachers are restricted to
      halfspaces whose boundary passes through every hard query, and each picks a
      deep point of that restricted space (approximation: see ``Halfspaces``).
    * ``estimator=`` any scikit-learn classifier: teachers are its clones, refit on
      block + forced labels (weighted above the block if ``fit`` takes
      ``sample_weight``). Privacy is unchanged: it depends only on the disjoint
      blocks and the BetweenThresholds composition.

    Parameters
    ----------
    hypotheses : HypothesisClass, optional
        Teachers' concept class (e.g. ``Thresholds()``, ``Rectangles(2)``,
        ``Halfspaces(5)``). Default: ``Halfspaces(n_features)``.
    estimator : sklearn classifier, optional
        Use clones of this instead of ``hypotheses`` (``mode="oblivious"`` only).
    epsilon : float, default=1.0
        Total ε of the whole transcript of answers.
    delta : float, default=1e-6
        Total δ.
    n_teachers : int or "auto", default="auto"
        Number k of blocks. ``"auto"``: the fewest the BSU gap condition allows at
        this ε, δ and cap (so blocks are as large as possible). An explicit k below
        that minimum is refused with ``PrivacyParameterError``.
    max_hard_queries : int, default=16
        The cap v on hard queries (= BetweenThresholds instances) over the whole
        life of the fitted predictor and its copies. Privacy is the v-fold
        composition, so the cap is what makes the guarantee hold for every stream.
    mode : {"oblivious", "halfspace"}, default="oblivious"
    accounting : {"tight", "paper"}, default="tight"
        How ε, δ are split over the ``max_hard_queries`` instances
        (:func:`shrinkage_parameters`): ``"tight"`` through the numerical
        accountant (:func:`skdp.accounting.calibrate_plan`, δ share chosen to need
        the fewest teachers), ``"paper"`` the earlier closed form (δ_bt = δ/(2·cap),
        exact optimal composition) for comparison.
    classes : array-like of shape (2,), default=None
        The label set, a **public** parameter: ``classes_`` is exactly
        ``np.unique(classes)`` whatever ``y`` holds (one label missing from ``y`` is
        fine), and labels of ``y`` outside it raise ``ValueError``. ``None``: read
        from ``y`` as scikit-learn does, with a
        :class:`~skdp.exceptions.PrivacyLeakWarning` — the label set is then a
        statistic of the private data that the guarantee does not cover.
    budget : PrivacyBudget, optional
        Also charged every instance's cost as it starts (see ``skdp.base``).
    random_state : None, int or numpy Generator
        Partition, hard-query labels and BetweenThresholds noise. A fixed seed makes
        runs reproducible, but two fits with the same seed on overlapping data (e.g.
        the clones of a grid search) draw the *same* noise, which composition
        theorems do not cover: use ``None`` (fresh entropy) for real releases.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
    n_teachers_ : int
        Number of teachers k (0 when the sample is too small; see Notes).
    epsilon_bt_, delta_bt_ : float
        Parameters of each BetweenThresholds instance.
    min_teachers_ : int
        The fewest teachers the BSU gap allows for ``epsilon_bt_``, ``delta_bt_``.
    budget_ : PrivacyBudget
        The query ledger, total (ε, δ); ``budget_.spent`` after i instances is their
        composition by the chosen ``accounting`` (the accountant's bound at δ for
        ``"tight"``, exact optimal composition for ``"paper"``). Shared by deep
        copies and pickles.
    privacy_spent_ : PrivacyCost
        ``budget_.spent``.
    n_hard_queries_ : int
        BetweenThresholds instances started by this predictor and its copies — the
        quantity the cap bounds (each instance ends at a hard query; the latest may
        still be answering).
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
    2015, via :func:`skdp.accounting.calibrate`).
    The cap is enforced whatever the data: after the cap-th ⊤ every further query
    raises :class:`QueryBudgetExhaustedError` (answers released by the failing
    call are in ``error.answers``).

    Notes
    -----
    *Paper constants:* t_l = 3/8, t_u = 5/8, the BSU noise (μ ~ Lap(2/(ε_bt·k)),
    ν ~ Lap(6/(ε_bt·k))) and gap condition, the random label on ⊤, the two update
    rules. *Practical choices:* the cap (the paper's v = O(VC·log T) holds only
    under its utility assumptions; 16 is enough for simple classes up to T ≈ 10⁵),
    the δ share δ_bt (``"paper"``: δ/(2·cap)), ``n_teachers="auto"`` (the paper's
    k = 64/ε_bt·(log(T+1) + log(1/β)) targets accuracy, ours is the privacy
    minimum), surrogate ERMs for rectangles/halfspaces.

    *Internal state.* The teachers, the training rows they are retrained on, the
    live BetweenThresholds instance and the generator are kept in the private
    attribute ``_state``: non-private state (exact teacher votes can be read from
    it for free) that must not be released. Publish answers, not the fitted object.

    **Small samples.** The gap condition needs thousands of teachers (about
    17 400 at ε = 1, δ = 10⁻⁶, cap 16). With fewer rows than that, ``fit`` warns
    (``PrivacyWarning``) and the predictor answers uniformly random labels: data
    independent, free, and useless — never a silent privacy violation.

    ``partial_fit(X, y)`` splits new rows into new blocks of the original block
    size; k grows, so the sensitivity 1/k of later votes shrinks (instances already
    calibrated for a larger sensitivity stay private). The ledger is untouched; new
    teachers are trained with the existing hard-query labels. It is not
    equivalent to ``fit`` on the concatenation (the blocks differ).

    References
    ----------
    Yan, "Private Prediction via Shrinkage", Alg. 2–4, Lemma 1, Observation 1,
    Claims 1, 5, 9. — Bun, Steinke & Ullman, "Make Up Your Mind", SODA 2017. —
    Dwork & Feldman, "Privacy-preserving Prediction", COLT 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.hypotheses import Thresholds
    >>> from skdp.prediction import PrivatePredictor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((200_000, 1)); y = (X[:, 0] >= 0.3).astype(int)
    >>> clf = PrivatePredictor(Thresholds(), epsilon=1.0, random_state=0).fit(X, y)
    >>> clf.n_teachers_
    17406
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
        "max_hard_queries": [Interval(numbers.Integral, 1, 10_000, closed="both")],
        "mode": [StrOptions({"oblivious", "halfspace"})],
        "accounting": [StrOptions(set(ACCOUNTING))],
    }

    def __init__(
        self,
        hypotheses=None,
        estimator=None,
        *,
        epsilon=1.0,
        delta=1e-6,
        n_teachers="auto",
        max_hard_queries=16,
        mode="oblivious",
        accounting="tight",
        budget=None,
        random_state=None,
        classes=None,
    ):
        self.hypotheses = hypotheses
        self.estimator = estimator
        self.epsilon = epsilon
        self.delta = delta
        self.n_teachers = n_teachers
        self.max_hard_queries = max_hard_queries
        self.mode = mode
        self.accounting = accounting
        self.budget = budget
        self.random_state = random_state
        self.classes = classes

    # ------------------------------------------------------------------ fitting
    def _check_config(self, n_features):
        if self.hypotheses is not None and self.estimator is not None:
            raise ValueError("Pass either hypotheses= or estimator=, not both.")
        if self.estimator is not None:
            if not hasattr(self.estimator, "fit") or not hasattr(self.estimator, "predict"):
                raise TypeError("estimator must be a scikit-learn classifier (fit/predict).")
            if self.mode == "halfspace":
                raise ValueError("mode='halfspace' needs hypotheses=Halfspaces(d), not estimator=.")
            return None
        hyp = self.hypotheses if self.hypotheses is not None else Halfspaces(n_features)
        if self.mode == "halfspace" and not hyp.supports_through:
            raise ValueError(
                f"mode='halfspace' needs a class supporting through= (Halfspaces), got {hyp!r}."
            )
        n_hyp = getattr(hyp, "n_features", None)
        if n_hyp is not None and n_hyp != n_features:
            raise ValueError(f"{hyp!r} expects {n_hyp} feature(s); X has {n_features}.")
        return hyp

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Split ``(X, y)`` into disjoint blocks and train one teacher per block.

        Spends no privacy (nothing is released); creates a fresh ledger ``budget_``.
        """
        return self._fit(X, y)

    def _fit(self, X, y, classes=None):
        epsilon, delta = self._check_privacy_params()
        if delta == 0:
            raise PrivacyParameterError("PrivatePredictor needs δ > 0 (BetweenThresholds).")
        X, y = self._validate_training_data(X, y, reset=True)
        classes = self._set_classes(y, classes)
        hyp = self._check_config(X.shape[1])
        params = shrinkage_parameters(epsilon, delta, self.max_hard_queries, self.accounting)
        k_min = params["min_teachers"]
        k = k_min if self.n_teachers == "auto" else int(self.n_teachers)
        if k < k_min:
            raise PrivacyParameterError(
                f"n_teachers={k} is below the {k_min} teachers BetweenThresholds' gap "
                f"condition needs at ε_bt={params['epsilon_bt']:.4g}, δ_bt="
                f"{params['delta_bt']:.3g} (Yan Lemma 1). Use n_teachers='auto', a larger "
                "ε or a smaller max_hard_queries."
            )
        self.classes_ = classes
        y_pm = self._to_pm(y)
        self.epsilon_bt_ = params["epsilon_bt"]
        self.delta_bt_ = params["delta_bt"]
        self.min_teachers_ = k_min
        self._cumulative = params["cumulative_epsilon"]
        state = _StreamState(self._new_ledger(epsilon, delta))
        state.forced_X = np.empty((0, X.shape[1]))
        state.forced_y = np.empty(0, dtype=np.int8)
        self._state = state
        state.hypotheses = hyp
        state.k_target = k
        state.pending = (X, y_pm)
        self.n_teachers_ = 0
        state.teachers = None
        state.block_size = 0
        if X.shape[0] < k:
            warnings.warn(
                f"{type(self).__name__}: {X.shape[0]} rows cannot make the {k} teachers "
                "BetweenThresholds needs at this ε, δ and cap; the predictor will answer "
                "uniformly random labels (no privacy spent, no information used) until "
                "partial_fit brings enough rows.",
                PrivacyWarning,
                stacklevel=3,
            )
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
        state.teachers = (
            _EstimatorTeachers(self.estimator, data)
            if state.hypotheses is None
            else _ClassTeachers(state.hypotheses, data)
        )
        state.teachers.fit(None, None, None)
        self.n_teachers_ = k

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None):
        """Add labelled rows as new disjoint teacher blocks (first call: like ``fit``).

        ``classes`` is required on the first call (here or as the parameter). Later
        calls split the rows into ⌈n/b⌉ new blocks of the first fit's block size b,
        train their teachers with the current hard-query labels, and leave
        ``budget_`` untouched; k grows and the votes' sensitivity 1/k shrinks.
        """
        if not hasattr(self, "budget_"):
            self._check_first_partial_fit(classes)
            return self._fit(X, y, classes=classes)
        X, y = self._validate_training_data(X, y, reset=False)
        self._check_later_partial_fit(y, classes)
        y_pm = self._to_pm(y)
        state = self._state
        if state.teachers is None:
            # Still too few rows: nothing was answered from data yet, so pool the rows
            # and build the teachers once there are enough.
            state.pending = (
                np.concatenate([state.pending[0], X]),
                np.concatenate([state.pending[1], y_pm]),
            )
            if state.pending[0].shape[0] >= state.k_target:
                self._build_teachers()
            return self
        data = state.teachers.data
        n_new = max(1, math.ceil(X.shape[0] / state.block_size))
        n_new = min(n_new, X.shape[0])
        start = data.n_blocks
        data.add(X, y_pm, _partition(X.shape[0], n_new, state.rng), n_new)
        through = state.forced_X if self.mode == "halfspace" else None
        forced = (None, None) if self.mode == "halfspace" else (state.forced_X, state.forced_y)
        state.teachers.fit(*forced, through, only=np.arange(start, data.n_blocks))
        self.n_teachers_ = data.n_blocks
        return self

    # ------------------------------------------------------------------ answering
    @property
    def n_hard_queries_(self):
        check_is_fitted(self, "budget_")
        return sum("BetweenThresholds instance" in label for label in self._ledger_labels())

    @property
    def hard_queries_(self):
        check_is_fitted(self, "budget_")
        return self._state.forced_X.copy()

    @property
    def hard_labels_(self):
        check_is_fitted(self, "budget_")
        return self._from_pm(self._state.forced_y)

    def _start_instance(self, answered):
        state = self._state
        used = self.n_hard_queries_
        if used >= self.max_hard_queries:
            raise QueryBudgetExhaustedError(
                f"{type(self).__name__}: all {self.max_hard_queries} hard queries "
                "(BetweenThresholds instances) of this predictor and its copies are used; "
                f"{len(answered)} answer(s) of this call were released (error.answers).",
                answered,
            )
        cum = self._cumulative
        eps = cum[used] - (cum[used - 1] if used else 0.0)
        dlt = float(self.delta) if used == 0 else 0.0
        try:
            self._pay(eps, dlt, f"BetweenThresholds instance {used + 1}/{self.max_hard_queries}")
        except BudgetExhaustedError as exc:
            raise QueryBudgetExhaustedError(str(exc), answered) from exc
        state.mechanism = self._new_mechanism(1.0 / state.teachers.data.n_blocks)

    def _new_mechanism(self, sensitivity):
        """A fresh BetweenThresholds instance (a hook the privacy audit's broken variant
        overrides; nothing else should)."""
        # Each instance draws its noise from its own child generator, so the main
        # generator's sequence (partition, one seed per instance, one label per hard
        # query) — hence every answer — is the same however the queries are batched.
        child = np.random.default_rng(self._state.rng.integers(2**63))
        return BetweenThresholds(
            T_LOWER, T_UPPER, self.epsilon_bt_, self.delta_bt_, sensitivity=sensitivity,
            calibration="bsu", random_state=child,
        )

    def _hard_query(self, x, label):
        state = self._state
        state.forced_X = np.concatenate([state.forced_X, x[None, :]])
        state.forced_y = np.concatenate([state.forced_y, [label]]).astype(np.int8)
        if self.mode == "halfspace":
            state.teachers.fit(None, None, through=state.forced_X)
            return
        disagree = np.flatnonzero(state.teachers.predict_one(x) != label)
        state.teachers.fit(state.forced_X, state.forced_y, None, only=disagree)

    def _answer(self, X):
        state = self._state
        n = X.shape[0]
        answers = np.empty(n, dtype=np.int8)
        if state.teachers is None:  # too few rows: data-independent coin flips
            answers[:] = state.rng.choice(np.array([-1, 1], dtype=np.int8), size=n)
            return answers
        i = 0
        size = _CHUNK_MIN
        while i < n:
            if state.mechanism is None or state.mechanism.halted:
                state.mechanism = None
                self._start_instance(answers[:i].copy())
                size = _CHUNK_MIN
            # Votes are computed a chunk at a time; a hard query ends the chunk (the
            # teachers change), so chunks start small after one and grow while the
            # stream stays easy. Answers do not depend on the chunking.
            chunk = X[i : i + size]
            size = min(2 * size, _CHUNK_MAX)
            codes = state.mechanism.process(state.teachers.vote(chunk))
            m = codes.size
            answers[i : i + m] = codes
            if codes[-1] == BetweenThresholds.HARD:
                label = np.int8(state.rng.choice(np.array([-1, 1])))
                answers[i + m - 1] = label
                self._hard_query(chunk[m - 1], label)
            i += m
        return answers
