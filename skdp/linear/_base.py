"""Shared machinery of the multiplicative-weights (Winnow) family.

Coordinates
-----------
A row x ∈ [−1, 1]^d becomes the Winnow coordinates u = (x, 1) (with ``fit_intercept``)
and, with ``double_features`` (default), z = (u, −u) (Bun & Fang §4.3): nonnegative
weights on z represent any weight vector on u. The doubled matrix is never built:
with weights w on z, ⟨w, z⟩ = ⟨w⁺ − w⁻, u⟩, so margins are ``X @ coef + intercept``.

Scores
------
Weights are kept as unnormalised log-weights η·S with S = Σ ŷ·ẑ over the examples
used for updates (S on the −u half is −S on the u half). Normalised multiplicative
weights w_j ∝ w_j·exp(η ŷ ẑ_j) are exactly softmax(η·S), computed stably.

The block loop
--------------
Between two updates the predicting weights are fixed, so a block is scanned in
chunks with one matrix–vector product per chunk; the subclass finds the first row
that triggers an update, the update is applied, and the scan resumes after it with a
small chunk that doubles while nothing triggers. Python-level iterations ≈ number of
updates (+ log of the block length), not rows.

Probabilities
-------------
``predict_proba`` is the vote share of the predicting weights: a margin
μ = ⟨w, z⟩ ∈ [−1, 1] is the mean vote of the coordinates (each z_j ∈ [−1, 1]) under w,
and (1 + μ)/2 is the probability with which randomised weighted majority (draw
j ~ w, then vote +1 with probability (1 + z_j)/2; Littlestone & Warmuth 1994) says
``classes_[1]``. Where w is the empirical distribution of n votes (DP-Winnow's m
draws, or its n_c counted labels) the share is Laplace-smoothed to
(n(1 + μ)/2 + 1)/(n + 2), so it is never 0 or 1. The map is strictly increasing in
μ: ``predict_proba`` ranks rows as ``decision_function`` does and agrees with
``predict``; it is a function of the predicting weights and public constants only.

Sample weights
--------------
None of these learners takes ``sample_weight`` (scikit-learn's convention for
estimators without a weighted form). They are online and order-dependent, so a
weight k cannot equal k repeated rows (scikit-learn's
``check_sample_weight_equivalence``, which its own Perceptron and SGDClassifier
fail), and DP-Winnow's weights would have to be clipped to [0, 1] to keep one row's
influence bounded, which breaks that equivalence for every k > 1.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .._input import validate_data
from .._labels import resolve_classes
from .._multiclass import OneVsRestMixin
from .._validation import check_public_bounds, clip_to_unit
from ._horizon import DEFAULT_STREAM_HORIZON

if TYPE_CHECKING:
    from sklearn.utils import Tags
    from typing_extensions import Self

__all__ = ["MultiplicativeWeightsMixin"]

_FIRST_CHUNK = 32


def _prediction_errors(margins, ys):
    """Errors of ``predict`` (positive class iff margin > 0); updates instead treat a
    zero margin as a mistake, as sgn(0) ≠ y in the paper."""
    return int(np.count_nonzero((margins > 0) != (ys > 0)))


def softmax(scores: NDArray[np.float64]) -> NDArray[np.float64]:
    """Normalised exp(scores), computed stably."""
    shifted = scores - scores.max()
    w = np.exp(shifted)
    w /= w.sum()
    return w


class _BinaryMultiplicativeWeights:
    """Binary online classifier with (normalised) multiplicative weights.

    Subclasses implement ``_scan(margins, ys, X, start)`` returning the index (in
    the chunk) of the first row that triggers an update, or −1, and
    ``_apply_update(X, ys, row)``; they may override ``_start_stream``,
    ``_before_block`` and ``_frozen``. Place it before ``ClassifierMixin``.

    Online mistakes are counted in the private attribute ``_n_mistakes``: an exact
    count computed from the labels, which the non-private learners expose as
    ``n_mistakes_`` and private ones must not release.
    """

    _common_constraints: dict = {
        "bounds": [tuple, list, None],
        "fit_intercept": ["boolean"],
        "double_features": ["boolean"],
    }
    _learning_rate_constraint = [Interval(numbers.Real, 0, None, closed="neither")]

    # ----------------------------------------------------------------- inputs
    def _resolve_bounds(self, n_features):
        """Public (lower, upper) per feature from ``bounds``; warn when none were given.

        The warning depends on the parameters only (never on X), so it says nothing
        about the data.
        """
        if self.bounds is None:
            warnings.warn(
                f"{type(self).__name__}: no public bounds given, so features are clipped "
                "to [-1, 1] (values outside lose their information). Pass bounds=(lower, "
                "upper) from domain knowledge; they are mapped onto [-1, 1].",
                UserWarning, stacklevel=4,
            )
            return np.full(n_features, -1.0), np.full(n_features, 1.0)
        name = f"{type(self).__name__} bounds"
        if len(self.bounds) != 2:
            raise ValueError(f"{name} must be (lower, upper), got {len(self.bounds)} entries.")
        return check_public_bounds(*self.bounds, n_features, name)

    def _transform_input(self, X):
        """Map validated input to the [−1, 1] features Winnow sees (hook): clip to the
        public bounds, then scale them onto [−1, 1]. Data-independent. A CSR matrix
        stays sparse: only its stored values are mapped (see :meth:`_sparse_ok`)."""
        if sp.issparse(X):
            return _clip_sparse_to_unit(X, *self.bounds_, type(self).__name__)
        return clip_to_unit(X, *self.bounds_)

    def _sparse_ok(self):
        """Whether X may be a scipy.sparse matrix: with the family's own input map,
        which sends 0 to 0 under bounds symmetric around 0 (a subclass with another
        map, e.g. the decision-list embedding, takes dense X only)."""
        return type(self)._transform_input is _BinaryMultiplicativeWeights._transform_input

    def _validate_block(self, X, y, classes, first_call):
        X, y = validate_data(
            self, X, y, reset=first_call, dtype=[np.float64, np.float32],
            accept_sparse="csr" if self._sparse_ok() else False, ensure_min_samples=1,
        )
        if sp.issparse(X):
            # csr_matrix, not csr_array: X[i] is then a 1 × d CSR row (an array's is a
            # 1-d COO) for _accumulate; shares the data, no copy.
            X = sp.csr_matrix(X)
        classes_ = resolve_classes(self, y, classes, first_call=first_call)
        if first_call:
            self.bounds_ = self._resolve_bounds(X.shape[1])
        X = self._transform_input(X)
        ys = np.where(y == classes_[1], 1.0, -1.0)
        return X, ys, classes_

    # ----------------------------------------------------------------- state
    def _n_coords(self, n_features):
        half = n_features + int(self.fit_intercept)
        return 2 * half if self.double_features else half

    def _init_state(self, n_features):
        half = n_features + int(self.fit_intercept)
        self._scores = np.zeros(half)  # S on the u half (the −u half is −S)
        self.n_updates_ = 0
        self._n_mistakes = 0
        self.n_rounds_seen_ = 0
        self._set_predicting_weights(np.full(self._n_coords(n_features),
                                             1.0 / self._n_coords(n_features)))

    def _full_scores(self):
        if self.double_features:
            return np.concatenate([self._scores, -self._scores])
        return self._scores.copy()

    def _accumulate(self, x, y):
        """S += ŷ·û for the update example (x̂, ŷ); the doubled half follows. A sparse
        row (1 × d CSR) touches its stored coordinates only: O(nnz), not O(d)."""
        if sp.issparse(x):
            d = x.shape[1]
            np.add.at(self._scores, x.indices, y * x.data)  # add.at: repeated indices add up
        else:
            d = x.shape[0]
            self._scores[:d] += y * x
        if self.fit_intercept:
            self._scores[d] += y

    def _set_predicting_weights(self, w):
        """Store the weights that predict: coef_/intercept_ are read off them."""
        half = self._scores.shape[0]
        w = np.asarray(w, dtype=float)
        eff = w[:half] - w[half:] if self.double_features else w
        d = half - int(self.fit_intercept)
        self.weights_ = w
        self.coef_ = eff[:d].reshape(1, -1)
        self.intercept_ = np.array([eff[d] if self.fit_intercept else 0.0])
        self._coef_vec = np.ascontiguousarray(eff[:d])
        self._bias = float(self.intercept_[0])

    def _margins(self, X):
        coef = self._coef_vec.astype(X.dtype, copy=False)
        return X @ coef + self._bias

    # ----------------------------------------------------------------- hooks
    def _start_stream(self, X, first_call, from_fit):
        """Called after validation, before any state change (privacy is charged here)."""

    def _before_block(self, n_rows):
        """Called after validation and _start_stream, before the block is processed."""

    def _frozen(self):
        return False

    def _n_votes(self) -> float:
        """How many votes the predicting weights average (hook): ∞ for exact weights,
        which ``predict_proba`` then does not smooth."""
        return math.inf

    def _after_frozen_block(self, X, ys):
        margins = self._margins(X)
        self._n_mistakes += _prediction_errors(margins, ys)

    # ----------------------------------------------------------------- fitting
    def _fit_block(self, X, y, classes, *, from_fit):
        if self._ovr_dispatch(y, classes, from_fit):  # C > 2 labels: skdp._multiclass
            return self._ovr_fit(X, y, classes, from_fit=from_fit)
        first_call = from_fit or not hasattr(self, "classes_")
        if first_call and not from_fit and classes is None and getattr(
                self, "classes", None) is None:
            raise ValueError(
                "classes must be passed on the first call to partial_fit "
                "(e.g. classes=[0, 1]), as for SGDClassifier."
            )
        X, ys, classes_ = self._validate_block(X, y, classes, first_call)
        self._start_stream(X, first_call, from_fit)
        if first_call:
            self.classes_ = classes_
            self._init_state(X.shape[1])
        self._before_block(X.shape[0])
        self._consume(X, ys)
        return self

    def _consume(self, X, ys):
        n = X.shape[0]
        pos, chunk = 0, _FIRST_CHUNK
        while pos < n:
            if self._frozen():
                self._after_frozen_block(X[pos:], ys[pos:])
                break
            end = min(n, pos + chunk)
            margins = self._margins(X[pos:end])
            hit = self._scan(margins, ys[pos:end], X, pos)
            stop = end if hit < 0 else pos + hit + 1
            self._n_mistakes += _prediction_errors(margins[: stop - pos], ys[pos:stop])
            if hit < 0:
                pos, chunk = end, chunk * 2
            else:
                self._apply_update(X, ys, pos + hit)
                pos, chunk = pos + hit + 1, _FIRST_CHUNK
        self.n_rounds_seen_ += n

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike) -> Self:
        """Run the online learner over the rows of X in order, from a fresh start.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Features, clipped to the public ``bounds`` and mapped onto [−1, 1]
            (binarized at ``binarize`` for the decision-list learner, which takes
            dense X only). A scipy.sparse matrix is never densified (work per update
            is O(nonzeros)); it needs ``bounds`` symmetric around 0, which map 0 to 0.
        y : array-like of shape (n_samples,)
            Two class labels, or C > 2 learnt one-vs-rest (C internal binary copies
            on the same rows; see ``skdp._multiclass`` for how ε is split).

        Returns
        -------
        self
        """
        return self._fit_block(X, y, None, from_fit=True)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X: ArrayLike, y: ArrayLike,
                    classes: ArrayLike | None = None) -> Self:
        """Continue the online stream with the rows of X, in order.

        Feeding a stream in blocks gives the same model as one call on the
        concatenation (same ``random_state``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,), optional
            Every label (two, or C > 2: one-vs-rest); required on the first call
            unless the estimator's ``classes`` parameter (private learners) gives them.

        Returns
        -------
        self
        """
        return self._fit_block(X, y, classes, from_fit=False)

    # ----------------------------------------------------------------- predicting
    def decision_function(self, X: ArrayLike) -> NDArray[np.floating[Any]]:
        """⟨w, z⟩ ∈ [−1, 1] for each row: positive means ``classes_[1]``.

        Computed from the predicting weights only (for the private learners, the
        released w̃: post-processing, no privacy cost).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32],
                          accept_sparse="csr" if self._sparse_ok() else False)
        X = self._transform_input(X)
        return self._margins(X)

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Probability of each class: the vote share of the predicting weights.

        With μ the margin (:meth:`decision_function`), ``classes_[1]`` gets
        (1 + μ)/2 — the probability with which randomised weighted majority predicts
        it — Laplace-smoothed to (n(1 + μ)/2 + 1)/(n + 2) where the weights are the
        empirical distribution of n votes (the private learners; see their
        ``Privacy`` section). Strictly increasing in μ, so it ranks rows as
        :meth:`decision_function` and its argmax is :meth:`predict`. Not fitted to
        the data: wrap the estimator in ``CalibratedClassifierCV`` for calibrated
        probabilities, which fits a map on (private) data and is not private.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, 2)
            Columns in ``classes_`` order; rows sum to 1.
        """
        share = (1.0 + self.decision_function(X).astype(np.float64)) / 2.0
        n = self._n_votes()
        if math.isfinite(n):
            share = (n * share + 1.0) / (n + 2.0)
        return np.column_stack([1.0 - share, share])

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """Predicted labels: ``classes_[1]`` where the margin is > 0, else ``classes_[0]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        scores = self.decision_function(X)
        return self.classes_[(scores > 0).astype(int)]

    def __sklearn_tags__(self) -> Tags:
        # A mixin: ClassifierMixin/BaseEstimator follow it in the MRO.
        tags = super().__sklearn_tags__()  # type: ignore[misc]
        tags.input_tags.sparse = self._sparse_ok()
        return tags


def _clip_sparse_to_unit(X, lower, upper, name):
    """:func:`~skdp._validation.clip_to_unit` on the stored values of a CSR matrix.

    The [lower, upper] → [−1, 1] map sends 0 to 0 exactly when lower = −upper (then
    2·(0 + h)/(2h) − 1 = 0 in floating point too), so under such bounds the unstored
    zeros need no work and the result is the dense map's, value for value. Other
    bounds would fill every zero: refused (this check reads only the public bounds).
    """
    if not np.array_equal(lower, -upper):
        raise ValueError(
            f"{name}: sparse X needs public bounds symmetric around 0 (lower = -upper, "
            "e.g. bounds=(-c, c) for counts in [0, c]), so that zeros stay zeros when "
            "features are mapped onto [-1, 1]; pass such bounds, or densify X "
            "(X.toarray()) to use these.")
    X = X.copy()
    cols = X.indices
    X.data = clip_to_unit(X.data, lower[cols], upper[cols])
    return X


class MultiplicativeWeightsMixin(OneVsRestMixin, _BinaryMultiplicativeWeights):
    """The Winnow family's base: binary multiplicative weights, and C > 2 labels by
    internal one-vs-rest (``skdp._multiclass``). Place it before ``ClassifierMixin``."""

    def _ovr_check(self, template, X, y01, from_fit):
        # What the copies' first block checks before they charge, run once on a
        # throwaway copy before the C-class learner pays: the block itself, then (the
        # private learners) the parameters sized to the horizon, and the horizon.
        X, _, _ = template._validate_block(X, y01, [0, 1], True)
        if hasattr(template, "_resolve_parameters"):
            horizon = template.n_rounds or (X.shape[0] if from_fit else DEFAULT_STREAM_HORIZON)
            template._resolve_parameters(X.shape[1], horizon)
            template._check_horizon(0, X.shape[0], horizon)
