"""Non-private Winnow and ConfidentWinnow (Bun & Fang, Alg 2)."""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval

from ._base import MultiplicativeWeightsMixin, softmax

__all__ = ["ConfidentWinnowClassifier", "WinnowClassifier"]


class _ExactWeightsMixin(MultiplicativeWeightsMixin):
    """Updates w ∝ w·exp(η ŷ ẑ) on the triggering row itself (Winnow, ConfidentWinnow)."""

    def _apply_update(self, X, ys, row):
        self._accumulate(X[row], ys[row])
        self._set_predicting_weights(softmax(self.learning_rate * self._full_scores()))
        self.n_updates_ += 1

    @property
    def n_mistakes_(self) -> int:
        """Online mistakes on the training stream (exact: this learner is not private)."""
        return self._n_mistakes


class WinnowClassifier(_ExactWeightsMixin, ClassifierMixin, BaseEstimator):
    """Normalised Winnow: multiplicative weights updated on every mistake.

    Predicts sign⟨w, z⟩ with w on the simplex over the coordinates z = (x, 1, −x, −1)
    (bias and (x, −x) doubling optional); on a mistake (y⟨w, z⟩ ≤ 0) sets
    w_j ← w_j·exp(η y z_j) / Σ_k w_k·exp(η y z_k) (Littlestone 1988; the normalised
    form analysed by Mohri et al. 2018, §8.3, and used by Bun & Fang).

    If some nonnegative v with ‖v‖₁ = 1 separates the stream with margin ρ, the
    number of mistakes is at most log(n_coords)/(ηρ − η²/2) (Bun & Fang, Lemma 9 with
    c = 0), minimised near η = ρ.

    Parameters
    ----------
    learning_rate : float, default=0.1
        η > 0. A practical default (the paper leaves η free for Winnow); the
        mistake bound is best for η ≈ ρ.
    fit_intercept : bool, default=True
        Add a constant coordinate (the bias of Lemma 15's d + 1 variables).
    double_features : bool, default=True
        Use z = (u, −u) so that negative weights on u can be represented.
    bounds : (lower, upper), default=None
        Public bounds on the features (scalars, or one value per feature): X is
        clipped to them and mapped linearly onto [−1, 1], the range the algorithm
        assumes (data-independent, so it costs no privacy). ``None``: clip to
        [−1, 1] and warn at ``fit`` that no bounds were given (the warning depends
        on the parameters only). Sparse X (scipy.sparse) needs bounds symmetric
        around 0, e.g. ``(-c, c)`` for counts in [0, c]: zeros then stay zeros.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    coef_ : ndarray of shape (1, n_features)
        Effective weights on x (w⁺ − w⁻).
    intercept_ : ndarray of shape (1,)
    weights_ : ndarray of shape (n_coords,)
        The simplex weights w on the Winnow coordinates.
    n_updates_, n_mistakes_, n_rounds_seen_ : int
        Updates, online (predict-then-update) mistakes and rows seen so far.
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    References
    ----------
    N. Littlestone. Learning quickly when irrelevant attributes abound. Machine
    Learning 2, 1988. M. Bun, W. Fang. Privately Learning Decision Lists and a
    Differentially Private Winnow, 2025, §4.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.linear import WinnowClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.choice([-1.0, 1.0], size=(500, 20))
    >>> y = (X[:, 3] > 0).astype(int)
    >>> clf = WinnowClassifier(learning_rate=0.5).fit(X, y)
    >>> clf.score(X, y)
    1.0
    """

    _parameter_constraints: dict = {
        "learning_rate": MultiplicativeWeightsMixin._learning_rate_constraint,
        **MultiplicativeWeightsMixin._common_constraints,
    }

    def __init__(self, learning_rate: float = 0.1, *, bounds: Sequence | None = None,
                 fit_intercept: bool = True, double_features: bool = True) -> None:
        self.learning_rate = learning_rate
        self.bounds = bounds
        self.fit_intercept = fit_intercept
        self.double_features = double_features

    def _scan(self, margins, ys, X, start):
        wrong = ys * margins <= 0
        return int(np.argmax(wrong)) if wrong.any() else -1


class ConfidentWinnowClassifier(_ExactWeightsMixin, ClassifierMixin, BaseEstimator):
    """ConfidentWinnow (Bun & Fang, Alg 2): also updates when not confident.

    Like :class:`WinnowClassifier`, but updates on a row when the prediction is wrong
    **or** unconfident, |⟨w, z⟩| < c·ρ (the paper's adversarial bit b is taken as 1,
    ``update_unconfident=True``, or 0). Confident correct predictions are robust to
    replacing w by the empirical distribution of a few samples (Lemma 13), which is
    what makes the private version (:class:`DPWinnowClassifier`) work.

    For a stream with margin ρ and c < 1/2 the number of updates is at most
    log(n_coords)/((1 − c)ηρ − η²/2) (Lemma 9).

    Parameters
    ----------
    learning_rate : float, default=0.1
        η > 0 (practical default).
    margin : float, default=0.1
        ρ, the assumed margin (practical default).
    confidence : float, default=0.5
        c ∈ (0, 1); the paper fixes c = 1/2 in Thm 12.
    update_unconfident : bool, default=True
        The bit b of Alg 2 for unconfident rounds.
    fit_intercept, double_features : bool, default=True
        As for :class:`WinnowClassifier`.
    bounds : (lower, upper), default=None
        As for :class:`WinnowClassifier`.

    Attributes
    ----------
    classes_, coef_, intercept_, weights_, n_updates_, n_mistakes_, n_rounds_seen_
        As for :class:`WinnowClassifier`.
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    References
    ----------
    M. Bun, W. Fang. Privately Learning Decision Lists and a Differentially Private
    Winnow, 2025, Alg 2 and Lemma 9.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.linear import ConfidentWinnowClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.choice([-1.0, 1.0], size=(500, 20))
    >>> y = (X[:, 3] > 0).astype(int)
    >>> clf = ConfidentWinnowClassifier(learning_rate=0.5, margin=0.5).fit(X, y)
    >>> clf.score(X, y)
    1.0
    """

    _parameter_constraints: dict = {
        "learning_rate": MultiplicativeWeightsMixin._learning_rate_constraint,
        "margin": [Interval(numbers.Real, 0, 1, closed="right")],
        "confidence": [Interval(numbers.Real, 0, 1, closed="neither")],
        "update_unconfident": ["boolean"],
        **MultiplicativeWeightsMixin._common_constraints,
    }

    def __init__(self, learning_rate: float = 0.1, margin: float = 0.1, *,
                 confidence: float = 0.5, update_unconfident: bool = True,
                 bounds: Sequence | None = None, fit_intercept: bool = True,
                 double_features: bool = True) -> None:
        self.learning_rate = learning_rate
        self.bounds = bounds
        self.margin = margin
        self.confidence = confidence
        self.update_unconfident = update_unconfident
        self.fit_intercept = fit_intercept
        self.double_features = double_features

    def _scan(self, margins, ys, X, start):
        trigger = ys * margins <= 0
        if self.update_unconfident:
            trigger |= np.abs(margins) < self.confidence * self.margin
        return int(np.argmax(trigger)) if trigger.any() else -1
