"""Private scores for scikit-learn's model-selection tools.

:func:`make_private_scorer` returns a scorer for ``scoring=`` in
:class:`~sklearn.model_selection.GridSearchCV`,
:class:`~sklearn.model_selection.RandomizedSearchCV`,
:func:`~sklearn.model_selection.cross_val_score` and
:func:`~sklearn.model_selection.cross_validate`. Every call releases a noisy statistic
of the rows it is given (a validation fold) and charges the ledger before it returns,
so the scores, ``cv_results_``, ``best_score_`` and ``best_params_`` of a search that
uses it are post-processing of paid releases.

Without it (``scoring=None`` or a string), a search over skdp estimators charges the
*fits* only: its scores are computed exactly on the private validation folds, and
``cv_results_``, ``best_score_`` and ``best_params_`` are **not** differentially
private. That is a research mode for data you are allowed to look at.

Notes
-----

**Privacy of one call.** Neighbours are as everywhere in skdp: the validation folds
``(X, y)`` differ by replacing one row (adding or removing one row is the one-cell case
below). The model is fixed — it is the output of a fit that was paid for separately — so
its predictions are a fixed function applied row by row.

*Accuracy.* The call computes the cell vector ``v = (c, w)``: ``c`` rows predicted
correctly and ``w`` rows predicted wrongly. Each row falls in exactly one cell, so
adding or removing a row changes ``v`` by 1 in ℓ1 and replacing a row by at most 2. The
call releases ``v + Z`` with ``Z`` two independent exact discrete Laplace draws of scale
``2/ε`` (:func:`~skdp.mechanisms.laplace.geometric_mechanism` with ``sensitivity=2``):
ε-DP under replacement (ε/2 under add/remove) by the geometric mechanism's guarantee
(Ghosh, Roughgarden & Sundararajan 2009). The score ``max(c̃, 0) / max(max(c̃, 0) +
max(w̃, 0), 1)`` is post-processing.

*The fold size.* The exact fold size ``n = c + w`` is never used: the denominator is the
*noisy* ``c̃ + w̃``, so the release covers it. (Dividing a noisy ``c̃`` by the exact
``n`` would publish ``n``, and fold sizes are not public in general: under
scikit-learn's default ``StratifiedKFold`` they depend on the class counts, and under
add/remove neighbours on the number of rows.)

*Balanced accuracy.* With the public label set ``classes`` (K labels), the cells are
``(c_k, w_k)`` for each class k: the rows whose true label is ``classes[k]``, predicted
correctly or wrongly (a row whose true label is not in ``classes`` falls in no cell).
Again each row is in at most one cell, so the 2K-vector has ℓ1-sensitivity 1 under
add/remove and 2 under replacement; the same noise makes the call ε-DP, and the score —
the mean over classes of ``max(c̃_k, 0) / max(max(c̃_k, 0) + max(w̃_k, 0), 1)`` — is
post-processing. The label set must be given: read from ``y`` it would be a statistic of
the private data.

**Privacy of a search (composition).** Every call is charged ε, whichever rows it sees —
the k folds of one candidate are **not** composed in parallel. Parallel composition
would be sound only for disjoint folds each seen once, and a scorer sees rows, not fold
indices: it cannot tell k-fold from ``ShuffleSplit`` (overlapping folds), nor the second
search over the same data from the first, nor one fold scored twice
(``return_train_score=True`` scores the training rows too). Charging each call makes the
ledger right under any splitter, any reuse and any ``n_jobs`` or backend; the price is a
factor k over the parallel bound. So a search with C candidates and a k-fold splitter
costs ``C · k · ε`` for its scores (:meth:`PrivateScorer.cost`), plus what the fits cost
— with ``refit=True`` that is ``C · k + 1`` fits. By sequential composition (and
post-processing for ``best_params_``), the whole search is private at the ledger's
total.

**The splitter.** One condition is the splitter's, not the scorer's: the argument above
holds per call for the rows the call is given. Over the data set, one replaced row
changes each validation fold by at most one row when the split is a function of the row
*positions* (``KFold`` with or without ``shuffle``, ``ShuffleSplit``, a fixed list of
index arrays). ``StratifiedKFold`` — scikit-learn's default for ``cv=int`` with a
classifier — assigns rows by their rank within their class, so one changed label can
move several rows between folds (group privacy then applies). Pass ``cv=KFold(k)`` for
the guarantee as stated; the same holds for the fits.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._validation import check_epsilon
from .accounting import PrivacyBudget, PrivacyCost
from .exceptions import PrivacyParameterError
from .mechanisms.laplace import _rational_scale, geometric_mechanism

__all__ = ["PrivateScorer", "make_private_scorer"]

_METRICS = ("accuracy", "balanced_accuracy")

# ℓ1-sensitivity of the cell vector under replacing one row (module attribute so that
# the audit's broken twin can halve the noise through the real code path).
_SENSITIVITY = 2


def _cell_counts(metric: str, y_true: NDArray[Any], y_pred: NDArray[Any],
                 classes: NDArray[Any] | None) -> NDArray[np.int64]:
    """The exact cell vector of one fold: (correct, wrong), per class for balanced accuracy."""
    correct = np.asarray(y_true == y_pred, dtype=bool)
    if metric == "accuracy":
        c = int(correct.sum())
        return np.array([c, correct.size - c], dtype=np.int64)
    assert classes is not None
    cells = np.zeros((len(classes), 2), dtype=np.int64)
    for k, label in enumerate(classes):
        in_class = y_true == label
        cells[k, 0] = int((in_class & correct).sum())
        cells[k, 1] = int((in_class & ~correct).sum())
    return cells.ravel()


def _scores_from_noisy(metric: str, noisy: NDArray[np.int64]) -> NDArray[np.float64]:
    """Scores from noisy cell vectors (last axis), post-processing only."""
    pairs = np.maximum(np.asarray(noisy, dtype=np.float64), 0.0)
    pairs = pairs.reshape((*pairs.shape[:-1], -1, 2))
    rates = pairs[..., 0] / np.maximum(pairs[..., 0] + pairs[..., 1], 1.0)
    return rates.mean(axis=-1)  # one pair for accuracy; the mean over classes otherwise


def _noisy_scores(metric: str, cells: NDArray[np.int64], epsilon: float,
                  random_state: Any) -> NDArray[np.float64]:
    """The release: noisy cells (geometric mechanism, ε-DP under replacement) → scores.

    ``cells`` may carry leading axes (the audit releases many copies in one call);
    each copy gets independent noise.
    """
    noisy = geometric_mechanism(cells, epsilon, sensitivity=_SENSITIVITY,
                                random_state=random_state)
    return _scores_from_noisy(metric, np.asarray(noisy))


def _n_splits(cv: Any) -> int:
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        n = int(cv)
    elif hasattr(cv, "get_n_splits"):
        try:
            n = int(cv.get_n_splits())
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{type(cv).__name__}.get_n_splits() needs the data ({exc}); pass the "
                "number of splits as an int.") from None
    elif hasattr(cv, "__len__"):
        n = len(cv)
    else:
        raise ValueError("cv must be an int, a splitter with get_n_splits() or a list of "
                         f"(train, test) pairs; got a {type(cv).__name__}.")
    if n < 1:
        raise ValueError("cv must give at least one split.")
    return n


def _check_params(metric: Any, epsilon: Any, budget: Any,
                  classes: Any) -> tuple[str, float, NDArray[Any] | None]:
    """The scorer's parameters, checked before anything is spent (no data involved)."""
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {_METRICS}; got {metric!r}.")
    epsilon = check_epsilon(epsilon)
    try:  # the sampler's own limit, checked now: after the charge it would waste ε
        _rational_scale(_SENSITIVITY / epsilon)
    except ValueError:
        raise PrivacyParameterError(
            f"epsilon={epsilon:g} is below what the exact discrete Laplace sampler "
            f"takes (noise scale {_SENSITIVITY}/ε must be at most 2**30).") from None
    if not isinstance(budget, PrivacyBudget):
        raise PrivacyParameterError(
            "make_private_scorer needs budget=PrivacyBudget(...): every score is a release "
            f"and must be charged; got a {type(budget).__name__}.")
    if metric == "balanced_accuracy":
        if classes is None:
            raise ValueError("balanced_accuracy needs the public label set classes=[...]: "
                             "read from the validation labels it would be private.")
        classes = np.asarray(classes)
        if classes.ndim != 1 or classes.size < 1 or np.unique(classes).size != classes.size:
            raise ValueError("classes must be a 1-d list of distinct labels.")
    elif classes is not None:
        classes = np.asarray(classes)
    return metric, epsilon, classes


class PrivateScorer:
    """A scikit-learn scorer whose every call is a paid, differentially private release.

    Build it with :func:`make_private_scorer`; the privacy proof is in the module
    docstring (:mod:`skdp.metrics`).

    Parameters
    ----------
    metric : {"accuracy", "balanced_accuracy"}
        The statistic of the validation fold.
    epsilon : float
        ε > 0 charged by every call (δ = 0).
    budget : PrivacyBudget
        The ledger each call charges before it returns.
    classes : array-like, optional
        The public label set; required for ``"balanced_accuracy"``.

    Privacy
    -------
    Each call is ε-DP with respect to replacing one row of the rows it is given
    (ε/2 under adding or removing one): a noisy count vector of the fold (the
    geometric mechanism, ℓ1-sensitivity 2) post-processed into a score; the fold size
    is never used exactly. Calls compose sequentially: n calls cost n·ε.
    """

    def __init__(self, metric: str, epsilon: float, budget: PrivacyBudget,
                 classes: Any = None) -> None:
        # Validated here, not at the first call: bad input must fail before any spend.
        self.metric, self.epsilon, self.classes = _check_params(metric, epsilon, budget,
                                                                classes)
        self.budget = budget

    @property
    def label(self) -> str:
        """The label of this scorer's charges in the ledger."""
        return f"PrivateScorer({self.metric}, eps={self.epsilon:g}): one validation fold"

    def __call__(self, estimator: Any, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Score ``estimator`` on ``(X, y)``: charge ε, then release a noisy score.

        Raises
        ------
        BudgetExhaustedError
            If the budget cannot pay ε; nothing is released.
        ValueError
            If ``sample_weight`` is given (weights would change the sensitivity) or
            ``y`` is not one label per row.
        """
        if sample_weight is not None:
            raise ValueError("PrivateScorer does not take sample_weight: a weighted count "
                             "has a larger sensitivity than the noise is calibrated for.")
        y_true = np.asarray(y)
        y_pred = np.asarray(estimator.predict(X))
        if y_true.ndim != 1 or y_pred.shape != y_true.shape:
            # Shapes are fold sizes: private, so not shown.
            raise ValueError("PrivateScorer needs y as one label per row, and predict(X) "
                             "to return one label per row (the sizes are not shown: they "
                             "are private).")
        classes = None if self.classes is None else np.asarray(self.classes)
        cells = _cell_counts(self.metric, y_true, y_pred, classes)
        # The charge commits before any noise is drawn or any score leaves the call.
        self.budget._charge(self.epsilon, 0.0, self.label)
        # random_state=None: fresh OS entropy at every call (no seed to reuse in clones).
        return float(_noisy_scores(self.metric, cells, self.epsilon, None))

    def cost(self, n_candidates: int, cv: Any = 5, *,
             return_train_score: bool = False) -> PrivacyCost:
        """What this scorer charges for a whole search (the fits are charged separately).

        Parameters
        ----------
        n_candidates : int
            Candidates in the grid (``len(ParameterGrid(grid))``, or ``n_iter``); 1 for
            ``cross_val_score`` / ``cross_validate``.
        cv : int, splitter or list of (train, test) pairs, default=5
            The search's ``cv``.
        return_train_score : bool, default=False
            The search's ``return_train_score``: True scores the training rows too.

        Returns
        -------
        PrivacyCost
            ``(n_candidates · n_splits · ε · (2 if return_train_score else 1), 0)``.
        """
        if not isinstance(n_candidates, numbers.Integral) or n_candidates < 1:
            raise ValueError("n_candidates must be a positive int.")
        calls = int(n_candidates) * _n_splits(cv) * (2 if return_train_score else 1)
        return PrivacyCost(calls * self.epsilon, 0.0)

    def __repr__(self) -> str:
        return (f"make_private_scorer({self.metric!r}, epsilon={self.epsilon!r}, "
                f"budget={self.budget!r})")


def make_private_scorer(metric: str, *, epsilon: float, budget: PrivacyBudget,
                        classes: Any = None) -> PrivateScorer:
    """A differentially private scorer for ``scoring=`` in scikit-learn's search tools.

    Each call of the scorer releases a noisy accuracy or balanced accuracy of the
    validation fold it is given, and charges ``epsilon`` to ``budget`` before it
    returns. With it, a search's ``cv_results_``, ``best_score_`` and
    ``best_params_`` are post-processing of paid releases; without it, they are
    computed exactly on private data and are not private.

    Parameters
    ----------
    metric : {"accuracy", "balanced_accuracy"}
        The released statistic.
    epsilon : float
        ε > 0 charged by every call.
    budget : PrivacyBudget
        The ledger to charge (pickles as a handle: ``n_jobs`` workers charge it too).
    classes : array-like, optional
        The public label set; required for ``"balanced_accuracy"`` (read from the
        data it would leak).

    Returns
    -------
    PrivateScorer

    Raises
    ------
    PrivacyParameterError
        If ``epsilon`` is not a finite number > 0 or ``budget`` is not a
        :class:`~skdp.PrivacyBudget` — before anything is spent.
    ValueError
        If ``metric`` is unknown, or ``classes`` is missing for balanced accuracy.

    Privacy
    -------
    Each call is ε-DP under replacing one row of its fold: the geometric mechanism on
    the fold's (correct, wrong) counts — per class for balanced accuracy — with
    ℓ1-sensitivity 2, the fold size never used exactly. Calls compose sequentially,
    whatever the splitter, so a search over C candidates with k folds costs
    ``C · k · ε`` for its scores (:meth:`PrivateScorer.cost`); proofs in
    :mod:`skdp.metrics`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import GridSearchCV, KFold
    >>> from skdp import DPDecisionListClassifier, PrivacyBudget
    >>> from skdp.metrics import make_private_scorer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 2, size=(300, 6)); y = X[:, 0] | X[:, 1]
    >>> budget = PrivacyBudget(epsilon=8.0, delta=1e-5)
    >>> scorer = make_private_scorer("accuracy", epsilon=0.5, budget=budget)
    >>> model = DPDecisionListClassifier(epsilon=0.5, delta=1e-6, classes=[0, 1],
    ...                                  budget=budget)
    >>> grid = {"max_rules": [2, 4]}
    >>> scorer.cost(n_candidates=2, cv=3)           # scores of 2 candidates x 3 folds
    PrivacyCost(epsilon=3.0, delta=0.0)
    >>> search = GridSearchCV(model, grid, cv=KFold(3), scoring=scorer).fit(X, y)
    >>> budget.spent.epsilon                        # + 7 fits x 0.5 (6 folds + refit)
    6.5
    """
    return PrivateScorer(metric, epsilon, budget, classes)
