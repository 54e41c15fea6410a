"""Preprocessing with PUBLIC bounds: nothing is learned from the (private) data.

A scaler or a quantile binarizer fitted on private data leaks it: its
min/max/quantiles are exact statistics of the training set, released verbatim
inside the fitted pipeline. The transformers here take their bounds and
thresholds from the user (domain knowledge, documentation, a public dataset) and
``fit`` only checks the number of features, so a pipeline ``transformer →
private learner`` is exactly as private as the learner.
"""

import numbers

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted, validate_data

__all__ = ["PublicBoundsBinarizer", "PublicBoundsClipper"]


def _per_feature(value, n_features, name):
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0:
        arr = np.full(n_features, float(arr))
    if arr.shape != (n_features,):
        raise ValueError(
            f"{name} must be a scalar or have one entry per feature ({n_features}), "
            f"got shape {arr.shape}."
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {value!r}.")
    return arr


def _check_bounds(lower, upper, n_features):
    lower = _per_feature(lower, n_features, "lower")
    upper = _per_feature(upper, n_features, "upper")
    if np.any(lower >= upper):
        bad = int(np.argmax(lower >= upper))
        raise ValueError(f"lower must be < upper for every feature; feature {bad} has "
                         f"[{lower[bad]}, {upper[bad]}].")
    return lower, upper


class PublicBoundsClipper(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Clip each feature to user-given bounds and (by default) map them onto [−1, 1].

    Use it in front of learners that need features in a known range (e.g. the
    Winnow family needs [−1, 1]). Values outside the bounds are clipped, which
    bounds the influence of any one record without looking at the data.

    Parameters
    ----------
    lower, upper : float or array-like of shape (n_features,)
        Public bounds per feature (a scalar applies to all), lower < upper.
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
        "lower": ["array-like", Interval(numbers.Real, None, None, closed="neither")],
        "upper": ["array-like", Interval(numbers.Real, None, None, closed="neither")],
        "scale": ["boolean"],
    }

    def __init__(self, lower=-1.0, upper=1.0, *, scale=True):
        self.lower = lower
        self.upper = upper
        self.scale = scale

    def fit(self, X, y=None):
        """Check X's shape and the bounds; nothing is learned from X's values."""
        self._validate_params()
        X = validate_data(self, X, reset=True, ensure_all_finite=True)
        self.lower_, self.upper_ = _check_bounds(self.lower, self.upper, X.shape[1])
        return self

    def transform(self, X):
        """Clip (and scale) X."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, ensure_all_finite=True, copy=True)
        X = np.clip(X, self.lower_, self.upper_)
        if self.scale:
            X = 2.0 * (X - self.lower_) / (self.upper_ - self.lower_) - 1.0
        return X


class PublicBoundsBinarizer(TransformerMixin, BaseEstimator):
    """Binary features ``x_j > t`` for user-given thresholds t (never data quantiles).

    Give either ``thresholds`` (a list with one sequence of thresholds per
    feature) or ``bounds`` with ``n_thresholds``: that many evenly spaced interior
    thresholds inside each feature's public (low, high) range.

    Parameters
    ----------
    thresholds : list of array-like, optional
        ``thresholds[j]`` are the cut points of feature j (may be empty).
    bounds : array-like of shape (2,) or (n_features, 2), optional
        Public (low, high) per feature, or one pair for all features.
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
        "thresholds": [list, tuple, None],
        "bounds": ["array-like", None],
        "n_thresholds": [Interval(numbers.Integral, 1, None, closed="left")],
    }

    def __init__(self, thresholds=None, *, bounds=None, n_thresholds=1):
        self.thresholds = thresholds
        self.bounds = bounds
        self.n_thresholds = n_thresholds

    def _resolve_thresholds(self, n_features):
        if (self.thresholds is None) == (self.bounds is None):
            raise ValueError(
                "Give exactly one of thresholds (cut points per feature) or bounds "
                "(public (low, high) ranges): they must not come from the private data."
            )
        if self.thresholds is not None:
            if len(self.thresholds) != n_features:
                raise ValueError(f"thresholds has {len(self.thresholds)} entries for "
                                 f"{n_features} features.")
            out = [np.sort(np.asarray(t, dtype=float).ravel()) for t in self.thresholds]
            if not all(np.all(np.isfinite(t)) for t in out):
                raise ValueError("thresholds must be finite.")
            return out
        bounds = np.asarray(self.bounds, dtype=float)
        if bounds.shape == (2,):
            bounds = np.tile(bounds, (n_features, 1))
        if bounds.shape != (n_features, 2):
            raise ValueError(f"bounds must have shape (2,) or ({n_features}, 2), "
                             f"got {bounds.shape}.")
        low, high = _check_bounds(bounds[:, 0], bounds[:, 1], n_features)
        steps = np.arange(1, self.n_thresholds + 1) / (self.n_thresholds + 1)
        return list(low[:, None] + (high - low)[:, None] * steps[None, :])

    def fit(self, X, y=None):
        """Check X's shape and resolve the thresholds; nothing is learned from X's values."""
        self._validate_params()
        X = validate_data(self, X, reset=True, ensure_all_finite=True)
        self.thresholds_ = self._resolve_thresholds(X.shape[1])
        self._columns = np.repeat(np.arange(X.shape[1]), [t.size for t in self.thresholds_])
        self._cuts = np.concatenate(self.thresholds_) if self._columns.size else np.empty(0)
        return self

    def transform(self, X):
        """Return the uint8 matrix of indicators ``X[:, j] > t``."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, ensure_all_finite=True)
        return (X[:, self._columns] > self._cuts).astype(np.uint8)

    def get_feature_names_out(self, input_features=None):
        """Names like ``"x3 > 1.5"`` (or ``"<column> > 1.5"`` for named input)."""
        check_is_fitted(self)
        names = _check_feature_names_in(self, input_features)
        return np.asarray(
            [f"{names[j]} > {t:g}" for j, cuts in enumerate(self.thresholds_) for t in cuts],
            dtype=object,
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = []  # the output is always uint8 indicators
        return tags
