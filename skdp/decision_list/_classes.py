"""Decision-list classifiers: Rivest's greedy cover and Bun & Fang's DP-GreedyCover."""

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._labels import resolve_classes
from .._validation import private_data_error
from ..accounting import PrivacyBudget
from ..base import PrivateEstimatorMixin
from ..exceptions import BudgetExhaustedError, PrivacyWarning
from ..mechanisms import exponential_mechanism
from ._accounting import ACCOUNTINGS, step_plan
from ._greedy_cover import greedy_cover, predict_codes

__all__ = ["DPDecisionListClassifier", "GreedyDecisionListClassifier"]

def _feature_name(names, index):
    return str(names[index]) if names is not None else f"x{index}"


class _DecisionListBase(ClassifierMixin, BaseEstimator):
    """Shared plumbing: validation, binary check, prediction, export, streaming buffer."""

    _parameter_constraints: dict = {
        "max_rules": [Interval(numbers.Integral, 1, None, closed="left"), None],
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
        self._default_code = result.default
        self.rules_ = [
            (int(f), 1, self.classes_[c]) for f, c in zip(result.features, result.labels,
                                                          strict=True)
        ]
        self.default_label_ = self.classes_[result.default]
        self.n_selections_ = result.n_steps

    def _n_rules_cap(self, n_features):
        return n_features if self.max_rules is None else min(self.max_rules, n_features)

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
            Binary features (0/1), as in ``fit``.

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        self._ensure_released()
        X, _ = self._validate_X(X, reset=False)
        codes = predict_codes(
            X, self._rule_features, self._rule_codes, self._default_code, self.n_features_in_
        )
        return self.classes_[codes]

    def export_text(self, feature_names=None):
        """The list as text: ``if x3 then A`` / ``elif ~x7 then B`` / ``else A``.

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
        for i, (f, _, label) in enumerate(self.rules_):
            lines.append(f"{'if' if i == 0 else 'elif'} {_feature_name(names, f)} then {label}")
        lines.append(f"else {self.default_label_}" if lines else f"always {self.default_label_}")
        return "\n".join(lines)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class GreedyDecisionListClassifier(_DecisionListBase):
    """Non-private greedy decision list (Rivest 1987): the ceiling for the DP version.

    The same incremental greedy cover as :class:`DPDecisionListClassifier`, with the
    exponential mechanism replaced by the argmax: each step takes the rule
    "if f then b" with the fewest remaining rows it would misclassify,
    q(f, b) = −#{remaining rows with f(x) = 1 and label ≠ b}, among rules that fire
    on at least one remaining row (ties: the rule covering more rows, then the
    first). The constant-true rule T competes at every step and ends the list when
    chosen. Rows a rule fires on are removed. The list stops when every training
    row is covered or ``max_rules`` rules are in; the default is then the majority
    label of the rows left (of all rows if none are left).

    Parameters
    ----------
    max_rules : int, optional
        At most this many rules before the default; ``None`` (default) allows one
        per feature, as in the paper.
    binarize : float, optional
        If given, features are binarized as ``x > binarize`` first (a public
        constant, like ``BernoulliNB(binarize=...)``). By default the input must
        already be 0/1 (see :class:`skdp.preprocessing.PublicBoundsBinarizer`).

    Attributes
    ----------
    rules_ : list of (int, int, label) tuples
        ``(feature index, 1, label)``: "if x[feature] == 1 then label", in order.
    default_label_ : label
        Prediction when no rule fires.
    classes_ : ndarray
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string feature names.
    n_selections_ : int
        Selections made (rules, plus one when the default needed its own step).

    Notes
    -----
    Cost O(nnz(X) + M·d·C) for M rules, d features and C classes; sparse CSR input is
    used as is. ``partial_fit`` buffers rows and relearns the list the next time it
    is needed (a decision list is a batch model).

    References
    ----------
    R. L. Rivest. "Learning decision lists". Machine Learning 2(3), 1987.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.decision_list import GreedyDecisionListClassifier
    >>> X = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
    >>> y = np.array(["a", "a", "b", "c"])
    >>> print(GreedyDecisionListClassifier().fit(X, y).export_text())
    if x0 then a
    elif x1 then b
    else c
    """

    _parameter_constraints: dict = {**_DecisionListBase._parameter_constraints}

    def __init__(self, max_rules=None, *, binarize=None):
        self.max_rules = max_rules
        self.binarize = binarize

    def _run(self, X, codes):
        n_classes = self.classes_.size
        overall = np.bincount(codes, minlength=n_classes) if codes.size else np.zeros(n_classes)

        def select(scores, coverage, is_default):
            if is_default:
                if coverage[0] == 0:  # nothing left: fall back to the overall majority
                    return int(np.argmax(overall))
                return int(np.argmax(scores))
            usable = coverage > 0
            # lexicographic (score, coverage) max among usable candidates
            key = np.where(usable, scores.astype(float) * (coverage.max() + 1) + coverage,
                           -np.inf)
            return int(np.argmax(key))

        result = greedy_cover(
            X, codes, n_classes, max_rules=self._n_rules_cap(X.shape[1]), select=select,
            stop_when_empty=True,
        )
        self._set_list(result)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Learn the list from binary X and labels y.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Binary (0/1) features.
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        X, y = self._validate_X(X, reset=True, y=y)
        self.classes_, codes = self._encode_y(y)
        self._clear_stream()
        self._run(X, codes)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None):
        """Buffer a block of rows; the list is relearned when next needed.

        The next ``predict``/``score``/``export_text``/``release`` after new rows
        relearns the list from all rows buffered so far. Rows passed to ``fit`` are
        not kept: after ``fit``, the buffer starts empty.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like, optional
            All labels; required on the first call.

        Returns
        -------
        self
        """
        return self._partial_fit(X, y, classes)

    def _release_stream(self, X, codes):
        self._run(X, codes)


class DPDecisionListClassifier(PrivateEstimatorMixin, _DecisionListBase):
    """Differentially private decision list: DP-GreedyCover (Bun & Fang, Alg 1).

    Greedy cover where each step *samples* a rule (f, b) — a feature f, or the
    constant-true function T, and a label b — with the exponential mechanism on
    q(f, b) = −#{remaining rows with f(x) = 1 and label ≠ b} (sensitivity 1), then
    removes the rows f fires on and drops f from the candidates. Choosing T ends the
    list with default label b. After ``max_rules`` rules without T, one more
    exponential-mechanism step picks the default label among (T, b). Binary labels
    are the paper's case exactly; with C > 2 classes the same mechanism picks
    (f, b) among C labels per feature (each score still changes by at most 1 when a
    row is added or removed, and only for candidates that fire on it, so
    Lemma 18 applies unchanged).

    Parameters
    ----------
    epsilon : float, default=1.0
        ε of one release (one ``fit``, or one relearning after ``partial_fit``).
    delta : float, default=1e-6
        δ of one release. δ > 0 enables the tight and EMCover accountings; with
        δ = 0 only basic composition applies (pure ε-DP).
    max_rules : int, optional
        Rules before the default. ``None`` (default) is the paper's M = number of
        features (each feature is used at most once). Smaller values give shorter
        lists and, under basic or tight composition, more ε per step.
    accounting : {"auto", "tight", "emcover", "basic", "paper"}, default="auto"
        How ε is split over the at most K = min(max_rules, n_features) + 1
        selections. ``"tight"``: the largest ε̂ for which K ε̂-bounded-range steps
        compose to (ε, δ) by the tight accountant
        (:func:`skdp.accounting.calibrate_plan`). ``"emcover"``: the paper's
        Lemma 18, ε̂ = ε / (2(ln(1/δ) + 3/2)) whatever K; gives (ε, δ)-DP.
        ``"basic"``: ε / K per step; gives pure (ε, 0)-DP. ``"auto"`` (default, a
        practical choice) uses whichever of the three gives more ε per step — all
        three guarantees are valid; tight wins up to a few hundred steps at
        δ = 10⁻⁶, EMCover for longer lists, basic only for K ≤ 4 or so.
        ``"paper"``: the larger of EMCover and basic (``"auto"`` before the tight
        accountant). With δ = 0 basic composition is used (a ``PrivacyWarning``
        says so if ``"emcover"`` or ``"tight"`` was asked for).
    budget : PrivacyBudget, optional
        Ledger charged (ε, δ) — or (ε, 0) under basic composition — before each
        release. Copies (``clone``, ``deepcopy``, pickle) share it.
    random_state : None, int, numpy Generator or RandomState, default=None
        Source of the mechanism's randomness; an int makes ``fit`` reproducible.
    binarize : float, optional
        If given, features are binarized as ``x > binarize`` first (a public
        constant, costs no privacy). By default the input must already be 0/1; use
        :class:`skdp.preprocessing.PublicBoundsBinarizer` in a Pipeline for
        real-valued data.
    classes : array-like, default=None
        The label set, a **public** parameter: ``classes_`` is exactly
        ``np.unique(classes)`` whatever ``y`` holds (labels missing from ``y`` are
        fine), and labels of ``y`` outside it raise ``ValueError``. ``None``: read
        from ``y`` in ``fit`` (``partial_fit`` then needs its own ``classes`` on the
        first call), with a :class:`~skdp.exceptions.PrivacyLeakWarning` — the label
        set is then a statistic of the private data that the guarantee does not
        cover (a label only one row carries reveals that row).

    Attributes
    ----------
    rules_ : list of (int, int, label) tuples
        ``(feature index, 1, label)``: "if x[feature] == 1 then label", in order.
    default_label_ : label
        Prediction when no rule fires (chosen privately).
    classes_ : ndarray
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string feature names.
    step_epsilon_ : float
        ε̂ of each exponential-mechanism step (it samples ∝ exp(ε̂·q)).
    accounting_ : str
        ``"tight"``, ``"emcover"`` or ``"basic"``: the theorem the guarantee rests on.
    n_selections_ : int
        Exponential-mechanism steps run in the last release.
    n_releases_ : int
        Releases so far (1 after ``fit``; one per relearning after ``partial_fit``).
    privacy_spent_ : PrivacyCost
        Total (ε, δ) of every release since the last ``fit``.

    Privacy
    -------
    Neighbouring datasets differ by adding or removing one row (the relation of
    Lemma 18's proof); the label set (``classes``) and the number of features are
    public. Every score depends only on rows its candidate covers and changes by at
    most 1, downwards, when a row is added; the step mechanism samples ∝ exp(ε̂·q),
    i.e. :func:`~skdp.mechanisms.exponential_mechanism` with ``monotonic=True``
    (which Lemma 18's proof assumes), so each step is ε̂-bounded-range and ε̂-DP.
    Each release is (ε, δ)-DP by the tight accountant over K ε̂-bounded-range
    steps, or by EMCover (Bun & Fang, Lemma 18 and Thm 7), or (ε, 0)-DP by basic
    composition (ε̂ = ε/K), with K = min(max_rules, n_features) + 1 the most steps
    a release can run. The number of steps is capped whatever the data, so the
    guarantee holds for every input. For replace-one neighbours (Bun & Fang's
    Definition 4) group privacy gives (2ε, (1 + e^ε)δ). ``partial_fit`` releases
    compose: k releases cost (kε, kδ), all recorded in ``privacy_spent_`` and
    charged to ``budget``; when the budget cannot pay, the last list is kept and a
    ``PrivacyWarning`` is issued (``BudgetExhaustedError`` if there is no list yet).

    Checked against the paper: Lemma 18's proof uses a mechanism sampling
    ∝ exp(ε̂·q) (not Prop 3's exp(ε̂·q/2)), so ε̂ is the multiplier of q; its
    inequality 1 + (e^ε̂ − 1)x ≤ e^{2ε̂x} needs ε̂ ≤ 1.2564; its bad event has
    probability ≤ δ by Lemma 19, whatever the number of steps.

    Constants: ε̂ = ε/(2(ln(1/δ) + 3/2)), the score, T as a candidate and
    M = number of features are the paper's. Practical choices: ``accounting="auto"``
    (and the tight accountant in it),
    ``delta=1e-6``, the cap of ε̂ at 1.2564 where Lemma 18's inequality stops holding,
    and the explicit private default step.

    Notes
    -----
    The score counts only errors, as in the paper: a rule that fires on no
    remaining row scores 0, the best possible score, so the mechanism often picks
    such rules (rare features). They change nothing on the training rows but fire on
    unseen rows. The utility guarantee (Thm 7) needs n of order
    M·log M·log(1/δ)/(αε) rows; below that, expect noisy lists.

    Cost O(nnz(X) + M·d·C) plus M exponential-mechanism draws over at most
    (d + 1)·C candidates; sparse CSR input is used as is.

    The streaming buffer of ``partial_fit`` holds the raw rows (a decision list
    is a batch model); a pickled estimator in streaming mode therefore contains
    them. ``fit`` keeps no rows.

    References
    ----------
    M. Bun, W. Fang. "Privately Learning Decision Lists and a Differentially Private
    Winnow" (Alg 1 DP-GreedyCover, Alg 4 EMCover, Lemma 18, Thm 7, Cor 22).
    R. L. Rivest. "Learning decision lists". Machine Learning 2(3), 1987.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.decision_list import DPDecisionListClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 2, size=(2000, 5))
    >>> y = np.where(X[:, 0] == 1, 1, np.where(X[:, 3] == 1, 0, 1))
    >>> clf = DPDecisionListClassifier(epsilon=4.0, max_rules=3, classes=[0, 1],
    ...                                random_state=0).fit(X, y)
    >>> clf.accounting_, round(clf.step_epsilon_, 3)
    ('basic', 1.0)
    >>> float(clf.score(X, y)) > 0.9
    True
    """

    _parameter_constraints: dict = {
        **_DecisionListBase._parameter_constraints,
        "epsilon": "no_validation",  # checked by check_epsilon (PrivacyParameterError)
        "delta": "no_validation",
        "accounting": [StrOptions(set(ACCOUNTINGS))],
        "budget": [PrivacyBudget, None],
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
        "classes": ["array-like", None],
    }

    def __init__(
        self,
        epsilon=1.0,
        delta=1e-6,
        *,
        max_rules=None,
        accounting="auto",
        budget=None,
        random_state=None,
        binarize=None,
        classes=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.max_rules = max_rules
        self.accounting = accounting
        self.budget = budget
        self.random_state = random_state
        self.binarize = binarize
        self.classes = classes

    # -- accounting -------------------------------------------------------------------
    def _plan(self, epsilon, delta, n_features):
        """(per-step ε̂, theorem, δ charged) for a release on n_features candidates."""
        n_steps = self._n_rules_cap(n_features) + 1
        if delta == 0 and self.accounting in ("emcover", "tight"):
            warnings.warn(
                f"accounting={self.accounting!r} needs δ > 0; with δ = 0 basic "
                f"composition over the {n_steps} selections is used instead.",
                PrivacyWarning,
                stacklevel=3,
            )
        if self.accounting == "auto" and not self._budget_has_room_for_delta(delta):
            # "auto" keeps to pure ε-DP rather than refusing a release basic can pay for.
            delta = 0.0
        return step_plan(epsilon, delta, n_steps, self.accounting)

    def _encode_y_public(self, y):
        """Encode y against the public ``classes`` (or, with a warning, y's own labels)."""
        classes = resolve_classes(self, y, binary=False)
        return classes, np.searchsorted(classes, y).astype(np.intp)

    def _selector(self, step_epsilon, rng):
        def select(scores, coverage, is_default):
            return exponential_mechanism(
                scores, step_epsilon, sensitivity=1.0, monotonic=True, random_state=rng
            )

        return select

    def _private_run(self, X, codes, *, accumulate):
        """Charge one release, then run DP-GreedyCover. Unchanged state if unpaid.

        The release is a transition of the stream record (a stale copy is refused
        before anything is charged). With a budget its noise is keyed by the charge's
        place in the ledger; without, it keeps drawing from the stream's generator, so
        no two releases share noise either way.
        """
        epsilon, delta = self._check_privacy_params()
        step, method, charged_delta = self._plan(epsilon, delta, X.shape[1])
        key = self._charge(epsilon, charged_delta, f"decision list ({method})",
                           accumulate=accumulate, stream=self._stream)
        rng = self._rng if key is None else self._release_generator(key)
        result = greedy_cover(
            X, codes, self.classes_.size, max_rules=self._n_rules_cap(X.shape[1]),
            select=self._selector(step, rng),
        )
        self.step_epsilon_ = step
        self.accounting_ = method
        self._set_list(result)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Learn the list privately from binary X and labels y; charges one release.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Binary (0/1) features.
        y : array-like of shape (n_samples,)

        Returns
        -------
        self

        Raises
        ------
        BudgetExhaustedError
            If ``budget`` cannot pay for the release; the estimator is unchanged.
        """
        self._check_privacy_params()
        saved = dict(self.__dict__)
        try:
            X, y = self._validate_X(X, reset=True, y=y)
            classes, codes = self._encode_y_public(y)
            self.classes_ = classes
            self._clear_stream()
            self._open_release_stream()
            self._private_run(X, codes, accumulate=False)
        except BudgetExhaustedError:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise
        self.n_releases_ = 1
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None):
        """Buffer a block of rows; the list is relearned (and paid for) when next needed.

        The next ``predict``/``score``/``export_text``/``release`` after new rows
        relearns the list from *all* rows buffered so far, as one release of
        (ε, δ) charged to ``budget``. Blocks with no call in between are one
        release, identical (same ``random_state``) to ``fit`` on their
        concatenation. If the budget cannot pay, the previous list is kept and a
        ``PrivacyWarning`` is issued. Rows passed to ``fit`` are not kept: after
        ``fit``, the buffer starts empty (and releases keep drawing from ``fit``'s
        generator, so no two releases share noise).

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
        """
        self._check_privacy_params()
        return self._partial_fit(X, y, classes)

    def _start_stream(self):
        # After fit, keep fit's stream (and generator): a release must never reuse
        # another release's noise.
        if not hasattr(self, "_stream"):
            self._open_release_stream()
        if not hasattr(self, "n_releases_"):
            self.n_releases_ = 0

    def _open_release_stream(self):
        self._stream = self._open_stream()
        self._rng = None if self.budget is not None else self._release_generator(None)

    def _release_stream(self, X, codes):
        first_release = not hasattr(self, "rules_")
        try:
            self._private_run(X, codes, accumulate=True)
        except BudgetExhaustedError:
            if first_release:
                raise
            warnings.warn(
                "The privacy budget cannot pay for relearning the decision list from the "
                f"{codes.size} buffered rows; keeping the last released list "
                f"(release {self.n_releases_}).",
                PrivacyWarning,
                stacklevel=4,
            )
            return
        self.n_releases_ += 1

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = True
        tags.classifier_tags.poor_score = True
        return tags
