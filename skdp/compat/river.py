"""An skdp classifier as a river classifier, learning on a public batch schedule.

river (https://riverml.xyz) feeds models one row at a time: ``predict_one`` /
``predict_proba_one`` then ``learn_one`` for every row of a stream, which is what
``river.evaluate.progressive_val_score`` does. A private learner that released a new
model on every row, or a ``predict`` that relearned from the rows seen so far, would
pay ε per prediction. :class:`RiverClassifier` instead

* **buffers** the rows given to ``learn_one`` and calls the estimator's ``partial_fit``
  once every ``batch_size`` rows (a public schedule: the ``k``-th call gets rows
  ``(k-1)·batch_size+1 … k·batch_size``, whatever they hold);
* **predicts from released state only**: ``predict_one`` and ``predict_proba_one`` call
  the fitted estimator's ``predict`` / ``predict_proba``, which for skdp's learners are
  post-processing of what ``partial_fit`` released and charged. Before the first
  release there is nothing to predict from: ``predict_one`` returns ``None`` (which
  river's evaluation skips) and ``predict_proba_one`` the uniform distribution over
  ``classes`` (data-independent);
* **stops clearly** when privacy runs out: if ``partial_fit`` raises
  :class:`~skdp.exceptions.BudgetExhaustedError` (the estimator is then unchanged and
  that batch is not learned), or the estimator reports that it stopped updating
  (``updates_stopped_`` / ``updates_exhausted_``), the adapter stops feeding it, sets
  ``updates_stopped_`` and ``stop_reason_``, warns once with
  :class:`~skdp.exceptions.PrivacyWarning`, and keeps predicting with the last
  released model.

Privacy: the adapter keeps the estimator's guarantee for its ``partial_fit`` stream and
adds nothing (argument in :class:`RiverClassifier`'s Privacy section). With
:class:`~skdp.streams.ContinualReleaseClassifier` the whole run — every batch, every
prediction — costs that learner's (ε, δ) once. Rows still in the buffer are neither
learned nor used; :meth:`RiverClassifier.flush` learns them now. Query-budgeted
predictors (:mod:`skdp.prediction`) pay for every answer by design and are refused.

Needs ``pip install "skdp[river]"``.

Examples
--------
>>> from river import evaluate, metrics
>>> from skdp.accounting import PrivacyBudget
>>> from skdp.compat.river import RiverClassifier
>>> from skdp.decision_list import DPDecisionListClassifier
>>> stream = [({"a": float(i % 2), "b": float(i % 3 == 0)}, i % 2) for i in range(450)]
>>> budget = PrivacyBudget(epsilon=10.0)
>>> model = RiverClassifier(
...     DPDecisionListClassifier(epsilon=1.0, budget=budget),
...     classes=[0, 1], batch_size=100)
>>> _ = evaluate.progressive_val_score(stream, model, metrics.Accuracy())
>>> model.n_batches_, model.n_learned_  # 4 partial_fit calls; 350 predictions
(4, 400)
>>> budget.spent.epsilon <= model.n_batches_ * 1.0  # at most ε per batch, none per prediction
True
"""

from __future__ import annotations

import copy
import numbers
import warnings
from collections.abc import Hashable, Iterator, Sequence
from typing import Any

import numpy as np
from sklearn.base import clone as sklearn_clone

try:
    from river import base as river_base
except ImportError as exc:  # pragma: no cover - only without river installed
    raise ImportError(
        "skdp.compat.river needs the river package: pip install 'skdp[river]'"
    ) from exc

from ..exceptions import BudgetExhaustedError, PrivacyWarning

__all__ = ["RiverClassifier"]

_STOP_FLAGS = ("updates_stopped_", "updates_exhausted_")


class RiverClassifier(river_base.Classifier):
    """Run an skdp classifier in river without paying ε per prediction.

    Parameters
    ----------
    estimator : skdp classifier
        A classifier with ``partial_fit``: for real streams
        :class:`~skdp.streams.ContinualReleaseClassifier` (every row learned once,
        the stream charged once), or ``DPWinnowClassifier``,
        ``DPDecisionListClassifier``, ``DPSOAClassifier``. It is updated in place.
        Its ``budget`` (if any) is charged by its own ``partial_fit``.
    classes : sequence of labels
        The public label set, passed to the first ``partial_fit`` (never read from the
        stream). A label outside it makes ``learn_one`` raise ``ValueError``.
    batch_size : int, default=100
        ``partial_fit`` is called once every ``batch_size`` rows given to ``learn_one``.
        Larger batches mean fewer releases (less privacy spent by learners that pay per
        release) and predictions that lag further behind the stream.
    features : sequence of hashable, optional
        The feature names, in the column order the estimator sees. By default the keys
        of the first row given to ``learn_one``, in their order. A missing key reads as
        0.0 (river's sparse-row convention); keys not in ``features`` are ignored.

    Attributes
    ----------
    n_seen_ : int
        Rows given to ``learn_one``.
    n_learned_ : int
        Rows passed to a ``partial_fit`` that succeeded.
    n_batches_ : int
        Successful ``partial_fit`` calls (releases).
    updates_stopped_ : bool
        True once the budget was exhausted or the estimator stopped updating; the
        adapter then drops new rows and predicts with the last released model.
    stop_reason_ : str or None
        Why it stopped.

    Privacy
    -------
    Whatever the estimator's ``partial_fit`` stream guarantees for the sequence of
    calls it receives, the adapter's whole run — every ``learn_one``, prediction and
    attribute — has for the stream of rows, the batches fixed by the rows' positions
    (b = ``batch_size``).

    1. *The calls are a public function of the positions.* Rows reach the estimator
       only through ``partial_fit``; the k-th call holds rows (k−1)·b+1 … k·b in
       arrival order, each row in exactly one call. Two streams that differ in one row
       at one position make the same calls, differing in that row of one call.
    2. *Predictions are post-processing.* ``predict_one`` and ``predict_proba_one``
       call the estimator's ``predict`` / ``predict_proba``, which for the accepted
       learners read released state only (query-budgeted predictors, which pay per
       answer, are refused). Before the first release they answer ``None`` / the
       uniform distribution; whether a release exists is a function of the call count
       (``n_releases_`` where the estimator reports it, else the first successful
       call), not of the rows.
    3. *Everything else is public.* ``n_seen_``, ``n_learned_``, ``n_batches_`` count
       rows and calls: the same on streams that differ in one row's content (with a
       row added or removed they differ by one — publish the released models and
       predictions then, not these counters). ``updates_stopped_`` follows the
       budget's ledger or the estimator's own public caps. The buffer of rows not yet
       learned is private state that nothing reads; :meth:`clone` copies none of it
       (an unfitted estimator).

    So the run is the estimator's interactive stream plus post-processing. For
    :class:`~skdp.streams.ContinualReleaseClassifier`, whose learner is (ε, δ)-DP for
    adding or removing one row of a call and which charges its (ε, δ) once: a row
    replaced at its position costs (2ε, (1 + e^ε)δ) (group privacy: a removal and an
    addition in one block). Count batches protect a row's content, not its presence:
    a removed row shifts every later batch by one row, and the guarantee degrades with
    the number of releases after it. Protecting presence needs batches on a public
    clock with a call for *every* period, an empty one included (else removing the
    only row of a period drops a call and moves the schedule); :meth:`flush` at public
    times does the first half, but skips empty periods, and
    ``ContinualReleaseClassifier.partial_fit`` needs at least one row. Tested in
    ``tests/compat/test_river.py``: progressive validation releases the very models,
    and pays the very charges, of ``partial_fit`` alone on the same batches; two
    broken twins (learning before each prediction, relearning every row seen) fail
    that check.

    Notes
    -----
    Each prediction reads every released model the estimator combines (about 2 ms a
    model for a decision list on a loaded 2-core machine): prequential evaluation of
    ``ContinualReleaseClassifier`` runs at tens to a few hundred rows a second.

    ``predict_proba_one`` uses the estimator's ``predict_proba`` when it has one.
    Otherwise it returns a one-hot of ``predict`` (probability 1.0 on the predicted
    label): a valid distribution from released state, but a hard one — ROC AUC sees only
    labels, and log-loss is infinite on every mistake.
    """

    def __init__(
        self,
        estimator: Any,
        classes: Sequence[Hashable],
        batch_size: int = 100,
        features: Sequence[Hashable] | None = None,
    ) -> None:
        self.estimator = estimator
        self.classes = classes
        self.batch_size = batch_size
        self.features = features
        _check_params(estimator, classes, batch_size)
        self._labels = list(classes)
        self._columns: list[Hashable] | None = None if features is None else list(features)
        self._rows: list[list[float]] = []
        self._targets: list[Hashable] = []
        self._started = False  # a partial_fit succeeded (the stream is open)
        self.n_seen_ = 0
        self.n_learned_ = 0
        self.n_batches_ = 0
        self.updates_stopped_ = False
        self.stop_reason_: str | None = None

    @property
    def _multiclass(self) -> bool:
        return len(self._labels) > 2

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        """Parameters river's estimator checks construct the adapter with."""
        from ..linear import DPWinnowClassifier

        yield {"estimator": DPWinnowClassifier(epsilon=1.0, random_state=0),
               "classes": (False, True), "batch_size": 20}

    def clone(self, new_params: dict[str, Any] | None = None,
              include_attributes: bool = False) -> RiverClassifier:
        """A fresh adapter, same parameters, around an **unfitted** copy of the estimator.

        river's own ``clone`` deep-copies every parameter, and the estimator is updated
        in place: it would copy a fitted learner — its released models and, for
        :class:`~skdp.streams.ContinualReleaseClassifier`, the raw rows of its current
        block (private state) and its stream's record, so the "fresh" copy would go on
        with the same stream. Here an sklearn estimator is cloned with
        :func:`sklearn.base.clone` (same parameters, the same budget's ledger, nothing
        learned); another learner is deep-copied as river does. ``new_params`` with an
        ``estimator``, or ``include_attributes=True`` (a copy of everything, by
        definition), keep river's behaviour.
        """
        new_params = dict(new_params or {})
        if not include_attributes and "estimator" not in new_params:
            new_params["estimator"] = (sklearn_clone(self.estimator)
                                       if hasattr(self.estimator, "get_params")
                                       else copy.deepcopy(self.estimator))
        return super().clone(new_params, include_attributes)

    def learn_one(self, x: dict[Hashable, Any], y: Any) -> None:
        """Buffer one row; every ``batch_size``-th row triggers ``partial_fit``.

        Parameters
        ----------
        x : dict
            Feature name → number.
        y : label
            One of ``classes``.

        Raises
        ------
        ValueError
            If ``y`` is not in ``classes`` or a feature is not a number (the message
            names the feature, never a value).
        """
        self.n_seen_ += 1
        if self.updates_stopped_:
            return
        if y not in self._labels:
            raise ValueError("learn_one: y is not one of the public classes= labels.")
        self._rows.append(self._row(x))
        self._targets.append(y)
        if len(self._targets) >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        """Call ``partial_fit`` on the buffered rows now (nothing happens if none)."""
        if not self._targets or self.updates_stopped_:
            return
        X = np.asarray(self._rows, dtype=np.float64)
        y = np.asarray(self._targets)
        self._rows, self._targets = [], []
        extra = {} if self._started else {"classes": np.asarray(self._labels)}
        try:
            self.estimator.partial_fit(X, y, **extra)
        except BudgetExhaustedError:
            self._stop(f"the privacy budget cannot pay for batch {self.n_batches_ + 1}")
            return
        self._started = True
        self.n_learned_ += y.shape[0]
        self.n_batches_ += 1
        if any(getattr(self.estimator, flag, False) for flag in _STOP_FLAGS):
            self._stop("the estimator stopped updating (its privacy caps are reached)")

    def _has_model(self) -> bool:
        """Whether the estimator has released a model. A learner that reports its
        releases (``n_releases_``, e.g. ``ContinualReleaseClassifier`` on a ``"fixed"``
        schedule, whose first model comes at the end of its ``block``-th call) has one
        once it says so; any other learner once its first ``partial_fit`` succeeded."""
        if not self._started:
            return False
        releases = getattr(self.estimator, "n_releases_", None)
        return releases is None or releases > 0

    def predict_one(self, x: dict[Hashable, Any], **kwargs: Any) -> Any:
        """The released model's label for ``x``, or ``None`` before the first release."""
        if not self._has_model():
            return None
        return self.estimator.predict(self._matrix(x))[0]

    def predict_proba_one(self, x: dict[Hashable, Any], **kwargs: Any) -> dict[Any, float]:
        """Label → probability from the released model; uniform before the first release.

        Uses the estimator's ``predict_proba`` if it has one, else a one-hot of
        ``predict`` (see Notes of the class). Before the first release nothing about the
        data is known: every label of ``classes`` gets ``1 / len(classes)``.
        """
        if not self._has_model():
            return {label: 1.0 / len(self._labels) for label in self._labels}
        X = self._matrix(x)
        labels = list(self.estimator.classes_)
        if hasattr(self.estimator, "predict_proba"):
            proba = self.estimator.predict_proba(X)[0]
            return {label: float(p) for label, p in zip(labels, proba, strict=True)}
        predicted = self.estimator.predict(X)[0]
        return {label: float(label == predicted) for label in labels}

    # ------------------------------------------------------------------ helpers
    def _row(self, x: dict[Hashable, Any]) -> list[float]:
        if self._columns is None:
            self._columns = list(x)
        row = []
        for name in self._columns:
            value = x.get(name, 0.0)
            if not isinstance(value, numbers.Real):
                raise ValueError(f"feature {name!r} is not a real number.")
            row.append(float(value))
        return row

    def _matrix(self, x: dict[Hashable, Any]) -> np.ndarray:
        return np.asarray([self._row(x)], dtype=np.float64)

    def _stop(self, reason: str) -> None:
        self.updates_stopped_ = True
        self.stop_reason_ = reason
        self._rows, self._targets = [], []
        then = ("keeps predicting with its last released model" if self._has_model()
                else "has no released model to predict with (predictions are None)")
        warnings.warn(
            f"RiverClassifier: {reason}; it stops updating after {self.n_learned_} rows "
            f"learned in {self.n_batches_} batches and {then}.",
            PrivacyWarning,
            stacklevel=3,
        )


def _check_params(estimator: Any, classes: Sequence[Hashable], batch_size: int) -> None:
    """Refuse bad parameters before any row is seen."""
    from ..prediction._base import QueryBudgetedPredictor

    if isinstance(estimator, QueryBudgetedPredictor):
        raise TypeError(
            f"{type(estimator).__name__} is a query-budgeted predictor: it pays privacy "
            "for every answer, so progressive validation would spend per prediction. "
            "Use a private learner (e.g. DPWinnowClassifier, DPDecisionListClassifier)."
        )
    for method in ("partial_fit", "predict"):
        if not callable(getattr(estimator, method, None)):
            raise TypeError(f"{type(estimator).__name__} has no {method}(); "
                            "RiverClassifier needs an incremental classifier.")
    if (isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral)
            or batch_size < 1):
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}.")
    if isinstance(classes, (str, bytes)) or len(list(classes)) < 2:
        raise ValueError("classes must list at least 2 labels (the public label set).")
