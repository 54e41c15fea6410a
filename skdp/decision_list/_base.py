"""Shared plumbing of the decision-list classifiers: input, streaming buffer, prediction."""

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._labels import resolve_classes
from .._validation import private_data_error
from ._greedy_cover import predict_codes

__all__ = ["ALGORITHMS"]

#: Values of ``algorithm``: the practical net cover, or Rivest's / Bun & Fang's cover.
ALGORITHMS = ("net_cover", "greedy_cover")


def _literal_name(names, index, sign):
    name = str(names[index]) if names is not None else f"x{index}"
    if sign:
        return name
    return f"~({name})" if any(ch.isspace() for ch in name) else f"~{name}"


class _DecisionListBase(ClassifierMixin, BaseEstimator):
    """Shared plumbing: validation, binary check, prediction, export, streaming buffer."""

    _parameter_constraints: dict = {
        "max_rules": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "algorithm": [StrOptions(set(ALGORITHMS))],
        "error_weight": [Interval(numbers.Real, 1, None, closed="left")],
        "negations": ["boolean"],
        "binarize": [Interval(numbers.Real, None, None, closed="neither"), None],
    }

    # -- input ------------------------------------------------------------------------
    def _validate_X(self, X, *, reset, y=None):
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
            return sp.csr_matrix(np.asarray(X) > t, dtype=np.int8)
        values = X.data if sp.issparse(X) else np.asarray(X)
        if values.size and not np.all((values == 0) | (values == 1)):
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
        return sp.csr_matrix(np.asarray(X) != 0, dtype=np.int8)

    def _encode_y(self, y):
        check_classification_targets(y)
        classes, codes = np.unique(y, return_inverse=True)
        return classes, codes.astype(np.intp)

    # -- fitting ----------------------------------------------------------------------
    def _set_list(self, result):
        self._rule_features = result.features
        self._rule_codes = result.labels
        self._rule_signs = result.signs
        self._default_code = result.default
        self.rules_ = [
            (int(f), int(s), self.classes_[c])
            for f, s, c in zip(result.features, result.signs, result.labels, strict=True)
        ]
        self.default_label_ = self.classes_[result.default]
        self.n_selections_ = result.n_steps

    def _n_rules_cap(self, n_features):
        return n_features if self.max_rules is None else min(self.max_rules, n_features)

    def _cover_options(self):
        """Keyword arguments of :func:`greedy_cover` for this estimator's score."""
        if self.algorithm == "greedy_cover":
            return {"score": "errors"}
        return {"score": "net", "error_weight": float(self.error_weight),
                "negations": bool(self.negations), "allow_true": False}

    def _clear_stream(self):
        for name in ("_buffer_X", "_buffer_y", "_pending"):
            self.__dict__.pop(name, None)

    def _check_partial_fit_classes(self, y, classes, first):
        if first and classes is None and getattr(self, "classes", None) is None:
            raise ValueError(
                "classes must be passed on the first call to partial_fit (all labels "
                "the stream may contain), as in SGDClassifier."
            )
        return resolve_classes(self, y, classes, first_call=first, binary=False)

    def _partial_fit(self, X, y, classes):
        first = not hasattr(self, "classes_")
        X, y = self._validate_X(X, reset=first, y=y)
        self.classes_ = self._check_partial_fit_classes(y, classes, first)
        if not hasattr(self, "_buffer_X"):
            self._buffer_X, self._buffer_y = [], []
            self._start_stream()
        self._buffer_X.append(X)
        self._buffer_y.append(np.searchsorted(self.classes_, y).astype(np.intp))
        self._pending = True
        return self

    def _start_stream(self):
        """Hook: called when partial_fit starts buffering."""

    def _ensure_released(self):
        """Relearn the list from all buffered rows if rows arrived since the last one."""
        if getattr(self, "_pending", False):
            X = sp.vstack(self._buffer_X, format="csr")
            y = np.concatenate(self._buffer_y)
            self._buffer_X, self._buffer_y = [X], [y]
            self._release_stream(X, y)
            self._pending = False

    def release(self):
        """Relearn the list now from every row buffered by ``partial_fit``.

        ``predict``, ``score`` and ``export_text`` do this automatically when rows
        arrived since the last release; for :class:`DPDecisionListClassifier` every
        release is paid for (see its docstring). Returns ``self``.
        """
        check_is_fitted(self)
        self._ensure_released()
        return self

    # -- prediction -------------------------------------------------------------------
    def predict(self, X):
        """Label of the first rule whose feature is 1 on each row (else the default).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Features as in ``fit`` (binarized the same way).

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        self._ensure_released()
        X, _ = self._validate_X(X, reset=False)
        codes = predict_codes(
            X, self._rule_features, self._rule_codes, self._default_code, self.n_features_in_,
            getattr(self, "_rule_signs", None),
        )
        return self.classes_[codes]

    def export_text(self, feature_names=None):
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
        self._ensure_released()
        names = feature_names
        if names is None:
            names = getattr(self, "feature_names_in_", None)
        elif len(names) != self.n_features_in_:
            raise ValueError(
                f"feature_names has {len(names)} entries, expected {self.n_features_in_}."
            )
        lines = []
        for i, (f, sign, label) in enumerate(self.rules_):
            literal = _literal_name(names, f, sign)
            lines.append(f"{'if' if i == 0 else 'elif'} {literal} then {label}")
        lines.append(f"else {self.default_label_}" if lines else f"always {self.default_label_}")
        return "\n".join(lines)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


