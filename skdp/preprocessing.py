"""Preprocessing with PUBLIC bounds: nothing is learned from the (private) data.

A scaler or a quantile binarizer fitted on private data leaks it: its
min/max/quantiles are exact statistics of the training set, released verbatim
inside the fitted pipeline. The transformers here take their bounds and
thresholds from the user (domain knowledge, documentation, a public dataset) and
``fit`` only checks the number of features, so a pipeline ``transformer →
private learner`` is exactly as private as the learner.
"""

from __future__ import annotations

import numbers
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted

from ._input import validate_data
from ._validation import check_public_bounds, clip_to_unit

if TYPE_CHECKING:
    from sklearn.utils import Tags
    from typing_extensions import Self

__all__ = ["PublicBoundsBinarizer", "PublicBoundsClipper"]


def _bounds_per_feature(bounds, n_features):
    """(low, high) arrays from bounds given as one pair, (low, high) pairs or diffprivlib's
    ``(lower_array, upper_array)``. With two features both forms are (2, 2): the one
    reading with low < high everywhere is taken; if both (or neither) qualify and they
    differ, the bounds are refused rather than guessed."""
    bounds = np.asarray(bounds, dtype=float)
    if bounds.shape == (2,):
        bounds = np.tile(bounds, (n_features, 1))
    elif bounds.shape == (2, n_features) and n_features != 2:
        bounds = bounds.T  # diffprivlib's (lower_array, upper_array)
    elif bounds.shape == (2, 2) and not np.array_equal(bounds, bounds.T):
        as_pairs, as_arrays = np.all(bounds[:, 0] < bounds[:, 1]), np.all(bounds[0] < bounds[1])
        if as_arrays and not as_pairs:
            bounds = bounds.T
        elif as_pairs == as_arrays:
            raise ValueError(
                "bounds of shape (2, 2) with two features is ambiguous: it reads as two "
                "(low, high) pairs or as diffprivlib's (lower_array, upper_array). Give the "
                "cut points instead, e.g. thresholds=[[t0], [t1]]."
            )
    if bounds.shape != (n_features, 2):
        raise ValueError(f"bounds must have shape (2,), ({n_features}, 2) or (2, {n_features}), "
                         f"got {bounds.shape}.")
    return check_public_bounds(bounds[:, 0], bounds[:, 1], n_features, "bounds")


class PublicBoundsClipper(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Clip each feature to user-given bounds and (by default) map them onto [−1, 1].

    Use it in front of learners that need features in a known range (e.g. the
    Winnow family needs [−1, 1]). Values outside the bounds are clipped, which
    bounds the influence of any one record without looking at the data.

    Parameters
    ----------
    lower, upper : float or array-like of shape (n_features,), default=None
        Public bounds per feature (a scalar applies to all), lower < upper. Without
        them every feature is clipped to [−1, 1] and ``fit`` warns (always, whatever
        the data): real-valued features outside that range lose their information.
    scale : bool, default=True
        Map [lower, upper] linearly onto [−1, 1] after clipping; otherwise only clip.

    Attributes
    ----------
    lower_, upper_ : ndarray of shape (n_features,)
        The bounds, broadcast per feature.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string feature names.

    Privacy
    -------
    Data-independent: ``fit`` learns nothing from X's values, so the transform
    costs no privacy.

    Examples
    --------
    >>> from skdp.preprocessing import PublicBoundsClipper
    >>> PublicBoundsClipper(lower=0, upper=10).fit_transform([[0.0, 5.0], [20.0, -3.0]])
    array([[-1.,  0.],
           [ 1., -1.]])
    """

    _parameter_constraints: dict = {
        "lower": ["array-like", Interval(numbers.Real, None, None, closed="neither"), None],
        "upper": ["array-like", Interval(numbers.Real, None, None, closed="neither"), None],
        "scale": ["boolean"],
    }

    def __init__(self, lower: ArrayLike | float | None = None,
                 upper: ArrayLike | float | None = None, *, scale: bool = True) -> None:
        self.lower = lower
        self.upper = upper
        self.scale = scale

    def fit(self, X: ArrayLike, y: Any = None) -> Self:
        """Check X's shape and the bounds; nothing is learned from X's values."""
        self._validate_params()
        data: NDArray[Any] = validate_data(self, X, reset=True, ensure_all_finite=True)
        if (self.lower is None) != (self.upper is None):
            raise ValueError("Give both lower and upper (public bounds), or neither.")
        if self.lower is None:
            # Decided from the parameters alone, so the warning says nothing about X.
            warnings.warn(
                "PublicBoundsClipper: no public bounds given (lower=, upper=), so every "
                "feature is clipped to [-1, 1]. Real-valued features outside that range "
                "lose their information; pass bounds from domain knowledge or documentation.",
                UserWarning, stacklevel=2,
            )
        lower = -1.0 if self.lower is None else self.lower
        upper = 1.0 if self.upper is None else self.upper
        self.lower_, self.upper_ = check_public_bounds(lower, upper, data.shape[1],
                                                       "PublicBoundsClipper")
        return self

    def transform(self, X: ArrayLike) -> NDArray[np.floating[Any]]:
        """Clip (and scale) X."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, ensure_all_finite=True, copy=True)
        if self.scale:
            return clip_to_unit(X, self.lower_, self.upper_)
        return np.clip(X, self.lower_, self.upper_)


class PublicBoundsBinarizer(TransformerMixin, BaseEstimator):
    """Binary features ``x_j > t`` for user-given thresholds t (never data quantiles).

    Give at most one of ``thresholds`` (one cut point for every feature, or a list
    with one sequence of cut points per feature) or ``bounds`` with ``n_thresholds``:
    that many evenly spaced interior thresholds inside each feature's public
    (low, high) range. With neither, every feature is cut at 0.0, as
    :class:`sklearn.preprocessing.Binarizer` does (0/1 input passes through).

    Parameters
    ----------
    thresholds : float or list of array-like, default=None
        A float cuts every feature there; a list gives ``thresholds[j]``, the cut
        points of feature j (may be empty). None (and no ``bounds``) means 0.0.
    bounds : array-like of shape (2,), (n_features, 2) or (2, n_features), optional
        Public (low, high) per feature, or one pair for all features. diffprivlib's
        form ``(lower_array, upper_array)`` is read as such; with exactly two
        features, where the two forms cannot be told apart, give ``thresholds``.
    n_thresholds : int, default=1
        Thresholds per feature with ``bounds``: low + (high − low)·i/(n_thresholds + 1).

    Attributes
    ----------
    thresholds_ : list of ndarray
        The thresholds used for each input feature.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string feature names.

    Privacy
    -------
    Data-independent: ``fit`` learns nothing from X's values, so the transform
    costs no privacy.

    Examples
    --------
    >>> from skdp.preprocessing import PublicBoundsBinarizer
    >>> b = PublicBoundsBinarizer(thresholds=[[1.0, 2.0], [0.0]]).fit([[0.0, 0.0]])
    >>> b.transform([[1.5, -1.0], [3.0, 1.0]])
    array([[1, 0, 0],
           [1, 1, 1]], dtype=uint8)
    >>> list(b.get_feature_names_out())
    ['x0 > 1', 'x0 > 2', 'x1 > 0']
    """

    _parameter_constraints: dict = {
        "thresholds": [list, tuple, Interval(numbers.Real, None, None, closed="neither"),
                       None],
        "bounds": ["array-like", None],
        "n_thresholds": [Interval(numbers.Integral, 1, None, closed="left")],
    }

    def __init__(self, thresholds: float | list | tuple | None = None, *,
                 bounds: ArrayLike | None = None, n_thresholds: int = 1) -> None:
        self.thresholds = thresholds
        self.bounds = bounds
        self.n_thresholds = n_thresholds

    def _resolve_thresholds(self, n_features):
        if self.thresholds is not None and self.bounds is not None:
            raise ValueError(
                "Give at most one of thresholds (cut points per feature) or bounds "
                "(public (low, high) ranges): they must not come from the private data."
            )
        if self.bounds is None:
            cut = 0.0 if self.thresholds is None else self.thresholds
            if isinstance(cut, numbers.Real):
                return [np.array([float(cut)]) for _ in range(n_features)]
            if len(cut) != n_features:
                raise ValueError(f"thresholds has {len(cut)} entries for {n_features} features.")
            out = [np.sort(np.asarray(t, dtype=float).ravel()) for t in cut]
            if not all(np.all(np.isfinite(t)) for t in out):
                raise ValueError("thresholds must be finite.")
            return out
        low, high = _bounds_per_feature(self.bounds, n_features)
        steps = np.arange(1, self.n_thresholds + 1) / (self.n_thresholds + 1)
        return list(low[:, None] + (high - low)[:, None] * steps[None, :])

    def fit(self, X: ArrayLike, y: Any = None) -> Self:
        """Check X's shape and resolve the thresholds; nothing is learned from X's values."""
        self._validate_params()
        data: NDArray[Any] = validate_data(self, X, reset=True, ensure_all_finite=True)
        self.thresholds_ = self._resolve_thresholds(data.shape[1])
        self._columns = np.repeat(np.arange(data.shape[1]), [t.size for t in self.thresholds_])
        self._cuts = np.concatenate(self.thresholds_) if self._columns.size else np.empty(0)
        return self

    def transform(self, X: ArrayLike) -> NDArray[np.uint8]:
        """Return the uint8 matrix of indicators ``X[:, j] > t``."""
        check_is_fitted(self)
        data: NDArray[Any] = validate_data(self, X, reset=False, ensure_all_finite=True)
        return (data[:, self._columns] > self._cuts).astype(np.uint8)

    def get_feature_names_out(self, input_features: ArrayLike | None = None) -> NDArray[Any]:
        """Names like ``"x3 > 1.5"`` (or ``"<column> > 1.5"`` for named input)."""
        check_is_fitted(self)
        names = _check_feature_names_in(self, input_features)
        return np.asarray(
            [f"{names[j]} > {t:g}" for j, cuts in enumerate(self.thresholds_) for t in cuts],
            dtype=object,
        )

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = []  # the output is always uint8 indicators
        return tags
