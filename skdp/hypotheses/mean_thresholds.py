"""Two-sided thresholds on the mean of d real features, through a public clip and bins.

The default hypothesis class of skdp's online learners (``hypothesis_class=None``). They
run over a finite domain {0, …, N−1} whose cells they count (the histogram sanitizer, the
experts' cell counters: 2N cells) or scan (DP-SOA's and Li–Wang–Ye's tournament
examples); a product grid of d features with b bins each has b^d cells (2³⁰ for the 30
features of breast cancer with b = 2), far beyond what they can hold. So the default maps
each row to ONE public score — the mean of its features clipped to public bounds and
rescaled to [0, 1] — cut into ``n_bins`` equal-width bins, and the hypotheses are
thresholds on that bin index in both directions. Everything is fixed by the constructor's
arguments (never by a statistic of the data), so discretising a private row costs no
privacy. For thresholds on one chosen column use
:class:`~skdp.hypotheses.RealThresholds` (e.g. behind a ``ColumnTransformer``).
"""

from __future__ import annotations

import functools
import numbers
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from .._validation import as_float_array, check_public_bounds, clip_to_unit
from ._base import HypothesisClass
from .finite import FiniteClass
from .littlestone import FiniteVersionSpace

__all__ = ["MeanThresholds", "two_sided_threshold_class"]


def two_sided_threshold_class(n_domain: int) -> FiniteClass:
    """Thresholds in both directions on {0, …, N−1} as a :class:`FiniteClass` (2N rows).

    Rows 0 … N: h_t(x) = +1 iff x ≥ t (t = 0 is all +1, t = N all −1); rows N + 1 …
    2N − 1: their complements for t = 1 … N − 1 (h(x) = +1 iff x < t).
    """
    n = int(n_domain)
    if n < 1:
        raise ValueError(f"n_domain must be a positive integer, got {n_domain!r}.")
    x = np.arange(n)[None, :]
    up = np.where(x >= np.arange(n + 1)[:, None], 1, -1)
    return FiniteClass(np.vstack([up, -up[1:n]]))


@functools.lru_cache(maxsize=8)
def _version_space(n_bins: int) -> FiniteVersionSpace:
    # Immutable, with a memoised Ldim oracle: sharing one per n_bins saves the recursion
    # each time a learner (or a restart of one) starts from the full class.
    return FiniteVersionSpace(two_sided_threshold_class(n_bins), max_hypotheses=2 * n_bins)


class MeanThresholds(HypothesisClass):
    """Thresholds, both ways, on the binned mean of the features: the online default.

    A row x ∈ ℝ^d is clipped to public bounds [lᵢ, uᵢ] per feature, rescaled to
    [0, 1] per feature, averaged into s(x) = (1/d)·Σᵢ (clip(xᵢ) − lᵢ)/(uᵢ − lᵢ), and
    binned: bin(x) = min(⌊N·s(x)⌋, N − 1) with N = ``n_bins``. The hypotheses are
    "bin(x) ≥ t ⇒ +1" and "bin(x) ≥ t ⇒ −1" for t = 1 … N − 1 and the two constants:
    :func:`two_sided_threshold_class` (N), 2N hypotheses over the N bins.

    Littlestone dimension: finite because the class is — the N bins are the whole domain
    the learners see, and a complete mistake tree of depth k needs 2^k distinct
    hypotheses, so Ldim ≤ ⌊log₂ 2N⌋; it is at least ⌊log₂(N + 1)⌋ (the one-sided
    thresholds it contains). The exact recursion (:attr:`littlestone_dimension`) gives
    ⌊log₂ 2N⌋ for N = 2, 4, 8, 16, 32: 5 for the default N = 16. On raw ℝ^d, thresholds would have
    infinite Littlestone dimension: the public bins are what makes the class learnable
    online.

    Parameters
    ----------
    bounds : (lower, upper) or None, default=None
        Public bounds, scalars (every feature) or one value per feature each (the
        diffprivlib form ``(lower_array, upper_array)``). Values outside are clipped.
        ``None``: [−1, 1] for every feature, with a :class:`UserWarning` when a learner
        starts a stream (:meth:`check_features`) — a warning decided by the parameters
        only, never by the data. Choose them from domain knowledge, never from the data.
    n_bins : int, default=16
        N ≥ 2. Kept small by default: the private learners' cost and noise grow with the
        domain (2N cells for the agnostic learners, a k₁ = 2^{Ldim+1}-leaf forest for
        DP-SOA).

    Attributes
    ----------
    n_domain : int
        N, the domain the learners see.
    littlestone_dimension : int

    Notes
    -----
    This is a halfspace with a fixed, public normal (1, …, 1) on the rescaled features:
    it learns where the mean of the (clipped) features separates the classes, and says
    nothing about other directions. Features that all fall outside the bounds give every
    row the same bin (a constant learner): pass bounds.

    Privacy
    -------
    ``to_domain`` is a fixed public function of each row (it reads only the constructor's
    arguments), so a learner fed ``to_domain(X)`` is exactly as private as on the bins.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.hypotheses import MeanThresholds
    >>> h = MeanThresholds(bounds=(0.0, 10.0), n_bins=4)
    >>> h.to_domain([[0.0, 1.0], [5.0, 5.0], [20.0, 9.0], [-3.0, -3.0]])
    array([0, 2, 3, 0])
    >>> h.finite_class().n_hypotheses, h.littlestone_dimension
    (8, 3)
    """

    bounds: Any
    n_bins: int
    #: ``to_domain`` reads a scipy.sparse X without densifying (learners ask this).
    accepts_sparse = True

    def __init__(self, bounds: Any = None, n_bins: int = 16) -> None:
        if (isinstance(n_bins, bool) or not isinstance(n_bins, numbers.Integral)
                or n_bins < 2):
            raise ValueError(f"MeanThresholds: n_bins must be an integer ≥ 2, got {n_bins!r}.")
        if bounds is not None and (not isinstance(bounds, (tuple, list)) or len(bounds) != 2):
            raise ValueError("MeanThresholds: bounds must be None or a pair (lower, upper) of "
                             f"scalars or per-feature arrays, got {bounds!r}.")
        self.bounds = bounds
        self.n_bins = int(n_bins)

    @property
    def n_domain(self) -> int:
        """N = ``n_bins``: the size of the finite domain rows are mapped to."""
        return self.n_bins

    @property
    def littlestone_dimension(self) -> int:
        """Exact Ldim of the class on the N bins (memoised recursion)."""
        return int(self.version_space().ldim())

    def resolve_bounds(self, n_features: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Public (lower, upper), each of shape (n_features,); [−1, 1] without bounds."""
        lower, upper = (-1.0, 1.0) if self.bounds is None else self.bounds
        return check_public_bounds(lower, upper, n_features, "MeanThresholds bounds")

    def check_features(self, n_features: int, owner: str) -> None:
        """Check the bounds against the number of features when ``owner`` starts a stream;
        warn (from the parameters only) when no bounds were given."""
        self.resolve_bounds(n_features)
        if self.bounds is None:
            warnings.warn(
                f"{owner}: no public bounds given, so features are clipped to [-1, 1] before "
                "their mean is binned (values outside lose their information). Pass "
                "hypothesis_class=MeanThresholds(bounds=(lower, upper)) from domain "
                "knowledge.", UserWarning, stacklevel=4)

    def to_domain(self, X: ArrayLike) -> NDArray[np.intp]:
        """Bin of every row's clipped, rescaled mean: ``(n, d)`` floats → ``(n,)`` intp.

        Raises ValueError, without printing any value, for non-finite values or bounds of
        the wrong length. A scipy.sparse X is read in O(non-zeros), never densified.
        """
        if sp.issparse(X):
            return self._bin(self._sparse_mean(X))
        X = as_float_array(X, "MeanThresholds: X")
        if X.ndim != 2 or X.shape[1] == 0:
            raise ValueError(f"MeanThresholds expects X of shape (n, d), d ≥ 1; got an array "
                             f"of shape {X.shape}.")
        if not np.all(np.isfinite(X)):
            raise ValueError("MeanThresholds: X must be finite (NaN or inf found; the values "
                             "are not shown: they may be private).")
        unit = clip_to_unit(X, *self.resolve_bounds(X.shape[1]))  # in [−1, 1]
        return self._bin(unit.mean(axis=1))

    def _bin(self, mean_unit: NDArray[np.float64]) -> NDArray[np.intp]:
        score = (mean_unit + 1.0) / 2.0  # in [0, 1]
        return np.minimum(np.floor(score * self.n_bins), self.n_bins - 1).astype(np.intp)

    def _sparse_mean(self, X: Any) -> NDArray[np.float64]:
        """Row means of the clipped, rescaled features of a sparse X, from its stored
        values: an unstored 0 of feature j maps to the public constant c_j, so the mean
        is (Σ_j c_j + Σ_stored (unit(x) − c_j))/d — any bounds, no densifying."""
        X = sp.csr_matrix(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] == 0:
            raise ValueError(f"MeanThresholds expects X of shape (n, d), d ≥ 1; got a sparse "
                             f"matrix of shape {X.shape}.")
        if not np.all(np.isfinite(X.data)):
            raise ValueError("MeanThresholds: X must be finite (NaN or inf found; the values "
                             "are not shown: they may be private).")
        lower, upper = self.resolve_bounds(X.shape[1])
        zero = clip_to_unit(np.zeros(X.shape[1]), lower, upper)
        cols = X.indices
        shift = clip_to_unit(X.data, lower[cols], upper[cols]) - zero[cols]
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        per_row = np.bincount(rows, weights=shift, minlength=X.shape[0])
        return (zero.sum() + per_row) / X.shape[1]

    def finite_class(self) -> FiniteClass:
        """The class on bin indices: :func:`two_sided_threshold_class` (N)."""
        return two_sided_threshold_class(self.n_bins)

    def version_space(self, **limits: Any) -> FiniteVersionSpace:
        """:class:`~skdp.hypotheses.FiniteVersionSpace` of :meth:`finite_class` (shared
        per N; ``limits`` other than the defaults build a fresh one)."""
        if limits:
            limits.setdefault("max_hypotheses", 2 * self.n_bins)
            return FiniteVersionSpace(self.finite_class(), **limits)
        return _version_space(self.n_bins)

    def _bins(self, X: ArrayLike) -> NDArray[np.float64]:
        return self.to_domain(X)[:, None].astype(np.float64)

    def fit_blocks(self, X: ArrayLike, y: ArrayLike, blocks: ArrayLike, n_blocks: int, *,
                   sample_weight: ArrayLike | None = None, forced_X: ArrayLike | None = None,
                   forced_y: ArrayLike | None = None,
                   through: ArrayLike | None = None) -> NDArray[np.intp]:
        """Exact constrained ERM per block: :class:`FiniteClass` on the bins (row indices
        of :meth:`finite_class`)."""
        forced = None if forced_X is None else self._bins(forced_X)
        return self.finite_class().fit_blocks(
            self._bins(X), y, blocks, n_blocks, sample_weight=sample_weight,
            forced_X=forced, forced_y=forced_y, through=through)

    def predict_blocks(self, params: ArrayLike, X: ArrayLike) -> NDArray[np.int8]:
        """±1 labels of every block's hypothesis at the rows of X, ``(k, n)`` int8."""
        return self.finite_class().label_matrix[np.asarray(params)][:, self.to_domain(X)]

    def __repr__(self) -> str:
        return f"MeanThresholds(bounds={self.bounds!r}, n_bins={self.n_bins})"


class _DefaultMeanThresholds(MeanThresholds):
    """``MeanThresholds()`` standing in for ``hypothesis_class=None``: the same class, and
    a warning at stream start that names what the default does on a table.

    With d > 1 features and no choice made, a learner would otherwise learn thresholds
    on the mean of every feature clipped to [−1, 1] without saying so — one fixed
    direction, which on raw tables gave ROC AUC 0.50–0.54 (issue 29: the raw
    breast-cancer table, whose 30 features mostly exceed 1 and clip to a near-constant
    mean). The warning replaces the bounds warning of :class:`MeanThresholds`; it reads
    the parameters and the number of features only (public), never the data.
    """

    def check_features(self, n_features: int, owner: str) -> None:
        from .._labels import _caller_stacklevel  # the user's line, past skdp and sklearn

        if n_features == 1:
            super().check_features(n_features, owner)
            return
        self.resolve_bounds(n_features)
        warnings.warn(
            f"{owner}: hypothesis_class=None learns thresholds on the MEAN of all "
            f"{n_features} features, each clipped to [-1, 1] (MeanThresholds() has no "
            "public bounds): one fixed direction, so on a real table it often learns "
            "nothing (ROC AUC 0.50-0.54 on the raw breast-cancer table). Choose the class: "
            "hypothesis_class=MeanThresholds(bounds=(lower, upper)) with bounds from domain "
            "knowledge, or RealThresholds on one informative column (e.g. behind a "
            "ColumnTransformer).", UserWarning, stacklevel=_caller_stacklevel())
