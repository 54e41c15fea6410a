"""Predictions of skdp's online classifiers from their released state only.

:class:`ReleasedPredictionMixin` gives :class:`~skdp.online._base.OnlineDomainClassifier`
``predict``, ``decision_function``, ``predict_proba`` and ``predict_log_proba``, all
computed from what the stream released (the hypothesis, or a distribution over
hypotheses) and public constants: post-processing, which costs no privacy. It needs the
host's ``_released_predict(x)`` (±1 labels at domain indices) and ``_to_domain(X, N)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.utils.validation import check_is_fitted

from .._input import validate_data

__all__ = ["PROBA_SMOOTHING", "ReleasedPredictionMixin"]

#: γ of the smoothed one-hot that ``predict_proba`` returns for a released hard label:
#: P(released label) = 1 − γ. A fixed public constant (no statistic of the data), so the
#: probabilities say nothing beyond the label; calibrate them (CalibratedClassifierCV)
#: where their scale matters.
PROBA_SMOOTHING = 0.1


class ReleasedPredictionMixin:
    """predict / decision_function / predict_proba from released state (place it first)."""

    # provided by the host class
    classes_: NDArray[Any]
    n_domain_: int
    _released_predict: Callable[[NDArray[np.intp]], NDArray[np.int8]]
    _to_domain: Callable[[NDArray[np.float64], int], NDArray[np.intp]]
    _sparse_input: Callable[[], str | bool]

    #: γ of :meth:`predict_proba`'s smoothed one-hot (0 where the learner releases a
    #: probability of its own, see :meth:`_released_score`).
    _proba_smoothing = PROBA_SMOOTHING

    def _released_score(self, x: NDArray[np.intp]) -> NDArray[np.float64]:
        """Score in [−1, 1] at domain indices x, from released state only (hook).

        Default: the released hypothesis' ±1 label. A learner that releases more (a
        distribution over hypotheses) returns 2·P(+1) − 1 and sets ``_proba_smoothing``
        to 0.
        """
        return self._released_predict(x).astype(np.float64)

    def _domain_of(self, X: ArrayLike) -> NDArray[np.intp]:
        check_is_fitted(self)
        return self._to_domain(validate_data(self, X, reset=False, dtype=np.float64,
                                             accept_sparse=self._sparse_input()),
                               self.n_domain_)

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """Labels of the released hypothesis at the rows of X.

        Post-processing of what the stream released: costs no privacy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            As in :meth:`fit`.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        idx = self._domain_of(X)
        return self.classes_[(self._released_predict(idx) > 0).astype(np.intp)]

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """Released score in [−1, 1]; positive means ``classes_[1]``.

        The ±1 label of the released hypothesis, or, for the learners that release a
        distribution over hypotheses (:class:`~skdp.online.PrivateExpertsClassifier`,
        :class:`~skdp.online.BatchSanitizedOnlineClassifier`), 2·P(+1) − 1 under it.
        Post-processing of released state: costs no privacy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to score (as in :meth:`fit`).

        Returns
        -------
        ndarray of shape (n_samples,)
            Scores in [−1, 1].
        """
        return self._released_score(self._domain_of(X))

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Class probabilities in ``classes_`` order, from released state only.

        P(``classes_[1]``) = (1 + (1 − 2γ)·s)/2 for the released score s of
        :meth:`decision_function`: a hard released label becomes the smoothed one-hot
        (1 − γ, γ) with the public constant γ = ``PROBA_SMOOTHING`` = 0.1; a released
        distribution over hypotheses (γ = 0) gives the probability of +1 under it. The
        rows sum to 1 and their argmax is :meth:`predict`.

        Privacy: post-processing of what the stream released (the hypothesis, or the
        distribution computed from the noisy statistics) and of public constants:
        costs no privacy, whatever the number of calls.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows, as in :meth:`fit`.

        Returns
        -------
        ndarray of shape (n_samples, 2)
            P(``classes_[0]``) and P(``classes_[1]``) for each row.
        """
        score = self._released_score(self._domain_of(X))
        gamma = self._proba_smoothing  # written so that s = ±1 gives exactly 1 − γ and γ
        up, down = (1.0 + score) / 2, (1.0 - score) / 2
        p = np.column_stack([(1.0 - gamma) * down + gamma * up,
                             (1.0 - gamma) * up + gamma * down])
        return np.clip(p, 0.0, 1.0)

    def predict_log_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Logarithm of :meth:`predict_proba` (−inf where a probability is 0).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            As in :meth:`predict_proba`.

        Returns
        -------
        ndarray of shape (n_samples, 2)
            log P(``classes_[0]``) and log P(``classes_[1]``) for each row.
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))
