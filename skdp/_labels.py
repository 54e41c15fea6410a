"""The label set as a public parameter (``classes=``), shared by every skdp classifier.

The set of labels a classifier can output is part of what it releases (``classes_``,
and every prediction is one of them). Read from the private ``y``, it is a statistic
of the data: one row's label 0 → 7 changes ``classes_`` from ``[0, 1]`` to ``[1, 7]``
(or makes ``fit`` raise). Private estimators therefore take the label set as a public
``classes`` parameter; without it they infer it from ``y`` as scikit-learn does (so
default arguments keep working) and warn with
:class:`~skdp.exceptions.PrivacyLeakWarning`.

With public classes, every error raised about ``y``'s labels is the same whatever
``y`` holds (no label value, no count of distinct labels): ``y`` either fits inside
``classes`` or it does not.
"""

from __future__ import annotations

import os
import sys
import warnings
from types import FrameType
from typing import Any

import numpy as np
import sklearn
from numpy.typing import ArrayLike, NDArray
from sklearn.utils.multiclass import check_classification_targets, unique_labels

from .base import PrivateEstimatorMixin
from .exceptions import PrivacyLeakWarning

__all__ = ["check_labels_in", "resolve_classes"]

_NOT_IN_CLASSES = "y contains labels not in classes"
# What a binary-only learner's refusal of C > 2 labels tells the user to do instead.
_MULTICLASS_FIX = (
    "For more than 2 labels use a multiclass skdp classifier: the decision lists "
    "(natively), the Winnow family or the online learners (one-vs-rest inside, ε split "
    "by the optimal composition theorem); the API page's multiclass column lists them. "
    "Or binarize the labels (one class against the rest).")
_SKIP_DIRS = tuple(
    os.path.dirname(str(m.__file__)) + os.sep for m in (sys.modules[__name__], sklearn)
)


def _caller_stacklevel() -> int:
    """``stacklevel`` pointing at the first frame outside skdp and scikit-learn."""
    frame: FrameType | None = sys._getframe(1)
    level = 1  # the caller, which calls warnings.warn
    while frame is not None and frame.f_code.co_filename.startswith(_SKIP_DIRS):
        frame, level = frame.f_back, level + 1
    return level


def check_labels_in(y: ArrayLike, classes: ArrayLike) -> None:
    """Raise a ``ValueError`` (which names no label) unless every label of y is in classes."""
    if not _all_in(np.asarray(y), np.asarray(classes)):
        raise ValueError(
            f"{_NOT_IN_CLASSES} (the label set: the public classes= parameter, or the one "
            "fixed by the first fit/partial_fit call)."
        )


def _all_in(y: NDArray[Any], classes: NDArray[Any]) -> bool:
    """``np.isin(y, classes).all()``; a few numeric or string classes are compared one by
    one (np.isin sorts or builds a table on every call: ~0.1 ms per 1,000-row block)."""
    if classes.size <= 8 and y.dtype.kind in "biufU" and classes.dtype.kind in "biufU" \
            and (y.dtype.kind == "U") == (classes.dtype.kind == "U"):
        found = np.zeros(y.shape, dtype=bool)
        for c in classes.ravel():
            found |= y == c
        return bool(found.all())
    return bool(np.isin(y, classes).all())


def _is_private(estimator: object) -> bool:
    return isinstance(estimator, PrivateEstimatorMixin)


def resolve_classes(estimator: Any, y: ArrayLike, classes: Any = None, *,
                    first_call: bool = True, binary: bool = True) -> NDArray[Any]:
    """Return the label set ``classes_`` for a fit/partial_fit block of labels ``y``.

    Parameters
    ----------
    estimator : estimator
        Its ``classes`` parameter (if it has one) is the public label set; whether it
        is private (:class:`~skdp.base.PrivateEstimatorMixin`) decides the warning.
    y : ndarray of shape (n_samples,)
        Validated labels of the block.
    classes : array-like, optional
        ``partial_fit``'s ``classes`` argument. On the first call it must agree with
        the constructor's ``classes`` if both are given; on later calls it must equal
        the fitted ``classes_``.
    first_call : bool
        True for ``fit`` and the first ``partial_fit``: the label set is decided
        now. Otherwise the fitted ``classes_`` is returned after checking ``y``.
    binary : bool
        The learner is binary-only: the label set must have exactly 2 labels.

    Raises
    ------
    ValueError
        Bad public classes, or y outside them — messages never print a label of y.
        When the labels are read from y (no public classes), the usual
        scikit-learn errors for y with one or more than two labels.
    """
    name = type(estimator).__name__
    if not first_call:
        fitted = estimator.classes_
        if classes is not None and not _equals_fitted(classes, fitted):
            raise ValueError(f"classes={list(classes)!r} differs from the classes_ of "
                             f"this fitted {name} (classes cannot change after the first "
                             "call).")
        check_labels_in(y, fitted)
        return fitted

    public = getattr(estimator, "classes", None)
    if classes is not None:
        if public is not None and not np.array_equal(_public(classes), _public(public)):
            raise ValueError(f"partial_fit(classes={list(classes)!r}) differs from the "
                             f"{name}(classes={list(public)!r}) parameter.")
        public = classes
    if public is not None:
        found = _public(public)
        if binary and found.size != 2:
            raise ValueError(f"Only binary classification is supported by {name}: "
                             f"classes must hold exactly 2 labels, got {found.size}. "
                             f"{_MULTICLASS_FIX}")
        if found.size < 2:
            raise ValueError(f"{name}: classes must hold at least 2 labels, got "
                             f"{found.size}.")
        check_labels_in(y, found)
        return found

    check_classification_targets(y)
    found = unique_labels(y)
    if binary and found.size > 2:
        raise ValueError(f"Only binary classification is supported by {name}; y has "
                         f"more than 2 labels. {_MULTICLASS_FIX}")
    if binary and found.size < 2:
        raise ValueError(f"Classifier can't train when only one class is present: {name} "
                         "reads its label set from y unless it is given as classes=[a, b].")
    if _is_private(estimator):
        warnings.warn(
            f"{name}: the label set (classes_) was read from the private y, so it "
            "depends on the data and the privacy guarantee does not cover it. Pass the "
            "possible labels as classes= to make the label set public.",
            PrivacyLeakWarning,
            stacklevel=_caller_stacklevel(),
        )
    return found


def _equals_fitted(classes: ArrayLike, fitted: NDArray[Any]) -> bool:
    """Whether a later call's ``classes`` argument is the fitted label set.

    The usual call repeats ``classes_`` exactly (sorted, unique, as ``partial_fit``
    loops pass it): compared as given, without :func:`_public`'s label-type check
    (0.7 ms a call, measured on a 1,000-row ``partial_fit``), which ``fitted`` passed
    when it was decided. Anything else goes through that check.
    """
    arr = np.asarray(classes)
    if arr.shape == fitted.shape and arr.dtype == fitted.dtype and \
            np.array_equal(arr, fitted):
        return True
    return bool(np.array_equal(_public(classes), fitted))


def _public(classes: ArrayLike) -> NDArray[Any]:
    """``np.unique`` of a public label set (checked to be discrete labels)."""
    arr = np.asarray(classes)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"classes must be a non-empty 1-d array-like of labels, got "
                         f"{classes!r}.")
    if arr.dtype.kind not in "iubU":
        # Integer, boolean and string labels are always discrete ("binary" or
        # "multiclass" for type_of_target, which takes ~0.7 ms: once per release of a
        # continual release's clone); others (floats, objects) are checked.
        check_classification_targets(arr)
    return np.unique(arr)
