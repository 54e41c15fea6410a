"""Privacy accounting: budgets, composition theorems and δ schedules.

* :class:`PrivacyBudget` — a ledger of spent (ε, δ) that copies share and never reset.
* Composition — :func:`basic_composition`, :func:`advanced_composition` (DRV and the
  Kairouz–Oh–Viswanath closed form), :func:`optimal_composition` (exact KOV), and
  :func:`calibrate` / :func:`compose` to size per-step budgets.
* :class:`DeltaSchedule` — δ(i) with Σ δ(i) ≤ δ* for truly-everlasting privacy (Stemmer).

Pure numpy/scipy: no scikit-learn imports.
"""

from .budget import PrivacyBudget
from .composition import (
    PrivacyCost,
    advanced_composition,
    basic_composition,
    basic_composition_sequence,
    calibrate,
    compose,
    optimal_composition,
    optimal_composition_delta,
)
from .delta_schedule import DeltaSchedule

__all__ = [
    "DeltaSchedule",
    "PrivacyBudget",
    "PrivacyCost",
    "advanced_composition",
    "basic_composition",
    "basic_composition_sequence",
    "calibrate",
    "compose",
    "optimal_composition",
    "optimal_composition_delta",
]
