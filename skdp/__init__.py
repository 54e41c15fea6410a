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
    Private online learning of Littlestone classes (DP-SOA, Li–Wang–Ye) and agnostic
    private online learners; SOA, base-learner protocol, adversaries.
prediction
    Query-budgeted private predictors: Yan's shrinkage predictor, Stemmer's truly
    everlasting PERP (rectangles, decision stumps), subsample-and-aggregate baseline.
hypotheses
    Hypothesis classes with constrained ERM (finite, thresholds, rectangles, halfspaces).
preprocessing
    Binarizers and clippers with public bounds (no data-dependent leaks).
metrics
    Private scorers for GridSearchCV / cross_val_score (``make_private_scorer``).
model_selection
    Private hyperparameter search whose cost does not grow with the grid
    (``PrivateRandomizedSearchCV``).
audit
    Statistical privacy audits (Clopper–Pearson lower bounds on ε).
datasets
    Public feature bounds, planted models and adversarial streams.
streams
    Continual release: any private batch learner as a stream learner that uses every
    row once (``ContinualReleaseClassifier``).
compat
    Adapters for other libraries: ``skdp.compat.river`` runs a private learner in river
    (``pip install "skdp[river]"``).

:func:`show_versions` prints what to paste into a bug report.
"""

# Every subpackage is an attribute of ``skdp`` (``import skdp; skdp.preprocessing``).
from . import (
    _docsections,  # noqa: F401  (sklearn's HTML repr parses our Privacy sections)
    accounting,
    audit,
    compat,
    datasets,
    decision_list,
    exceptions,
    hypotheses,
    linear,
    mechanisms,
    metrics,
    model_selection,
    online,
    prediction,
    preprocessing,
    streams,
)
from ._show_versions import show_versions
from ._validation import TestingSeed
from .accounting import PrivacyBudget
from .decision_list import (
    ConjunctionFeatures,
    DPDecisionListClassifier,
    GreedyDecisionListClassifier,
)
from .exceptions import (
    BudgetExhaustedError,
    CapReachedError,
    LedgerIntegrityError,
    MechanismHaltedError,
    PrivacyError,
    PrivacyLeakWarning,
    PrivacyParameterError,
    PrivacyWarning,
    StaleStateError,
)
from .linear import (
    ConfidentWinnowClassifier,
    DPWinnowClassifier,
    OnlineDecisionListClassifier,
    WinnowClassifier,
)
from .online import (
    AdaptivePrivateOnlineClassifier,
    BatchSanitizedOnlineClassifier,
    DPSOAClassifier,
    PrivateExpertsClassifier,
    SOAClassifier,
)
from .prediction import (
    DecisionStumpPERPClassifier,
    PrivatePredictor,
    QueryBudgetExhaustedError,
    RectanglesPERPClassifier,
    SubsampleAggregatePredictor,
    perp_parameters,
)
from .streams import ContinualReleaseClassifier

__version__ = "0.1.0.dev0"

__all__ = [
    "AdaptivePrivateOnlineClassifier",
    "BatchSanitizedOnlineClassifier",
    "BudgetExhaustedError",
    "CapReachedError",
    "ConfidentWinnowClassifier",
    "ConjunctionFeatures",
    "ContinualReleaseClassifier",
    "DPDecisionListClassifier",
    "DPSOAClassifier",
    "DPWinnowClassifier",
    "DecisionStumpPERPClassifier",
    "GreedyDecisionListClassifier",
    "LedgerIntegrityError",
    "MechanismHaltedError",
    "OnlineDecisionListClassifier",
    "PrivacyBudget",
    "PrivacyError",
    "PrivacyLeakWarning",
    "PrivacyParameterError",
    "PrivacyWarning",
    "PrivateExpertsClassifier",
    "PrivatePredictor",
    "QueryBudgetExhaustedError",
    "RectanglesPERPClassifier",
    "SOAClassifier",
    "StaleStateError",
    "SubsampleAggregatePredictor",
    "TestingSeed",
    "WinnowClassifier",
    "__version__",
    "accounting",
    "audit",
    "compat",
    "datasets",
    "decision_list",
    "exceptions",
    "hypotheses",
    "linear",
    "mechanisms",
    "metrics",
    "model_selection",
    "online",
    "perp_parameters",
    "prediction",
    "preprocessing",
    "show_versions",
    "streams",
]
