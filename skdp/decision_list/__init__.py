"""Decision lists: Rivest's greedy cover and Bun & Fang's DP-GreedyCover.

* :class:`GreedyDecisionListClassifier` — non-private greedy cover (Rivest 1987).
* :class:`DPDecisionListClassifier` — DP-GreedyCover (Bun & Fang, Alg 1), private by
  the tight accountant (bounded-range steps), EMCover (Lemma 18) or basic composition.
* :class:`ConjunctionFeatures` — all conjunctions of ≤ k literals, to learn
  k-decision lists with either classifier.

The estimators binarize their input as ``x > binarize`` (a public constant, 0.0 by
default, as ``BernoulliNB``). The private list also takes raw real values with public
``bounds=(lower, upper)``: its rules then test "x_j ≤ t", "x_j > t" and "x_j is
missing" over a public grid of cuts (:mod:`._thresholds`); or put
:class:`skdp.preprocessing.PublicBoundsBinarizer` with public thresholds in front.
Both classifiers predict probabilities (the label frequencies of the rows each rule
reaches first; noisy and charged at fit for the private list) and take
``sample_weight`` (clipped to [0, 1] for the private list).
"""

from ._accounting import emcover_step_epsilon
from ._conjunctions import ConjunctionFeatures
from ._greedy import GreedyDecisionListClassifier
from ._private import DPDecisionListClassifier

__all__ = [
    "ConjunctionFeatures",
    "DPDecisionListClassifier",
    "GreedyDecisionListClassifier",
    "emcover_step_epsilon",
]
