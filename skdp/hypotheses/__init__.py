"""Hypothesis classes with vectorised, constrained empirical risk minimisation.

Every class here answers one question for *many* labelled blocks at once:
"the best hypothesis on this block that agrees with these forced labels" —
what a teacher in a private predictor needs after each hard query (Yan, Alg. 3
``G_oblivious``), and what the halfspace generator needs with its constraints
"boundary through these points" (Yan, Alg. 4 ``G_halfspace``).

Conventions (shared by every class):

* labels are ±1 (``int8``); ``fit_blocks(X, y, blocks, n_blocks, ...)`` takes flat
  arrays plus a block id per row and returns ``params``, one row per block;
* ``predict_blocks(params, X)`` returns an ``(n_blocks, n_queries)`` ±1 matrix and
  ``vote(params, X)`` the fraction of blocks voting +1 per query;
* forced labels are *lexicographic*: among the hypotheses that violate the fewest
  forced labels (none, whenever they are realizable) the one with the least
  (weighted) block error wins. So the ERM is always defined, even for
  inconsistent forced labels.

Classes: :class:`FiniteClass` (a label matrix over a finite domain),
:class:`Thresholds` and :class:`Intervals` on a line, :class:`Rectangles`
(axis-aligned boxes) and :class:`Halfspaces` in R^d, :class:`RealThresholds`
/ :class:`RealIntervals` on a real feature through public bins, and
:class:`MeanThresholds` on the binned mean of d real features (finite classes that
the online learners take with real-valued X; the last is their default). Each
documents its cost and whether its ERM is exact.
"""

from ._base import HypothesisClass
from .discretised import RealIntervals, RealThresholds
from .finite import FiniteClass
from .geometric import Halfspaces, Rectangles
from .line import Intervals, Thresholds
from .littlestone import (
    FiniteVersionSpace,
    PointVersionSpace,
    ThresholdVersionSpace,
    interval_class,
    littlestone_dimension,
    point_class,
    soa_predict,
    threshold_class,
    version_space,
)
from .mean_thresholds import MeanThresholds, two_sided_threshold_class

__all__ = [
    "FiniteClass",
    "FiniteVersionSpace",
    "Halfspaces",
    "HypothesisClass",
    "Intervals",
    "MeanThresholds",
    "PointVersionSpace",
    "RealIntervals",
    "RealThresholds",
    "Rectangles",
    "ThresholdVersionSpace",
    "Thresholds",
    "interval_class",
    "littlestone_dimension",
    "point_class",
    "soa_predict",
    "threshold_class",
    "two_sided_threshold_class",
    "version_space",
]
