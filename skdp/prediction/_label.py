"""Private labels for a public unlabeled set: the teacher–student (PATE) pattern.

A private predictor answers queries; a *student* is any scikit-learn model trained on
public rows labelled by those answers. The student can then answer any number of
queries with no further privacy cost, where the predictor pays for every new one.
"""

from __future__ import annotations

from numpy.typing import ArrayLike, NDArray
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

from .._input import validate_data
from ._base import QueryBudgetedPredictor

__all__ = ["label_public"]


def label_public(predictor: QueryBudgetedPredictor | Pipeline, X_public: ArrayLike) -> NDArray:
    """Label a public unlabeled set with a fitted private predictor, for a student model.

    Each row of ``X_public`` is asked as one query, in order; the answers are the
    predictor's released labels (``classes_``). Train any scikit-learn model on
    ``(X_public, labels)``: it is as private as the answers, and answers any number of
    later queries for free. A row asked before (by this predictor or a copy sharing its
    state) costs nothing: its released answer is re-published.

    Parameters
    ----------
    predictor : fitted query-budgeted predictor, or a Pipeline ending in one
        :class:`~skdp.prediction.PrivatePredictor`,
        :class:`~skdp.prediction.SubsampleAggregatePredictor` or a PERP classifier
        (a fitted :class:`~skdp.prediction.QueryBudgetedPredictor`); a Pipeline's
        earlier steps must be public transformations (e.g.
        :class:`~skdp.preprocessing.PublicBoundsClipper`).
    X_public : array-like of shape (n_rows, n_features)
        Public rows: chosen without looking at the predictor's training sample (for
        example another table, a synthetic sample, or rows whose owners agreed to
        their publication). Validated like ``predict``'s input — the fitted feature
        count (and names, for a DataFrame), finite numbers — before anything is spent.

    Returns
    -------
    labels : ndarray of shape (n_rows,)
        One label from ``predictor.classes_`` per row of ``X_public``.

    Raises
    ------
    TypeError
        If ``predictor`` is not a query-budgeted predictor.
    ValueError
        Bad ``X_public`` (wrong number of columns or names, NaN, infinity, a
        non-number); raised before any query is answered, naming no data value.
    QueryBudgetExhaustedError
        The predictor's budget or a cap (planned queries, hard queries) runs out.
        Refused before the first answer, nothing is spent; running out inside the set
        (Yan's predictor reaching its cap of hard queries), ``error.answers`` holds
        the labels of the rows before the first unanswered one — they are paid for
        and as private as a full answer, so a student may be trained on that prefix.

    Privacy
    -------
    The labels are the predictor's transcript on the queries ``X_public``, so they
    are exactly as private as the predictor's answers: (ε, δ)-differentially private
    with respect to its labelled training sample, for any (even adaptively chosen)
    queries, charged to ``predictor.budget_`` (and its ``budget``) as they are
    released. A student trained on ``(X_public, labels)`` is a function of public
    rows and that transcript: **post-processing**, so it is (ε, δ)-DP too, whatever
    the student and however often it is queried (the teacher–student pattern of
    Papernot et al., PATE). Two caveats the guarantee does not lift: the rows of
    ``X_public`` themselves are published by the student (it is trained on them) —
    they must be public, not rows of the private sample; and the student is only as
    private as the predictor's ``epsilon``/``delta``, shared with everything else the
    predictor answers.

    Notes
    -----
    A function rather than a method: it works unchanged for every query-budgeted
    predictor, as scikit-learn's :func:`~sklearn.model_selection.cross_val_predict`
    works for every estimator, and leaves the student's choice and fit to the user,
    where a "student" meta-estimator would have to be fitted on ``X`` without ``y``.
    ``skdp label MODEL.pkl PUBLIC.csv`` is the same call on a pickled predictor
    (made durable, so a second run on the same rows is free).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdp.hypotheses import Halfspaces
    >>> from skdp.prediction import PrivatePredictor, label_public
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (20_000, 2)); y = (X[:, 0] > X[:, 1]).astype(int)
    >>> teacher = PrivatePredictor(Halfspaces(2), epsilon=1.0, n_queries=2_000,
    ...                            classes=[0, 1], random_state=0).fit(X, y)
    >>> X_public = rng.uniform(-1, 1, (2_000, 2))
    >>> student = LogisticRegression().fit(X_public, label_public(teacher, X_public))
    >>> X_test = rng.uniform(-1, 1, (1_000, 2))
    >>> bool(student.score(X_test, X_test[:, 0] > X_test[:, 1]) > 0.95)
    True
    """
    final = predictor[-1] if isinstance(predictor, Pipeline) else predictor
    if not isinstance(final, QueryBudgetedPredictor):
        raise TypeError(
            "label_public needs a fitted private predictor (PrivatePredictor, "
            "SubsampleAggregatePredictor, a PERP classifier, or a Pipeline ending in "
            f"one); got {type(final).__name__}.")
    check_is_fitted(final, "budget_")
    if final is predictor:
        # Validation first, with skdp's messages that quote no value, so a malformed
        # row is refused before the first answer. (A Pipeline's steps run before its
        # predictor answers anything, and the predictor validates what reaches it.)
        validate_data(predictor, X_public, reset=False)
    return predictor.predict(X_public)
