"""The subsample-and-aggregate baseline: a fresh noisy teacher vote for every query."""

from __future__ import annotations

import functools
import math
import numbers
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..accounting import (
    DiscreteLaplace,
    PlanItem,
    PrivacyBudget,
    calibrate,
    calibrate_plan,
    compose,
)
from ..exceptions import BudgetExhaustedError
from ..hypotheses import Halfspaces, HypothesisClass
from ..mechanisms.laplace import geometric_mechanism
from ._base import (
    QueryBudgetedPredictor,
    QueryBudgetExhaustedError,
    claim_queries,
)
from ._scored import _AnswerCache, _ScoredAnswers
from ._state import PredictorState
from ._teachers import (
    TEACHER_PARAMETER_CONSTRAINTS,
    _Blocks,
    _ClassTeachers,
    _EstimatorTeachers,
    _partition,
)

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["SubsampleAggregatePredictor"]

_CHARGE_TAG = "queries "
ACCOUNTING = ("tight", "paper")


@functools.lru_cache(maxsize=64)
def _per_query_epsilon(epsilon, delta, n_queries, accounting="tight"):
    """ε_q of each of ``n_queries`` answers so that all of them are (ε, δ)-DP.

    ``"paper"``: exact optimal composition of pure ε_q-DP steps
    (:func:`skdp.accounting.calibrate`). ``"tight"``: the plan of ``n_queries``
    :class:`~skdp.accounting.DiscreteLaplace` (sensitivity 1) events through
    :func:`skdp.accounting.calibrate_plan` — exactly what runs. A sensitivity-1
    discrete Laplace count has randomized response's privacy-loss distribution, so
    this equals the exact optimal composition (which the tight accountant evaluates
    for one group of equal events): the two settings differ only in the event named.
    At δ = 0 both are ε/T (pure ε-DP composes additively, and that is exact at δ = 0).
    """
    if accounting == "paper":
        return calibrate(epsilon, delta, n_queries, method="optimal").epsilon
    if delta == 0:  # basic composition's even split, rounded down, is exact at δ = 0
        return calibrate(epsilon, 0.0, n_queries, method="basic").epsilon
    return calibrate_plan([PlanItem(DiscreteLaplace, count=n_queries)], epsilon, delta).epsilons[0]


@functools.lru_cache(maxsize=4096)
def _composed_epsilon(eps_q, delta, j, accounting):
    """ε at total δ of ``j`` answers at ε_q (the ledger's running total).

    Both accountings evaluate the exact optimal composition of j pure ε_q-DP events.
    For ``"tight"`` that *is* the accountant's answer for j ``DiscreteLaplace(ε_q)``
    events: a sensitivity-1 discrete Laplace count has randomized response's
    privacy-loss distribution, whose exact composition no upper bound (the PLD) can
    undercut, and :func:`~skdp.accounting.account` returns the smaller of the two
    (measured: identical to the last bit for T ∈ {50, 10³, 10⁴}, ε ∈ {0.5, 1, 4}, j
    from 1 to T − 1), at a fifth to a thirtieth of the accountant's time.
    """
    if delta == 0:
        return j * eps_q
    return compose(eps_q, 0.0, j, delta, method="optimal").epsilon


#: Below this many answers the ledger follows the composition exactly; above, on a
#: grid of ratio _GRID_RATIO (see _ledger_grid).
_GRID_EXACT, _GRID_RATIO = 64, 1.02


def _ledger_grid(j, horizon):
    """The smallest point ≥ j of {1, …, 64} ∪ {⌈64·1.02^i⌉} ∪ {T}: where the ledger's
    running total is evaluated.

    *Why:* the accountant's composition of j answers costs ~40 ms per new j (PLD), so
    charging the exact running total made every single-row call pay for a new
    accountant run. Evaluated on this grid it runs ~470 times over T = 10⁴ answers
    (each cached), so single-row answers almost never wait for it. *Sound:* the
    composed ε of j events never decreases in j, so ε(grid(j)) ≥ ε(j): the ledger
    records at least what was spent, and exactly ε(T) at the horizon. *Cost:* between
    grid points it runs ahead of the exact composition by at most the step from j to
    the next point (ratio ≤ 1.02 in the count, ≈ 1 % in ε, which grows like √j);
    a stream stopped there has used that much more of a shared ``budget``.
    """
    if j <= _GRID_EXACT:
        return j
    steps = math.ceil(math.log(j / _GRID_EXACT) / math.log(_GRID_RATIO))
    point = math.ceil(_GRID_EXACT * _GRID_RATIO ** steps)
    while point < j:  # float rounding of the power
        steps += 1
        point = math.ceil(_GRID_EXACT * _GRID_RATIO ** steps)
    return min(point, horizon)


class _NoisyCounts:
    """The one release of subsample-and-aggregate (its fallback use in Yan's predictor
    shares it)."""

    def _release_counts(self, teachers, X, eps_q):
        """One ε_q-DP release per row: the count of teachers voting +1 plus exact
        discrete Laplace noise (:func:`~skdp.mechanisms.geometric_mechanism`;
        sensitivity 1, since one changed row changes one teacher of disjoint blocks).
        A hook the privacy audit's broken variant overrides; nothing else should."""
        k = teachers.data.n_blocks
        counts = np.rint(teachers.vote(X) * k).astype(np.int64)
        return np.asarray(geometric_mechanism(counts, eps_q, random_state=self._state.rng),
                          dtype=np.int64)


class VoteScores:
    """Scores of released noisy counts: post-processing of the transcript only.

    For the t-th released count N_t = c_t + Z_t of k teachers the score is the
    posterior probability of "all teachers vote +1" against "none does" under a
    two-point prior π_t on the vote: logit p_t = logit π_t + ε_q·(|N_t| − |N_t − k|)
    (the discrete Laplace likelihood ratio). π_t = (Σ_{s<t} N_s/k + 1)/(t + 1) — the
    mean of the *released* counts before t, shrunk towards ½ — clipped to
    [0.001, 0.999]. With π_t = ½ this is the noisy majority (p_t > ½ iff 2N_t > k);
    where the noise dwarfs the teachers' votes (few rows) the released prior takes
    over and the answer tends to the majority label. An exact tie (p_t = ½) is broken
    by a fair coin, moving p_t by 10⁻⁹. p_t ∈ [10⁻¹², 1 − 10⁻¹²].

    Privacy: p_t is a function of N_1, …, N_t (and a coin), so the scores are exactly
    as private as the counts (post-processing).
    """

    def __init__(self) -> None:
        self.total = 0.0
        self.n = 0

    def __call__(self, noisy: NDArray[np.int64], k: int, eps_q: float,
                 rng: np.random.Generator) -> NDArray[np.float64]:
        before = self.total + np.concatenate([[0.0], np.cumsum(noisy[:-1] / k)])
        t = self.n + np.arange(noisy.size)
        prior = np.clip((before + 1.0) / (t + 2.0), 1e-3, 1.0 - 1e-3)
        self.total += float(np.sum(noisy / k))
        self.n += int(noisy.size)
        nf = noisy.astype(float)
        logit = np.log(prior / (1.0 - prior)) + eps_q * (np.abs(nf) - np.abs(nf - k))
        p = np.clip(0.5 * (1.0 + np.tanh(0.5 * logit)), 1e-12, 1.0 - 1e-12)
        coin = rng.random(noisy.size) < 0.5
        return np.where(p == 0.5, np.where(coin, 0.5 + 1e-9, 0.5 - 1e-9), p)


class SubsampleAggregatePredictor(_ScoredAnswers, _NoisyCounts, QueryBudgetedPredictor):
    """Dwork–Feldman subsample-and-aggregate: a noisy majority of k teachers per query.

    ``fit`` trains one teacher per disjoint random block. Each new query releases
    the noisy count N = c + Z of teachers voting ``classes_[1]`` (Z exact discrete
    Laplace, :func:`~skdp.mechanisms.geometric_mechanism`) and answers its score p
    (:class:`VoteScores`: the noisy majority, shrunk towards the majority of the
    earlier released counts): ``predict`` is ``classes_[1]`` iff p > ½,
    ``predict_proba`` is [1 − p, p] and ``decision_function`` p − ½, all from the
    same release. A row asked again is answered from the transcript, free
    (``skdp.prediction._scored``). ``fit`` takes no ``sample_weight`` (the teachers'
    ERMs are unweighted). Per-query ε_q =
    :func:`~skdp.accounting.calibrate` (ε, δ, T, "optimal"): the
    exact optimal composition of T pure ε_q-DP answers is (ε, δ)-DP, so ε_q ≈
    ε/√(2T ln(1/δ)) — the √T dependence Yan's predictor avoids. With
    ``accounting="tight"`` (default) the T discrete-Laplace answers go through
    :func:`~skdp.accounting.calibrate_plan` as ``DiscreteLaplace`` events instead.

    Parameters
    ----------
    hypotheses : HypothesisClass, optional
        Teachers' class; default ``Halfspaces(n_features)``.
    estimator : sklearn classifier, optional
        Use clones of this as teachers instead.
    epsilon : float, default=1.0
        Total ε of the T answers.
    delta : float, default=1e-6
        Total δ (the slack of the optimal composition).
    n_queries : int, default=1000
        The planned number of distinct queries T. The predictor raises once T are
        used (repeated rows are answered from the transcript and do not count).
    n_teachers : int or "auto", default="auto"
        Number k of blocks; ``"auto"``: ⌈4/ε_q⌉ (so the noise's scale is a quarter
        of k) but at most n/10 rows' worth of blocks (at least one).
    accounting : {"tight", "paper"}, default="tight"
        ``"tight"``: ε_q and the ledger from the numerical accountant
        (:func:`skdp.accounting.calibrate_plan` / :func:`skdp.accounting.account`)
        with one ``DiscreteLaplace(ε_q)`` event per answer, never worse than exact
        optimal composition. ``"paper"``: exact optimal composition of pure
        ε_q-DP answers (the earlier calibration). The discrete Laplace mechanism
        with sensitivity 1 has exactly randomized response's privacy-loss
        distribution, the worst case of pure ε-DP, so no accountant can beat
        ``"paper"`` here: the two give the same ε_q.
    classes : array-like of shape (2,), default=None
        The label set, a **public** parameter: ``classes_`` is exactly
        ``np.unique(classes)`` whatever ``y`` holds (one label missing from ``y`` is
        fine), and labels of ``y`` outside it raise ``ValueError``. ``None``: read
        from ``y`` as scikit-learn does, with a
        :class:`~skdp.exceptions.PrivacyLeakWarning` — the label set is then a
        statistic of the private data that the guarantee does not cover.
    budget : PrivacyBudget, optional
        Also charged, call by call.
    random_state : None, int, numpy Generator, RandomState or TestingSeed, default=None
        ``None``: noise from OS entropy, and a copy (deepcopy, pickle) draws fresh
        noise. A seed is a testing mode: the noise is reproducible from
        ``get_params()``, a :class:`~skdp.exceptions.PrivacyWarning` says so, and with
        a ``budget`` it is refused unless wrapped as ``skdp.TestingSeed(seed)``.

    Attributes
    ----------
    classes_, n_features_in_ : as usual
    n_teachers_ : int
    epsilon_query_ : float
        ε_q of each answer.
    budget_ : PrivacyBudget
        Query ledger (total (ε, δ)); after j answers ``budget_.spent`` is the
        composition of j ε_q-DP answers by the chosen ``accounting``. Shared by deep
        copies and pickles.
    privacy_spent_ : PrivacyCost
        ``budget_.spent``.
    n_queries_used_ : int
        Queries answered by this predictor and its copies.

    Privacy
    -------
    One changed row changes one teacher, so the count has sensitivity 1 and each
    answer is ε_q-DP (geometric mechanism; Ghosh, Roughgarden & Sundararajan 2009),
    a ``DiscreteLaplace(ε_q)`` event (the score — hence the label, the
    probabilities and the decision value — is post-processing of the released
    counts and a coin); T answers compose to (ε, δ) by the
    smaller of the accountant's bound and exact optimal composition (``"tight"``;
    each is an upper bound) or by exact optimal composition alone (Kairouz, Oh &
    Viswanath 2015, Thm 3.3; ``"paper"``). A call that would exceed T queries
    raises :class:`QueryBudgetExhaustedError` before answering anything: the refusal
    depends only on public counts, so the predictor is left exactly as before.
    The teachers (trained on the private rows) and the generator live in the private
    attribute ``_state``: non-private state that must not be released.

    References
    ----------
    Dwork & Feldman, "Privacy-preserving Prediction", COLT 2018. — Nissim,
    Raskhodnikova & Smith, "Smooth sensitivity and sampling", STOC 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.hypotheses import Thresholds
    >>> from skdp.prediction import SubsampleAggregatePredictor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((20_000, 1)); y = (X[:, 0] >= 0.3).astype(int)
    >>> clf = SubsampleAggregatePredictor(Thresholds(), n_queries=100, random_state=0)
    >>> _ = clf.fit(X, y).predict(rng.random((100, 1)))
    >>> clf.n_queries_used_, bool(clf.privacy_spent_.epsilon <= 1.0)
    (100, True)
    """

    _parameter_constraints: dict = {
        **QueryBudgetedPredictor._parameter_constraints,
        **TEACHER_PARAMETER_CONSTRAINTS,
        "delta": [Interval(numbers.Real, 0, 1, closed="left")],
        "n_queries": [Interval(numbers.Integral, 1, None, closed="left")],
        "accounting": [StrOptions(set(ACCOUNTING))],
    }

    def __init__(
        self,
        hypotheses: HypothesisClass | None = None,
        estimator: Any = None,
        *,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        n_queries: int = 1000,
        n_teachers: int | str = "auto",
        accounting: str = "tight",
        budget: PrivacyBudget | None = None,
        random_state: int | np.random.Generator | None = None,
        classes: ArrayLike | None = None,
    ) -> None:
        self.hypotheses = hypotheses
        self.estimator = estimator
        self.epsilon = epsilon
        self.delta = delta
        self.n_queries = n_queries
        self.n_teachers = n_teachers
        self.accounting = accounting
        self.budget = budget
        self.random_state = random_state
        self.classes = classes

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike) -> Self:
        """Split ``(X, y)`` into disjoint blocks and train one teacher per block (free)."""
        return self._fit_blocks(X, y)

    def _fit_blocks(self, X, y):
        epsilon, delta = self._check_privacy_params()
        X, y = self._validate_training_data(X, y, reset=True)
        classes = self._set_classes(y)
        if self.hypotheses is not None and self.estimator is not None:
            raise ValueError("Pass either hypotheses= or estimator=, not both.")
        hyp = None
        if self.estimator is None:
            hyp = self.hypotheses if self.hypotheses is not None else Halfspaces(X.shape[1])
            n_hyp = getattr(hyp, "n_features", None)
            if n_hyp is not None and n_hyp != X.shape[1]:
                raise ValueError(f"{hyp!r} expects {n_hyp} feature(s); X has {X.shape[1]}.")
        eps_q = _per_query_epsilon(epsilon, delta, int(self.n_queries), self.accounting)
        n = X.shape[0]
        if self.n_teachers == "auto":
            k = min(math.ceil(4.0 / eps_q), max(1, n // 10))
        else:
            k = min(int(self.n_teachers), n)
        self._warn_if_too_few_teachers(n, k, eps_q, epsilon)
        self.classes_ = classes
        self.epsilon_query_ = eps_q
        rng = self._new_ledger(epsilon, delta)
        state = PredictorState(rng)
        data = _Blocks(X, self._to_pm(y), _partition(n, k, rng), k)
        state.teachers = _ClassTeachers(hyp, data) if hyp is not None else _EstimatorTeachers(
            self.estimator, data
        )
        state.teachers.fit(None, None, None)
        state.answers = _AnswerCache()
        state.scores = VoteScores()
        self._state = state
        self.n_teachers_ = k
        return self

    def _warn_if_too_few_teachers(self, n, k, eps_q, epsilon):
        """Warn at fit when the teachers' vote cannot outweigh one answer's noise.

        ``n_teachers="auto"`` asks for 4/ε_q teachers (scale-1/ε_q noise on a vote of
        k); the rows may allow fewer (10 per teacher). Below that target the answers are
        close to coin flips: raw breast_cancer (398 training rows, defaults: 39 teachers
        for a target of 534) answered 0.42–0.67 over 3 seeds (majority 0.63), 0.70–0.80
        with n_queries=10 (target 40). From public parameters and the row count only.
        """
        need = math.ceil(4.0 / eps_q)
        if k >= need:
            return
        enough = math.floor(epsilon * k / 4.0)  # ε_q ≥ ε/T (basic composition) ≥ 4/k
        fewer = (f"plan n_queries={enough} or fewer ({k} teachers then suffice, by basic "
                 "composition)" if enough >= 1 else "no number of queries is few enough "
                 "at this epsilon")
        warnings.warn(
            f"{type(self).__name__}: {n} rows make {k} teacher(s), but each answer's vote "
            f"gets noise of scale about {1.0 / eps_q:.0f} votes (epsilon={epsilon:g} "
            f"spread over n_queries={self.n_queries} answers): with fewer than {need} "
            f"teachers the answers are close to coin flips. Give {10 * need} rows or more "
            f"(10 per teacher with n_teachers='auto'), {fewer}, or a larger epsilon.",
            UserWarning, stacklevel=3)

    @property
    def n_queries_used_(self) -> int:
        """Distinct queries answered by this predictor and its copies."""
        check_is_fitted(self, "budget_")
        used = 0
        for label in self._ledger_labels():
            if _CHARGE_TAG in label:
                first, last = label.rsplit(_CHARGE_TAG, 1)[1].split("-")
                used += int(last) - int(first) + 1
        return used

    def _spent_after(self, j):
        """What the ledger records after j answers: the composition of the next point
        of :func:`_ledger_grid` at or above j (an upper bound on the composition of j
        answers, since it never decreases in j; exact at every j ≤ 64, at grid points
        and at T)."""
        if j == 0:
            return 0.0
        if j >= self.n_queries:
            return float(self.epsilon)
        return min(
            _composed_epsilon(self.epsilon_query_, float(self.delta),
                              _ledger_grid(int(j), int(self.n_queries)), self.accounting),
            float(self.epsilon),
        )

    def _answer_scores(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        n = X.shape[0]

        def refuse(remaining):
            raise QueryBudgetExhaustedError(
                f"{type(self).__name__}: {n} new queries asked but only "
                f"{remaining} of the planned n_queries={self.n_queries} remain "
                "(for this predictor and its copies). Nothing was answered or spent."
            )

        def pay(a):
            # The composition's increment over the claimed range (δ with the first):
            # the increments of the tiled ranges telescope to the running total.
            eps = self._spent_after(a + n) - self._spent_after(a)
            dlt = float(self.delta) if a == 0 else 0.0
            self._claim(max(eps, 0.0), dlt, f"{_CHARGE_TAG}{a + 1}-{a + n}",
                        cap=(f"{_CHARGE_TAG}{a + 1}-", 1))

        state = self._state
        # The first guess at the ledger's total is the end of this copy's last claim (a
        # total the ledger once had, so a valid start for claim_queries: if another copy
        # claimed after it, the claim is refused and the total re-read). Reading the
        # ledger every call cost O(answers so far) per single-row call.
        hint = [getattr(state, "used_hint", None)]

        def used():
            guess = hint.pop() if hint else None
            return self.n_queries_used_ if guess is None else guess

        try:
            start = claim_queries(used, pay, n, int(self.n_queries), refuse)
        except BudgetExhaustedError as exc:
            if isinstance(exc, QueryBudgetExhaustedError):
                raise
            raise QueryBudgetExhaustedError(str(exc)) from exc
        state.used_hint = start + n
        noisy = self._release_counts(state.teachers, X, self.epsilon_query_)
        return state.scores(noisy, state.teachers.data.n_blocks, self.epsilon_query_,
                            state.rng)
