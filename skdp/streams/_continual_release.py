"""Continual release: a private batch learner turned into a stream learner that uses
every row exactly once.

The stream is cut into *blocks* of consecutive ``partial_fit`` calls on a public
schedule (call numbers only); at the end of each block a fresh clone of the wrapped
learner is fitted, at the stream's (ε, δ), on all rows of that block — the rows
buffered since the previous release — and released. Blocks are disjoint, so one row
touches one release: parallel composition keeps the whole stream at (ε, δ), charged
once. The proof is in :class:`ContinualReleaseClassifier`.
"""

from __future__ import annotations

import hashlib
import numbers
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context, clone
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from .._input import validate_data
from .._labels import resolve_classes
from .._validation import (
    RANDOM_STATE_CONSTRAINT,
    check_delta,
    check_epsilon,
    check_random_state_mode,
    seeded_generator,
)
from ..accounting import PrivacyBudget
from ..base import PrivateEstimatorMixin, unchanged_if_unpaid
from ..exceptions import PrivacyError, PrivacyWarning
from ..preprocessing import PublicBoundsBinarizer, PublicBoundsClipper, PublicImputer
from ._blocks import ReleaseBlocks, block_length, release_schedule
from ._guard import CHECK_INDEX, ConstantGuard, constant_proba

if TYPE_CHECKING:
    from sklearn.utils import Tags
    from typing_extensions import Self

__all__ = ["ContinualReleaseClassifier", "block_length", "release_schedule"]

#: ``combine="recent"`` reads the newest RECENT_MODELS models (see ``_probas``).
RECENT_MODELS = 8
#: The guard restarts the schedule only when the current block is planned to last at
#: least this many calls (public): a stream where the constant and the models trade
#: places is not cut into blocks of one call.
RESTART_BLOCK = 8


def _fingerprint(X: Any) -> tuple[Any, ...]:
    """Shape, dtype and a digest of the values of validated rows (dense or CSR).

    A cryptographic digest: the guard's check reuses the remembered predictions only
    for the very rows of its call (rows crafted to collide would make it count another
    block's mistakes). SHA-256 runs on the CPU's SHA extensions where present: twice
    BLAKE2b's speed on the benchmark machine, ~0.1 ms per 1,000 × 8 block."""
    digest = hashlib.sha256()
    arrays = (X.data, X.indices, X.indptr) if sp.issparse(X) else (X,)
    for a in arrays:  # read in place (tobytes copied the block first)
        digest.update(np.ascontiguousarray(a).reshape(-1).view(np.uint8).data)
    return (X.shape, str(X.dtype), sp.issparse(X), digest.hexdigest())


class _Memo:
    """The last prediction's per-candidate probabilities and the key of its input
    (a cache, not model state: ``predict`` fills it, never the released models)."""

    key: Any = None
    value: Any = None

#: Pipeline steps before the private learner that are fitted on no data-dependent
#: statistic (public bounds, fixed thresholds, a fixed function): a block's release
#: then stays a function of the private learner's output and public constants.
_PUBLIC_STEPS = (PublicBoundsBinarizer, PublicBoundsClipper, PublicImputer, FunctionTransformer)


def _default_estimator() -> Any:
    from ..decision_list import DPDecisionListClassifier

    # Negated literals: on thresholded numeric features the net cover otherwise opens
    # with a broad "x > low cut → majority" rule and the list is a constant
    # (benchmarks/results/streams.md: 0.150 against 0.077 on the drifting stream at ε = 1).
    return DPDecisionListClassifier(negations=True)


_PARAM_NAMES: dict[Any, frozenset[str]] = {}


def _param_names(cls: Any) -> frozenset[str]:
    """An estimator class's parameter names (its ``__init__`` signature, read once per
    class: ~0.2 ms through ``get_params`` on every call of a stream)."""
    names = _PARAM_NAMES.get(cls)
    if names is None:
        names = _PARAM_NAMES[cls] = frozenset(cls._get_param_names())
    return names


def _private_step(estimator: Any) -> tuple[str, Any]:
    """(parameter prefix, private learner) of ``estimator`` or of a Pipeline's last step.

    A Pipeline's earlier steps must be public transforms (``_PUBLIC_STEPS``): a step
    fitted to the block's rows (a scaler's mean) would be a non-private release.
    """
    if estimator is None:
        estimator = _default_estimator()
    if isinstance(estimator, Pipeline):
        for name, step in estimator.steps[:-1]:
            if step not in (None, "passthrough") and not isinstance(step, _PUBLIC_STEPS):
                raise TypeError(
                    f"ContinualReleaseClassifier: pipeline step {name!r} "
                    f"({type(step).__name__}) is fitted on the data without privacy; only "
                    "public transforms (PublicBoundsBinarizer, PublicBoundsClipper, "
                    "PublicImputer, FunctionTransformer) may precede the private learner.")
        name, last = estimator.steps[-1]
        prefix = f"{name}__"
    else:
        prefix, last = "", estimator
    if not isinstance(last, PrivateEstimatorMixin) or not isinstance(last, BaseEstimator) \
            or "epsilon" not in _param_names(type(last)):
        raise TypeError(
            "ContinualReleaseClassifier wraps a private skdp learner with an epsilon "
            f"parameter (e.g. DPDecisionListClassifier), got {type(last).__name__}.")
    return prefix, last


class ContinualReleaseClassifier(PrivateEstimatorMixin, ClassifierMixin, BaseEstimator):
    """A stream learner from any private batch learner: releases on a public schedule,
    each from all rows since the previous release.

    ``partial_fit`` buffers its rows. The calls of a stream are numbered t = 1, 2, …
    and grouped into consecutive *blocks* on a public schedule (``schedule``,
    ``block``); at the end of a block's last call a clone of ``estimator``, set to
    the stream's ``epsilon`` and ``delta``, is fitted on **every** row of the block and
    joins the released models ``estimators_``; the buffer is emptied. Each row is used
    by exactly one release, so the stream costs (ε, δ) in all, charged once (at its
    first call), however long it runs. ``predict`` and ``predict_proba`` read the
    released models only: predicting before each ``partial_fit`` (prequential
    evaluation, river's progressive validation) costs nothing.

    Parameters
    ----------
    estimator : estimator, default=None
        A private skdp learner with an ``epsilon`` parameter (e.g.
        :class:`~skdp.decision_list.DPDecisionListClassifier`), or a
        :class:`~sklearn.pipeline.Pipeline` of public transforms
        (:class:`~skdp.preprocessing.PublicBoundsBinarizer`,
        :class:`~skdp.preprocessing.PublicBoundsClipper`, a fixed
        :class:`~sklearn.preprocessing.FunctionTransformer`) ending in one. Never
        fitted itself: each release fits a clone whose ``epsilon`` (and ``delta``,
        ``classes``, ``random_state`` where it has them) are set by this wrapper and
        whose ``budget`` is None (the wrapper pays). ``None``:
        ``DPDecisionListClassifier(negations=True)`` (negated literals measured better
        on every development stream of ``benchmarks/streams.py``). Real-valued
        features: put :class:`~skdp.preprocessing.PublicBoundsBinarizer` with public
        thresholds in front (a Pipeline).
    epsilon : float, default=1.0
        ε of the whole stream (every release, every prediction).
    delta : float, optional
        δ of the whole stream. ``None``: the wrapped learner's own ``delta`` (0 if it
        has none).
    schedule : {"doubling", "fixed"}, default="doubling"
        Block lengths in calls: b, 2b, 4b, … (``"doubling"``: releases at calls b,
        3b, 7b, …, so the latest model has seen about half of the stream and there
        are ⌈log₂(t/b)⌉ releases after t calls) or b, b, … (``"fixed"``: a fresh
        model every b calls, which follows a drifting stream).
    block : int, default=1
        b, the first block's length in calls (the only one with ``"fixed"``). Public:
        the default releases a first model at the end of the first call.
    max_block : int or None, default=16
        With ``"doubling"``, the longest block in calls: blocks grow b, 2b, 4b, … up to
        ``max_block`` and then stay there (a model at least every ``max_block`` calls,
        which follows drift). ``None``: no cap (the latest model then holds half the
        stream; without the guard an abrupt change is never followed: 0.415 error
        against the constant's 0.400 on ``sim abrupt``, 0.178 with the default cap).
        Calls are the unit: feed chunks of rows (the benchmark's are 1,000 rows) — with
        one row per call a block of 16 calls is a model learned from 16 rows.
    combine : {"recent", "ensemble", "latest"}, default="recent"
        How the released models predict: ``"recent"`` weights the j-th newest by :math:`2^{-j}`
        (the latest holds half the vote, so a changed concept takes over after a release
        or two); ``"ensemble"`` averages their ``predict_proba`` weighted by their
        blocks' lengths in calls (public); ``"latest"`` uses the last one.
        Post-processing either way. Measured at ε = 1 without the guard (the previous
        ``benchmarks/results/streams.md``; drifting / abrupt / stationary streams):
        recent 0.077 / 0.178 / 0.280, latest 0.070 / 0.126 / 0.340, ensemble 0.107 /
        0.407 / 0.232 — ``"recent"`` has the smallest worst gap to the best of the
        three; with the guard (which may answer with the latest model instead):
        recent 0.081 / 0.092 / 0.208, latest 0.078 / 0.095 / 0.261.
    guard : float in (0, 1) or None, default=0.1
        Share of ε spent on a private check, on every call after the first release,
        of the released predictors against a constant, **before** the call's rows are
        learned from: the combination (``combine``) and the latest model are run on
        the call's rows, and their mistake counts and the call's class counts are
        released with discrete Laplace noise. The combination answers unless, on some
        window of the last 1, 2, 4, …, 64 checks, the latest model or the constant
        label with the most noisy rows made fewer noisy mistakes by more than two
        standard deviations of the noise (``skdp.streams._guard``); then that one
        answers until the checks say otherwise. When the answer passes from a model
        to the constant in a block planned for ≥ 8 calls (an abrupt change), the rows
        buffered before the call are released as a block of their own and the
        schedule starts again from this call. The releases run at ε·(1 − guard).
        Measured (``benchmarks/results/streams.md``): on ``fair`` in file order
        (sorted by the label) 0.176 error against 0.628 without the guard and the best
        constant's 0.196; on the abrupt stream 0.092 / 0.088 at ε = 1 / 4 against
        0.179 / 0.179 without it (SGD 0.082; 0.116 / 0.111 with the check but no
        restart, measured during development). Its cost where it cannot act (chunks of
        50 rows; 8 seeds): breast_cancer 0.225 / 0.127 at ε = 1 / 4 against 0.227 /
        0.109 without it. ``None``: no check, no restart; the releases run at ε.
    budget : PrivacyBudget, optional
        Charged (ε, δ) at the first call of a stream (``fit`` or ``partial_fit``).
    random_state : None, int, numpy Generator, RandomState or TestingSeed, default=None
        ``None``: every release draws its noise from OS entropy (the clone's own
        ``random_state=None``). A seed is a testing mode (a
        :class:`~skdp.exceptions.PrivacyWarning` says so; with a ``budget`` it must be
        wrapped as ``skdp.TestingSeed(seed)``): release j gets a seed derived from it,
        the stream's charge and j.
    classes : array-like, default=None
        The label set, a public parameter (passed to every clone that takes one);
        ``None``: ``partial_fit``'s ``classes`` on the first call, or read from ``y``
        in ``fit`` with a :class:`~skdp.exceptions.PrivacyLeakWarning`.

    Attributes
    ----------
    estimators_ : list of estimators
        The released models, oldest first (each fitted on one block).
    block_calls_ : list of int
        The length in calls of each released model's block (public; the ensemble's
        weights).
    n_releases_ : int
        ``len(estimators_)``.
    n_calls_ : int
        Calls of the stream so far (``fit`` is call 1).
    next_release_ : int
        The call at whose end the next model is released (public schedule).
    classes_ : ndarray
    n_features_in_ : int
    privacy_spent_ : PrivacyCost
        (ε, δ) of the stream.

    Privacy
    -------
    (ε, δ)-DP for the whole sequence of released models and predictions, with
    respect to the wrapped learner's notion of neighbouring data sets applied to one
    block (e.g. adding or removing one row of one call for the decision list), against
    an adversary that chooses each call's rows after seeing the earlier releases. The
    number of calls, the schedule and ``classes`` are public.

    *Lemma (disjoint blocks).* Let the learner be (ε, δ)-DP on its input for every
    fixed public parameters. The release times depend on the call count only, so both
    neighbouring streams have the same blocks B₁, B₂, …; block j's release is the
    learner run on the rows of B_j with fresh noise. *Proof.* Let the streams differ
    in one row, which lies in block i. Releases before i are identically distributed.
    Conditioned on them, the rows of B_i are the same function of the past on both
    sides except for the differing row, so release i is (ε, δ)-indistinguishable.
    Conditioned on releases 1…i, the rows of every later block agree (the adversary's
    choices are functions of the released past and of rows that agree), and their
    releases use only those rows and fresh noise: identical. Summing over the
    outcomes of release i (the conditional laws of the rest coincide) gives
    P[S] ≤ e^ε P′[S] + δ for every set S of whole-stream outputs. Predictions are
    post-processing. ∎ The wrapper checks after each release that the clone reports
    ``privacy_spent_`` ≤ (ε, δ) (the release's share of it, with the guard) and
    refuses to go on otherwise. Audited exactly
    (``tests/privacy/test_continual_release_audit.py``): the release of a row in two
    models (a learner refitted on all rows so far, the broken twin) doubles ε.

    *The guard's checks.* With ``guard`` = g, the check of call t releases, from
    call t's rows only, the K mistake counts of the released predictors (K = 2: the
    combination and the latest model; 1 with ``combine="latest"``) and the C class
    counts, each with discrete Laplace noise of scale (K + 1)/(g·ε). Given the past
    outputs, the predictors are fixed, and adding or removing one row moves each
    mistake count by at most 1 and one class count by 1: L1 sensitivity K + 1, so the
    check is g·ε-DP. The releases run at ((1 − g)·ε, δ). Which calls are checked
    depends on the call count only; which rows form a block, on the call count and
    the released checks (a restart ends a block after a check), so given the past
    outputs both neighbouring streams run the same mechanisms on the same sets of
    calls — all the lemma's proof uses. The differing row (in call t, block i)
    enters exactly two of them —
    check t and release i — and the lemma's argument (condition on the past, the
    rest is identically distributed) applies to the pair, whose adaptive composition
    is (g·ε + (1 − g)·ε, δ) = (ε, δ). Every other mechanism sees identical rows given
    the past outputs. Which predictor answers is a function of the noisy counts:
    post-processing. ∎ Audited exactly
    (``tests/privacy/test_continual_release_guard_audit.py``): the checks cost g·ε,
    the stream ε; a guard whose noise forgets that the row also moves a class count
    is caught at 2·g·ε (one model predictor).

    A row passed twice counts as two rows (group privacy: 2ε for its owner).

    The buffer (rows of the current block, not yet released) is **private state**: a
    pickle or copy of a mid-stream object contains those raw rows, besides the
    released models, the guard's released noisy counts and the stream's record (and
    the predictions of the last ``predict``, kept so that a ``partial_fit`` on the
    same rows reuses them for its check). Publish the released models
    (``estimators_``) or predictions, never the pickled wrapper. Copies share the
    stream's record: once one of them continues the stream, the others are refused
    with :class:`~skdp.exceptions.StaleStateError` before they touch their state (a
    row is never released twice through a copy).

    Notes
    -----
    Cost: ``partial_fit`` appends to the buffer (O(1) besides validation) and, with
    the guard, predicts the call's rows (free when a ``predict`` on the same rows came
    just before, the prequential pattern); a release costs one ``fit`` of the wrapped
    learner on its block. ``combine="recent"`` reads the newest 8 models (the older
    ones weigh < 2^-8 together). ``"doubling"`` keeps
    O(log t) models, ``"fixed"`` t/b.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.decision_list import DPDecisionListClassifier
    >>> from skdp.streams import ContinualReleaseClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 2, size=(8000, 5))
    >>> y = np.where(X[:, 0] == 1, 1, X[:, 3])
    >>> clf = ContinualReleaseClassifier(DPDecisionListClassifier(), epsilon=1.0,
    ...                                  random_state=0)
    >>> for start in range(0, 8000, 1000):
    ...     _ = clf.partial_fit(X[start:start + 1000], y[start:start + 1000],
    ...                         classes=[0, 1])
    >>> clf.n_releases_, clf.block_calls_, clf.next_release_
    (3, [1, 2, 4], 15)
    >>> clf.score(X, y) > 0.95
    True
    >>> clf.privacy_spent_.epsilon
    1.0
    """

    #: The guard's record of checks (the audit's twins substitute a subclass).
    _guard_class = ConstantGuard

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "get_params"]), None],
        "epsilon": "no_validation",  # check_epsilon (PrivacyParameterError)
        "delta": "no_validation",
        "schedule": [StrOptions({"doubling", "fixed"})],
        "block": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_block": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "combine": [StrOptions({"ensemble", "recent", "latest"})],
        "guard": [Interval(numbers.Real, 0, 1, closed="neither"), None],
        "budget": [PrivacyBudget, None],
        "random_state": [*RANDOM_STATE_CONSTRAINT],
        "classes": ["array-like", None],
    }

    def __init__(self, estimator: Any = None, *, epsilon: float = 1.0, delta: float | None = None,
                 schedule: str = "doubling", block: int = 1, max_block: int | None = 16,
                 combine: str = "recent", guard: float | None = 0.1,
                 budget: PrivacyBudget | None = None,
                 random_state: int | np.random.Generator | None = None,
                 classes: ArrayLike | None = None) -> None:
        self.estimator = estimator
        self.epsilon = epsilon
        self.delta = delta
        self.schedule = schedule
        self.block = block
        self.max_block = max_block
        self.combine = combine
        self.guard = guard
        self.budget = budget
        self.random_state = random_state
        self.classes = classes

    # ------------------------------------------------------------------ privacy
    def _privacy(self) -> tuple[float, float, str, Any]:
        """(ε, δ, parameter prefix, private step), validated before anything is spent."""
        prefix, step = _private_step(self.estimator)
        epsilon = check_epsilon(self.epsilon)
        delta = self.delta if self.delta is not None else (
            step.delta if "delta" in _param_names(type(step)) else 0.0)
        delta = check_delta(delta)
        check_random_state_mode(self.random_state, self.budget is not None,
                                type(self).__name__)
        return epsilon, delta, prefix, step

    def _release_epsilon(self, epsilon: float) -> float:
        """ε of each release: the stream's, less the guard's share (a row is in one
        check and one release: their ε add up to the stream's)."""
        return epsilon if self.guard is None else epsilon * (1.0 - self.guard)

    def _model_candidates(self) -> int:
        """K, the model predictors the guard checks (public): the combination and the
        latest model, or the latest alone with ``combine="latest"``."""
        return 1 if self.combine == "latest" else 2

    def _block_estimator(self, index: int) -> Any:
        """A clone of ``estimator`` for release ``index``: the stream's (ε, δ), no budget
        (the stream paid), the public classes, and the release's noise."""
        epsilon, delta, prefix, step = self._privacy()
        own = step.get_params(deep=False)
        params: dict[str, Any] = {f"{prefix}epsilon": self._release_epsilon(epsilon)}
        if "delta" in own:  # else a pure learner: (ε, 0) ≤ (ε, δ)
            params[f"{prefix}delta"] = delta
        if "budget" in own:
            params[f"{prefix}budget"] = None
        if "classes" in own:
            params[f"{prefix}classes"] = self.classes_
        if "random_state" in own:
            seed = None
            if self._seeded():
                seed = int(seeded_generator(self.random_state, self._noise_key,
                                            index).integers(2**32))
            params[f"{prefix}random_state"] = seed
        base = _default_estimator() if self.estimator is None else clone(self.estimator)
        return base.set_params(**params)

    # ------------------------------------------------------------------ fitting
    #: NaN advice of skdp._input.missing_values_error
    _missing_values_alternative = ("Or wrap a learner that reads missing values: "
                                   "estimator=DPDecisionListClassifier(bounds=...).")

    def _finite(self):
        """``ensure_all_finite`` for X: NaN passes when the wrapped learner reads it
        (the decision list with ``bounds=``, or a pipeline starting with a PublicImputer);
        its own validation then runs on each block."""
        base = _default_estimator() if self.estimator is None else self.estimator
        if isinstance(base, Pipeline):  # its tags do not say (scikit-learn 1.6–1.9)
            base = next((s for _, s in base.steps if s not in (None, "passthrough")), base)
        return "allow-nan" if get_tags(base).input_tags.allow_nan else True

    def _validate_block(self, X, y, classes, first_call):
        X, y = validate_data(self, X, y, reset=first_call, accept_sparse="csr",
                             dtype="numeric", ensure_min_samples=1,
                             ensure_all_finite=self._finite())
        found = resolve_classes(self, y, classes, first_call=first_call, binary=False)
        if found.size < 2:
            raise ValueError(f"{type(self).__name__} can't train when only one class is "
                             "present: pass the label set as classes=[a, b, ...].")
        return X, y, found

    def _open(self, found):
        """Start a stream: validate the privacy parameters, then pay (ε, δ) once and
        advance the stream's record in the same transaction. Unchanged if unpaid."""
        epsilon, delta, _, _ = self._privacy()
        with unchanged_if_unpaid(self):
            learner = type(_private_step(self.estimator)[1]).__name__
            self._noise_key = self._open_paid_stream(epsilon, delta,
                                                     f"continual release of {learner}")
        self.classes_ = found
        self.estimators_: list[Any] = []
        self._blocks = ReleaseBlocks(self.schedule, self.block, self.max_block)
        self._guard = None if self.guard is None else self._guard_class(
            epsilon * self.guard, self._model_candidates(), found.size)
        self._choice = ("model", 0)
        self._memo = _Memo()

    def _check(self, X, y) -> bool:
        """The guard's check of this call's rows, before they are learned from: the
        released predictors' mistakes and the class counts, released with noise
        (ε·guard); then the choice of the predictor that answers next. True if the
        schedule should restart (a post-processing of the released checks)."""
        if self._guard is None or not self.estimators_:
            return False
        # K was fixed when the stream opened; a later set_params(combine=...) changes
        # the candidates' number: pad with the latest model (the sensitivity is K + 1
        # whatever they are).
        k = self._guard.n_models
        probas = self._probas(X)  # once: even a remembered answer hashes X's rows
        probas = (probas + [probas[-1]] * k)[:k]
        truth = np.searchsorted(self.classes_, y)
        mistakes = [np.count_nonzero(np.argmax(p, axis=1) != truth) for p in probas]
        counts = np.bincount(truth, minlength=self.classes_.size)
        rng = self._release_generator(self._noise_key, CHECK_INDEX + self._guard.n_checks)
        self._guard.check(np.asarray(mistakes), counts, rng)
        before, self._choice = self._choice, self._guard.choice()
        # A change: every released model just lost to the constant. Restart the
        # schedule (if the current block is a long one) so that a model of the rows
        # after the change comes at once instead of at the end of that block.
        return (self._choice[0] == "constant" and before[0] == "model"
                and self._blocks.planned_length >= RESTART_BLOCK)

    def _restart(self) -> None:
        """Release the rows buffered before this call as a block of their own, then
        start the doubling again: this call is the first block (``block`` calls)."""
        if self._blocks.n_buffered:
            self._release()
        self._blocks.restart()

    def _take_call(self, X, y, release_now: bool = False) -> None:
        """Buffer one call; release if it ends a block. A release that raises (the
        clone refusing its input) undoes the call, so the schedule stays the public
        function of the calls that went through."""
        if self._blocks.add(X, y, end_block=release_now):
            try:
                self._release()
            except Exception:
                self._blocks.undo()
                raise

    def _release(self) -> None:
        """Fit a fresh clone on every row of the block, release it; the block's rows
        leave the buffer only once the clone has been released (else :meth:`_take_call`
        undoes the call)."""
        model = self._block_estimator(self.n_releases_)
        X, y = self._blocks.rows()
        with warnings.catch_warnings():
            # The wrapper already warned about its seed (testing mode); the clone's
            # seeded warning would repeat it at every release.
            warnings.filterwarnings("ignore", message=".*random_state is set",
                                    category=PrivacyWarning)
            model.fit(X, y)
        self._check_spent(model)
        self._blocks.close()
        self.estimators_.append(model)

    def _check_spent(self, model) -> None:
        step = model.steps[-1][1] if isinstance(model, Pipeline) else model
        spent = getattr(step, "privacy_spent_", None)
        delta = self.privacy_spent_.delta
        epsilon = self._release_epsilon(self.privacy_spent_.epsilon)
        if spent is None or spent.epsilon > epsilon * (1 + 1e-9) or \
                spent.delta > delta * (1 + 1e-9) + 1e-15:
            raise PrivacyError(
                f"ContinualReleaseClassifier: the wrapped {type(step).__name__} did not "
                "report a privacy_spent_ within the stream's (ε, δ); nothing was released.")

    def _stream_state(self) -> ReleaseBlocks:
        if "_blocks" not in self.__dict__:
            raise AttributeError("exists once a stream has started.")
        return self._blocks

    @property
    def next_release_(self) -> int:
        """The call at whose end the next model is released."""
        return self._stream_state().next_release

    @property
    def n_calls_(self) -> int:
        """Calls of the stream so far."""
        return self._stream_state().n_calls

    @property
    def n_releases_(self) -> int:
        """Models released so far."""
        return self._stream_state().n_releases

    @property
    def block_calls_(self) -> list[int]:
        """Length in calls of each released model's block."""
        return list(self._stream_state().block_calls)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X: ArrayLike, y: ArrayLike) -> Self:
        """Start a new stream with X, y as its first call and release a model from them.

        Later ``partial_fit`` calls continue the stream: the next block is call 2 to
        call 1 + 2b (``"doubling"``) or 1 + b (``"fixed"``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        self._privacy()
        X, y, found = self._validate_block(X, y, None, first_call=True)
        self._clear_stream()
        self._open(found)
        self._take_call(X, y, release_now=True)
        return self

    @_fit_context(prefer_skip_nested_validation=False)
    def partial_fit(self, X: ArrayLike, y: ArrayLike,
                    classes: ArrayLike | None = None) -> Self:
        """Add one call's rows to the stream; release a model if the call ends a block.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like, optional
            All labels; required on the first call unless the ``classes`` parameter
            gives them.

        Returns
        -------
        self

        Raises
        ------
        BudgetExhaustedError
            On the first call of a stream, if ``budget`` cannot pay; nothing changes.
        StaleStateError
            If this object is a stale copy (another copy of the stream moved on).
        """
        self._privacy()
        first_call = not hasattr(self, "_stream")
        if first_call and classes is None and self.classes is None:
            raise ValueError("classes must be passed on the first call to partial_fit "
                             "(e.g. classes=[0, 1]), as for SGDClassifier.")
        X, y, found = self._validate_block(X, y, classes, first_call)
        if first_call:
            self._open(found)
        else:
            # Compare-and-swap first: a stale copy is refused before its state changes.
            self._advance_stream()
            if self._check(X, y):
                self._restart()
        self._take_call(X, y)
        return self

    def _clear_stream(self) -> None:
        for name in ("_blocks", "_stream", "_noise_key", "estimators_", "_guard", "_choice",
                     "_memo"):
            self.__dict__.pop(name, None)

    # ------------------------------------------------------------------ predicting
    def _check_released(self) -> None:
        if not hasattr(self, "estimators_"):
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet: "
                                 "call fit or partial_fit first.")

    def _model_proba(self, model, X, rows: dict[Any, Any]) -> NDArray[np.float64]:
        """A released model's probabilities in ``classes_`` order.

        A model with ``_predict_rows_key`` (the decision list) reads X validated once
        for every model with the same key (``rows`` keeps them for one prediction):
        its own ``predict_proba`` would validate X again in each of up to
        RECENT_MODELS models (~0.4 ms each on 1,000 rows, the bulk of a prediction).
        """
        out = np.zeros((X.shape[0], self.classes_.size))
        cols = np.searchsorted(self.classes_, model.classes_)
        key = model._predict_rows_key() if hasattr(model, "_predict_rows_key") else None
        if key is not None:
            if key not in rows:
                rows[key] = model._predict_rows(X)
            out[:, cols] = model._proba_of_rows(rows[key])
        elif hasattr(model, "predict_proba"):
            out[:, cols] = model.predict_proba(X)
        else:
            pred = np.searchsorted(self.classes_, model.predict(X))
            out[np.arange(X.shape[0]), pred] = 1.0
        return out

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Class probabilities from the released models (``combine``); uniform before
        the first release. Post-processing: costs nothing.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        self._check_released()
        rows: Any = validate_data(self, X, reset=False, accept_sparse="csr", dtype="numeric",
                                  ensure_all_finite=self._finite())
        if not self.estimators_:
            return np.full((rows.shape[0], self.classes_.size), 1.0 / self.classes_.size)
        kind, index = self._choice
        if kind == "constant":
            return constant_proba(rows.shape[0], self.classes_.size, index)
        probas = self._probas(rows)
        # the guard's K is fixed when the stream opens; after set_params(combine=...)
        # there may be fewer candidates, padded in _check with the latest model: so is
        # the choice here
        return probas[min(index, len(probas) - 1)]

    def _probas(self, X) -> list[NDArray[np.float64]]:
        """[the models' combination (``combine``), the latest model's] probabilities.

        The last answer is remembered for the same rows and released models: a
        ``partial_fit`` right after a ``predict`` on its rows (prequential use) reuses
        it for the guard's check instead of predicting again.
        """
        key = (len(self.estimators_), self.combine, _fingerprint(X))
        if self._memo.key == key:
            return self._memo.value
        models = self.estimators_
        if self.combine == "latest":
            models = models[-1:]
        elif self.combine == "recent":
            # Weights 2^-age: the models older than the newest RECENT_MODELS weigh less
            # than 2^-RECENT_MODELS together, below any margin the newer ones leave
            # but an exact tie; dropping them bounds a prediction's cost.
            models = models[-RECENT_MODELS:]
        if isinstance(models[-1], Pipeline):
            # The steps before the private learner are public transforms with the same
            # parameters in every release (checked at construction): run them once.
            X = models[-1][:-1].transform(X)
            models = [m.steps[-1][1] for m in models]
        rows: dict[Any, Any] = {}
        parts = [self._model_proba(m, X, rows) for m in models]
        if self.combine == "latest":
            value = parts
        else:
            weights = (0.5 ** np.arange(len(parts))[::-1] if self.combine == "recent"
                       else np.asarray(self._blocks.block_calls, dtype=float))
            total = sum(w * p for w, p in zip(weights, parts, strict=True))
            value = [total / weights.sum(), parts[-1]]
        self._memo.key, self._memo.value = key, value
        return value

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """Labels: the argmax of :meth:`predict_proba` (``classes_[0]`` before the
        first release).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        proba = self.predict_proba(X)  # first: raises NotFittedError before classes_ exists
        return self.classes_[np.argmax(proba, axis=1)]

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.non_deterministic = True
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = self._finite() == "allow-nan"
        tags.classifier_tags.poor_score = True
        return tags
