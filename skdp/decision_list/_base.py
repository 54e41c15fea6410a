"""Shared plumbing of the decision-list classifiers: input, weights, prediction."""

from __future__ import annotations

import numbers
import warnings
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._input import check_sample_weight, validate_data
from .._labels import resolve_classes
from .._validation import private_data_error
from ._frequencies import region_of
from ._thresholds import LITERAL_OPS, make_grid, threshold_regions

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import ArrayLike
    from typing_extensions import Self

__all__ = ["ALGORITHMS"]

# Weight of one whole row in the private list's integer weights (a row weighs ≤ 1).
_UNIT = 2**20

#: Share of the rows in one region above which the list is reported as predicting one
#: label almost everywhere, and the majority share above which a default that does so
#: may be right (see ``_warn_if_one_region_catches_all``).
_CATCH_ALL, _IMBALANCED = 0.95, 0.9

#: Values of ``algorithm``: the practical net cover, or Rivest's / Bun & Fang's cover.
ALGORITHMS = ("net_cover", "greedy_cover")


def _literal_name(names, index, sign):
    name = str(names[index]) if names is not None else f"x{index}"
    if sign:
        return name
    return f"~({name})" if any(ch.isspace() for ch in name) else f"~{name}"


def _threshold_name(names, index, op, threshold):
    name = str(names[index]) if names is not None else f"x{index}"
    return f"{name} is missing" if op == "missing" else f"{name} {op} {threshold:.6g}"



def _binary_csr(mask):
    """The int8 CSR matrix of a dense boolean ``mask``, built from its nonzeros.

    The same matrix as ``sp.csr_matrix(mask, dtype=np.int8)`` (sorted indices, no
    explicit zeros), whose dense path goes through COO: 9 of the 12 ms of a list's
    input check on 16,000 × 40 rows, measured in a continual-release block.
    """
    mask = np.asarray(mask, dtype=bool)
    if mask.ndim != 2:
        mask = np.atleast_2d(mask)
    n_rows, n_cols = mask.shape
    flat = np.flatnonzero(mask)  # row-major: columns sorted within each row
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.count_nonzero(mask, axis=1), out=indptr[1:])
    cols = flat % n_cols if n_cols else flat
    return sp.csr_matrix((np.ones(cols.size, dtype=np.int8), cols, indptr), shape=mask.shape)

class _DecisionListBase(ClassifierMixin, BaseEstimator):
    """Shared plumbing: validation, binarizing, weights, prediction, probabilities, export."""

    _parameter_constraints: dict = {
        "max_rules": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "algorithm": [StrOptions(set(ALGORITHMS))],
        "error_weight": [Interval(numbers.Real, 1, None, closed="left")],
        "negations": ["boolean"],
        "binarize": [Interval(numbers.Real, None, None, closed="neither"), None],
    }

    # -- input ------------------------------------------------------------------------
    def _real_valued(self):
        """Whether the literals are thresholds over real values (``bounds``/``cuts`` given)."""
        cuts = getattr(self, "cuts", None)
        return getattr(self, "bounds", None) is not None or not (
            cuts is None or isinstance(cuts, numbers.Integral))

    def _validate_X(self, X, *, reset, y=None):
        if self._real_valued():
            # Raw numeric values; NaN is a value here ("x_j is missing" literals).
            kwargs = dict(reset=reset, accept_sparse=False, dtype=np.float64,
                          ensure_all_finite="allow-nan")
            if y is None:
                return validate_data(self, X, **kwargs), None
            return validate_data(self, X, y, **kwargs)
        kwargs = dict(reset=reset, accept_sparse="csr", dtype="numeric")
        if y is None:
            X = validate_data(self, X, **kwargs)
        else:
            X, y = validate_data(self, X, y, **kwargs)
        return self._as_binary_csr(X), y

    def _as_binary_csr(self, X):
        name = type(self).__name__
        if self.binarize is not None:
            t = float(self.binarize)
            if sp.issparse(X):
                if t < 0:
                    raise ValueError(
                        f"{name}(binarize={t:g}) would turn every implicit zero of the sparse "
                        "input into a 1; use binarize ≥ 0 with sparse input."
                    )
                X = X.copy()
                X.data = (X.data > t).astype(np.int8)
                X.eliminate_zeros()
                return X.tocsr()
            return _binary_csr(np.asarray(X) > t)
        values = X.data if sp.issparse(X) else np.asarray(X)
        if values.size and not (values.max() <= 1 if values.dtype.kind in "bu"  # ≥ 0
                                else np.all((values == 0) | (values == 1))):
            bad = (values != 0) & (values != 1)
            column = (X.tocoo().col[bad.ravel()].min() if sp.issparse(X)
                      else np.argmax(bad.reshape(-1, X.shape[1]).any(axis=0)))
            raise private_data_error(
                name, "binary (0/1) features", column=column,
                hint="Binarize "
                "real-valued features with public thresholds first, e.g. put "
                "skdp.preprocessing.PublicBoundsBinarizer(thresholds=... or bounds=...) in a "
                "Pipeline before it (thresholds computed from the private data, such as "
                "quantiles, would leak it), or pass a public constant as binarize=.")
        if sp.issparse(X):
            X = X.tocsr(copy=True) if X.data.size and not X.data.all() else X.tocsr()
            X.eliminate_zeros()
            return X
        X = np.asarray(X)
        # 0/1 bytes are already booleans (the binarizer's uint8): no comparison pass
        return _binary_csr(X.view(bool) if X.dtype.itemsize == 1 and X.dtype.kind in "bu"
                           else X != 0)

    def _validate_block(self, X, y, sample_weight, classes=None, *, partial):
        """Validate one fit/partial_fit block before any state changes.

        Returns ``(X as binary CSR, classes_, label codes, float weights or None)``.
        """
        first = not partial or not hasattr(self, "classes_")
        if partial and first and classes is None and getattr(self, "classes", None) is None:
            raise ValueError(
                "classes must be passed on the first call to partial_fit (all labels "
                "the stream may contain), as in SGDClassifier."
            )
        X, y = self._validate_X(X, reset=first, y=y)
        if first and self._real_valued():
            self._grid = make_grid(self.bounds, self.cuts, self.cut_scale, X.shape[1])
        found = resolve_classes(self, y, classes, first_call=first, binary=False)
        codes = np.searchsorted(found, y).astype(np.intp)
        w = None if sample_weight is None else check_sample_weight(
            self, sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        return X, found, codes, w

    @staticmethod
    def _weights(w, *, private):
        """(integer row weights or None, unit) for :func:`greedy_cover`.

        ``w``: weights validated by :meth:`_validate_block` (scikit-learn's
        ``_check_sample_weight``: finite, non-negative, not all zero, one per row),
        or ``None``. ``private``: clipped to [0, 1] and counted in
        units of 2⁻²⁰ (a row weighs at most one row: the privacy argument is
        unchanged). Otherwise integer weights are used as they are (a weight of k is
        k copies of the row) and others in units of at most 2⁻²⁰, exact up to a
        total weight of 2³².
        """
        if w is None:
            return None, 1
        if private:
            return np.floor(np.clip(w, 0.0, 1.0) * _UNIT).astype(np.int64), _UNIT
        if np.all(w == np.round(w)) and w.sum() < 2.0**52:
            return w.astype(np.int64), 1
        shift = int(min(20, np.floor(52 - np.log2(max(w.sum(), 1.0)))))
        return np.rint(w * 2.0**shift).astype(np.int64), 2**shift

    def _set_threshold_list(self, literals, counts, proba, n_steps):
        """:meth:`_set_list` for threshold literals (indices into the public grid)."""
        grid = self._grid
        codes = np.argmax(proba, axis=1)
        self._threshold_rules = [(int(grid.feature[i]), int(grid.op[i]), grid.threshold(i))
                                 for i in literals]
        self._rule_codes = codes[:-1]
        self._default_code = int(codes[-1])
        self._region_proba = proba
        self.rule_class_counts_ = counts
        self.rules_ = [(j, LITERAL_OPS[op], t, self.classes_[c])
                       for (j, op, t), c in zip(self._threshold_rules, codes[:-1], strict=True)]
        self.default_label_ = self.classes_[codes[-1]]
        self.n_selections_ = int(n_steps)

    def _set_list(self, result, counts, proba):
        """Store a cover's rules and their regions' class counts and probabilities.

        Each region's label is the argmax of its probabilities, so ``predict`` is
        always the argmax of ``predict_proba``.
        """
        codes = np.argmax(proba, axis=1)
        self._rule_features = result.features
        self._rule_signs = result.signs
        self._rule_codes = codes[:-1]
        self._default_code = int(codes[-1])
        self._region_proba = proba
        self.rule_class_counts_ = counts
        self.rules_ = [
            (int(f), int(s), self.classes_[c])
            for f, s, c in zip(result.features, result.signs, codes[:-1], strict=True)
        ]
        self.default_label_ = self.classes_[codes[-1]]
        self.n_selections_ = result.n_steps
        self._warn_if_one_region_catches_all(counts)

    def _warn_if_one_region_catches_all(self, counts):
        """Warn when one region of the list holds ≥ 95 % of the rows: the list then
        predicts one label almost everywhere. The usual cause is real-valued X read as
        ``x > binarize``: a rule true for every row, or (negated) for none, so that the
        first rule or the default takes all rows (raw breast_cancer: 97–101 %, accuracy =
        the majority's).

        Read off the released counts only (post-processing: the warning costs nothing
        and says nothing the model does not). On the development tables, lists that learn
        stay below: at most 87 % (fair's bits, ε = 0.5–8). A default that takes nearly
        all rows of a table whose (noisy) majority label is ≥ 90 % of the rows can be
        right, so it is not reported; a first rule true for nearly every row is.
        """
        # unclipped sums: the noise is centred, so the regions' sums estimate the rows
        # (clipping would count the positive noise of every empty region)
        counts = np.asarray(counts, dtype=float)
        rows, total = counts.sum(axis=1), counts.sum()
        if total <= 0:
            return
        region = int(np.argmax(rows))
        share = rows[region] / total
        majority = counts.sum(axis=0).max() / total
        if share < _CATCH_ALL or (region > 0 and majority >= _IMBALANCED):
            return
        if region < len(self.rules_):
            feature, sign, label = self.rules_[region]
            name = _literal_name(getattr(self, "feature_names_in_", None), feature, sign)
            where = f"rule {region + 1} ('if {name} then {label}')"
        else:
            where = f"the default ('else {self.default_label_}': no rule fires)"
        params = self.get_params()
        real_mode = ("public bounds=(lower, upper) (the real-valued mode) or "
                     if "bounds" in params else "")
        private = " On 0/1 features: more rows or a larger epsilon." if "epsilon" in params else ""
        warnings.warn(
            f"{type(self).__name__}: {where} takes about {min(share, 1.0):.0%} of the rows "
            "(by the list's counts), so the list predicts one label almost "
            "everywhere. If X holds real values, reading them as 0/1 (x > binarize="
            f"{self.binarize}) is the likely cause: positive measurements are all 1. Give "
            f"{real_mode}public thresholds first (skdp.preprocessing.PublicBoundsBinarizer)."
            f"{private}", UserWarning, stacklevel=2)

    def _n_rules_cap(self, n_features):
        return n_features if self.max_rules is None else min(self.max_rules, n_features)

    def _cover_options(self):
        """Keyword arguments of :func:`greedy_cover` for this estimator's score."""
        if self.algorithm == "greedy_cover":
            return {"score": "errors"}
        return {"score": "net", "error_weight": float(self.error_weight),
                "negations": bool(self.negations), "allow_true": False}

    def release(self) -> Self:
        """Deprecated: does nothing. ``partial_fit`` now releases (see its docstring).

        Returns
        -------
        self
        """
        warnings.warn(
            "release() is deprecated and does nothing: fit and partial_fit release the "
            "list themselves; predict never learns. It will be removed in a later version.",
            FutureWarning, stacklevel=2)
        check_is_fitted(self)
        return self

    # -- prediction -------------------------------------------------------------------
    def _regions(self, X):
        return self._regions_of(self._predict_rows(X))

    def _predict_rows(self, X):
        """X checked against the fitted list and in the form :meth:`_regions_of` reads
        (binary CSR, or float rows with ``bounds``)."""
        check_is_fitted(self)
        return self._validate_X(X, reset=False)[0]

    def _predict_rows_key(self):
        """What :meth:`_predict_rows` depends on besides X, or None if it may warn (a
        fitted list with feature names): fitted lists with equal keys read the same
        validated rows, so a prediction over several of them (a continual release's
        models) validates X once."""
        if hasattr(self, "feature_names_in_"):
            return None
        return (type(self), self._real_valued(), self.binarize, self.n_features_in_)

    def _proba_of_rows(self, rows):
        """:meth:`predict_proba` of rows from :meth:`_predict_rows`."""
        return self._region_proba[self._regions_of(rows)]

    def _regions_of(self, X):
        """Each validated row's region: the first rule that fires, else the default."""
        if self._real_valued():
            return threshold_regions(X, self._threshold_rules)
        return region_of(X, self._rule_features, self._rule_signs, self.n_features_in_)

    def _region_codes(self):
        """Class code of each region (the rules', then the default's)."""
        return np.r_[self._rule_codes, self._default_code].astype(np.intp)

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Label of the first rule whose literal holds on each row (else the default).

        Post-processing of the fitted list: never learns, never spends privacy.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Features as in ``fit`` (binarized the same way).

        Returns
        -------
        y : ndarray of shape (n_samples,)
            ``classes_[argmax(predict_proba(X))]``.
        """
        region = self._regions(X)  # first: raises NotFittedError before classes_ exists
        return self.classes_[self._region_codes()[region]]

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Class frequencies of the region (first firing rule, or the default) of each row.

        Post-processing of the fitted list and its ``rule_class_counts_`` (see the
        class docstring for how those are computed and, for the private list,
        released): never learns, never spends privacy.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            In ``classes_`` order; rows sum to 1.
        """
        return self._proba_of_rows(self._predict_rows(X))

    def predict_log_proba(self, X: ArrayLike) -> np.ndarray:
        """Logarithm of :meth:`predict_proba` (same X; −inf where a frequency is 0)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """Scores from :meth:`predict_proba`: p(classes_[1]) − p(classes_[0]) if binary.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Binary: positive where ``classes_[1]`` is predicted. Multiclass: the
            probabilities.
        """
        proba = self.predict_proba(X)
        if proba.shape[1] == 2:
            return proba[:, 1] - proba[:, 0]
        return proba

    def export_text(self, feature_names: Sequence[str] | None = None) -> str:
        """The list as text: ``if x3 then A`` / ``elif ~x7 then B`` / ``else A``.

        ``~x7`` is the negated literal "x7 == 0".

        Parameters
        ----------
        feature_names : sequence of str, optional
            Names of the input features; defaults to ``feature_names_in_`` when the
            training data had names, else ``x0, x1, …``.

        Returns
        -------
        str
        """
        check_is_fitted(self)
        names = feature_names
        if names is None:
            names = getattr(self, "feature_names_in_", None)
        elif len(names) != self.n_features_in_:
            raise ValueError(
                f"feature_names has {len(names)} entries, expected {self.n_features_in_}."
            )
        lines = []
        for i, (f, *literal, label) in enumerate(self.rules_):
            literal = (_threshold_name(names, f, *literal) if len(literal) == 2
                       else _literal_name(names, f, *literal))
            lines.append(f"{'if' if i == 0 else 'elif'} {literal} then {label}")
        lines.append(f"else {self.default_label_}" if lines else f"always {self.default_label_}")
        return "\n".join(lines)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        real = self._real_valued()
        tags.input_tags.sparse = not real  # thresholds read dense raw values
        tags.input_tags.allow_nan = real  # NaN fires the "x_j is missing" literals
        return tags


