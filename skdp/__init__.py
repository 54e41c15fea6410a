"""skdp: differentially private learners and private predictors for scikit-learn.

Subpackages
-----------
accounting
    Privacy budgets (a ledger copies share and never reset), composition, δ schedules.
mechanisms
    Audited DP mechanisms: Laplace, exact discrete Laplace, exponential mechanism,
    sparse vector, BetweenThresholds, histograms, continual counting, …
decision_list
    Private and greedy decision lists (Bun & Fang DP-GreedyCover), k-conjunction features.
linear
    Winnow, ConfidentWinnow, DP-Winnow and online private decision lists (Bun & Fang).
online
    Online learning of Littlestone classes: SOA, base-learner protocol, adversaries.
prediction
    Query-budgeted private predictors (Yan; subsample-and-aggregate baseline).
hypotheses
    Hypothesis classes with constrained ERM (finite, thresholds, rectangles, halfspaces).
preprocessing
    Binarizers and clippers with public bounds (no data-dependent leaks).
audit
    Statistical privacy audits (Clopper–Pearson lower bounds on ε).
"""

from .accounting import PrivacyBudget
from .decision_list import (
    ConjunctionFeatures,
    DPDecisionListClassifier,
    GreedyDecisionListClassifier,
)
from .exceptions import (
    BudgetExhaustedError,
    MechanismHaltedError,
    PrivacyError,
    PrivacyParameterError,
    PrivacyWarning,
)
from .linear import (
    ConfidentWinnowClassifier,
    DPWinnowClassifier,
    OnlineDecisionListClassifier,
    WinnowClassifier,
)
from .online import SOAClassifier
from .prediction import (
    PrivatePredictor,
    QueryBudgetExhaustedError,
    SubsampleAggregatePredictor,
)

__version__ = "0.1.0.dev0"

__all__ = [
    "BudgetExhaustedError",
    "ConfidentWinnowClassifier",
    "ConjunctionFeatures",
    "DPDecisionListClassifier",
    "DPWinnowClassifier",
    "GreedyDecisionListClassifier",
    "MechanismHaltedError",
    "OnlineDecisionListClassifier",
    "PrivacyBudget",
    "PrivacyError",
    "PrivacyParameterError",
    "PrivacyWarning",
    "PrivatePredictor",
    "QueryBudgetExhaustedError",
    "SOAClassifier",
    "SubsampleAggregatePredictor",
    "WinnowClassifier",
    "__version__",
]
