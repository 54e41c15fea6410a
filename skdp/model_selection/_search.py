"""PrivateRandomizedSearchCV: a hyperparameter search whose cost does not grow with the grid."""

from __future__ import annotations

import functools
import itertools
import math
import numbers
import warnings
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.model_selection import ParameterGrid, ParameterSampler
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import _num_samples, check_is_fitted, indexable

from .. import metrics as _metrics
from .._validation import check_delta, check_epsilon, check_random_state_mode, seeded_generator
from ..accounting import PrivacyBudget, PrivacyCost
from ..base import PrivateEstimatorMixin
from ..exceptions import BudgetExhaustedError, PrivacyParameterError, PrivacyWarning
from ._stopping import STOPPINGS, Stopping, make_stopping, search_epsilon

__all__ = ["PrivateRandomizedSearchCV", "SearchPlan"]

# Parameters the search sets on every private step: a distribution over them would
# change what a trial costs (ε, δ) or where it is charged (budget) or its noise.
_OWNED = ("epsilon", "delta", "budget", "random_state")

# The trial ε is rounded down to a multiple of this (a binary fraction), so that the
# ledger's sums of (total − ε₀) + ε₀ are exact for totals like 1, 4 or 8.
_EPS_QUANTUM = 2.0 ** -24

# Below this per-trial ε the exact discrete Laplace sampler of the scores refuses
# (scale 2/ε ≤ 2**30); a plan that needs less is refused before any spend.
_MIN_TRIAL_EPSILON = 2.0 ** -28

# Finite grids up to this size are checked candidate by candidate before any spend.
_MAX_CHECKED = 10_000


class SearchPlan(NamedTuple):
    """What a :class:`PrivateRandomizedSearchCV` will charge, computed from public parameters.

    Attributes
    ----------
    trial_epsilon, trial_delta : float
        ε₀ and δ₀ of one trial: the candidate's fit on the training rows (its
        ``epsilon``/``delta``) and its score on the validation rows (ε₀, δ = 0).
    search : PrivacyCost
        The one charge of the search itself (all trials, whatever their number).
    refit : PrivacyCost
        The refit on all rows (another fit at (ε₀, δ₀); zero without ``refit``).
    total : PrivacyCost
        ``search + refit``: the ledger's increase after ``fit``.
    stopping : Stopping
        The public law of the number of trials.
    """

    trial_epsilon: float
    trial_delta: float
    search: PrivacyCost
    refit: PrivacyCost
    total: PrivacyCost
    stopping: Stopping


def _walk(est: Any):
    """``est`` and every estimator nested in it (Pipeline steps, ``estimator=`` params)."""
    yield est
    if hasattr(est, "get_params"):
        for value in est.get_params(deep=True).values():
            if isinstance(value, BaseEstimator):
                yield value


def _privacy_roles(est: Any) -> tuple[list[Any], list[Any]]:
    """(private learners, non-private components that see the data) nested in ``est``."""
    from sklearn.pipeline import FeatureUnion, Pipeline

    from ..prediction._base import QueryBudgetedPredictor

    private, leaky = [], []
    seen: set[int] = set()
    for part in _walk(est):
        if id(part) in seen:
            continue
        seen.add(id(part))
        if isinstance(part, QueryBudgetedPredictor):
            raise ValueError(
                f"{type(part).__name__} is a query-budgeted private predictor: its answers "
                "are stateful (one validation row changes the answers to the others), so a "
                "validation score of it has no bounded sensitivity. Search its parameters "
                "on public data, or use a learner whose fit releases a model.")
        if isinstance(part, PrivateEstimatorMixin):
            private.append(part)
        elif isinstance(part, (Pipeline, FeatureUnion)):
            continue
        elif type(part).__module__.startswith("skdp.") and not hasattr(part, "predict"):
            continue  # skdp transformers: public bounds, data-independent
        else:
            leaky.append(part)
    return private, leaky


def _configure(base: Any, params: Mapping[str, Any], eps0: float, delta0: float,
               budget: PrivacyBudget | None, seed: Any, public_data: bool) -> Any:
    """A fresh clone of ``base`` with ``params``, its private learner set to (ε₀, δ₀)."""
    est = clone(base).set_params(**params)
    private, leaky = _privacy_roles(est)
    if not public_data:
        if leaky:
            names = sorted({type(p).__name__ for p in leaky})
            raise PrivacyParameterError(
                f"A candidate contains non-private components ({', '.join(names)}): fitted "
                "on the private rows, they are not differentially private, and a "
                "data-dependent transformer (a scaler, an encoder) leaks through the "
                "pipeline. Use skdp learners and skdp.preprocessing's public-bounds "
                "transformers, or pass public_data=True if the data is public.")
        if not private:
            raise PrivacyParameterError(
                f"A candidate ({type(est).__name__}) has no private skdp learner; pass "
                "public_data=True only if the data is public.")
    if len(private) > 1:
        raise ValueError(
            f"A candidate has {len(private)} private learners; the search gives one "
            "learner per trial its ε₀. Combine them in one learner, or search them apart.")
    for learner in private:
        names = learner.get_params(deep=False)
        update: dict[str, Any] = {"epsilon": eps0, "budget": budget}
        if "delta" in names:
            update["delta"] = delta0
        if "random_state" in names:
            update["random_state"] = seed
        learner.set_params(**update)
    return est


def _trial(base: Any, distributions: list[dict[str, Any]], train: np.ndarray,
           val: np.ndarray, X: Any, y: Any, eps0: float, delta0: float, metric: str,
           classes: Any, public_data: bool, seed: int, testing: bool):
    """One trial Q: draw θ, fit at (ε₀, δ₀) on the training rows, release a noisy
    validation score at ε₀. Returns (θ, fitted candidate, score)."""
    rng = np.random.default_rng(seed)
    params = _draw(distributions, rng)
    fit_seed = int(rng.integers(2**31)) if testing else None
    est = _configure(base, params, eps0, delta0, None, fit_seed, public_data)
    with warnings.catch_warnings():
        if testing:  # the seeded-mode warning was given once by the search
            warnings.filterwarnings("ignore", category=PrivacyWarning,
                                    message=".*random_state is set.*")
        est.fit(_safe_indexing(X, train), _safe_indexing(y, train))
    y_val = np.asarray(_safe_indexing(y, val))
    y_pred = np.asarray(est.predict(_safe_indexing(X, val)))
    cells = _metrics._cell_counts(metric, y_val, y_pred, classes)
    score = float(_metrics._noisy_scores(metric, cells, eps0, rng))
    return params, est, score


def _draw(distributions: list[dict[str, Any]], rng: np.random.Generator) -> dict[str, Any]:
    """One candidate, drawn independently of every other trial (i.i.d. trials are what the
    random-stopping theorem composes; sampling a grid without replacement is not)."""
    state = np.random.RandomState(rng.integers(2**31))
    return dict(next(iter(ParameterSampler(distributions, n_iter=1, random_state=state))))


def _select(results: list[tuple[dict[str, Any], Any, float]]) -> int:
    """Index of the best noisy score; ties go to the earliest trial (trials are i.i.d.,
    so this is a uniformly random tie-break in law)."""
    return int(np.argmax([score for _, _, score in results]))


@functools.lru_cache(maxsize=256)
def _plan(epsilon: float, delta: float, law: Stopping, refit: bool) -> SearchPlan:
    """The plan of :meth:`PrivateRandomizedSearchCV.plan` (public inputs only; cached,
    since each bisection step converts a Rényi curve)."""
    n_fits = law.mean + refit
    delta0 = delta / (2.0 * n_fits) if delta > 0 else 0.0
    delta_conv = delta - n_fits * delta0

    def fits(eps0: float) -> bool:
        return search_epsilon(eps0, law, delta_conv) + refit * eps0 <= epsilon

    lo, hi = 0.0, epsilon
    while hi - lo > _EPS_QUANTUM / 4:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    # The largest multiple of the quantum that fits: the boundary lies in [lo, hi].
    eps0 = math.floor(hi / _EPS_QUANTUM) * _EPS_QUANTUM
    while eps0 >= _MIN_TRIAL_EPSILON and not fits(eps0):
        eps0 -= _EPS_QUANTUM
    if eps0 < _MIN_TRIAL_EPSILON:
        raise PrivacyParameterError(
            f"epsilon={epsilon:g} leaves no usable per-trial ε with mean_trials="
            f"{law.mean:g}: raise epsilon or lower mean_trials.")
    refit_cost = PrivacyCost(eps0, delta0) if refit else PrivacyCost(0.0, 0.0)
    search_cost = PrivacyCost(epsilon - refit_cost.epsilon, delta - refit_cost.delta)
    total = PrivacyCost(search_cost.epsilon + refit_cost.epsilon,
                        search_cost.delta + refit_cost.delta)
    return SearchPlan(eps0, delta0, search_cost, refit_cost, total, law)


class PrivateRandomizedSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Private hyperparameter search by random stopping: cost independent of the grid.

    Each *trial* draws a candidate from ``param_distributions`` (independently,
    with replacement), fits it with per-trial privacy (ε₀, δ₀) on a fixed training part
    of the rows, and releases a noisy accuracy of it on the held-out validation part
    (the geometric mechanism of :func:`skdp.metrics.make_private_scorer`, at ε₀). The
    number of trials K is random, drawn from a public law with mean ``mean_trials``;
    only the best trial — its parameters, its fitted model and its noisy score — is
    released. The whole search is charged once, before the first trial, and costs a
    small constant times ε₀ however many candidates the distributions hold (Liu &
    Talwar, STOC 2019; Papernot & Steinke, ICLR 2022).

    Parameters
    ----------
    estimator : estimator
        A classifier whose data-seeing parts are private: an skdp learner
        (:class:`~skdp.base.PrivateEstimatorMixin`), or a :class:`~sklearn.pipeline.Pipeline`
        of skdp public-bounds transformers and one skdp learner. Its ``epsilon``,
        ``delta``, ``budget`` and ``random_state`` are set by the search.
    param_distributions : dict or list of dicts
        As in :class:`~sklearn.model_selection.RandomizedSearchCV`: lists (sampled
        uniformly) or objects with ``rvs``. Values may be whole estimators (a Pipeline
        step). They must not set ``epsilon``, ``delta``, ``budget`` or ``random_state``.
    epsilon : float
        Total ε > 0 of the whole search (and of the refit, with ``refit=True``).
    delta : float
        Total δ in [0, 1). δ = 0 needs the truncated negative binomial law and
        learners that accept δ₀ = 0.
    budget : PrivacyBudget
        The ledger charged: once for the search, once more for a refit.
        ``best_estimator_``'s learner holds it afterwards, so further releases from
        the model (e.g. ``partial_fit``) are charged there too.
    mean_trials : float, default=30
        E[K], the public mean number of trials (> 1 for the truncated negative
        binomial). In pure DP the cost does not depend on it (only the run time does).
    stopping : {"truncated_negative_binomial", "poisson"}, default="truncated_negative_binomial"
        The public law of K.
    eta : float, default=1.0
        η > −1 of the truncated negative binomial: the search costs (2+η)·ε₀ in pure
        DP. 1 is the geometric law of Liu & Talwar (3ε₀), the default; 0 the
        logarithmic law (2ε₀), which leaves more ε₀ per trial but runs a single trial
        with probability (1−γ)/log(1/γ) — 27 % at E[K] = 10, 20 % at E[K] = 30 (the
        geometric law: 1/E[K]) — and then picks a random candidate. Ignored for
        Poisson.
    validation_fraction : float, default=0.25
        Share of the rows held out for the scores. The split is by row position
        (a uniformly random permutation of positions, independent of the data), never
        stratified.
    metric : {"accuracy", "balanced_accuracy"}, default="accuracy"
        The released validation statistic.
    classes : array-like, optional
        The public label set, required for ``"balanced_accuracy"``.
    refit : bool, default=False
        False: ``best_estimator_`` is the winning trial's model (trained on the
        training part, released by the search at no further cost). True: the best
        parameters are fitted again on all rows at (ε₀, δ₀) — another charge, in the
        plan (ε₀ is then smaller, since the total is fixed).
    public_data : bool, default=False
        True allows candidates that are not private (a plain scikit-learn baseline,
        a data-dependent scaler). Only for data that is public: the charges are the
        same, but no privacy is claimed for anything the search releases.
    n_jobs : int, optional
        Trials run in parallel through joblib (any backend, dask included).
    random_state : None or skdp.TestingSeed, default=None
        None draws everything secret (K, the candidates, the split, the noise) from OS
        entropy, never stored. A :class:`~skdp.TestingSeed` makes the search
        reproducible — a testing mode that voids the guarantee (K and the losing
        trials could be replayed); a bare seed is refused, since a budget is always
        given.

    Attributes
    ----------
    best_params_ : dict
        The winning trial's parameters.
    best_score_ : float
        Its noisy validation score (a release; not the exact accuracy).
    best_estimator_ : estimator
        The winning trial's model, or its refit on all rows with ``refit=True``.
    best_index_ : int
        Always 0: ``cv_results_`` holds the released trial only.
    cv_results_ : dict of arrays
        scikit-learn's layout with one row: the released parameters, score and rank.
        The number of trials, the losing candidates and their scores are not released.
    plan_ : SearchPlan
        What the fit charged (:meth:`plan`).
    classes_ : ndarray
        The best estimator's classes.

    Privacy
    -------
    The whole search, refit included, is (ε, δ)-DP for the given totals under
    replacing one row: each trial is (ε₀, δ₀)-DP, and releasing only the best of a
    secret, randomly many trials costs (2+η)·ε₀ or less (Papernot & Steinke 2022),
    whatever the number of candidates; the ledger is charged the plan's total.

    The argument. Neighbours replace one row (as everywhere in skdp). Every trial uses
    the same split, fixed by row position and independent of the data, so the replaced
    row is either a training row or a validation row:

    * *One trial is (ε₀, δ₀)-DP.* A training row changes only the fit, which the
      learner's guarantee makes (ε₀, δ₀)-DP; the score is then post-processing of the
      model with the fixed validation rows. A validation row changes only the score:
      the noisy (correct, wrong) counts of :mod:`skdp.metrics` (ℓ1-sensitivity 2,
      discrete Laplace of scale 2/ε₀) are ε₀-DP. Parallel composition over the two
      disjoint parts gives (ε₀, δ₀); the draw of θ is independent of the data.
    * *Pure part.* An (ε₀, δ₀)-DP pair is δ₀-close to an ε₀-DP pair: it is a
      post-processing of (ε₀, δ₀) randomized response, which with probability δ₀
      reveals the data and otherwise is ε₀ randomized response (Kairouz, Oh &
      Viswanath 2015). Couple the K trials' δ₀-coins on the two data sets: with
      probability 1 − E[(1 − δ₀)^K] ≥ 1 − E[K]·δ₀ no coin fires, and conditioned on
      that the search is the best of K′ i.i.d. ε₀-DP trials, K′ the law of K tilted by
      (1 − δ₀)^k — a truncated negative binomial with larger γ, or a Poisson with
      smaller μ, both of which only lower the bounds below. So the search is
      (ε, δ_conv + E[K]·δ₀)-DP when the best of K ε₀-DP trials is (ε, δ_conv)-DP.
    * *Random stopping.* An ε₀-DP trial has the Rényi divergences of ε₀-randomized
      response. Releasing the best of K ~ D_{η,γ} i.i.d. trials is (λ, ε′)-RDP with
      ε′ = D_λ + min_λ̂[(1+η)(1 − 1/λ̂)·D_λ̂ + (1+η)·log(1/γ)/λ̂] + log E[K]/(λ − 1)
      (Papernot & Steinke 2022, Thm 2; the pure limit λ → ∞ gives (2+η)ε₀ at
      λ̂ = ∞, Cor. 4, and the geometric η = 1 the 3ε₀ of Liu & Talwar); with
      K ~ Poisson(μ), ε′ = D_λ + log μ/(λ − 1) where e^{ε₀} ≤ 1 + 1/(λ − 1) (ibid.,
      Thm 6). The conversion to (ε, δ_conv) is skdp's tight accountant's
      (:mod:`skdp.accounting._rdp`, Canonne, Kamath & Steinke 2020); ties between
      noisy scores go to the earliest trial, which for i.i.d. trials is a uniformly
      random tie-break (a total order on outputs extended by a uniform key).
    * *Only the best is released.* K itself must stay secret: given K the search is a
      K-fold composition. ``cv_results_`` therefore holds one row, the search keeps
      nothing of the other trials, and the time a fit takes (which grows with K) is a
      side channel outside skdp's threat model.
    * *The plan.* δ₀ = δ / (2(E[K] + refit)) and δ_conv = δ/2; ε₀ is the largest
      multiple of 2⁻²⁴ with ε_search(ε₀) + refit·ε₀ ≤ ε. The search charges
      (ε − refit·ε₀, δ − refit·δ₀) — at least what the analysis needs — and the refit,
      a fit on all rows after the release (sequential composition), is charged
      (ε₀, δ₀) by the search just before it runs. The ledger therefore grows by
      exactly the plan's total (ε, δ), whatever the learner itself would charge.
    * *Public data.* With ``public_data=True`` and a non-private candidate none of
      this holds (its fit has no ε₀); use it only where the data may be looked at.

    Errors in a trial (an exception from a candidate's fit) stop the search after its
    charge; nothing but the exception is released.

    References
    ----------
    J. Liu and K. Talwar. Private selection from private candidates. STOC 2019.
    N. Papernot and T. Steinke. Hyperparameter tuning with Rényi differential privacy.
    ICLR 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import DPDecisionListClassifier, PrivacyBudget
    >>> from skdp.model_selection import PrivateRandomizedSearchCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 2, size=(400, 6)); y = X[:, 0] | X[:, 1]
    >>> budget = PrivacyBudget(epsilon=4.0, delta=1e-5)
    >>> model = DPDecisionListClassifier(classes=[0, 1])
    >>> search = PrivateRandomizedSearchCV(model, {"max_rules": [1, 2, 4, 8]},
    ...                                    epsilon=3.0, delta=1e-6, budget=budget)
    >>> search.plan().trial_epsilon               # 3ε₀ (geometric law) = 3
    1.0
    >>> search = search.fit(X, y)
    >>> budget.spent.epsilon                      # the whole search, whatever K was
    3.0
    """

    def __init__(self, estimator: Any, param_distributions: Any, *, epsilon: float,
                 delta: float, budget: PrivacyBudget, mean_trials: float = 30.0,
                 stopping: str = "truncated_negative_binomial", eta: float = 1.0,
                 validation_fraction: float = 0.25, metric: str = "accuracy",
                 classes: Any = None, refit: bool = False, public_data: bool = False,
                 n_jobs: int | None = None, random_state: Any = None) -> None:
        self.estimator = estimator
        self.param_distributions = param_distributions
        self.epsilon = epsilon
        self.delta = delta
        self.budget = budget
        self.mean_trials = mean_trials
        self.stopping = stopping
        self.eta = eta
        self.validation_fraction = validation_fraction
        self.metric = metric
        self.classes = classes
        self.refit = refit
        self.public_data = public_data
        self.n_jobs = n_jobs
        self.random_state = random_state

    # ------------------------------------------------------------------ checks

    def _distributions(self) -> list[dict[str, Any]]:
        dists = self.param_distributions
        dists = [dists] if isinstance(dists, Mapping) else dists
        if not isinstance(dists, (list, tuple)) or not dists:
            raise ValueError("param_distributions must be a non-empty dict or a non-empty "
                             "list of dicts.")
        out = []
        for d in dists:
            if not isinstance(d, Mapping) or not d:
                raise ValueError("param_distributions must hold non-empty dicts of "
                                 "parameter name -> list or distribution.")
            for key, value in d.items():
                if not isinstance(key, str):
                    raise ValueError("param_distributions' keys must be parameter names.")
                if key.rsplit("__", 1)[-1] in _OWNED:
                    raise ValueError(
                        f"param_distributions sets {key!r}: the search sets every private "
                        "learner's epsilon, delta, budget and random_state from its own "
                        "plan (a distribution over them would change what a trial costs).")
                if not hasattr(value, "rvs"):
                    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
                        raise ValueError(f"param_distributions[{key!r}] must be a list or "
                                         "have an rvs method.")
                    if len(value) == 0:
                        raise ValueError(f"param_distributions[{key!r}] is empty.")
            out.append(dict(d))
        return out

    def _stopping_law(self) -> Stopping:
        if self.stopping not in STOPPINGS:
            raise ValueError(f"stopping must be one of {STOPPINGS}, got {self.stopping!r}.")
        mean = self.mean_trials
        if isinstance(mean, bool) or not isinstance(mean, numbers.Real) \
                or not math.isfinite(mean) or not 0 < mean <= 1e6:
            raise ValueError(f"mean_trials must be a number in (0, 1e6], got {mean!r}.")
        if self.stopping == "poisson":
            return make_stopping("poisson", float(mean))
        if mean <= 1:
            raise ValueError("mean_trials must exceed 1 for the truncated negative binomial "
                             "(K ≥ 1, so E[K] = 1 would mean one trial).")
        eta = self.eta
        if isinstance(eta, bool) or not isinstance(eta, numbers.Real) \
                or not math.isfinite(eta) or not eta > -1:
            raise ValueError(f"eta must be a finite number > -1, got {eta!r}.")
        return make_stopping(self.stopping, float(mean), float(eta))

    def plan(self) -> SearchPlan:
        """The charges of :meth:`fit`, from public parameters only (nothing is spent).

        Raises
        ------
        PrivacyParameterError
            If ε or δ are invalid, or ε is too small for any useful trial.
        ValueError
            If the stopping parameters are invalid.
        """
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta)
        law = self._stopping_law()
        if law.kind == "poisson" and delta == 0:
            raise PrivacyParameterError(
                "stopping='poisson' needs delta > 0 (its bound is Rényi DP only); use the "
                "truncated negative binomial for delta = 0.")
        return _plan(epsilon, delta, law, bool(self.refit))

    def _check(self) -> tuple[SearchPlan, list[dict[str, Any]], str, Any, bool]:
        """Everything that can be checked without data, before any spend."""
        plan = self.plan()
        if not isinstance(self.budget, PrivacyBudget):
            raise PrivacyParameterError(
                "PrivateRandomizedSearchCV needs budget=PrivacyBudget(...): the search is "
                f"a release and must be charged; got a {type(self.budget).__name__}.")
        testing = check_random_state_mode(self.random_state, True,
                                          "PrivateRandomizedSearchCV")
        metric, _, classes = _metrics._check_params(self.metric, plan.trial_epsilon,
                                                    self.budget, self.classes)
        frac = self.validation_fraction
        if isinstance(frac, bool) or not isinstance(frac, numbers.Real) \
                or not 0 < frac < 1:
            raise ValueError(f"validation_fraction must be in (0, 1), got {frac!r}.")
        if not is_classifier(self.estimator) and not self.public_data:
            raise ValueError("PrivateRandomizedSearchCV scores classifiers (accuracy); "
                             f"{type(self.estimator).__name__} is not one.")
        dists = self._distributions()
        self._check_candidates(dists, plan)
        return plan, dists, metric, classes, testing

    def _check_candidates(self, dists: list[dict[str, Any]], plan: SearchPlan) -> None:
        """Configure candidates (every one of a finite grid, else a sample) and validate
        their parameters, so a bad candidate fails before the charge."""
        finite = all(not hasattr(v, "rvs") for d in dists for v in d.values())
        if finite and len(ParameterGrid(dists)) <= _MAX_CHECKED:
            candidates = iter(ParameterGrid(dists))
        else:  # public randomness: which candidates are checked reveals nothing
            rng = np.random.default_rng(0)
            candidates = (_draw(dists, rng) for _ in range(50))
        for params in itertools.islice(candidates, _MAX_CHECKED):
            est = _configure(self.estimator, params, plan.trial_epsilon, plan.trial_delta,
                             None, None, bool(self.public_data))
            for part in _walk(est):
                if hasattr(part, "_parameter_constraints"):
                    part._validate_params()
                if isinstance(part, PrivateEstimatorMixin):
                    part._check_privacy_params()

    # ------------------------------------------------------------------ fit

    def fit(self, X: Any, y: Any) -> PrivateRandomizedSearchCV:
        """Charge the plan's search cost, run the trials, release the best (then refit).

        Raises
        ------
        BudgetExhaustedError
            If ``budget`` cannot pay the plan's total; nothing is spent.
        PrivacyParameterError, ValueError
            On bad parameters or a candidate that is not private — before any spend.
        """
        plan, dists, metric, classes, testing = self._check()
        if y is None:
            raise ValueError("PrivateRandomizedSearchCV needs labels y.")
        X, y = indexable(X, y)
        n = _num_samples(X)
        n_val = round(self.validation_fraction * n)
        if n_val < 1 or n - n_val < 1:
            raise ValueError("Too few rows for a training and a validation part at this "
                             "validation_fraction.")
        if not self.budget.can_spend(*plan.total):
            raise BudgetExhaustedError(
                f"The search's plan costs (ε={plan.total.epsilon:g}, "
                f"δ={plan.total.delta:g}), more than the budget has left "
                f"({self.budget.remaining}); nothing was spent.")
        if testing:
            warnings.warn("PrivateRandomizedSearchCV: random_state is set, so the number "
                          "of trials, the candidates and the noise are reproducible: a "
                          "testing mode; fit with random_state=None to publish.",
                          PrivacyWarning, stacklevel=2)
            rng = seeded_generator(self.random_state)
        else:
            rng = np.random.default_rng()  # OS entropy: K and the trials' seeds, never stored

        law = plan.stopping
        label = (f"PrivateRandomizedSearchCV({type(self.estimator).__name__}, "
                 f"{law.kind}, E[K]={law.mean:g}"
                 + (f", eta={law.eta:g}" if law.kind != "poisson" else "")
                 + f", eps0={plan.trial_epsilon:g}): the whole search")
        # The one charge of the search commits before any trial sees a row.
        self.budget._charge(plan.search.epsilon, plan.search.delta, label)

        perm = rng.permutation(n)
        val, train = np.sort(perm[:n_val]), np.sort(perm[n_val:])
        k = law.sample(rng)
        seeds = rng.integers(2**63, size=k)
        results = Parallel(n_jobs=self.n_jobs)(
            delayed(_trial)(self.estimator, dists, train, val, X, y, plan.trial_epsilon,
                            plan.trial_delta, metric, classes, bool(self.public_data),
                            int(s), testing)
            for s in seeds)
        del perm, train, val, seeds, k  # nothing of the losing trials is kept

        if results:
            best = results[_select(results)]
            self.best_params_, model, self.best_score_ = best
        else:  # Poisson drew K = 0: the release is "nothing"; the defaults stand
            warnings.warn("The Poisson stopping law drew no trial: the search released "
                          "nothing and best_params_ is empty (the estimator as given).",
                          PrivacyWarning, stacklevel=2)
            self.best_params_, model, self.best_score_ = {}, None, math.nan
        del results

        if self.refit:
            # Charged by the search, not by the learner: the ledger then grows by the
            # plan's total exactly, whatever the learner's own fit would have charged.
            self.budget._charge(plan.refit.epsilon, plan.refit.delta,
                                label.replace("the whole search", "refit on all rows"))
            refit_seed = int(rng.integers(2**31)) if testing else None
            model = _configure(self.estimator, self.best_params_, plan.trial_epsilon,
                               plan.trial_delta, None, refit_seed, bool(self.public_data))
            with warnings.catch_warnings():
                if testing:
                    warnings.filterwarnings("ignore", category=PrivacyWarning,
                                            message=".*random_state is set.*")
                model.fit(X, y)
        if model is not None:
            # A released model: later releases from it (a partial_fit) charge the user's
            # ledger, not the budget-less one the trial ran with.
            for learner in _privacy_roles(model)[0]:
                learner.set_params(budget=self.budget)
            self.best_estimator_ = model
        self.best_index_ = 0
        self.cv_results_ = self._results()
        self.plan_ = plan
        self.multimetric_ = False
        return self

    def _results(self) -> dict[str, Any]:
        """scikit-learn's cv_results_ layout, for the released trial only."""
        results: dict[str, Any] = {
            "params": [self.best_params_],
            "mean_test_score": np.array([self.best_score_]),
            "rank_test_score": np.array([1], dtype=np.int32),
        }
        for name, value in self.best_params_.items():
            column = np.ma.MaskedArray(np.empty(1, dtype=object), mask=False)
            column[0] = value
            results[f"param_{name}"] = column
        return results

    # ------------------------------------------------------------------ delegation

    def _best(self) -> Any:
        check_is_fitted(self, "best_index_")
        if not hasattr(self, "best_estimator_"):
            raise AttributeError("No best_estimator_: the search released no trial.")
        return self.best_estimator_

    def predict(self, X: Any) -> Any:
        """``best_estimator_.predict(X)``."""
        return self._best().predict(X)

    def predict_proba(self, X: Any) -> Any:
        """``best_estimator_.predict_proba(X)``."""
        return self._best().predict_proba(X)

    def decision_function(self, X: Any) -> Any:
        """``best_estimator_.decision_function(X)``."""
        return self._best().decision_function(X)

    def score(self, X: Any, y: Any) -> float:
        """``best_estimator_.score(X, y)``: the *exact* accuracy on ``(X, y)``.

        Exact, not private: use it on public or test data, not on the rows the budget
        protects.
        """
        return self._best().score(X, y)

    @property
    def classes_(self) -> Any:
        """The best estimator's classes."""
        return self._best().classes_

    @property
    def n_features_in_(self) -> int:
        """The best estimator's number of features."""
        return self._best().n_features_in_
