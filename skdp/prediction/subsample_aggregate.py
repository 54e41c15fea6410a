"""The subsample-and-aggregate baseline: a fresh noisy teacher vote for every query."""

import functools
import math
import numbers

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..accounting import DiscreteLaplace, PlanItem, account, calibrate, calibrate_plan, compose
from ..exceptions import BudgetExhaustedError
from ..hypotheses import Halfspaces
from ..mechanisms.laplace import geometric_mechanism
from ._base import QueryBudgetedPredictor, QueryBudgetExhaustedError, _StreamState
from ._teachers import (
    TEACHER_PARAMETER_CONSTRAINTS,
    _Blocks,
    _ClassTeachers,
    _EstimatorTeachers,
    _partition,
)

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
    """ε at total δ of ``j`` answers at ε_q (the ledger's running total)."""
    if delta == 0:
        return j * eps_q
    if accounting == "paper":
        return compose(eps_q, 0.0, j, delta, method="optimal").epsilon
    return account([(DiscreteLaplace(eps_q), j)]).epsilon(delta)


class SubsampleAggregatePredictor(QueryBudgetedPredictor):
    """Dwork–Feldman subsample-and-aggregate: a noisy majority of k teachers per query.

    ``fit`` trains one teacher per disjoint random block. Each query's answer is
    the majority of the noisy count c + Z of teachers voting ``classes_[1]``
    (Z exact discrete Laplace, :func:`~skdp.mechanisms.geometric_mechanism`), with
    per-query ε_q = :func:`~skdp.accounting.calibrate` (ε, δ, T, "optimal"): the
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
        The planned number of queries T. The predictor raises once T are used.
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
    random_state : None, int or numpy Generator
        Partition and noise. As for ``PrivatePredictor``: a fixed seed reuses noise
        across fits, so use ``None`` for real releases.

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
    a ``DiscreteLaplace(ε_q)`` event (the majority and the tie coin are
    post-processing of the noisy count); T answers compose to (ε, δ) by the
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
        hypotheses=None,
        estimator=None,
        *,
        epsilon=1.0,
        delta=1e-6,
        n_queries=1000,
        n_teachers="auto",
        accounting="tight",
        budget=None,
        random_state=None,
        classes=None,
    ):
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
    def fit(self, X, y):
        """Split ``(X, y)`` into disjoint blocks and train one teacher per block (free)."""
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
        self.classes_ = classes
        self.epsilon_query_ = eps_q
        rng = self._new_ledger(epsilon, delta)
        state = _StreamState(rng)
        data = _Blocks(X, self._to_pm(y), _partition(n, k, rng), k)
        state.teachers = _ClassTeachers(hyp, data) if hyp is not None else _EstimatorTeachers(
            self.estimator, data
        )
        state.teachers.fit(None, None, None)
        self._state = state
        self.n_teachers_ = k
        return self

    @property
    def n_queries_used_(self):
        check_is_fitted(self, "budget_")
        used = 0
        for label in self._ledger_labels():
            if _CHARGE_TAG in label:
                first, last = label.rsplit(_CHARGE_TAG, 1)[1].split("-")
                used += int(last) - int(first) + 1
        return used

    def _spent_after(self, j):
        if j == 0:
            return 0.0
        if j >= self.n_queries:
            return float(self.epsilon)
        return min(
            _composed_epsilon(self.epsilon_query_, float(self.delta), int(j), self.accounting),
            float(self.epsilon),
        )

    def _answer(self, X):
        n = X.shape[0]
        used = self.n_queries_used_
        if used + n > self.n_queries:
            raise QueryBudgetExhaustedError(
                f"{type(self).__name__}: {n} queries asked but only "
                f"{self.n_queries - used} of the planned n_queries={self.n_queries} remain "
                "(for this predictor and its copies). Nothing was answered or spent."
            )
        eps = self._spent_after(used + n) - self._spent_after(used)
        dlt = float(self.delta) if used == 0 else 0.0
        try:
            self._pay(max(eps, 0.0), dlt, f"{_CHARGE_TAG}{used + 1}-{used + n}")
        except BudgetExhaustedError as exc:
            raise QueryBudgetExhaustedError(str(exc)) from exc
        state = self._state
        k = state.teachers.data.n_blocks
        counts = np.rint(state.teachers.vote(X) * k).astype(np.int64)
        noisy = geometric_mechanism(counts, self.epsilon_query_, random_state=state.rng)
        # Majority of the noisy count; an exact tie is broken by a fair coin.
        twice = 2 * np.asarray(noisy, dtype=np.int64)
        tie = state.rng.random(n) < 0.5
        return np.where((twice > k) | ((twice == k) & tie), 1, -1).astype(np.int8)
