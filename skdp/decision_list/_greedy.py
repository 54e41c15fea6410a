"""GreedyDecisionListClassifier: the non-private greedy decision list."""

import numpy as np
from sklearn.base import _fit_context

from ._base import _DecisionListBase
from ._greedy_cover import greedy_cover

__all__ = ["GreedyDecisionListClassifier"]


class GreedyDecisionListClassifier(_DecisionListBase):
    """Non-private greedy decision list (Rivest 1987): the ceiling for the DP version.

    The same incremental greedy cover as :class:`DPDecisionListClassifier`, with the
    exponential mechanism replaced by the argmax. Rows a rule fires on are removed.

    * ``algorithm="net_cover"`` (default): each step takes the rule "if ℓ then b" (ℓ = x_f,
      or also ¬x_f with ``negations=True``) with the largest
      q(ℓ, b) = #{remaining rows ℓ covers with label b}
      − λ·#{remaining rows ℓ covers with another label}, λ = ``error_weight``
      (ties: the rule covering more rows, then the first). Rules may be impure, so
      noisy data gets a list rather than the majority class. The list stops when no
      rule has q > 0 (none is right on more than λ/(1 + λ) of the rows it covers),
      when every row is covered, or at ``max_rules``.
    * ``algorithm="greedy_cover"`` (Rivest's and Bun & Fang's score):
      q(f, b) = −#{remaining rows with f(x) = 1 and label ≠ b}, among rules that
      fire on at least one remaining row (ties as above); the constant-true rule T
      competes at every step and ends the list when chosen. The list stops when
      every row is covered or at ``max_rules``. Only pure rules come first, so on
      noisy data the list often ends in the majority class.

    The default is then the majority label of the rows left (of all rows if none
    are left).

    Parameters
    ----------
    max_rules : int, optional
        At most this many rules before the default; ``None`` (default) allows one
        per feature, as in the paper.
    algorithm : {"net_cover", "greedy_cover"}, default="net_cover"
        The rule score and stopping rule (above).
    error_weight : float, default=1.5
        λ ≥ 1 of the net-coverage score: how much a misclassified covered row costs
        against a correctly classified one (1 is plain net coverage).
    negations : bool, default=False
        With ``algorithm="net_cover"``, also offer rules on ¬x_f ("x_f == 0"). Off by
        default: on planted lists of positive literals, broad negated rules win
        the early steps and block the true rules (benchmarks/decision_lists.py).
    binarize : float or None, default=0.0
        Features are binarized as ``x > binarize`` first, like
        ``BernoulliNB(binarize=0.0)`` (0/1 input passes through unchanged). ``None``:
        the input must already be 0/1 (see
        :class:`skdp.preprocessing.PublicBoundsBinarizer`).

    Attributes
    ----------
    rules_ : list of (int, int, label) tuples
        ``(feature index, sign, label)``: "if x[feature] == sign then label", in
        order (sign 0 only with ``negations=True``).
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
    >>> X1, y1 = [[1], [1], [0], [0], [0]], ["a", "a", "b", "b", "b"]
    >>> print(GreedyDecisionListClassifier(negations=True).fit(X1, y1).export_text())
    if ~x0 then b
    else a
    """

    _parameter_constraints: dict = {**_DecisionListBase._parameter_constraints}

    def __init__(self, max_rules=None, *, algorithm="net_cover", error_weight=1.5, negations=False,
                 binarize=0.0):
        self.max_rules = max_rules
        self.algorithm = algorithm
        self.error_weight = error_weight
        self.negations = negations
        self.binarize = binarize

    def _run(self, X, codes):
        n_classes = self.classes_.size
        overall = np.bincount(codes, minlength=n_classes) if codes.size else np.zeros(n_classes)

        net = self.algorithm == "net_cover"

        def select(scores, coverage, is_default):
            if is_default:
                if coverage[0] == 0:  # nothing left: fall back to the overall majority
                    return int(np.argmax(overall))
                return int(np.argmax(scores))
            usable = coverage > 0
            if net:
                usable &= scores > 0
                if not usable.any():
                    return -1  # no rule is right on enough of what it covers: stop
            # lexicographic (score, coverage) max among usable candidates, first on ties
            scores = np.where(usable, scores, -np.inf)
            best = scores == scores.max()
            return int(np.argmax(np.where(best, coverage, -1)))

        result = greedy_cover(
            X, codes, n_classes, max_rules=self._n_rules_cap(X.shape[1]), select=select,
            stop_when_empty=True, **self._cover_options(),
        )
        self._set_list(result)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Learn the list from X and labels y.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Features, binarized as ``x > binarize`` (0/1 input passes through).
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


