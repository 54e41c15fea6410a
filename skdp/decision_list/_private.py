"""DPDecisionListClassifier: the practical net cover (default) and Bun & Fang's DP-GreedyCover."""

import warnings

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import StrOptions

from .._labels import resolve_classes
from ..accounting import PrivacyBudget
from ..base import PrivateEstimatorMixin
from ..exceptions import BudgetExhaustedError, PrivacyWarning
from ._accounting import ACCOUNTINGS, net_step_plan, step_plan
from ._base import _DecisionListBase
from ._greedy_cover import greedy_cover
from ._net_cover import default_n_rules, errors_selector, net_selector

__all__ = ["DPDecisionListClassifier"]


class DPDecisionListClassifier(PrivateEstimatorMixin, _DecisionListBase):
    """Differentially private decision list: a practical net cover, or DP-GreedyCover.

    A greedy cover where each step *samples* a rule "if ℓ then b" with the
    exponential mechanism, then removes the rows ℓ fires on and drops ℓ's feature
    from the candidates; a last private step picks the default label.

    * ``algorithm="net_cover"`` (default, a practical variant with its own proof below): ℓ is
      a feature x_f (or also ¬x_f with ``negations=True``), scored by weighted net
      coverage q(ℓ, b) = #{remaining rows ℓ covers with label b}
      − λ·#{remaining rows ℓ covers with another label}, λ = ``error_weight``.
      Exactly K rules, K from public quantities (``max_rules=None``:
      K = min(d, max(C − 1, round(2ε)))), then the default label by the
      exponential mechanism on the label counts of the rows left.
    * ``algorithm="greedy_cover"``: DP-GreedyCover (Bun & Fang, Alg 1) exactly, on
      q(f, b) = −#{remaining rows with f(x) = 1 and label ≠ b}, with the
      constant-true rule T as a candidate that ends the list, up to M = d rules
      (``max_rules=None``), and the paper's accountings. Its score rates a rule that
      fires on nothing as perfect, so it favours rare features and short lists end
      in the default label: it reaches 0.71 at ε = 1 on breast_cancer where the net
      cover reaches 0.91 (``benchmarks/decision_lists.py``).

    Parameters
    ----------
    epsilon : float, default=1.0
        ε of one release (one ``fit``, or one relearning after ``partial_fit``).
    delta : float, default=1e-6
        δ of one release. δ > 0 enables the tight (and, for ``algorithm="greedy_cover"``,
        EMCover) accounting; with δ = 0 only basic composition applies (pure ε-DP).
    max_rules : int, optional
        Rules before the default. ``None`` (default): K above for ``"net_cover"``, the
        paper's M = number of features for ``"greedy_cover"`` (each feature is used at
        most once). Fewer rules give more ε per step.
    algorithm : {"net_cover", "greedy_cover"}, default="net_cover"
        The rule score and algorithm (above).
    error_weight : float, default=1.5
        λ ≥ 1 of the net-coverage score: a misclassified covered row costs λ correct
        ones. λ = 1 is plain net coverage; larger λ asks purer rules first (planted
        lists need λ > 1, noisy data such as statsmodels' ``fair`` needs λ < 3).
        The selection noise grows like 1 + λ.
    negations : bool, default=False
        With ``algorithm="net_cover"``, also offer ¬x_f ("x_f == 0"). Off by default: broad
        negated rules win the early steps on planted lists of positive literals.
    accounting : {"auto", "tight", "emcover", "basic", "paper"}, default="auto"
        How ε is split over the K + 1 selections (K = min(max_rules, d) for
        ``"greedy_cover"``). ``"tight"``: the largest ε̂ for which K + 1
        ε̂-bounded-range steps compose to (ε, δ) by the tight accountant
        (:func:`skdp.accounting.calibrate_plan`). ``"basic"``: ε/(K + 1) per
        step, pure (ε, 0)-DP. ``"emcover"`` (``algorithm="greedy_cover"`` only, else
        ``ValueError``): Lemma 18, ε̂ = ε/(2(ln(1/δ) + 3/2)) whatever K.
        ``"auto"`` (default): whichever valid proof gives more ε per step (basic
        unless another gains ≥ 1 %). ``"paper"``: for ``"greedy_cover"`` the larger of
        EMCover and basic (``"auto"`` before the tight accountant); for ``"net_cover"``
        basic composition (the prototype's). With δ = 0 basic composition is used
        (a ``PrivacyWarning`` says so if ``"emcover"`` or ``"tight"`` was asked).
    budget : PrivacyBudget, optional
        Ledger charged (ε, δ) — or (ε, 0) under basic composition — before each
        release. Copies (``clone``, ``deepcopy``, pickle) share it.
    random_state : None, int, numpy Generator or RandomState, default=None
        Source of the mechanism's randomness; an int makes ``fit`` reproducible.
    binarize : float or None, default=0.0
        Features are binarized as ``x > binarize`` first (a public constant, costs
        no privacy), as ``BernoulliNB(binarize=0.0)`` does: 0/1 input passes
        through unchanged, and real-valued input becomes "x > 0". For real-valued
        data, put :class:`skdp.preprocessing.PublicBoundsBinarizer` with public
        thresholds in a Pipeline instead. ``None``: the input must already be 0/1
        (anything else raises before any privacy is spent).
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
        ``(feature index, sign, label)``: "if x[feature] == sign then label", in
        order (sign 0 only with ``negations=True``).
    default_label_ : label
        Prediction when no rule fires (chosen privately).
    classes_ : ndarray
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string feature names.
    step_epsilon_ : float
        ε̂ of each exponential-mechanism step (each step is ε̂-bounded-range).
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
    Neighbouring datasets differ by adding or removing one row; the label set
    (``classes``), the number of features and K are public. Each release runs at
    most K + 1 selections whatever the data, each ε̂-bounded-range, and is (ε, δ)-DP
    by the tight accountant over them, or (ε, 0)-DP by basic composition, or (for
    ``"greedy_cover"``) (ε, δ)-DP by EMCover. For replace-one neighbours (Bun & Fang's
    Definition 4) group privacy gives (2ε, (1 + e^ε)δ). ``partial_fit`` releases
    compose: k releases cost (kε, kδ), all recorded in ``privacy_spent_`` and
    charged to ``budget``; when the budget cannot pay, the last list is kept and a
    ``PrivacyWarning`` is issued (``BudgetExhaustedError`` if there is no list yet).

    *Net cover (practical variant).* Lemma: given the earlier selections, adding a
    row z changes the remaining rows by z at most, so every rule score moves by
    q′ − q ∈ [−λ, +1] (+1 for candidates that fire on z with z's label, −λ for those
    that fire on z with another, 0 for the rest) and every default count by 0 or +1.
    Rule steps sample ∝ exp(ε̂·q/(1 + λ)) and the default step ∝ exp(ε̂·n_b), so
    the log-likelihood ratio of the outcomes, (ε̂/(1 + λ))(q′ − q) − log(Z′/Z),
    spans an interval of width ≤ ε̂: each step is ε̂-bounded-range, hence ε̂-DP.
    The K + 1 steps compose adaptively (bounded-range composition in the tight
    accountant, or basic). ∎ Bun & Fang's Lemma 18 (EMCover) is **not** claimed for
    this score: its proof needs scores that only fall when a row is added, and a
    row raises the net coverage of rules with its label (full argument in
    :mod:`skdp.decision_list._net_cover`). K depends on ε, d and C only, never n.

    *DP-GreedyCover.* Each score depends only on rows its candidate covers and
    falls by at most 1 when a row is added; the mechanism samples ∝ exp(ε̂·q)
    (``monotonic=True``, as Lemma 18's proof assumes), so each step is
    ε̂-bounded-range; K = min(max_rules, d) + 1. Checked against the paper: Lemma
    18's mechanism samples ∝ exp(ε̂·q) (not Prop 3's exp(ε̂·q/2)); its inequality
    1 + (e^ε̂ − 1)x ≤ e^{2ε̂x} needs ε̂ ≤ 1.2564 (capped); its bad event has
    probability ≤ δ by Lemma 19, whatever the number of steps. Constants: ε̂ =
    ε/(2(ln(1/δ) + 3/2)), the score, T and M = d are the paper's; the tight
    accountant, ``delta=1e-6`` and the explicit private default step are practical
    choices.

    Notes
    -----
    Cost O(nnz(X) + K·d·C) plus K + 1 exponential-mechanism draws over at most
    2d·C candidates; sparse CSR input is used as is. DP-GreedyCover's utility
    guarantee (Thm 7) needs n of order M·log M·log(1/δ)/(αε) rows.

    The streaming buffer of ``partial_fit`` holds the raw rows (a decision list
    is a batch model); a pickled estimator in streaming mode therefore contains
    them. ``fit`` keeps no rows.

    References
    ----------
    M. Bun, W. Fang. "Privately Learning Decision Lists and a Differentially Private
    Winnow" (Alg 1 DP-GreedyCover, Alg 4 EMCover, Lemma 18, Thm 7, Cor 22).
    D. Durfee, R. Rogers. "Practical Differentially Private Top-k Selection with
    Pay-what-you-get Composition". NeurIPS 2019 (bounded range).
    R. L. Rivest. "Learning decision lists". Machine Learning 2(3), 1987.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.decision_list import DPDecisionListClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 2, size=(2000, 5))
    >>> y = np.where(X[:, 0] == 1, 1, np.where(X[:, 3] == 1, 0, 1))
    >>> clf = DPDecisionListClassifier(epsilon=1.0, classes=[0, 1],
    ...                                random_state=0).fit(X, y)
    >>> len(clf.rules_), clf.accounting_, round(clf.step_epsilon_, 3)
    (2, 'basic', 0.333)
    >>> print(clf.export_text())
    if x0 then 1
    elif x3 then 0
    else 1
    >>> paper = DPDecisionListClassifier(epsilon=4.0, algorithm="greedy_cover",
    ...                                  max_rules=3,
    ...                                  classes=[0, 1], random_state=0).fit(X, y)
    >>> paper.accounting_, round(paper.step_epsilon_, 3)
    ('basic', 1.0)
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
        algorithm="net_cover",
        error_weight=1.5,
        negations=False,
        accounting="auto",
        budget=None,
        random_state=None,
        binarize=0.0,
        classes=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.max_rules = max_rules
        self.algorithm = algorithm
        self.error_weight = error_weight
        self.negations = negations
        self.accounting = accounting
        self.budget = budget
        self.random_state = random_state
        self.binarize = binarize
        self.classes = classes

    def _n_rules(self, epsilon, n_features):
        """Rules of a release: K from (ε, d, C) for the net cover, else the paper's M."""
        if self.algorithm == "net_cover" and self.max_rules is None:
            return default_n_rules(epsilon, n_features, self.classes_.size)
        return self._n_rules_cap(n_features)

    def _plan(self, epsilon, delta, n_features):
        """(per-step ε̂, theorem, δ charged) for a release on n_features candidates."""
        n_steps = self._n_rules(epsilon, n_features) + 1
        plan = net_step_plan if self.algorithm == "net_cover" else step_plan
        if self.algorithm == "net_cover" and self.accounting == "emcover":
            plan(epsilon, delta, n_steps, self.accounting)  # raises: not proved for net cover
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
        return plan(epsilon, delta, n_steps, self.accounting)

    def _encode_y_public(self, y):
        """Encode y against the public ``classes`` (or, with a warning, y's own labels)."""
        classes = resolve_classes(self, y, binary=False)
        return classes, np.searchsorted(classes, y).astype(np.intp)

    def _selector(self, step_epsilon, rng):
        if self.algorithm == "net_cover":
            return net_selector(step_epsilon, self.error_weight, rng)
        return errors_selector(step_epsilon, rng)

    def _private_run(self, X, codes, *, accumulate):
        """Charge one release, then run the private cover. Unchanged state if unpaid.

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
            X, codes, self.classes_.size, max_rules=self._n_rules(epsilon, X.shape[1]),
            select=self._selector(step, rng), **self._cover_options(),
        )
        self.step_epsilon_ = step
        self.accounting_ = method
        self._set_list(result)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Learn the list privately from X and labels y; charges one release.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Features, binarized as ``x > binarize`` (0/1 input passes through).
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
