"""Decision lists as large-margin halfspaces (Bun & Fang, Lemma 15) and the online
private decision-list learner built on DP-Winnow."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .._input import validate_data
from ..accounting import PrivacyBudget
from ._dp_winnow import DPWinnowClassifier

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "DecisionListEmbedding",
    "OnlineDecisionListClassifier",
    "decision_list_halfspace",
    "decision_list_margin",
]


def _check_binary(X, name):
    if X.size and not np.all((X == 0) | (X == 1)):
        raise ValueError(
            f"{name} needs binary {{0, 1}} features. Binarize with PUBLIC thresholds, "
            "e.g. skdp.preprocessing.PublicBoundsBinarizer (data-fitted thresholds leak)."
        )


def decision_list_margin(max_length: int) -> float:
    """Smallest margin of :func:`decision_list_halfspace` over decision lists of length ≤ r.

    Exact minimum over all output patterns for r ≤ 10 (e.g. 1 for r = 1, 1/5 for
    r = 2 — the alternating list "if a: +1 elif b: −1 else +1"); for longer lists the
    general bound 1/(2^{r+1} − 1). Lemma 15's Ω(1/r^D) is sharper for lists with few
    alternations D; this value holds for every list of that length.
    """
    if isinstance(max_length, bool) or not isinstance(max_length, numbers.Integral) \
            or max_length < 1:
        raise ValueError(f"max_length must be an integer ≥ 1, got {max_length!r}.")
    if max_length > 10:
        return 1.0 / (2.0 ** (max_length + 1) - 1.0)
    best = 1.0
    for r in range(1, max_length + 1):
        for pattern in range(2 ** (r + 1)):
            outs = [1 if pattern >> j & 1 else -1 for j in range(r + 1)]
            if len(set(outs)) == 1:
                continue  # a constant function: any margin
            best = min(best, decision_list_halfspace(
                [(j, outs[j]) for j in range(r)], outs[r], r)[2])
    return float(best)


def decision_list_halfspace(rules: Sequence[tuple[int, int]], default: int,
                            n_features: int) -> tuple[NDArray[np.float64], float, float]:
    """The halfspace of Lemma 15 for a monotone 1-decision list over {0, 1}^d.

    The list "if x[i₁] = 1 then b₁ elif … else b₀" (b ∈ {−1, +1}) equals
    sign(Σ_j b_j 2^{r−j} x[i_j] + b₀/2); on z = 2x − 1 ∈ {−1, 1}^d and a constant
    coordinate this is a weight vector (coef, bias), here normalised to ‖·‖₁ = 1.

    Parameters
    ----------
    rules : sequence of (int, int)
        (feature index, output ±1), in order; indices distinct.
    default : int
        Output ±1 when no rule fires.
    n_features : int
        d.

    Returns
    -------
    coef : ndarray of shape (n_features,)
    intercept : float
    margin : float
        min over x ∈ {0, 1}^d of y·(⟨coef, z⟩ + intercept), ≥ 1/(2^{r+1} − 1).
    """
    r = len(rules)
    coef = np.zeros(n_features)
    bias = default / 2.0
    for j, (index, out) in enumerate(rules, start=1):
        if out not in (-1, 1) or default not in (-1, 1):
            raise ValueError("outputs must be -1 or +1.")
        weight = out * 2.0 ** (r - j - 1)
        coef[index] += weight
        bias += weight
    norm = np.abs(coef).sum() + abs(bias)
    return coef / norm, float(bias / norm), float(0.5 / norm)


def evaluate_decision_list(rules: Sequence[tuple[int, int]], default: int,
                           X: ArrayLike) -> NDArray[np.int_]:
    """Labels ±1 of a monotone decision list on binary rows X."""
    X = np.asarray(X)
    out = np.full(X.shape[0], default, dtype=int)
    decided = np.zeros(X.shape[0], dtype=bool)
    for index, b in rules:
        fire = (X[:, index] == 1) & ~decided
        out[fire] = b
        decided |= fire
    return out


class DecisionListEmbedding(TransformerMixin, BaseEstimator):
    """Map binary x ∈ {0, 1}^d to z = 2x − 1 ∈ {−1, 1}^d (Lemma 15's input space).

    Together with the constant coordinate and the (z, −z) doubling that
    :class:`DPWinnowClassifier` adds, every length-r decision list is a halfspace
    with margin ≥ 1/(2^{r+1} − 1) over these coordinates
    (:func:`decision_list_halfspace`). Stateless and data-independent.

    Examples
    --------
    >>> from skdp.linear import DecisionListEmbedding
    >>> DecisionListEmbedding().fit_transform([[0, 1], [1, 1]])
    array([[-1.,  1.],
           [ 1.,  1.]])
    """

    def fit(self, X: ArrayLike, y: Any = None) -> Self:
        """Check X is binary; nothing is learned."""
        X = validate_data(self, X, reset=True, dtype=np.float64)
        _check_binary(X, type(self).__name__)
        return self

    def transform(self, X: ArrayLike) -> NDArray[np.float64]:
        """Return 2X − 1."""
        check_is_fitted(self)
        data: NDArray[np.float64] = validate_data(self, X, reset=False, dtype=np.float64)
        _check_binary(data, type(self).__name__)
        return 2.0 * data - 1.0


class OnlineDecisionListClassifier(DPWinnowClassifier):
    """Private online learner of decision lists: DP-Winnow on the Lemma 15 embedding.

    Binary input x ∈ {0, 1}^d (use ``PublicBoundsBinarizer`` or ``ConjunctionFeatures``
    for other data) is mapped to z = 2x − 1, a constant coordinate and the (z, −z)
    doubling; a length-r decision list is then a halfspace with margin
    ρ = :func:`decision_list_margin` (r) ≥ 1/(2^{r+1} − 1), which sizes DP-Winnow
    (Bun & Fang, Lemma 15, Thm 16–17).

    Where it learns: the margin is 1, 1/5, 1/13, 1/29, 1/61 for r = 1 … 5, and the
    default scheduled DP-Winnow learns (by its guard, δ = 10⁻⁶, d = 100 bits) lists of
    length r = 1 at every ε ∈ [1, 16] from T = 10⁴ rows; r = 2 at ε ≥ 4 by T = 10⁵
    and at every ε ≥ 1 by T = 10⁶; r = 3 only at ε ≥ 8, T = 10⁶; r ≥ 4 nowhere up to
    10⁶ rows. Where it cannot, it warns at ``fit`` and predicts a privately estimated
    constant (see :class:`DPWinnowClassifier`, whose map this is).

    Parameters
    ----------
    max_length : int, default=2
        r, the longest decision list the margin is sized for (practical default).
    epsilon, delta, n_rounds, beta, setting, max_updates, n_samples, threshold, window, \
beyond_horizon, budget, random_state, classes
        As for :class:`DPWinnowClassifier`.
    binarize : float or None, default=0.0
        Features are binarized as ``x > binarize`` first (a public constant, costs no
        privacy), like ``BernoulliNB(binarize=0.0)``: 0/1 input passes through
        unchanged. ``None``: the input must already be 0/1.

    Attributes
    ----------
    margin_ : float
        ρ used.
    classes_, coef_, intercept_, weights_, parameters_, n_rounds_, n_updates_, \
updates_exhausted_, n_rounds_seen_, privacy_spent_
        As for :class:`DPWinnowClassifier`.

    Privacy
    -------
    Exactly DP-Winnow's: (ε, δ)-DP for the whole stream (Bun & Fang, Thm 11); the
    embedding is a fixed, data-independent map and :meth:`export_text` is
    post-processing of the released weights. Internal state (exact online mistake
    count, scores) is kept in private attributes, as for :class:`DPWinnowClassifier`.

    References
    ----------
    M. Bun, W. Fang, 2025, Lemma 15, Thm 16–17. A. Blum, M. Singh. Learning
    functions of k terms. COLT 1990.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.linear import OnlineDecisionListClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 2, size=(3000, 8))
    >>> y = X[:, 2]
    >>> clf = OnlineDecisionListClassifier(max_length=1, epsilon=4.0, random_state=0)
    >>> clf = clf.fit(X, y)
    >>> print(clf.export_text().splitlines()[0])  # doctest: +SKIP
    if x2 == 1: 1
    """

    _parameter_constraints: dict = {
        **{k: v for k, v in DPWinnowClassifier._parameter_constraints.items()
           if k not in ("margin", "fit_intercept", "double_features", "confidence", "bounds")},
        "max_length": [Interval(numbers.Integral, 1, None, closed="left")],
        "binarize": [Interval(numbers.Real, None, None, closed="neither"), None],
    }

    def __init__(self, max_length: int = 2, epsilon: float = 1.0, delta: float = 1e-6,
                 n_rounds: int | None = None, beta: float = 0.05, *,
                 setting: str = "scheduled", max_updates: int | None = None,
                 n_samples: int | None = None, threshold: float | None = None,
                 window: int | None = None, beyond_horizon: str = "warn",
                 binarize: float | None = 0.0, budget: PrivacyBudget | None = None,
                 random_state: int | np.random.Generator | None = None,
                 classes: ArrayLike | None = None) -> None:
        self.max_length = max_length
        self.binarize = binarize
        self.epsilon = epsilon
        self.delta = delta
        self.n_rounds = n_rounds
        self.beta = beta
        self.setting = setting
        self.max_updates = max_updates
        self.n_samples = n_samples
        self.threshold = threshold
        self.window = window
        self.beyond_horizon = beyond_horizon
        self.budget = budget
        self.random_state = random_state
        self.classes = classes

    # fixed by the embedding (Lemma 15 needs the bias and the doubling)
    fit_intercept = True
    double_features = True
    confidence = 0.5

    def _margin_value(self, n_features):
        self.margin_ = decision_list_margin(self.max_length)
        return self.margin_

    def _resolve_bounds(self, n_features):
        return None  # 0/1 input, mapped onto {−1, 1} below: no bounds to clip to

    def _transform_input(self, X):
        if self.binarize is not None:
            return np.where(np.greater(X, self.binarize), 1.0, -1.0)
        _check_binary(X, type(self).__name__)
        return 2.0 * X - 1.0

    def export_text(self, feature_names: Sequence[str] | None = None,
                    max_rules: int | None = None) -> str:
        """The released weights read as a decision list, strongest weight first.

        Each coordinate with released weight becomes a rule "if x_j == 1", in
        decreasing |weight| (the order of Lemma 15's geometric weights), predicting
        the class its weight's sign favours; the default is the prediction when no
        listed feature is 1. The released weights are sparse (at most m coordinates),
        so this is short. Where the weights are not those of a decision list the
        reading is approximate; the weights are printed for that reason.

        Parameters
        ----------
        feature_names : sequence of str, optional
        max_rules : int, optional
            Print at most this many rules.

        Returns
        -------
        str
        """
        check_is_fitted(self)
        coef = self.coef_.ravel()
        names = (list(feature_names) if feature_names is not None
                 else list(getattr(self, "feature_names_in_", [f"x{j}" for j in
                                                               range(coef.size)])))
        order = [j for j in np.argsort(-np.abs(coef), kind="stable") if coef[j] != 0]
        if max_rules is not None:
            order = order[:max_rules]
        lines = []
        for j in order:
            label = self.classes_[int(coef[j] > 0)]
            lines.append(f"if {names[j]} == 1: {label}    (weight {coef[j]:+.3f})")
        # all listed features 0 ⇒ z = −1 there: the margin is bias − Σ coef
        default = self.classes_[int(self.intercept_[0] - coef.sum() > 0)]
        lines.append(f"else: {default}    (bias {self.intercept_[0]:+.3f})")
        return "\n".join(lines)
