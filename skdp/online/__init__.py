"""Online learning of Littlestone classes.

* :class:`SOAClassifier` — the non-private Standard Optimal Algorithm (Littlestone 1988),
  the mistake-bound ceiling the private learners are compared with;
* :class:`MistakeBoundedLearner` — the protocol of the deterministic mistake-bounded base
  learner the private learners accept, implemented by :class:`SOALearner`;
* adversaries (oblivious and adaptive) and :func:`run_online`, which returns mistake curves.
"""

from ._adversaries import (
    AdaptiveFiniteAdversary,
    AdaptivePointAdversary,
    AdaptiveThresholdAdversary,
    ObliviousAdversary,
    run_online,
)
from ._soa import MistakeBoundedLearner, SOAClassifier, SOALearner, first_disagreement

__all__ = [
    "AdaptiveFiniteAdversary",
    "AdaptivePointAdversary",
    "AdaptiveThresholdAdversary",
    "MistakeBoundedLearner",
    "ObliviousAdversary",
    "SOAClassifier",
    "SOALearner",
    "first_disagreement",
    "run_online",
]
