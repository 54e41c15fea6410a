"""One-vs-rest inside a binary skdp classifier: C labels learnt by C binary copies.

A binary learner (the Winnow family, the online learners) gains a C-class mode through
:class:`OneVsRestMixin`, placed before its binary implementation in the MRO. With two
labels nothing changes. With C > 2 labels (the public ``classes`` parameter, or read
from y with a :class:`~skdp.exceptions.PrivacyLeakWarning`), ``fit`` / ``partial_fit``
run C internal copies of the estimator, copy k learning "label k vs the rest", and
``predict`` is the label whose copy scores highest.

Privacy
-------
The C binary problems see the **same rows**: replacing (or adding/removing) one row
of the multiclass data replaces (adds/removes) one row of every binary problem, so
the C copies compose sequentially — not in parallel, whatever the labels. Each copy
runs at (ε_k, δ_k) from :func:`one_vs_rest_split`: the largest per-copy ε such that
C (ε_k, δ_k)-DP mechanisms are (ε, δ)-DP by the exact optimal composition theorem
(Kairouz, Oh & Viswanath 2015, Thm 3.3; :func:`skdp.accounting.calibrate` with
``method="optimal"``), with δ_k = δ/(2C) and the other half of δ as the theorem's
slack (δ = 0: ε_k = ε/C, basic composition, which is then optimal). The copies draw
independent noise (OS entropy; in seeded testing mode, seeds keyed by the release's
charge and the copy's index). The user's ``budget`` is charged **once**, (ε, δ),
when the stream opens — after all validation and before any copy touches the data —
and a stream record in that ledger refuses a stale copy of the C-class learner at
every later ``partial_fit``. The copies themselves hold no budget (their private
stream records only catch stale copies of themselves). After fitting, each copy's own
``privacy_spent_`` is checked to be within its share. ``predict``,
``decision_function`` and ``predict_proba`` are post-processing of the C released
models.

The exact audit (tests/privacy/test_multiclass_audit.py) computes the privacy loss of
the C released copies and catches a twin whose split claims half of it.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import clone
from sklearn.utils.multiclass import check_classification_targets, unique_labels
from sklearn.utils.validation import check_is_fitted

from ._input import validate_data
from ._labels import resolve_classes
from ._validation import seeded_generator
from .accounting import PrivacyCost, calibrate
from .base import PrivateEstimatorMixin

__all__ = ["OneVsRestMixin", "one_vs_rest_split"]

# Relative tolerance of the after-fit check that a copy spent at most its share.
_SHARE_RTOL = 1e-9


def one_vs_rest_split(epsilon: float, delta: float, n_classes: int) -> PrivacyCost:
    """(ε_k, δ_k) of each of ``n_classes`` one-vs-rest copies within a total (ε, δ).

    The copies see the same rows, so they compose sequentially: the split is
    :func:`~skdp.accounting.calibrate` ``(ε, δ, C, method="optimal",
    step_delta=δ/(2C))`` — the exact optimal composition of C (ε_k, δ_k)-DP
    mechanisms, half of δ for the copies and half as the theorem's slack.

    Parameters
    ----------
    epsilon : float
        Total ε of the C-class release.
    delta : float
        Total δ (0: pure ε-DP copies, ε_k = ε/C).
    n_classes : int
        C ≥ 2.

    Returns
    -------
    PrivacyCost
        ``(epsilon, delta)`` of one copy.

    Privacy
    -------
    C mechanisms that are each (ε_k, δ_k)-DP on the same data are jointly (ε, δ)-DP
    (KOV 2015, Thm 3.3), whatever they compute.
    """
    step_delta = delta / (2 * n_classes) if delta > 0 else 0.0
    return calibrate(epsilon, delta, n_classes, method="optimal", step_delta=step_delta)


def _label_set_if_known(estimator: Any, y: Any, classes: Any) -> NDArray[Any] | None:
    """The label set the call will use, when it can be read without validation errors:
    ``classes`` (partial_fit's argument), the ``classes`` parameter, else y's labels.
    ``None`` when y is not a plain 1-d label vector: the binary path raises its usual
    error then."""
    public = classes if classes is not None else getattr(estimator, "classes", None)
    try:
        if public is not None:
            return np.unique(np.asarray(public))
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]  # validation later warns about the column vector
        check_classification_targets(y)
        return unique_labels(y)
    except (TypeError, ValueError):
        return None


class OneVsRestMixin:
    """C-class mode by internal one-vs-rest for a binary skdp classifier (see module).

    Place it before the binary implementation (whose ``predict``,
    ``decision_function``, ``predict_proba`` it falls back to with two labels); the
    host's fit/partial_fit block calls :meth:`_ovr_dispatch` first and, when it says
    so, returns :meth:`_ovr_fit`. The host may override :meth:`_ovr_check` (validation of its own
    parameters on the data's shape, run before anything is charged) and
    :meth:`_ovr_validate` (how X is validated).

    Fitted attributes in C-class mode: ``classes_`` (C labels), ``estimators_`` (the C
    fitted binary copies; copy k predicts ``classes_[k]`` against the rest),
    ``n_features_in_`` and, for private learners, ``privacy_spent_`` (the total).
    """

    estimators_: list[Any]
    classes_: NDArray[Any]

    # ----------------------------------------------------------------- hooks
    def _ovr_validate(self, X: ArrayLike, y: ArrayLike | None, reset: bool) -> Any:
        """Validate X (and y) of a C-class call; the binary copies re-validate X."""
        sparse = self.__sklearn_tags__().input_tags.sparse  # type: ignore[attr-defined]
        kwargs = {"dtype": [np.float64, np.float32], "accept_sparse": "csr" if sparse else False}
        if y is None:
            return validate_data(self, X, reset=reset, **kwargs)
        return validate_data(self, X, y, reset=reset, ensure_min_samples=1, **kwargs)

    def _ovr_check(self, template: Any, X: Any, y01: NDArray[np.intp], from_fit: bool) -> None:
        """Raise on parameters that do not fit X, before anything is charged (hook)."""

    def _ovr_split(self, epsilon: float, delta: float, n_classes: int) -> PrivacyCost:
        """(ε_k, δ_k) of one copy (a hook only the privacy audit's broken twin overrides)."""
        return one_vs_rest_split(epsilon, delta, n_classes)

    # ----------------------------------------------------------------- state
    def _ovr_mode(self) -> bool:
        return "estimators_" in self.__dict__

    def _ovr_binary(self, label_set: NDArray[Any] | None) -> bool:
        if label_set is None or label_set.size <= 2:
            # A binary (re)fit: drop a C-class state so that predict uses the new model.
            self.__dict__.pop("estimators_", None)
            return True
        return False

    # ----------------------------------------------------------------- fitting
    def _ovr_dispatch(self, y: Any, classes: Any, from_fit: bool) -> bool:
        """Whether this fit/partial_fit block is for the C-class mode.

        The host's block entry point calls it first and hands the block to
        :meth:`_ovr_fit` when True (a binary block goes on as before: no extra frame
        between the user's call and the learner's warnings).
        """
        if not from_fit and self._ovr_mode():
            return True
        if not from_fit and hasattr(self, "classes_"):
            return False  # a binary stream continues
        return not self._ovr_binary(_label_set_if_known(self, y, classes))

    def _ovr_fit(self, X: Any, y: Any, classes: Any, *, from_fit: bool) -> Any:
        first_call = from_fit or not self._ovr_mode()
        X, y = self._ovr_validate(X, y, reset=first_call)
        if first_call and not from_fit and classes is None and getattr(
                self, "classes", None) is None:
            raise ValueError("classes must be passed on the first call to partial_fit "
                             "(e.g. classes=[0, 1, 2]), as for SGDClassifier.")
        classes_ = resolve_classes(self, y, classes, first_call=first_call, binary=False)
        private = isinstance(self, PrivateEstimatorMixin)
        host: Any = self  # a PrivateEstimatorMixin when private
        if not first_call:
            if private:
                host._advance_stream()  # a stale copy is refused before it learns
            for k, est in enumerate(self.estimators_):
                est.partial_fit(X, (y == classes_[k]).astype(np.intp))
            return self

        n_classes = classes_.size
        share = None
        if private:
            epsilon, delta = host._check_privacy_params()
            if not host._budget_has_room_for_delta(delta):
                delta = 0.0  # stay pure on a ledger without δ, as the binary learners do
            share = self._ovr_split(epsilon, delta, n_classes)
        template = self._ovr_copy(share, None)
        self._ovr_check(template, X, (y == classes_[0]).astype(np.intp), from_fit)

        key = None
        if private:
            key = host._open_paid_stream(
                epsilon, delta, f"{'fit' if from_fit else 'partial_fit stream'}, "
                f"one-vs-rest over {n_classes} classes")
        estimators = [self._ovr_copy(share, self._ovr_seed(key, k)) for k in range(n_classes)]
        for k, est in enumerate(estimators):
            yk = (y == classes_[k]).astype(np.intp)
            if from_fit and "classes" in est.get_params():
                est.fit(X, yk)
            else:
                est.partial_fit(X, yk, classes=[0, 1])
            if share is not None:
                spent = est.privacy_spent_
                if (spent.epsilon > share.epsilon * (1 + _SHARE_RTOL)
                        or spent.delta > share.delta * (1 + _SHARE_RTOL)):
                    raise RuntimeError(  # a bug, not bad input: nothing is released
                        f"{type(self).__name__}: a one-vs-rest copy spent {spent}, more "
                        f"than its share {share}.")
        self.classes_ = classes_
        self.estimators_ = estimators
        return self

    def _ovr_seed(self, key: int | None, k: int) -> Any:
        """random_state of copy k: None (OS entropy), or in seeded testing mode a
        generator keyed by the release's charge and k (copies never share noise)."""
        random_state = getattr(self, "random_state", None)
        if random_state is None:
            return None
        return seeded_generator(random_state, key, k)

    def _ovr_copy(self, share: PrivacyCost | None, random_state: Any) -> Any:
        """An unfitted binary copy: labels {0, 1} (public), its share of (ε, δ), no
        budget (the C-class learner paid for all copies)."""
        with warnings.catch_warnings():
            # clone() of a seeded learner repeats the seed warning the user already saw.
            warnings.simplefilter("ignore")
            est = clone(self)
        params = est.get_params(deep=False)
        new: dict[str, Any] = {}
        if "classes" in params:
            new["classes"] = [0, 1]
        if share is not None:
            new.update(epsilon=share.epsilon, budget=None, random_state=random_state)
            if "delta" in params:
                new["delta"] = share.delta
        return est.set_params(**new)

    # ----------------------------------------------------------------- predicting
    def _ovr_scores(self, X: ArrayLike) -> NDArray[np.float64]:
        check_is_fitted(self)
        X = self._ovr_validate(X, None, reset=False)
        return np.column_stack([est.predict_proba(X)[:, 1] for est in self.estimators_])

    def decision_function(self, X: ArrayLike) -> NDArray[Any]:
        """Scores: the binary learner's, or in C-class mode each copy's probability of
        its label, shape (n_samples, C) — the scores whose argmax is :meth:`predict`
        (the copies' own decision functions are on scales that need not agree).
        Post-processing of released models: costs no privacy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        if not self._ovr_mode():
            return super().decision_function(X)  # type: ignore[misc]
        return self._ovr_scores(X)

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Class probabilities in ``classes_`` order.

        In C-class mode: each copy's probability of its label, normalised over the
        copies (as scikit-learn's ``OneVsRestClassifier``). Post-processing of
        released models: costs no privacy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        if not self._ovr_mode():
            return super().predict_proba(X)  # type: ignore[misc]
        scores = self._ovr_scores(X)
        total = scores.sum(axis=1, keepdims=True)
        n = scores.shape[1]
        return np.where(total > 0, scores / np.where(total > 0, total, 1.0), 1.0 / n)

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """Predicted labels; in C-class mode the label whose copy scores highest.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        if not self._ovr_mode():
            return super().predict(X)  # type: ignore[misc]
        return self.classes_[np.argmax(self._ovr_scores(X), axis=1)]


def multiclass_support(cls: type) -> str:
    """How a classifier class treats C > 2 labels: ``"native"``, ``"one-vs-rest"``
    (this module) or ``"binary only"`` (refused before anything is spent, naming the
    multiclass learners). Read from the class and its tags: the API page's table and
    tests/test_multiclass.py use these facts."""
    if issubclass(cls, OneVsRestMixin):
        return "one-vs-rest"
    default: Any = cls()
    return "native" if default.__sklearn_tags__().classifier_tags.multi_class else "binary only"


def support_table(classes: list[type]) -> str:
    """The API page's table of which classifier takes C labels and sparse X (rst)."""
    def public_path(c: type) -> str:  # skdp.linear._winnow → skdp.linear
        return ".".join(c.__module__.split(".")[:2]) + "." + c.__name__

    rows = [(f":class:`~{public_path(c)}`", multiclass_support(c),
             "yes" if c().__sklearn_tags__().input_tags.sparse else "no")
            for c in sorted(classes, key=lambda c: c.__name__)]
    header = ("classifier", "more than 2 labels", "scipy.sparse X")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(3)]
    line = "  ".join("=" * w for w in widths)
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    body = [fmt.format(*r).rstrip() for r in rows]
    return "\n".join([line, fmt.format(*header).rstrip(), line, *body, line]) + "\n"
