"""ConjunctionFeatures: binary features → all conjunctions of at most k literals."""

from __future__ import annotations

import itertools
import math
import numbers
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils._set_output import _get_output_config
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted

from .._input import validate_data

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from typing_extensions import Self

__all__ = ["ConjunctionFeatures", "n_conjunctions"]

# Dense boolean work space per column block (rows × columns), in cells.
_BLOCK_CELLS = 1 << 24


def n_conjunctions(n_features: int, k: int, negations: bool = True) -> int:
    """|C_d^k| without the empty conjunction: Σ_{j=1..k} C(d, j)·2^j (or C(d, j))."""
    return sum(
        math.comb(n_features, j) * (2**j if negations else 1) for j in range(1, k + 1)
    )


def _wrap(name):
    return f"({name})" if any(ch.isspace() for ch in name) else name


class ConjunctionFeatures(TransformerMixin, BaseEstimator):
    """All conjunctions of 1 to ``k`` literals over binary features (sparse output).

    Feeding these to :class:`DPDecisionListClassifier` learns k-decision lists
    (Bun & Fang, Appendix A.3, Cor 22): each rule is a conjunction such as
    ``x3 & ~x7``. The number of conjunctions of at most k literals over d variables,
    Σ_{j ≤ k} 2^j·C(d, j), is at most e²·d^k (Prop 23); the constant-true conjunction
    is left out because the decision lists add it themselves.

    Parameters
    ----------
    k : int, default=2
        Maximum number of literals per conjunction.
    negations : bool, default=True
        Literals are x_j and ¬x_j (``~x_j``); if False only x_j (monotone).
    max_features : int, default=1_000_000
        Refuse (``ValueError``, before allocating anything) when the number of
        output features would exceed this.
    binarize : float or None, default=0.0
        Inputs are binarized as ``x > binarize`` first (a public constant), like
        ``BernoulliNB(binarize=0.0)``: 0/1 input passes through unchanged.
        ``None``: the input must already be 0/1.

    Attributes
    ----------
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string feature names.
    n_output_features_ : int
    conjunctions_ : list of tuple of (int, bool)
        Each output feature as its literals ``(input index, positive?)``.

    Privacy
    -------
    Data-independent: ``fit`` only checks the shape, so the transform costs no
    privacy. Note that a DP decision list's per-step noise does not grow with the
    number of features, but its selection error grows like log|C| and the
    default ``max_rules`` (= number of features) grows like d^k.

    Examples
    --------
    >>> from skdp.decision_list import ConjunctionFeatures
    >>> cf = ConjunctionFeatures(k=2).fit([[0, 1], [1, 1]])
    >>> list(cf.get_feature_names_out())
    ['x0', '~x0', 'x1', '~x1', 'x0 & x1', 'x0 & ~x1', '~x0 & x1', '~x0 & ~x1']
    >>> cf.transform([[0, 1]]).toarray()
    array([[0, 1, 1, 0, 0, 0, 1, 0]], dtype=int8)
    """

    _parameter_constraints: dict = {
        "k": [Interval(numbers.Integral, 1, None, closed="left")],
        "negations": ["boolean"],
        "max_features": [Interval(numbers.Integral, 1, None, closed="left")],
        "binarize": [Interval(numbers.Real, None, None, closed="neither"), None],
    }

    def __init__(self, k: int = 2, *, negations: bool = True, max_features: int = 1_000_000,
                 binarize: float | None = 0.0) -> None:
        self.k = k
        self.negations = negations
        self.max_features = max_features
        self.binarize = binarize

    def _check_binary(self, X):
        if self.binarize is not None:
            return
        values = X.data if sp.issparse(X) else np.asarray(X)
        if values.size and not np.all((values == 0) | (values == 1)):
            raise ValueError(
                "ConjunctionFeatures needs binary (0/1) features; binarize real-valued "
                "features with public thresholds first, e.g. "
                "skdp.preprocessing.PublicBoundsBinarizer."
            )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: object = None) -> Self:
        """Check X (binary) and the output size; nothing is learned from X's values.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        Xv = validate_data(self, X, accept_sparse="csr", dtype="numeric")
        self._check_binary(Xv)
        d = Xv.shape[1]
        k = min(self.k, d)
        count = n_conjunctions(d, k, self.negations)
        if count > self.max_features:
            raise ValueError(
                f"ConjunctionFeatures(k={self.k}, negations={self.negations}) on {d} features "
                f"would create {count:,} features (≤ e²·d^k = {math.e**2 * d**k:,.0f}), more "
                f"than max_features={self.max_features:,}. Lower k, use fewer input features, "
                "or raise max_features."
            )
        signs = (True, False) if self.negations else (True,)
        conj = []
        for j in range(1, k + 1):
            for variables in itertools.combinations(range(d), j):
                for pattern in itertools.product(signs, repeat=j):
                    conj.append(tuple(zip(variables, pattern, strict=True)))
        self.conjunctions_ = conj
        self.n_output_features_ = count
        return self

    def transform(self, X: ArrayLike) -> sp.csr_matrix:
        """Sparse CSR matrix (int8) of the conjunctions' values on each row.

        Under ``set_output(transform="pandas")`` (or ``"polars"``) a DataFrame with
        one int8 column per conjunction, named by :meth:`get_feature_names_out`
        (dense: n_samples × n_output_features_ bytes).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features_in_)

        Returns
        -------
        Xt : scipy.sparse.csr_matrix of shape (n_samples, n_output_features_)
            Or a DataFrame, see above.
        """
        check_is_fitted(self)
        Xv = validate_data(self, X, accept_sparse="csr", dtype="numeric", reset=False)
        self._check_binary(Xv)
        n, d = Xv.shape
        Xd = Xv.toarray() if sp.issparse(Xv) else np.asarray(Xv)
        Xb = Xd > self.binarize if self.binarize is not None else Xd != 0
        literals = np.hstack([Xb, ~Xb]) if self.negations else Xb
        lit_index: list[list[int]] = [
            [v if pos else v + d for v, pos in c] for c in self.conjunctions_
        ]
        blocks = []
        step = max(1, _BLOCK_CELLS // max(n, 1))
        # group conjunctions by length so each block is one vectorised AND-reduction
        by_len: dict[int, list[int]] = {}
        for col, idx in enumerate(lit_index):
            by_len.setdefault(len(idx), []).append(col)
        for length in sorted(by_len):
            cols = by_len[length]
            table = np.array([lit_index[c] for c in cols], dtype=np.intp)
            for start in range(0, len(cols), step):
                part = table[start : start + step]
                block = literals[:, part[:, 0]].copy()
                for t in range(1, length):
                    block &= literals[:, part[:, t]]
                blocks.append(sp.csr_matrix(block, dtype=np.int8))
        out = sp.hstack(blocks, format="csr") if blocks else sp.csr_matrix((n, 0), dtype=np.int8)
        # columns were generated in length order, which is the order of conjunctions_
        if _get_output_config("transform", self)["dense"] != "default":
            # A DataFrame was asked for (set_output): scikit-learn's wrapper cannot hold
            # a sparse matrix, so hand it the dense 0/1 table to name and wrap.
            return out.toarray()
        return out

    def get_feature_names_out(self, input_features: ArrayLike | None = None) -> np.ndarray:
        """Names like ``x3 & ~x7`` (names with spaces are parenthesised).

        Parameters
        ----------
        input_features : array-like of str, optional
            Names of the input features (default: ``feature_names_in_`` or ``x0, …``).

        Returns
        -------
        ndarray of str, of shape (n_output_features_,)
        """
        check_is_fitted(self)
        names = _check_feature_names_in(self, input_features)
        return np.asarray(
            [
                " & ".join(
                    _wrap(str(names[v])) if pos else "~" + _wrap(str(names[v])) for v, pos in c
                )
                for c in self.conjunctions_
            ],
            dtype=object,
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = []  # output is always int8 0/1
        return tags
