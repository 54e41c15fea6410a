"""Shared base of skdp's online classifiers over a finite domain {0, …, N−1}.

:class:`OnlineDomainClassifier` owns what every such learner does the same way: input
validation (X = domain indices of shape (n, 1), two classes mapped to ±1), ``fit`` (a
fresh stream) and ``partial_fit`` (continue it), the block loop that predicts with the
*released* hypothesis vectorised between state changes, the mistake bookkeeping, the
private hooks :func:`~skdp.online.run_online` uses, and ``predict`` (post-processing of
the released hypothesis). :class:`PrivateOnlineDomainClassifier` adds what private
learners share: the (ε, δ) charge once at stream start (after validation, before any
randomness), a seed for per-event generators, the fork ledger that refuses to continue
two copies of one stream, and the "stopped updating" status when a hard cap is hit.

A subclass implements

* ``_prepare_stream(from_fit)`` → ``(n_domain, plan)``: validate its own parameters and
  build what the stream needs (no randomness, no state change); ``plan`` is passed on;
* ``_init_stream(plan)``: set up the fitted state (after validation and any charge);
* ``_released_predict(x)`` → ±1 (int8) labels of the released hypothesis at an integer
  array of domain indices — fixed between state changes, so vectorised;
* ``_step(x, y, wrong)``: process one round whose prediction was already counted;

and optionally ``_scan(x, y, wrong)`` (which row of a chunk is the next that needs a
``_step``; default: the first mistake, as for a conservative learner), ``_frozen()``,
``_fresh_predict_one(x)``, ``_released_score(x)`` (what ``decision_function`` and
``predict_proba`` return) and, for private learners, ``_stream_cost(plan)``.

Inputs. X and y are validated (:func:`sklearn.utils.validation.validate_data`, labels)
before anything else — before the hypothesis class is resolved, before any parameter
check or charge. The hypothesis class is the estimator's ``hypothesis_class`` parameter
(``_class_param`` names it); ``None`` means :func:`default_hypothesis_class`, thresholds
on the binned mean of the real features (:class:`~skdp.hypotheses.MeanThresholds`). A
class with a public discretisation (``to_domain``) reads real features; any other class
reads domain indices, X of shape (n, 1).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context

from .._input import validate_data
from .._labels import resolve_classes
from .._multiclass import OneVsRestMixin
from .._validation import private_data_error
from ..base import PrivateEstimatorMixin
from ..exceptions import PrivacyWarning
from ..hypotheses.mean_thresholds import MeanThresholds, _DefaultMeanThresholds
from ._predicting import PROBA_SMOOTHING, ReleasedPredictionMixin

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["PROBA_SMOOTHING", "OnlineDomainClassifier", "PrivateOnlineDomainClassifier",
           "default_hypothesis_class", "domain_indices"]

# First chunk of the block loop; it doubles while no row needs a sequential step, so a
# block costs O(n) vectorised work plus O(log n) chunks per step.
_FIRST_CHUNK = 32


def default_hypothesis_class() -> MeanThresholds:
    """The class used when ``hypothesis_class=None``: ``MeanThresholds()`` (two-sided
    thresholds on the mean of the features clipped to [−1, 1], 16 public bins; Ldim 5),
    which warns at stream start, on more than one feature, what it learns and how to
    choose (``skdp.hypotheses.mean_thresholds._DefaultMeanThresholds``)."""
    return _DefaultMeanThresholds()


def domain_indices(X: NDArray[np.float64], n_domain: int, name: str) -> NDArray[np.intp]:
    """Integer domain indices from a validated float array X of shape (n, 1).

    Raises a ValueError naming ``name`` for a wrong number of features, fractional,
    negative or ≥ ``n_domain`` values (NaN/inf are refused earlier by ``validate_data``).
    """
    if X.shape[1] != 1:
        raise ValueError(
            f"{name} expects X of shape (n, 1) holding domain indices, "
            f"got {X.shape[1]} features."
        )
    x = X[:, 0]
    for bad, rule in (((x != np.round(x)), "integer domain indices"),
                      ((x < 0), "domain indices ≥ 0"),
                      ((x >= n_domain), f"domain indices < n_domain = {n_domain}")):
        if bad.any():
            raise private_data_error(
                name, rule, column=0,
                hint=f"X must hold integer domain indices in [0, {n_domain}).")
    return x.astype(np.intp)


class _BinaryOnlineDomainClassifier(ReleasedPredictionMixin, ClassifierMixin, BaseEstimator):
    """Base of online binary classifiers whose X holds domain indices in [0, N).

    Subclasses implement the hooks listed in the module docstring. Fitted attributes set
    here: ``classes_`` (``classes_[1]`` is the +1 label), ``n_domain_``,
    ``n_features_in_`` (1 for domain indices, d for a class with a discretisation) and
    ``n_rounds_seen_``. The online mistakes of the released
    hypothesis are counted in the private attribute ``_n_mistakes``: an exact count
    computed from the labels, which non-private subclasses expose as ``n_mistakes_``
    and private ones must not release.
    """

    # ----------------------------------------------------------------- hooks
    def _prepare_stream(self, from_fit):
        """Validate parameters, return ``(n_domain, plan)``; no randomness, no state."""
        raise NotImplementedError

    def _init_stream(self, plan):
        """Set up the fitted state of a new stream (validation and charge are done)."""
        raise NotImplementedError

    def _released_predict(self, x):
        """±1 (int8) labels of the released hypothesis at integer domain indices x."""
        raise NotImplementedError

    def _step(self, x, y, wrong):
        """Process round (x, y) (ints; y = ±1) whose prediction was ``wrong`` (counted)."""
        raise NotImplementedError

    def _scan(self, x, y, wrong):
        """Index in the chunk of the first row needing :meth:`_step`, or −1.

        ``wrong`` holds the released hypothesis' mistakes on the chunk. Rows before the
        returned index (all rows for −1) are absorbed: a subclass that keeps per-row
        state updates it here, vectorised. ``n_rounds_seen_`` counts the rows before the
        chunk here, and includes the current row in :meth:`_step`. Default: the first
        mistake (a conservative learner).
        """
        return int(np.argmax(wrong)) if wrong.any() else -1

    def _frozen(self):
        """True when the learner no longer updates: rows are only predicted and counted."""
        return False

    def _before_block(self, n_rows, first_call, from_fit, plan):
        """Called after validation, before any state change (privacy is charged here)."""

    def _fresh_predict_one(self, x):
        """Prediction at x of an unfitted learner (for adaptive adversaries), or None."""
        return None

    #: Name of the constructor parameter holding the hypothesis class.
    _class_param = "hypothesis_class"

    def _hypotheses(self) -> Any:
        """The hypothesis class: the parameter, or :func:`default_hypothesis_class` when
        it is None (None for a learner without such a parameter: X = domain indices)."""
        if not hasattr(self, self._class_param):
            return None
        hc = getattr(self, self._class_param)
        return default_hypothesis_class() if hc is None else hc

    def _discretisation(self) -> Any:
        """The class's public discretisation of real features, or None (X = indices).

        A hypothesis class with ``to_domain(X)`` (e.g.
        :class:`~skdp.hypotheses.RealThresholds`, the default
        :class:`~skdp.hypotheses.MeanThresholds`) maps real features to domain indices
        with public, data-independent bins.
        """
        hc = self._hypotheses()
        return hc if callable(getattr(hc, "to_domain", None)) else None

    def _sparse_input(self) -> str | bool:
        """``accept_sparse`` for X: CSR when the class's discretisation reads sparse rows
        (:class:`~skdp.hypotheses.MeanThresholds`), else dense only."""
        return "csr" if getattr(self._discretisation(), "accepts_sparse", False) else False

    def _to_domain(self, X: NDArray[np.float64], n_domain: int) -> NDArray[np.intp]:
        disc = self._discretisation()
        if disc is None:
            return domain_indices(X, n_domain, type(self).__name__)
        return disc.to_domain(X)

    # ----------------------------------------------------------------- inputs
    def _validate_xy(self, X, y, classes, first_call, from_fit):
        """Validate X and y (first thing in fit/partial_fit): float X, the label set,
        labels as ±1. Raises before the class is resolved or anything is charged."""
        X, y = validate_data(self, X, y, reset=first_call, dtype=np.float64,
                             ensure_min_samples=1, accept_sparse=self._sparse_input())
        if first_call and classes is None and not from_fit and getattr(
                self, "classes", None) is None:
            raise ValueError("classes must be passed on the first call to partial_fit "
                             "(e.g. classes=[0, 1]), as for SGDClassifier.")
        classes_ = resolve_classes(self, y, classes, first_call=first_call)
        return X, np.where(y == classes_[1], 1, -1).astype(np.int8), classes_

    # ----------------------------------------------------------------- fitting
    def _fit_block(self, X, y, classes, *, from_fit, record=False):
        if self._ovr_dispatch(y, classes, from_fit):  # C > 2 labels: skdp._multiclass
            if record:
                raise ValueError("run_online needs a binary learner (two labels).")
            return self._ovr_fit(X, y, classes, from_fit=from_fit)
        first_call = from_fit or not hasattr(self, "classes_")
        X, ys, classes_ = self._validate_xy(X, y, classes, first_call, from_fit)
        if first_call:
            n_domain, plan = self._prepare_stream(from_fit)
            disc = self._discretisation()
            if callable(getattr(disc, "check_features", None)):
                disc.check_features(X.shape[1], type(self).__name__)
        else:
            n_domain, plan = self.n_domain_, None
        idx = self._to_domain(X, n_domain)
        self._before_block(idx.shape[0], first_call, from_fit, plan)
        if first_call:
            self.classes_ = classes_
            self.n_domain_ = n_domain
            self._n_mistakes = self.n_rounds_seen_ = 0
            self._init_stream(plan)
        wrong_at = self._run(idx, ys, record)
        self._after_block()
        return wrong_at

    def _after_block(self):
        """Called at the end of fit/partial_fit (hook): e.g. fill prediction caches, so
        that predict never changes the estimator's ``__dict__``."""

    def _run(self, idx, ys, record):
        n = idx.shape[0]
        wrong_at = np.zeros(n, dtype=bool) if record else None
        pos, chunk = 0, _FIRST_CHUNK
        while pos < n:
            frozen = self._frozen()
            end = n if frozen else min(n, pos + chunk)
            wrong = self._released_predict(idx[pos:end]) != ys[pos:end]
            hit = -1 if frozen else self._scan(idx[pos:end], ys[pos:end], wrong)
            stop = end if hit < 0 else pos + hit + 1
            self._n_mistakes += int(np.count_nonzero(wrong[: stop - pos]))
            if record:
                wrong_at[pos:stop] = wrong[: stop - pos]
            self.n_rounds_seen_ += stop - pos
            if hit < 0:
                pos, chunk = end, chunk * 2
            else:
                self._step(int(idx[pos + hit]), int(ys[pos + hit]), bool(wrong[hit]))
                pos, chunk = stop, _FIRST_CHUNK
        return wrong_at

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike) -> Self:
        """Run the online learner over the rows of X in order, from a fresh stream.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Real features read through the hypothesis class's public discretisation
            (the default :class:`~skdp.hypotheses.MeanThresholds`, or e.g.
            :class:`~skdp.hypotheses.RealThresholds`), or — for a class without one —
            domain indices, shape (n_samples, 1), integers in [0, N).
        y : array-like of shape (n_samples,)
            Two class labels, or C > 2 learnt one-vs-rest (C internal binary copies
            on the same rows; see ``skdp._multiclass`` for how ε is split).

        Returns
        -------
        self
        """
        self._fit_block(X, y, None, from_fit=True)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X: ArrayLike, y: ArrayLike, classes: ArrayLike | None = None) -> Self:
        """Continue the stream with the rows of X, in order.

        Any split of a stream into blocks gives the same model as one pass.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            As in :meth:`fit`.
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,), optional
            Every label (two, or C > 2: one-vs-rest); required on the first call
            unless the estimator's ``classes`` parameter (private learners) gives them.

        Returns
        -------
        self
        """
        self._fit_block(X, y, classes, from_fit=False)
        return self

    # ----------------------------------------------------------------- run_online hooks
    def _partial_fit_mistakes(self, X, y, classes=None):
        """``partial_fit`` that also returns the per-row online mistakes (bool array)."""
        return self._fit_block(X, y, classes, from_fit=False, record=True)

    # Unvalidated one-round fast path for run_online (±1 labels; the adversary already
    # checked the domain index): far cheaper than partial_fit on one row.
    def _online_predict(self, x):
        """±1 prediction of the released hypothesis at x (None or the fresh learner's
        before the first round)."""
        if not hasattr(self, "classes_"):
            return self._fresh_predict_one(x)
        return int(self._released_predict(np.array([x], dtype=np.intp))[0])

    def _online_step(self, x, y, classes):
        """One round with ±1 label y; returns True iff the prediction was a mistake."""
        if not hasattr(self, "classes_"):
            return bool(self._partial_fit_mistakes([[x]], [y], classes=classes)[0])
        if not np.array_equal(self.classes_, [-1, 1]):
            raise ValueError("run_online needs classes_ == [-1, 1].")
        self._before_block(1, False, False, None)
        return bool(self._run(np.array([x], dtype=np.intp), np.array([y], dtype=np.int8),
                              True)[0])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = bool(self._sparse_input())
        return tags


class OnlineDomainClassifier(OneVsRestMixin, _BinaryOnlineDomainClassifier):
    """Base of skdp's online classifiers: binary over domain indices, and C > 2 labels
    by internal one-vs-rest (``skdp._multiclass``)."""

    def _ovr_check(self, template, X, y01, from_fit):
        # What a copy's first block checks before it charges, run once on a throwaway
        # copy before the C-class learner pays (see _fit_block).
        X, _, _ = template._validate_xy(X, y01, [0, 1], True, from_fit)
        n_domain, _ = template._prepare_stream(from_fit)
        disc = template._discretisation()
        if callable(getattr(disc, "check_features", None)):
            disc.check_features(X.shape[1], type(self).__name__)
        template._to_domain(X, n_domain)

    def _ovr_validate(self, X, y, reset):
        sparse = self._sparse_input()
        if y is None:
            return validate_data(self, X, reset=reset, dtype=np.float64, accept_sparse=sparse)
        return validate_data(self, X, y, reset=reset, dtype=np.float64, ensure_min_samples=1,
                             accept_sparse=sparse)


class PrivateOnlineDomainClassifier(PrivateEstimatorMixin, OnlineDomainClassifier):
    """Base of private online classifiers over domain indices.

    Subclasses have ``epsilon``, ``delta``, ``budget``, ``random_state`` (and
    ``verbose``) parameters. At the first block of a stream (``fit``, or the first
    ``partial_fit``), after all validation and before any randomness, (ε, δ) of
    ``_stream_cost(plan)`` is charged once (later blocks continue the same release and
    cost nothing more); then the stream's noise keys are drawn (OS entropy; the seed in
    testing mode), from which :meth:`_event_rng` derives one generator per
    data-dependent event and then erases its key. A learner that can still continue its
    stream (after ``fit`` too: ``partial_fit`` continues it) holds private running
    state — the keys of future events, its mechanisms' noisy thresholds and counters —
    so it is not a publishable model: publish its predictions or released hypothesis.
    Its keys never derive the noise of an event already drawn, and a pickle or copy
    holds no key and no generator state (it is re-keyed from OS entropy). Copies of a
    fitted stream share a stream record: continuing two copies is refused with
    :class:`~skdp.exceptions.StaleStateError`. A subclass that hits a hard cap calls
    :meth:`_stop_updating`: the learner then keeps predicting its last released
    hypothesis (``updates_stopped_``, ``stop_reason_``; one
    :class:`~skdp.exceptions.PrivacyWarning`).
    """

    def _stream_cost(self, plan):
        """(ε, δ) charged at stream start; default: the validated ``epsilon``, ``delta``."""
        return self._check_privacy_params()

    def _before_block(self, n_rows, first_call, from_fit, plan):
        if first_call:
            self._begin_stream(*self._stream_cost(plan), from_fit)
            self.updates_stopped_ = False
            self.stop_reason_ = None
        else:
            # Compare-and-swap: a stale copy (older pickle, deepcopy branch) is refused
            # here, before it touches its private state.
            self._advance_stream()

    def _event_rng(self, index):
        """Generator of event ``index`` (e.g. switch number × roles + role), once.

        From the stream's forward-secure keys (:class:`~skdp._streams.StreamNoise`):
        keyed by the index, so the noise does not depend on how the stream was cut into
        blocks, and erased once drawn, so nothing the learner keeps can replay it. The
        returned generator is re-keyed by the next call (callers use it at once).
        """
        return self._noise.generator(index, slot=0)

    def _frozen(self):
        return self.updates_stopped_

    def _stop_updating(self, reason):
        """Hard cap hit: stop updating for good, keep the released hypothesis, warn once."""
        if self.updates_stopped_:
            return
        self.updates_stopped_ = True
        self.stop_reason_ = reason
        warnings.warn(
            f"{type(self).__name__}: {reason}; to keep its privacy guarantee it stops "
            "updating and keeps predicting with its last released hypothesis.",
            PrivacyWarning, stacklevel=2,
        )
        if getattr(self, "verbose", 0):
            print(f"[{type(self).__name__}] stopped updating after "
                  f"{self.n_rounds_seen_} rounds: {reason}")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = True
        tags.classifier_tags.poor_score = True
        return tags
