"""Preprocessing with PUBLIC parameters: nothing is learned from the (private) data.

A scaler, an imputer or a quantile binarizer fitted on private data leaks it: its
min/max/means/medians/quantiles are exact statistics of the training set, released
verbatim inside the fitted pipeline. The transformers here take their bounds,
thresholds and fill values from the user (domain knowledge, documentation, a public
dataset) and ``fit`` only checks the number of features, so a pipeline ``transformer →
private learner`` is exactly as private as the learner.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted

from ._input import validate_data
from ._validation import check_public_bounds, clip_to_unit

if TYPE_CHECKING:
    from sklearn.utils import Tags
    from typing_extensions import Self

__all__ = ["PublicBoundsBinarizer", "PublicBoundsClipper", "PublicImputer"]


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
        # the comparison's booleans are bytes 0/1: read as uint8 without another pass
        return np.greater(data[:, self._columns], self._cuts).view(np.uint8)

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


def _is_nan(value: Any) -> bool:
    return isinstance(value, numbers.Real) and math.isnan(value)


class PublicImputer(TransformerMixin, BaseEstimator):
    """Replace missing values by fill values you give (never statistics of the data).

    The private counterpart of ``SimpleImputer(strategy="constant")``: one public fill
    value for every feature, one per feature, or one per named column. Put it in front of
    any skdp learner that refuses NaN, e.g.
    ``make_pipeline(PublicImputer(fill_value=[40, 0]), DPWinnowClassifier(...))``.
    ``SimpleImputer(strategy="mean"|"median"|"most_frequent")``, ``KNNImputer`` and
    ``IterativeImputer`` fill with statistics of the training rows, which the fitted
    pipeline then releases without noise; choose fill values from domain knowledge,
    documentation or a public dataset instead.

    Parameters
    ----------
    fill_value : float, array-like of shape (n_features,) or dict, default=None
        What a missing entry becomes: one value for every feature, one per feature, or a
        dict ``{column name: value}`` naming every column of a DataFrame X. Finite reals.
        None means 0.0, and ``fit`` then warns (always, whatever the data): choose a value
        that means something for each feature.
    missing_values : float, default=np.nan
        The placeholder for a missing entry (NaN, or a sentinel such as -999). pandas'
        ``pd.NA`` reads as NaN.
    add_indicator : bool, default=False
        Also output, for EVERY input feature, a 0/1 column "this entry was missing" (after
        the filled features), so a learner can use missingness as information. Unlike
        ``SimpleImputer(add_indicator=True)``, which keeps indicators only for the features
        that had missing values in the training rows (a fact about the private data,
        released in the fitted pipeline's shape), the columns do not depend on the data.
    copy : bool, default=True
        If False, dense float input is filled in place where possible.

    Attributes
    ----------
    fill_values_ : ndarray of shape (n_features,)
        The fill value of each input feature.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of features seen during ``fit``. Only when X has string feature names.

    Privacy
    -------
    Data-independent: ``fit`` reads only X's shape and column names, and ``transform``
    maps each row to a row computed from that row and the public fill values alone.
    Adding or removing one person's row therefore adds or removes one row of the output
    and changes no other, so an ε-DP learner fitted on the output is ε-DP with respect to
    the raw rows: the imputer costs no privacy. (A fill value computed from the private
    rows, such as their median, would make every output row depend on every input row.)

    See Also
    --------
    sklearn.impute.SimpleImputer : the same with ``strategy="constant"``; its other
        strategies learn from the data.
    PublicBoundsClipper : clip and scale with public bounds.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.preprocessing import PublicImputer
    >>> X = [[np.nan, 1.0], [30.0, np.nan]]
    >>> PublicImputer(fill_value=[40.0, 0.0]).fit_transform(X)
    array([[40.,  1.],
           [30.,  0.]])
    >>> imp = PublicImputer(fill_value=0.0, add_indicator=True).fit(X)
    >>> imp.transform([[np.nan, 2.0]])
    array([[0., 2., 1., 0.]])
    >>> list(imp.get_feature_names_out())
    ['x0', 'x1', 'missingindicator_x0', 'missingindicator_x1']
    """

    _parameter_constraints: dict = {
        "fill_value": ["array-like", dict, Interval(numbers.Real, None, None, closed="neither"),
                       None],
        "missing_values": [numbers.Real],
        "add_indicator": ["boolean"],
        "copy": ["boolean"],
    }

    def __init__(self, fill_value: ArrayLike | dict | float | None = None, *,
                 missing_values: float = np.nan, add_indicator: bool = False,
                 copy: bool = True) -> None:
        self.fill_value = fill_value
        self.missing_values = missing_values
        self.add_indicator = add_indicator
        self.copy = copy

    def _validate(self, X: ArrayLike, *, reset: bool) -> Any:
        """X as float (dense or sparse), refused before anything else if it cannot be
        read; NaN passes only where it is the placeholder."""
        sparse_ok = self.missing_values != 0  # else every implicit zero would be filled
        data = validate_data(self, X, reset=reset, dtype=[np.float64, np.float32],
                             accept_sparse=["csr", "csc"] if sparse_ok else False,
                             ensure_all_finite="allow-nan", copy=self.copy)
        values = data.data if sp.issparse(data) else data
        if not _is_nan(self.missing_values) and np.isnan(values).any():
            raise ValueError(
                f"PublicImputer(missing_values={self.missing_values!r}): Input X contains "
                "NaN, which this imputer does not fill. Use missing_values=np.nan (the "
                "default), or a second PublicImputer for NaN.")
        return data

    def _resolve_fill(self, n_features: int) -> NDArray[np.float64]:
        value = self.fill_value
        if isinstance(value, dict):
            names = getattr(self, "feature_names_in_", None)
            if names is None:
                raise ValueError("PublicImputer: fill_value as a dict needs X with column "
                                 "names (a DataFrame); give a list, one value per feature.")
            unknown = sorted(str(k) for k in value if k not in set(names))
            missing = [str(n) for n in names if n not in value]
            if unknown or missing:
                raise ValueError(
                    "PublicImputer: fill_value must name every column of X and no other; "
                    f"unknown: {unknown}, without a value: {missing}.")
            value = [value[n] for n in names]
        try:
            fill = np.asarray(0.0 if value is None else value, dtype=float)
        except (TypeError, ValueError, OverflowError):
            fill = None  # numpy's message is not needed: the values are public, but odd
        if fill is None or not np.all(np.isfinite(fill)):
            raise ValueError("PublicImputer: fill_value must hold finite real numbers.")
        if fill.ndim == 0:
            fill = np.full(n_features, float(fill))
        if fill.shape != (n_features,):
            raise ValueError(f"PublicImputer: fill_value must be a scalar or have one entry "
                             f"per feature ({n_features}), got shape {fill.shape}.")
        return fill

    def fit(self, X: ArrayLike, y: Any = None) -> Self:
        """Check X's shape and the fill values; nothing is learned from X's values.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        self : PublicImputer
        """
        self._validate_params()
        data = self._validate(X, reset=True)
        self.fill_values_ = self._resolve_fill(data.shape[1])
        if self.fill_value is None:
            # Decided from the parameters alone, so the warning says nothing about X.
            warnings.warn(
                "PublicImputer: no fill_value given, so every missing entry becomes 0.0. "
                "Pass public fill values (fill_value=[...] or {column: value}) that mean "
                "something for each feature.", UserWarning, stacklevel=2)
        return self

    def transform(self, X: ArrayLike) -> Any:
        """Fill the missing entries of X (and append the indicators).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        {ndarray, sparse matrix} of shape (n_samples, n_features_out)
            Float, with ``n_features_out = 2 * n_features`` when ``add_indicator``.
        """
        check_is_fitted(self)
        data = self._validate(X, reset=False)
        if sp.issparse(data):
            # column of each stored entry (implicit zeros are never missing here)
            columns = (data.indices if data.format == "csr" else
                       np.repeat(np.arange(data.shape[1]), np.diff(data.indptr)))
            missing = self._missing(data.data)
            # own index arrays: eliminate_zeros rewrites them in place
            indicator = type(data)((missing.astype(data.dtype), data.indices.copy(),
                                    data.indptr.copy()), shape=data.shape)
            indicator.eliminate_zeros()
            data.data[missing] = self.fill_values_[columns[missing]]
            if not self.add_indicator:
                return data
            return sp.hstack([data, indicator], format=data.format)
        missing = self._missing(data)
        np.copyto(data, np.broadcast_to(self.fill_values_.astype(data.dtype), data.shape),
                  where=missing)
        if not self.add_indicator:
            return data
        return np.hstack([data, missing.astype(data.dtype)])

    def _missing(self, values: NDArray[Any]) -> NDArray[np.bool_]:
        if _is_nan(self.missing_values):
            return np.isnan(values)
        return values == self.missing_values

    def get_feature_names_out(self, input_features: ArrayLike | None = None) -> NDArray[Any]:
        """The input names, then ``"missingindicator_<name>"`` for each with
        ``add_indicator`` (scikit-learn's SimpleImputer names).

        Parameters
        ----------
        input_features : array-like of str, default=None

        Returns
        -------
        ndarray of str objects
        """
        check_is_fitted(self)
        names = _check_feature_names_in(self, input_features)
        if not self.add_indicator:
            return names
        return np.concatenate([names, np.asarray([f"missingindicator_{n}" for n in names],
                                                 dtype=object)])

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = _is_nan(self.missing_values)
        tags.input_tags.sparse = self.missing_values != 0
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
