"""Decision lists: Rivest's greedy cover and Bun & Fang's DP-GreedyCover.

* :class:`GreedyDecisionListClassifier` — non-private greedy cover (Rivest 1987).
* :class:`DPDecisionListClassifier` — DP-GreedyCover (Bun & Fang, Alg 1), private by
  the tight accountant (bounded-range steps), EMCover (Lemma 18) or basic composition.
* :class:`ConjunctionFeatures` — all conjunctions of ≤ k literals, to learn
  k-decision lists with either classifier.

The estimators need binary (0/1) features: put
:class:`skdp.preprocessing.PublicBoundsBinarizer` in front of real-valued data.
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
