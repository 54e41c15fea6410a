"""Private learning on streams: continual release of any private batch learner.

* :class:`ContinualReleaseClassifier` — wraps a private batch learner of skdp (e.g.
  :class:`~skdp.decision_list.DPDecisionListClassifier`); buffers the rows of a
  ``partial_fit`` stream and releases a new model, on a public schedule, from *all*
  rows since the previous release. Blocks are disjoint, so the whole stream is
  (ε, δ)-DP by parallel composition and is charged once.

The papers' online learners (DP-Winnow, DP-SOA, …) live in :mod:`skdp.linear` and
:mod:`skdp.online`; ``docs/user_guide/choosing.rst`` says which to use on which stream.
"""

from ._continual_release import ContinualReleaseClassifier, release_schedule

__all__ = ["ContinualReleaseClassifier", "release_schedule"]
