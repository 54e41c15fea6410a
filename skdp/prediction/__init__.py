"""Private prediction with a query budget.

A private predictor keeps its labelled sample secret and answers a stream of
queries; the whole transcript is (ε, δ)-DP with respect to the sample, and the
predictor's ``budget_`` ledger says how much of (ε, δ) the answers have used.

* :class:`PrivatePredictor` — Yan's predictor via shrinkage: pays only for *hard*
  queries (BetweenThresholds), capped by ``max_hard_queries``.
* :class:`SubsampleAggregatePredictor` — the Dwork–Feldman baseline: a fresh noisy
  vote per query, ε per query ∝ 1/√T.
* :func:`label_public` — private labels for a public unlabeled set, to train any
  scikit-learn *student* on (post-processing; ``skdp label`` on the command line).
* :class:`QueryBudgetExhaustedError` — raised when the budget cannot pay; carries
  the answers already released by the failing call.

:mod:`skdp.prediction._base` documents the budget / exhaustion / copy semantics
every query-budgeted predictor follows.
"""

from ._base import QueryBudgetedPredictor, QueryBudgetExhaustedError
from ._label import label_public
from ._perp_parameters import PERPParameters, perp_parameters
from .perp import DecisionStumpPERPClassifier, RectanglesPERPClassifier
from .shrinkage import PrivatePredictor, shrinkage_parameters
from .subsample_aggregate import SubsampleAggregatePredictor

__all__ = [
    "DecisionStumpPERPClassifier",
    "PERPParameters",
    "PrivatePredictor",
    "QueryBudgetExhaustedError",
    "QueryBudgetedPredictor",
    "RectanglesPERPClassifier",
    "SubsampleAggregatePredictor",
    "label_public",
    "perp_parameters",
    "shrinkage_parameters",
]
