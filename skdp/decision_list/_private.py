"""DPDecisionListClassifier: the practical net cover (default) and Bun & Fang's DP-GreedyCover."""

from __future__ import annotations

import numbers
import warnings
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from .._validation import RANDOM_STATE_CONSTRAINT
from ..accounting import PrivacyBudget
from ..base import PrivateEstimatorMixin, unchanged_if_unpaid
from ..exceptions import PrivacyWarning
from ..streams._blocks import ReleaseBlocks
from ..streams._guard import CHECK_INDEX, ConstantGuard, constant_proba
from ._accounting import (
    ACCOUNTINGS,
    HISTOGRAM_WEIGHT,
    LIFT_HISTOGRAM_WEIGHT,
    basic_step_epsilon,
    net_step_plan,
    step_plan,
)
from ._base import _DecisionListBase
from ._dask import DaskRows, is_dask_collection
from ._frequencies import region_counts, release_counts, smoothed_proba
from ._greedy_cover import greedy_cover, rule_scores
from ._net_cover import (
    COUNT_SHARE,
    MAX_AUTO_RULES,
    ROWS_PER_NOISE,
    auto_n_rules,
    errors_selector,
    lift_selector,
    net_selector,
    score_width,
)
from ._thresholds import ArrayRows, make_grid, threshold_cover

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from typing_extensions import Self

__all__ = ["DPDecisionListClassifier"]

#: Rule score of ``score="auto"``, by input mode (public). Measured at ε = 1 (3-fold × 2):
#: on 0/1 input the planted 5-rule list (6,000 rows, 40 bits, 2 % noise) reaches 0.976
#: with "net" and 0.94 with "lift" (non-private list 0.98); on raw real-valued tables
#: "lift" ranks where "net" takes one broad majority rule: ROC AUC 0.89 / 0.79 on a 5 %
#: positive table, 0.75 / 0.53 on a churn-like one. Short two-class lists of the
#: automatic length switch back to "net" (``DPDecisionListClassifier._short_list_score``).
_AUTO_SCORE = {False: "net", True: "lift"}


#: Lift-score lists of at least this many rules release their counts at ε̂, not ε̂/2
#: (``DPDecisionListClassifier._histogram_weight``). Measured at ε = 0.5 and 1 (40
#: splits): 3 cost digits 0.003 of ROC AUC at K = 4; with 5 no development table lost
#: ROC AUC (digits' accuracy at ε = 4 fell 0.004).
_LIFT_WEIGHT_MIN_RULES = 5

#: With ``rule_score="auto"`` and two classes, an automatic-length release whose count
#: allows at most this many lift rules uses the net score (``_short_list_score``).
_NET_MAX_RULES = 4

#: Auto-length releases raise the net score's λ above the released majority rate.
ADAPTIVE_NET = True


class _Plan(NamedTuple):
    """A release's plan: per-step ε̂ (None: set by the release's noisy row count), the
    theorem, the δ charged, and the ε it was calibrated for."""

    step: float | None
    method: str
    delta: float
    epsilon: float


class DPDecisionListClassifier(PrivateEstimatorMixin, _DecisionListBase):
    """Differentially private decision list: a practical net cover, or DP-GreedyCover.

    A greedy cover where each step *samples* a rule "if ℓ then b" with the
    exponential mechanism, then removes the rows ℓ fires on and drops ℓ's feature
    from the candidates; a last private step releases, for the rows each rule
    reaches first (and for the rows no rule reaches), their label counts with
    discrete Laplace noise. ``predict_proba`` reports those noisy counts, smoothed;
    they also pick the default label and can relabel a rule (``predict`` is the
    argmax of ``predict_proba``; under the lift score the counts alone label every
    rule).

    * ``algorithm="net_cover"`` (default, a practical variant with its own proof below): ℓ is
      a feature x_f (or also ¬x_f with ``negations=True``) or, with ``bounds``, a
      threshold literal "x_j ≤ t", "x_j > t" or "x_j is missing" over a public grid of
      cuts. ``rule_score="net"``: weighted net coverage
      q(ℓ, b) = #{remaining rows ℓ covers with label b}
      − λ·#{remaining rows ℓ covers with another label}, λ = ``error_weight``;
      ``"lift"``: q(ℓ, b) = a_b − θ_b·|a| with θ_b = p_b + κ(1 − p_b), p_b the rate of
      b among the remaining rows, κ = 0.2 — a rule must beat its label's base rate,
      so a broad majority rule scores about 0 and rules isolating a rare class win
      (``"auto"``: net on 0/1 input, lift with ``bounds`` — net again for two-class
      lists the automatic length keeps to ≤ 4 rules). Exactly K rules: with
      ``max_rules=None``, K comes from a noisy row count (5 % of ε) and public
      quantities, so the list grows with the data; then the noisy counts.
    * ``algorithm="greedy_cover"``: DP-GreedyCover (Bun & Fang, Alg 1) exactly, on
      q(f, b) = −#{remaining rows with f(x) = 1 and label ≠ b}, with the
      constant-true rule T as a candidate that ends the list, up to M = d rules
      (``max_rules=None``), and the paper's accountings. Its score rates a rule that
      fires on nothing as perfect, so it favours rare features and short lists end
      in the default label: it reaches 0.71 at ε = 1 on breast_cancer where the net
      cover reaches 0.91 (``benchmarks/decision_lists.py``). The paper's final
      default selection is replaced by the noisy counts.

    Parameters
    ----------
    epsilon : float, default=1.0
        ε of one ``fit``, or of one ``partial_fit`` stream (all its releases).
    delta : float, default=1e-6
        δ of one ``fit`` or stream. δ > 0 enables the tight (and, for ``algorithm="greedy_cover"``,
        EMCover) accounting; with δ = 0 only basic composition applies (pure ε-DP).
    max_rules : int, optional
        Rules before the default. ``None`` (default): for ``"net_cover"`` the release
        first spends 5 % of ε on noisy class counts; their total n̂ sets K, the largest K
        ≤ 64 for which the noisy row count n̂ gives every rule n̂/(K + 1) ≥ 2 times the
        selection noise width·ln(#candidates)/ε̂(K) (a :class:`UserWarning` at fit when
        not even one rule does); the paper's M = number of features for
        ``"greedy_cover"`` (each feature is used at most once). A given ``max_rules``
        is used as is (no count). Fewer rules give more ε per step. The counts'
        majority rate p̂ also raises the net score's λ to at least p̂/(1 − p̂), so that a
        rule covering every row never scores above 0 (``error_weight_``).
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
        Ignored with ``bounds`` (both "≤" and ">" literals are offered).
    accounting : {"auto", "tight", "emcover", "basic", "paper"}, default="auto"
        How ε is split over the K selections (K = min(max_rules, d) for
        ``"greedy_cover"``), each at ε̂, and the noisy counts at w·ε̂ (w = 1/2;
        w = 1 under the lift score with K ≥ 5 rules, see *Privacy*).
        ``"tight"``: the largest ε̂ for which K ε̂-bounded-range steps and the
        w·ε̂ discrete-Laplace histogram compose to (ε, δ) by the tight accountant
        (:func:`skdp.accounting.calibrate_plan`). ``"basic"``: ε/(K + w) per
        step, pure (ε, 0)-DP. ``"emcover"`` (``algorithm="greedy_cover"`` only, else
        ``ValueError``): Lemma 18 for the selections plus the histogram by basic
        composition, ε̂ = ε/(2(ln(1/δ) + 3/2) + 1/2) whatever K.
        ``"auto"`` (default): whichever valid proof gives more ε per step (basic
        unless another gains ≥ 1 %). ``"paper"``: for ``"greedy_cover"`` the larger of
        EMCover and basic (``"auto"`` before the tight accountant); for ``"net_cover"``
        basic composition (the prototype's). With δ = 0 basic composition is used
        (a ``PrivacyWarning`` says so if ``"emcover"`` or ``"tight"`` was asked).
    budget : PrivacyBudget, optional
        Ledger charged (ε, δ) — or (ε, 0) under basic composition — by each ``fit``
        and at the first call of a ``partial_fit`` stream. Copies (``clone``,
        ``deepcopy``, pickle) share it.
    random_state : None, int, numpy Generator, RandomState or TestingSeed, default=None
        ``None``: each release draws its noise from OS entropy and keeps nothing that
        could replay it, so a fitted list (after ``fit``) can be published. A seed is a
        testing mode: the noise is reproducible from ``get_params()`` (a
        :class:`~skdp.exceptions.PrivacyWarning` says so), refused with a ``budget``
        unless wrapped as ``skdp.TestingSeed(seed)``.
    binarize : float or None, default=0.0
        Without ``bounds``: features are binarized as ``x > binarize`` first (a
        public constant, costs no privacy), as ``BernoulliNB(binarize=0.0)`` does: 0/1 input passes
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
    bounds : (lower, upper), optional
        Public range of every feature (scalars or arrays of shape (n_features,), the
        ``bounds=`` convention of diffprivlib), from the data's documentation — never
        from the rows. Given, X is taken as raw numeric values (dense; NaN allowed:
        "missing") and the literals are "x_j ≤ t" / "x_j > t" for ``cuts`` public cut
        points t strictly inside each range, plus "x_j is missing" for *every* feature
        (which columns hold NaN is not public). Values outside the bounds are fine:
        they fire the outermost literals (nothing is clipped, the bounds only place
        the grid). ``binarize`` is then ignored.
    cuts : int or sequence, default=32
        Cut points per feature in ``bounds`` mode (1–254); or public cut points given
        outright (then ``bounds`` may be omitted; real-valued mode as above): a list of
        numbers for every feature, or one list per feature.
    cut_scale : {"linear", "log"} or sequence of those, default="linear"
        Where the ``cuts`` cut points sit: evenly spaced, or (``"log"``, for skewed
        quantities such as balances or incomes) geometric over three decades above
        the lower bound, lower + (upper − lower)·r with r from 10⁻³ to 1. One value
        for every feature or one per feature.
    rule_score : {"auto", "net", "lift"}, default="auto"
        The rule score of ``algorithm="net_cover"`` (above). ``"auto"``: ``"net"`` on
        0/1 input, ``"lift"`` with ``bounds``/``cuts`` lists — except on two classes
        when the automatic length (``max_rules=None``) allows at most four lift rules:
        such short lists use ``"net"`` (``rule_score_`` says which ran; chosen from the
        released row count, so it is post-processing).
    guard : float in (0, 1) or None, default=0.1
        Share of ε of ``partial_fit``'s private check against a constant: on every
        call after the stream's first, before its rows are learned, the released
        list's mistakes and the call's class counts are released with noise
        (``skdp.streams._guard``, as in
        :class:`~skdp.streams.ContinualReleaseClassifier`); the list answers unless
        the constant label with the most noisy rows made fewer noisy mistakes by more
        than 2 noise widths on some window of recent calls. The lists released after
        the first call's then run at ε·(1 − guard) (the first call's rows are never
        checked: its list keeps ε, and ``fit`` alone is unchanged). None: no check,
        every list at ε.

    Attributes
    ----------
    rules_ : list of tuples
        ``(feature index, sign, label)``: "if x[feature] == sign then label", in
        order (sign 0 only with ``negations=True``). With ``bounds``:
        ``(feature index, op, threshold, label)``, op one of ``"<="``, ``">"``,
        ``"missing"`` (threshold NaN).
    default_label_ : label
        Prediction when no rule fires (the argmax of the noisy counts).
    rule_class_counts_ : ndarray of int64 of shape (n_rules + 1, n_classes)
        The released noisy label counts of the rows each rule reaches first, one
        row per rule of ``rules_`` and a last row for the rows no rule fires on; may be negative.
    classes_ : ndarray
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string feature names.
    step_epsilon_ : float
        ε̂ of each exponential-mechanism step (each step is ε̂-bounded-range); the
        noisy counts are w·ε̂-DP (w = 1/2, or 1 under the lift score with K ≥ 5).
    accounting_ : str
        ``"tight"``, ``"emcover"`` or ``"basic"``: the theorem the guarantee rests on.
    n_selections_ : int
        Exponential-mechanism steps run in the last release.
    rule_score_ : str
        The score the last release used: ``"net"`` or ``"lift"`` (see ``rule_score``),
        ``"errors"`` for ``algorithm="greedy_cover"``.
    n_samples_estimate_ : int
        The released noisy row count that set the list's length (``max_rules=None``
        with ``"net_cover"`` only; may be off by a few tens of rows).
    error_weight_ : float
        λ of the last release's net score (``error_weight``, raised by the released
        majority rate with ``max_rules=None``).
    n_releases_ : int
        Lists released since the stream began (1 after ``fit``; ``partial_fit``
        adds one at calls 1, 3, 7, 15, …).
    privacy_spent_ : PrivacyCost
        (ε, δ) of the stream (``fit`` and every later ``partial_fit``).

    Privacy
    -------
    Neighbouring datasets differ by adding or removing one row (of weight ≤ 1:
    ``sample_weight`` is clipped to [0, 1]); the label set (``classes``), the
    number of features and K are public. Each release runs at most K selections
    whatever the data, each ε̂-bounded-range, then releases the (rule × class)
    counts with discrete Laplace noise, w·ε̂-DP (lemma in
    :mod:`skdp.decision_list._frequencies`: given the rules, a row moves one count
    by at most 1). The histogram's weight w is 1/2, or 1 under the lift score when
    K ≥ 5; it is a function of the parameters and K only (K is public, or
    post-processing of the released row count below), so every composition theorem
    used here is applied to a sequence of mechanisms fixed before the rule steps
    read a row: ε̂ is calibrated for K steps at ε̂ and one at w·ε̂ (basic:
    ε̂ = ε/(K + w); tight: ``PlanItem(DiscreteLaplace, 1, w)``), and the histogram
    is then drawn at exactly w·ε̂. It is (ε, δ)-DP by the tight accountant over these K + 1 steps,
    or (ε, 0)-DP by basic composition, or (for ``"greedy_cover"``) (ε, δ)-DP by
    EMCover plus basic composition. ``predict``, ``predict_proba`` and
    ``decision_function`` are post-processing of the released list and counts:
    they never learn and never spend. For replace-one neighbours (Bun & Fang's
    Definition 4) group privacy gives (2ε, (1 + e^ε)δ). A ``partial_fit`` stream
    is (ε, δ)-DP in all: its releases use disjoint rows on a schedule fixed by the
    number of calls (parallel composition; see :meth:`partial_fit`).

    *Net cover (practical variant).* Lemma: given the earlier selections, adding a
    row z changes the remaining rows by z at most, so every rule score moves by
    q′ − q ∈ [−λ, +1] (+1 for candidates that fire on z with z's label, −λ for those
    that fire on z with another, 0 for the rest; a weight-w row moves them by w
    times that). Rule steps sample ∝ exp(ε̂·q/(1 + λ)), so the log-likelihood
    ratio of the outcomes, (ε̂/(1 + λ))(q′ − q) − log(Z′/Z), spans an interval of
    width ≤ ε̂: each step is ε̂-bounded-range, hence ε̂-DP. The K steps and the
    counts compose adaptively (bounded-range and discrete-Laplace composition in
    the tight accountant, or basic). ∎ Bun & Fang's Lemma 18 (EMCover) is **not** claimed for
    this score: its proof needs scores that only fall when a row is added, and a
    row raises the net coverage of rules with its label (full argument in
    :mod:`skdp.decision_list._net_cover`). K depends on ε, d and C only, never n.

    *Lift score (``rule_score="lift"``).* Given the earlier selections, adding a
    remaining row of weight w ≤ 1 moves every candidate's score by a Δ in (−1, 1 − κ)
    (lemma in :func:`skdp.decision_list._net_cover.lift_selector`: the lift part
    a_b − p_b|a| moves by w(e − p_b)·g with |g| < 1, the κ part by −κ·w·[fires,
    other label]); steps sample ∝ exp(ε̂·q/(2 − κ)), so each is ε̂-bounded-range.

    *Threshold literals (``bounds``).* The literals are fixed by ``bounds``, ``cuts``
    and ``cut_scale`` and the number of features — public — so they are the same
    candidates under D and D′, each a function of one row; the lemmas above
    concern only the remaining rows and one row's effect on a candidate's counts,
    which do not depend on what the literal tests. The exponential mechanism's
    privacy does not depend on the number of candidates (its accuracy pays
    ln(#candidates)). After a rule "x_j ≤ t" the literals "x_j ≤ t′" (t′ ≤ t), which
    now fire on no remaining row, leave the candidates (likewise for ">"): the
    candidate set of a step is a function of the released rules and the grid, so
    the steps compose adaptively as before (a list that runs out of literals stops
    early, which only spends less). The regions (first firing rule) are still a
    function of each row alone, so the histogram lemma holds as is.

    *The histogram's weight under the lift score.* The lift score labels its rules
    by the noisy counts alone and its regions are small (rules isolating a rare
    class), so with many rules the counts carry ``predict_proba``'s ranking and
    deserve a larger share of ε; with one to four rules the selections carry the
    model. Measured at ε = 1 with ``bounds`` (40 splits, ROC AUC w = 1/2 → w(K)):
    fair 0.685 → 0.687, the 6 %-positive table 0.892 → 0.898, churn-like 0.737 →
    0.744, planted 0.931 → 0.933, breast_cancer (K = 2) and digits at ε = 1 (K = 4)
    unchanged; digits at ε = 4 (K = 12) 0.846 → 0.854, its accuracy 0.541 → 0.537
    (the one loss); a 3-class band table (ε = 8) 0.745 → 0.752. With w = 1 at every
    K, breast_cancer at ε = 0.5 (K = 1) fell 0.870 → 0.846.

    *Automatic length (``max_rules=None``).* The release first adds discrete Laplace
    noise at ε·0.05 to the per-class rounded sums of the clipped weights (a row moves
    one cell by at most 1: the histogram lemma with one region), then runs the K-rule
    release above at ε·0.95, K, the net score's λ and (``rule_score="auto"`` on two
    classes) the score itself functions of those released counts and public
    quantities: basic composition gives ε in all. The δ charged (tight accountant or
    not) is fixed from the longest list the count could allow (64, public) before any
    data is read; K and the score only pick ε̂ within that proof (each score's rule
    steps are ε̂-bounded-range by its own lemma above).

    *DP-GreedyCover.* Each score depends only on rows its candidate covers and
    falls by at most 1 when a row is added; the mechanism samples ∝ exp(ε̂·q)
    (``monotonic=True``, as Lemma 18's proof assumes), so each step is
    ε̂-bounded-range; K = min(max_rules, d). Checked against the paper: Lemma
    18's mechanism samples ∝ exp(ε̂·q) (not Prop 3's exp(ε̂·q/2)); its inequality
    1 + (e^ε̂ − 1)x ≤ e^{2ε̂x} needs ε̂ ≤ 1.2564 (capped); its bad event has
    probability ≤ δ by Lemma 19, whatever the number of steps. Constants: Lemma
    18's 2ε̂(ln(1/δ) + 3/2), the score, T and M = d are the paper's; the tight
    accountant, ``delta=1e-6`` and the noisy counts in place of the default step
    are practical choices.

    Notes
    -----
    Cost O(nnz(X) + K·d·C) plus K exponential-mechanism draws over at most
    2d·C candidates and (K + 1)·C discrete Laplace draws; sparse CSR input is used
    as is. With ``bounds``: O(n·d) binning and one (feature × bin × class)
    histogram pass, then per rule a histogram of the rows it removes and
    O(d·cuts·C) scores: O(n·d + K·d·cuts·C) in all (one pass over the rows for
    counting; :func:`skdp.decision_list._thresholds.class_histogram` is the
    per-block count, summed over blocks). DP-GreedyCover's utility
    guarantee (Thm 7) needs n of order M·log M·log(1/δ)/(αε) rows.

    The streaming buffer of ``partial_fit`` holds the raw rows of the chunk not
    released yet (a decision list is a batch model); a pickled estimator in
    streaming mode therefore contains them. ``fit`` keeps no rows.

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
    >>> clf = DPDecisionListClassifier(epsilon=1.0, max_rules=2, classes=[0, 1],
    ...                                random_state=0).fit(X, y)
    >>> len(clf.rules_), clf.accounting_, round(clf.step_epsilon_, 3)
    (2, 'basic', 0.4)
    >>> print(clf.export_text())
    if x0 then 1
    elif x3 then 0
    else 1
    >>> paper = DPDecisionListClassifier(epsilon=4.0, algorithm="greedy_cover",
    ...                                  max_rules=3,
    ...                                  classes=[0, 1], random_state=0).fit(X, y)
    >>> paper.accounting_, round(paper.step_epsilon_, 3)
    ('basic', 1.143)
    >>> clf.predict_proba([[1, 0, 0, 1, 0], [0, 0, 0, 1, 0]]).round(2)
    array([[0., 1.],
           [1., 0.]])

    Raw real values with public bounds (no binarizer), NaN allowed:

    >>> income = rng.uniform(0, 100, 3000)
    >>> income[rng.random(3000) < 0.05] = np.nan
    >>> Xr = np.c_[income, rng.uniform(18, 90, 3000)]
    >>> yr = ((income > 60) | np.isnan(income)).astype(int)
    >>> real = DPDecisionListClassifier(epsilon=1.0, bounds=([0, 18], [100, 90]),
    ...                                 classes=[0, 1], random_state=0).fit(Xr, yr)
    >>> print(real.export_text(["income", "age"]).splitlines()[0])
    if income <= 60.6061 then 0
    >>> real.predict([[70.0, 30.0], [np.nan, 40.0], [10.0, 50.0]])
    array([1, 1, 0])
    """

    #: NaN advice of skdp._input.missing_values_error (0/1 mode refuses NaN)
    _missing_values_alternative = ("Or give public bounds=: the real-valued mode reads a "
                                   "missing value as information ('x_j is missing' rules).")

    _parameter_constraints: dict = {
        **_DecisionListBase._parameter_constraints,
        "epsilon": "no_validation",  # checked by check_epsilon (PrivacyParameterError)
        "delta": "no_validation",
        "accounting": [StrOptions(set(ACCOUNTINGS))],
        "budget": [PrivacyBudget, None],
        "random_state": [*RANDOM_STATE_CONSTRAINT],
        "classes": ["array-like", None],
        "bounds": "no_validation",  # checked by make_grid (shapes, finite, lower < upper)
        "cuts": [Interval(numbers.Integral, 1, 254, closed="both"), "array-like"],
        "cut_scale": [StrOptions({"linear", "log"}), "array-like"],
        "rule_score": [StrOptions({"auto", "net", "lift"})],
        "guard": [Interval(numbers.Real, 0, 1, closed="neither"), None],
    }

    #: The guard's record of checks (the audit's twins substitute a subclass).
    _guard_class = ConstantGuard

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        *,
        max_rules: int | None = None,
        algorithm: str = "net_cover",
        error_weight: float = 1.5,
        negations: bool = False,
        accounting: str = "auto",
        budget: PrivacyBudget | None = None,
        random_state: int | np.random.Generator | np.random.RandomState | None = None,
        binarize: float | None = 0.0,
        classes: ArrayLike | None = None,
        bounds: tuple | None = None,
        cuts: int | ArrayLike = 32,
        cut_scale: str | ArrayLike = "linear",
        rule_score: str = "auto",
        guard: float | None = 0.1,
    ) -> None:
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
        self.bounds = bounds
        self.cuts = cuts
        self.cut_scale = cut_scale
        self.rule_score = rule_score
        self.guard = guard

    def _score(self):
        if self.rule_score == "auto":
            return _AUTO_SCORE[self._real_valued()]
        return self.rule_score

    def _auto_length(self):
        """Whether the list's length comes from a noisy row count (``max_rules=None``)."""
        return self.algorithm == "net_cover" and self.max_rules is None

    def _n_literals(self, n_features):
        """Literals a rule step chooses from (public): grid literals, or d (2d with ¬x)."""
        if self._real_valued():
            return self._grid.n_literals
        return n_features

    def _n_rules(self, epsilon, n_features):
        """Rules of a release: at most MAX_AUTO_RULES (fewer by the noisy count) for the
        net cover's automatic length, else ``max_rules`` or the paper's M."""
        n_lit = self._n_literals(n_features)
        if self._auto_length():
            return min(MAX_AUTO_RULES, n_lit)
        return n_lit if self.max_rules is None else min(self.max_rules, n_lit)

    def _plan(self, epsilon, delta, n_features):
        """The :class:`_Plan` of a release on n_features features.

        Automatic length: ε·COUNT_SHARE pays the noisy row count and the rest the list;
        whether δ is charged is decided here from the longest list the count could
        allow (public), so the charge never depends on the data.
        """
        if self._auto_length():
            rest = epsilon * (1.0 - COUNT_SHARE)
            _, method, charged = self._step_plan(rest, delta, self._n_rules(epsilon,
                                                                            n_features) + 1)
            return _Plan(None, method, charged, epsilon)
        step, method, charged = self._step_plan(epsilon, delta,
                                                self._n_rules(epsilon, n_features) + 1)
        return _Plan(step, method, charged, epsilon)

    def _step_plan(self, epsilon, delta, n_steps):
        """(ε̂, theorem, δ charged) of n_steps steps (rule selections + the histogram)."""
        w = self._histogram_weight(n_steps - 1)
        if self.algorithm == "net_cover" and self.accounting == "emcover":
            net_step_plan(epsilon, delta, n_steps, self.accounting)  # raises: not proved
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
        if self.algorithm == "net_cover":
            return net_step_plan(epsilon, delta, n_steps, self.accounting, w)
        return step_plan(epsilon, delta, n_steps, self.accounting, histogram_weight=w)

    def _histogram_weight(self, n_rules, score=None):
        """w: the noisy histogram runs at w·ε̂ — 1 under the lift score with K ≥ 5 rules
        (``_LIFT_WEIGHT_MIN_RULES``), else 1/2 (the class docstring's *Privacy* section:
        why and what it measured).

        A function of the parameters, of K and of the score (public, or post-processing
        of the released row count), so each release's plan is fixed before its rule
        steps read a row. ``score``: the release's (:meth:`_short_list_score`), else the
        parameter's.
        """
        score = self._score() if score is None else score
        if (self.algorithm == "net_cover" and score == "lift"
                and n_rules >= _LIFT_WEIGHT_MIN_RULES):
            return LIFT_HISTOGRAM_WEIGHT
        return HISTOGRAM_WEIGHT

    def _selector(self, step_epsilon, rng):
        if self.algorithm == "greedy_cover":
            return errors_selector(step_epsilon, rng)
        if self._release_score == "lift":
            return lift_selector(step_epsilon, rng)
        return net_selector(step_epsilon, self._release_error_weight, rng)

    def _cover_options(self):
        options = super()._cover_options()
        if self.algorithm == "net_cover":
            options["score"] = self._release_score
            options["error_weight"] = self._release_error_weight
        return options

    def _net_weight(self, noisy_class_counts):
        """λ of this release's net score: ``error_weight``, raised so that a rule must be
        right on more than θ = p̂ of its rows, p̂ the released majority rate (a rule
        covering everything then scores ≤ 0). λ = max(error_weight, θ/(1 − θ)), θ ≤ 0.99;
        post-processing of the released class counts.

        Measured at ε = 1 with ``bounds`` and ``rule_score="net"`` (3-fold × 3): ROC AUC
        0.79 → 0.89 on a 5 %-positive table and 0.53 → 0.72 on a churn-like one, where
        a fixed λ = 1.5 lets one rule covering every row win; breast cancer through the
        binarizer 0.896 → 0.890 (8 seeds), the planted 0/1 list 0.976 → 0.974. With
        θ = p̂ + 0.2(1 − p̂) instead, breast cancer fell to 0.82."""
        lam = float(self.error_weight)
        total = noisy_class_counts.sum()
        if not ADAPTIVE_NET or total <= 0:
            return lam
        p = noisy_class_counts.max() / total
        theta = min(p, 0.99)
        return max(lam, theta / (1.0 - theta))

    def _release_length(self, class_units, unit, n_features, rng):
        """(K, ε̂) of a release: fixed by the plan, or from a noisy row count.

        The count (the rows' clipped weights, rounded to whole rows) is released with
        discrete Laplace noise at ε·COUNT_SHARE (sensitivity 1: the lemma of
        :mod:`._frequencies` with a single cell); K and ε̂ are post-processing of it and
        of public quantities (:func:`auto_n_rules`), so the release is the count's
        ε·COUNT_SHARE plus the list's plan at ε·(1 − COUNT_SHARE) (basic composition).
        """
        plan = self._release_plan
        if plan.step is not None:
            return self._n_rules(plan.epsilon, n_features), plan.step
        noisy = np.maximum(release_counts(np.asarray(class_units, np.int64)[None, :], unit,
                                          plan.epsilon * COUNT_SHARE, rng)[0], 0)
        n_hat = int(noisy.sum())
        self._release_error_weight = self._net_weight(noisy)
        self.error_weight_ = self._release_error_weight
        rest = plan.epsilon * (1.0 - COUNT_SHARE)
        # The theorem and δ were fixed (and charged) by the plan; only K is chosen here.
        proof, delta = ("tight", plan.delta) if plan.method == "tight" else ("basic", 0.0)

        def step(k):
            return net_step_plan(rest, delta, k + 1, proof,
                                 self._histogram_weight(k, self._release_score))[0]

        n_cand = self._n_literals(n_features) * self.classes_.size

        def length():
            width = score_width(self._release_score, self._release_error_weight)
            # ε̂(K) ≥ basic composition's split under either proof (net_step_plan).
            return width, auto_n_rules(
                n_hat, n_cand, width, step, self._n_rules(plan.epsilon, n_features),
                step_floor=lambda k: basic_step_epsilon(
                    rest, k + 1, self._histogram_weight(k, self._release_score)))

        width, k = length()
        if self._short_list_score(k) != self._release_score:
            self._release_score = self._short_list_score(k)
            width, k = length()
        self.n_samples_estimate_ = n_hat
        if k == 0:
            need = ROWS_PER_NOISE * 2 * width * np.log(n_cand) / step(1)
            warnings.warn(
                f"{type(self).__name__}: about {max(n_hat, 0)} rows (a noisy count) are "
                f"too few for a rule list at epsilon={plan.epsilon:g}: a rule stands out of "
                f"the selection noise with about {need:.0f} rows or more. The list has one "
                "rule and may predict a single class; give more rows or a larger "
                "epsilon.", UserWarning, stacklevel=4)
            k = 1
        return k, step(k)

    def _label_prior(self, histogram_epsilon):
        """Pseudo-counts the noisy histogram gives each rule's selected label.

        Three noise scales, 3/ε_h, under the net and errors scores: they favour rules
        right on most of what they cover (net: a rule scores above 0 only if right on
        more than λ/(1 + λ) ≥ 1/2 of it), so the selected label is meant to be its
        region's majority and the prior keeps noise from flipping a small region.
        None under the lift score: its label is the one whose rate the rule raises most
        above the base rate (a rule taking a 5 % class to 30 % scores for that class),
        not the region's majority, and the prior pulled such regions to the wrong label.
        Measured at ε = 1 with ``bounds`` (20 splits, accuracy with / without the prior):
        breast_cancer 0.885 / 0.888, fair 0.708 / 0.711, a 6 %-positive table 0.942 /
        0.945, churn-like 0.786 / 0.789, planted 0.920 / 0.922, ROC AUC within 0.002;
        digits (ε = 4) 0.551 both; a 3-class band table (ε = 8) 0.583 / 0.609. On 0/1
        input with the net score the prior helps (breast_cancer 0.915 → 0.923).
        Post-processing of the released counts either way.
        """
        if self.algorithm == "net_cover" and self._release_score == "lift":
            return 0.0
        return 3.0 / histogram_epsilon

    def _short_list_score(self, n_rules):
        """The score of an automatic-length release with ``rule_score="auto"``: net
        instead of lift on two classes when the released count allows at most
        ``_NET_MAX_RULES`` rules (post-processing of that count, like K itself).

        With a few rules the list cannot isolate a rare class rule by rule; large, pure
        rules do better. Measured with ``bounds`` (40 splits, ROC AUC / accuracy,
        before → after): breast_cancer (398 rows) 0.893 / 0.887 → 0.911 / 0.903 at
        ε = 1 (K = 2), 0.912 / 0.892 → 0.916 / 0.910 at ε = 2 (K = 4), 0.870 / 0.874 →
        0.877 / 0.877 at ε = 0.5 (K = 1); the other development tables have longer
        lists and are unchanged. On samples of 600 training rows (12–20 splits, lift →
        net): at ε = 1 (lift K ≈ 3–4) fair 0.602 → 0.647, the 6 %-positive table
        0.504 → 0.904 (lift's few rules barely rank), churn 0.679 → 0.685, the planted
        list 0.807 → 0.711 (the loss); at ε = 0.5 fair 0.587 → 0.630, the 6 %-positive
        table 0.519 → 0.777, churn 0.640 → 0.677, planted 0.676 → 0.627. A bound of 2
        rules instead of 4 left breast_cancer at ε = 2 and the 600-row samples at ε = 1
        on lift. Multiclass keeps lift (digits at ε = 0.5: 0.592 with lift, 0.503 with
        net).
        """
        if (self.rule_score == "auto" and self._release_score == "lift"
                and self.classes_.size == 2 and n_rules <= _NET_MAX_RULES):
            return "net"
        return self._release_score

    def _release_counts(self, counts, unit, step_epsilon, rng):
        """The noisy (rule × class) histogram (lemma in :mod:`._frequencies`)."""
        return release_counts(counts, unit, step_epsilon, rng)

    def _release(self, X, codes, w, rng):
        """One release on its rows: [the noisy row count,] the cover's rule steps, then
        the noisy histogram."""
        weights, unit = self._weights(w, private=True)
        self._release_error_weight = self.error_weight_ = float(self.error_weight)
        C = self.classes_.size
        if isinstance(X, DaskRows):
            class_units = X.start()[0].sum(axis=0)
        else:
            class_units = np.bincount(codes, minlength=C, weights=None if weights is None
                                      else weights.astype(np.float64)).astype(np.int64)
        self._release_score = self._score()
        n_rules, step = self._release_length(class_units, unit, X.shape[1], rng)
        self.step_epsilon_ = step
        self.rule_score_ = (self._release_score if self.algorithm == "net_cover"
                            else "errors")
        C = self.classes_.size
        select = self._selector(step, rng)
        if self._real_valued():
            options = self._cover_options()
            rows = X if isinstance(X, DaskRows) else ArrayRows(X, codes, self._grid, C,
                                                                weights)
            literals, labels, n_steps, counts = threshold_cover(
                rows, C, self._grid, max_rules=n_rules, select=select,
                scorer=lambda block, totals: rule_scores(
                    block, totals, options["score"], options.get("error_weight", 1.0), unit))
            selected = np.r_[labels, -1]
        else:
            result = greedy_cover(X, codes, C, max_rules=n_rules, select=select,
                                  weights=weights, unit=unit, **self._cover_options())
            counts = region_counts(X, codes, C, result.features, result.signs, weights)
            selected = np.r_[result.labels, result.default]  # default −1 unless T ended it
        eps_h = self._histogram_weight(n_rules, self._release_score) * step
        noisy = self._release_counts(counts, unit, eps_h, rng)
        proba = smoothed_proba(noisy, selected, self._label_prior(eps_h))
        if self._real_valued():
            self._set_threshold_list(literals, noisy, proba, n_steps)
        else:
            self._set_list(result, noisy, proba)
        self.n_releases_ = getattr(self, "n_releases_", 0) + 1

    def _private_run(self, X, codes, w=None):
        """Open a stream, charge its plan, then run its first release. Unchanged if unpaid.

        The charge advances the stream record (a stale copy is refused before anything
        is charged). Each release draws its noise when it runs (see :meth:`_release_rng`)
        and keeps nothing that could regenerate it.
        """
        epsilon, delta = self._check_privacy_params()
        plan = self._plan(epsilon, delta, X.shape[1])
        self._noise_key = self._open_paid_stream(epsilon, plan.delta,
                                                 f"decision list ({plan.method})")
        self._release_plan = plan
        self.accounting_ = plan.method
        self.n_releases_ = 0
        self._release(X, codes, w, self._release_rng())

    def _release_rng(self):
        """The noise of the next release: OS entropy drawn now and dropped after the
        release (the fitted list holds no generator or key that could replay it). In
        seeded testing mode: the seed, the stream's charge ``seq`` and the release's
        number."""
        return self._release_generator(self._noise_key, self.n_releases_)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Learn the list privately from X and labels y; charges one release.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Features, binarized as ``x > binarize`` (0/1 input passes through).
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Row weights, **clipped to [0, 1]**: a row counts as at most one row, so
            the privacy argument is unchanged (a weight of 3 is *not* three copies).

        Returns
        -------
        self

        Raises
        ------
        BudgetExhaustedError
            If ``budget`` cannot pay for the release; the estimator is unchanged.
        """
        self._check_privacy_params()
        if is_dask_collection(X) or is_dask_collection(y):
            return self._fit_dask(X, y, sample_weight)
        with unchanged_if_unpaid(self):
            X, classes, codes, w = self._validate_block(X, y, sample_weight, partial=False)
            self.classes_ = classes
            self._clear_stream()
            self._private_run(X, codes, w)
        self._start_blocks()
        return self

    def _fit_dask(self, X, y, sample_weight):
        """``fit`` on a dask array/dataframe: count passes run on the cluster (module
        :mod:`._dask`); validation is the first pass, before the charge."""
        if not self._real_valued() or self.classes is None or sample_weight is not None:
            raise ValueError(
                f"{type(self).__name__}.fit on a dask collection needs bounds= (or cut "
                "lists), the public classes= and no sample_weight.")
        if self.algorithm != "net_cover":
            raise ValueError("algorithm='greedy_cover' takes 0/1 input, not dask collections.")
        classes = np.unique(np.asarray(self.classes))
        with unchanged_if_unpaid(self):
            for name in ("feature_names_in_",):
                self.__dict__.pop(name, None)
            rows = DaskRows(X, y, None, classes)
            self.n_features_in_ = rows.shape[1]
            self._grid = rows.grid = make_grid(self.bounds, self.cuts, self.cut_scale,
                                               rows.shape[1])
            rows.prepare()
            self.classes_ = classes
            self._clear_stream()
            self._private_run(rows, None, None)
        self._start_blocks()
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X: ArrayLike, y: ArrayLike, classes: ArrayLike | None = None,
                    sample_weight: ArrayLike | None = None) -> Self:
        """Learn from a block of rows: the list is released here, on a public schedule.

        The calls of a stream (``fit`` counts as its first call) are numbered
        t = 1, 2, 3, …; the rows are buffered and, at the end of every call
        t = 2^j − 1 (t = 1, 3, 7, 15, …), a new list is learned from the rows of
        calls 2^(j−1) … 2^j − 1 only and replaces the released one. The first call
        of a stream pays (ε, δ) to ``budget``; the later releases cost nothing more
        by parallel composition: each row is used by exactly one release, the
        schedule depends only on the number of calls (public), and every release is
        (ε, δ)-DP on its own rows given the earlier outputs. ``predict`` and
        ``predict_proba`` only read the released list: they never learn or spend, so
        predicting before every learning call (progressive validation) costs nothing.
        With ``guard`` = g, every call after the first is first *checked*: the
        released list's mistakes on the call's rows and the call's C class counts are
        released with discrete Laplace noise of scale 2/(g·ε) (given the past outputs
        the list is fixed, and a row moves the mistake count by at most 1 and one
        class count by 1: L1 sensitivity 2, so the check is g·ε-DP), and the lists
        released from checked rows run at ((1 − g)·ε, δ). A row of a later call
        enters exactly one check and one release, whose adaptive composition is
        (ε, δ); a row of the first call enters its release only, at (ε, δ). Which
        calls are checked and which form a block depend on the call count only, so
        the disjoint-blocks argument above is unchanged. ``predict`` answers with
        the constant label of the most noisy rows when, on some window of recent
        checks, it made fewer noisy mistakes than the list by more than 2 noise
        widths (``skdp.streams._guard.ConstantGuard.choice``): post-processing.
        Audited exactly (``tests/privacy/test_continual_release_guard_audit.py``).
        Measured prequentially (``benchmarks/streams.py``, 3 seeds) on fair in file
        order (6,366 rows sorted by the label, chunks of 1,000; best constant 0.196):
        0.470 error without the guard, 0.177 with it (ε = 1; 0.476 → 0.176 at ε = 4).

        This is the continual release of :mod:`skdp.streams` with doubling blocks from
        one call and no cap, the latest list answering (the estimator holds the same
        running schedule, buffer and guard: ``skdp.streams._blocks.ReleaseBlocks``,
        ``skdp.streams._guard.ConstantGuard``); wrap the list in
        :class:`~skdp.streams.ContinualReleaseClassifier` for capped blocks, a
        combination of the lists and a schedule that restarts after a change.

        A row passed twice (in two calls, or in ``fit`` and ``partial_fit``) counts as
        two rows: its owner then has the guarantee of a group of two (2ε).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like, optional
            All labels; required on the first call unless the ``classes`` parameter
            gives them.
        sample_weight : array-like of shape (n_samples,), optional
            As in ``fit`` (clipped to [0, 1]).

        Returns
        -------
        self

        Raises
        ------
        BudgetExhaustedError
            On the first call of a stream, if ``budget`` cannot pay; the estimator
            is unchanged.
        """
        self._check_privacy_params()
        X, found, codes, w = self._validate_block(X, y, sample_weight, classes, partial=True)
        if w is None:
            w = np.ones(codes.size)
        if not hasattr(self, "_stream"):
            with unchanged_if_unpaid(self):
                self.classes_ = found
                self._private_run(X, codes, w)
            self._start_blocks()
            return self
        # Compare-and-swap first: a stale copy is refused before its state changes.
        self._advance_stream()
        self._check(X, codes)
        if self._blocks.add(X, codes, w):  # t = 2^j − 1: release the block's rows
            rows, block_codes, block_w = self._blocks.rows()
            self._use_guarded_plan()
            try:
                self._release(rows, block_codes, block_w, self._release_rng())
            except Exception:
                self._blocks.undo()
                raise
            self._blocks.close()
        return self

    def _released_codes(self, X):
        """The released list's class codes on validated rows (no constant)."""
        return self._region_codes()[self._regions_of(X)]

    def _check(self, X, codes):
        """The guard's check of this call's rows before they are buffered: the released
        list's mistakes and the class counts, with noise at ε·guard; then the answer
        (the list or a constant) chosen from the noisy counts only."""
        if self._guard is None:
            return
        mistakes = np.count_nonzero(self._released_codes(X) != codes)
        counts = np.bincount(codes, minlength=self.classes_.size)
        rng = self._release_generator(self._noise_key, CHECK_INDEX + self._guard.n_checks)
        self._guard.check(np.array([mistakes]), counts, rng)
        self._choice = self._guard.choice()

    def _use_guarded_plan(self):
        """Releases of checked rows run at ε·(1 − guard): the plan, recalibrated once
        per stream, with at most the δ the stream was charged."""
        if self._guard is None or getattr(self, "_guarded_plan", False):
            return
        plan = self._release_plan
        # The share fixed when the stream opened (a later set_params does not move it).
        epsilon = plan.epsilon - self._guard.epsilon
        self._release_plan = self._plan(epsilon, plan.delta, self.n_features_in_)
        if self._release_plan.delta > plan.delta:  # never more δ than was charged
            self._release_plan = self._plan(epsilon, 0.0, self.n_features_in_)
        self._guarded_plan = True

    def _constant(self):
        """The class index answering instead of the list, or None."""
        kind, index = getattr(self, "_choice", ("model", 0))
        return index if kind == "constant" else None

    def _predict_rows_key(self):
        # A list answering with the guard's constant predicts through predict_proba.
        return None if self._constant() is not None else super()._predict_rows_key()

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Label of the first rule whose literal holds on each row (else the default),
        or the guard's constant when the stream's check chose it (``guard``).

        Post-processing of the released list and checks: never learns, never spends.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        labels = super().predict(X)
        constant = self._constant()
        return labels if constant is None else np.full_like(labels,
                                                            self.classes_[constant])

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Class frequencies of each row's region, or a point mass on the guard's
        constant when the stream's check chose it. Post-processing: never spends.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        proba = super().predict_proba(X)
        constant = self._constant()
        if constant is None:
            return proba
        return constant_proba(proba.shape[0], proba.shape[1], constant)

    def _start_blocks(self):
        """The stream's running release (the continual-release schedule of
        :mod:`skdp.streams`: doubling blocks of 1, 2, 4, … calls, no cap); the call
        that opened the stream was its first block, released from its own rows."""
        self._blocks = ReleaseBlocks("doubling", 1, None)
        self._blocks.released_call()
        self._guard = None if self.guard is None else self._guard_class(
            self._release_plan.epsilon * self.guard, 1, self.classes_.size)
        self._choice = ("model", 0)

    def _clear_stream(self):
        for name in ("_blocks", "_stream", "_noise_key", "_guard", "_choice",
                     "_guarded_plan"):
            self.__dict__.pop(name, None)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = True
        tags.classifier_tags.poor_score = True
        if self.bounds is not None or not isinstance(self.cuts, numbers.Integral):
            # Real-valued mode: dense numeric X, NaN read as "x_j is missing".
            tags.input_tags.sparse = False
            tags.input_tags.allow_nan = True
        return tags
