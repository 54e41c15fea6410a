"""PERP's answers as scores: predict_proba, decision_function and the small-sample label.

Every answer of a PERP predictor is one released score s ∈ [−1, 1]: the walk of
Alg. 5 step 5f (the copies' own BetweenThresholds answers) while the mechanism
runs, or one noisy majority margin when the sample is too small for the first
phase (:func:`noisy_majority_score`). ``predict`` is ``classes_[1]`` iff s > 0,
``predict_proba`` is [(1 − s)/2, (1 + s)/2] and ``decision_function`` is s.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..exceptions import BudgetExhaustedError
from ..mechanisms.between_thresholds import HIGH, LOW
from ..mechanisms.laplace import discrete_laplace
from ._base import QueryBudgetExhaustedError

__all__ = ["noisy_majority_score"]

_MAJORITY = "majority label (one noisy count; too few rows for the first phase)"


def noisy_majority_score(y_pm: NDArray[Any], epsilon: float,
                         random_state: np.random.Generator | None = None,
                         size: int | None = None) -> NDArray[np.float64]:
    """The small-sample answer: a score in [−1, 1] from two ε-DP noisy counts.

    a = max(#positives + Z₁, 0), b = max(#negatives + Z₂, 0) with Z₁, Z₂ i.i.d.
    discrete Laplace(1/ε); s = (a − b)/(a + b) (0 if a + b = 0), so that
    P(``classes_[1]``) = (1 + s)/2 = a/(a + b), the noisy positive fraction.
    ``size``: that many independent draws (for the audit).

    *Privacy.* Adding or removing one row changes exactly one of the two counts,
    by 1: the count vector has ℓ1-sensitivity 1, and the geometric mechanism on
    it is ε-DP (Ghosh, Roughgarden & Sundararajan 2009) under add/remove, with no
    assumption on n (n is never used). The label (s > 0) and the probability are
    post-processing. Audit and broken twin (no noise):
    ``tests/privacy/test_perp_proba_audit.py``.
    """
    y_pm = np.asarray(y_pm)
    counts = np.array([np.count_nonzero(y_pm > 0), np.count_nonzero(y_pm < 0)])
    shape = (2,) if size is None else (size, 2)
    noisy = counts + discrete_laplace(1.0 / epsilon, size=shape, random_state=random_state)
    a, b = np.maximum(noisy, 0).astype(float).T
    total = a + b
    return np.divide(a - b, total, out=np.zeros_like(total), where=total > 0)


class _PERPScores:
    """The scoring half of the PERP predictors (see the module docstring)."""

    def _scores(self, X, as_output=None, gate=None):
        raise NotImplementedError  # pragma: no cover - the predictor's answering

    def _labels(self, scores):
        """The labels of released scores: ``classes_[1]`` where s > 0."""
        return self.classes_[(np.asarray(scores) > 0).astype(np.intp)]

    @staticmethod
    def _proba(scores):
        """[(1 − s)/2, (1 + s)/2] per released score s (see :meth:`predict_proba`)."""
        share = (1.0 + np.asarray(scores)) / 2.0
        return np.column_stack([1.0 - share, share])

    def _walk_scores(self, walk):
        """inside (all copies "low") 1 − α, "medium" 0, "high" −(1 − α)."""
        level = np.select([walk == LOW, walk == HIGH], [1.0, -1.0], 0.0)
        return level * (1.0 - float(self.alpha))

    def _released_majority(self):
        tag = f"{type(self).__name__}: {_MAJORITY}, s = "
        released = [label[len(tag):] for label in self._ledger_labels() if label.startswith(tag)]
        return float(released[0]) if released else None

    def _majority_score(self):
        """The released majority score; a copy (deepcopy, pickle) reads it from the
        shared ledger ``budget_``, where the release recorded it, instead of paying
        for a second one. Copies releasing at the same moment: the release is recorded
        with a cap of one (``_pay_once``), so one score is recorded and the others,
        never shown, are dropped for it."""
        state = self._state
        if state.majority is None:
            released = self._released_majority()
            if released is None:
                score = float(noisy_majority_score(state.y, float(self.epsilon), state.rng))
                try:
                    # The score goes to budget_ only (where copies read it); the user's
                    # ledger records the payment.
                    paid = self._pay_once(float(self.epsilon), 0.0, _MAJORITY,
                                          note=f", s = {score!r}")
                except BudgetExhaustedError as exc:
                    raise QueryBudgetExhaustedError(str(exc), np.empty(0, dtype=np.int8)) from exc
                released = score if paid else self._released_majority()
            state.majority = released
        return state.majority

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """Answer the queries in ``X`` in order and return their scores in [−1, 1].

        Spends exactly like :meth:`predict` (these *are* the answers: the stream
        moves on); positive means ``classes_[1]``, and ``predict`` on the same
        answers is ``classes_[1]`` exactly where the score is > 0. See
        :meth:`predict_proba` for what the score is.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        ndarray of shape (n_queries,)
            2·P(``classes_[1]``) − 1 of :meth:`predict_proba`.
        """
        return self._scores(X)

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Answer the queries in ``X`` in order, as probabilities of each class.

        Spends exactly like :meth:`predict`: each row is one answer of the stream,
        and its argmax is the label ``predict`` would have released for it.
        P(``classes_[1]``) = (1 + s)/2 with s the released score:

        * running mechanism: the walk of Alg. 5 step 5f, i.e. the copies'
          BetweenThresholds answers to this query — s = 1 − α if every copy
          answered "low" (inside), 0 if the first other answer was "medium" (the
          query lies in a boundary slice's band: P = ½, labelled ``classes_[0]``
          like Alg. 5 does), −(1 − α) if it was "high" (outside). A smoothed
          one-hot with a third, boundary level; not fitted to data (wrap in
          ``CalibratedClassifierCV`` for calibrated values).
        * too few rows: P = the released noisy positive fraction
          (:func:`noisy_majority_score`), the same for every query.

        *Privacy.* Nothing beyond ``predict`` is released. The walk's codes are
        the outputs of the ChallengeBT copies, which Thm 4.6's proof (and the
        ``"sharp"`` lemma) treats as released transcripts — every copy's privacy
        is stated for its whole transcript of codes, of which the label is a
        function — and the query stream each copy sees is unchanged; a query's
        own answer is excluded from its own privacy game (Def. 3.8), so showing
        its code to its asker costs nothing. The fallback score is
        post-processing of one ε-DP release (charged at the first answer). The
        audit ``tests/privacy/test_perp_proba_audit.py`` checks both against the
        same claims as ``predict`` (and catches a noiseless twin).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        ndarray of shape (n_queries, 2)
            Columns in ``classes_`` order; rows sum to 1.
        """
        return self._proba(self.decision_function(X))
