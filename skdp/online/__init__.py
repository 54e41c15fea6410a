"""Private online learning of Littlestone classes, realizable and agnostic.

Private learners (each (ε, δ)-DP with respect to the whole stream, caps enforced):

* :class:`DPSOAClassifier` — DP-SOA with HistSparse (Golowich & Livni 2021), and its
  re-run variant for adaptive adversaries;
* :class:`AdaptivePrivateOnlineClassifier` — the O_d(log T) learner against an adaptive
  adversary (Li, Wang & Ye 2024, Alg. 1–2);
* :class:`BatchSanitizedOnlineClassifier` and :class:`PrivateExpertsClassifier` — the
  agnostic learners of Li, Wang & Ye §4 (batch-and-sanitize; private experts), with the
  :class:`Sanitizer` interface and two histogram sanitizers.

Non-private ceiling and tooling:

* :class:`SOAClassifier` — the Standard Optimal Algorithm (Littlestone 1988);
* :class:`MistakeBoundedLearner` — the protocol of the deterministic mistake-bounded base
  learner the private learners accept, implemented by :class:`SOALearner`;
* adversaries (oblivious and adaptive), :class:`NoisyLabels`, and :func:`run_online`,
  which returns mistake curves.
"""

from ._adaptive import AdaptivePrivateOnlineClassifier
from ._adversaries import (
    AdaptiveFiniteAdversary,
    AdaptivePointAdversary,
    AdaptiveThresholdAdversary,
    ObliviousAdversary,
    random_finite_class,
    run_online,
)
from ._batch_sanitized import BatchSanitizedOnlineClassifier
from ._dp_soa import DPSOAClassifier, DPSOAParameters
from ._experts import PrivateExpertsClassifier
from ._noisy import NoisyLabels
from ._sanitizers import HistogramSanitizer, Sanitizer, StableHistogramSanitizer
from ._seeking_adversary import MistakeSeekingAdversary
from ._soa import MistakeBoundedLearner, SOAClassifier, SOALearner, first_disagreement

__all__ = [
    "AdaptiveFiniteAdversary",
    "AdaptivePointAdversary",
    "AdaptivePrivateOnlineClassifier",
    "AdaptiveThresholdAdversary",
    "BatchSanitizedOnlineClassifier",
    "DPSOAClassifier",
    "DPSOAParameters",
    "HistogramSanitizer",
    "MistakeBoundedLearner",
    "MistakeSeekingAdversary",
    "NoisyLabels",
    "ObliviousAdversary",
    "PrivateExpertsClassifier",
    "SOAClassifier",
    "SOALearner",
    "Sanitizer",
    "StableHistogramSanitizer",
    "first_disagreement",
    "random_finite_class",
    "run_online",
]
