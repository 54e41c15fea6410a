"""skdp: differentially private learners and private predictors for scikit-learn.

Subpackages
-----------
accounting
    Privacy budgets (a ledger copies share and never reset), composition, δ schedules.
mechanisms
    Audited DP mechanisms: Laplace, exact discrete Laplace, exponential mechanism,
    sparse vector, BetweenThresholds, histograms, continual counting, …
audit
    Statistical privacy audits (Clopper–Pearson lower bounds on ε).
"""

from .accounting import PrivacyBudget
from .exceptions import (
    BudgetExhaustedError,
    MechanismHaltedError,
    PrivacyError,
    PrivacyParameterError,
    PrivacyWarning,
)

__version__ = "0.1.0.dev0"

__all__ = [
    "BudgetExhaustedError",
    "MechanismHaltedError",
    "PrivacyBudget",
    "PrivacyError",
    "PrivacyParameterError",
    "PrivacyWarning",
    "__version__",
]
