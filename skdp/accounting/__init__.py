"""Privacy accounting: budgets, composition theorems and δ schedules.

* :class:`PrivacyBudget` — a ledger of spent (ε, δ) that copies share and never reset.
* Composition — :func:`basic_composition`, :func:`advanced_composition` (DRV and the
  Kairouz–Oh–Viswanath closed form), :func:`optimal_composition` (exact KOV), and
  :func:`calibrate` / :func:`compose` to size per-step budgets.
* One tight accountant — :func:`account` composes privacy events (:class:`PureDP`,
  :class:`BoundedRange`, :class:`ApproxDP`, :class:`Laplace`, :class:`DiscreteLaplace`,
  :class:`Gaussian`) by privacy-loss distributions and Rényi divergences, and
  :func:`calibrate_plan` sizes every mechanism of a plan to fit a total (ε, δ).
* :class:`DeltaSchedule` — δ(i) with Σ δ(i) ≤ δ* for truly-everlasting privacy (Stemmer).

Pure numpy/scipy: no scikit-learn imports.
"""

from .accountant import Accounting, account, epsilon_of
from .budget import PrivacyBudget
from .calibration import Calibration, PlanItem, calibrate_plan
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
from .events import ApproxDP, BoundedRange, DiscreteLaplace, Gaussian, Laplace, PureDP

__all__ = [
    "Accounting",
    "ApproxDP",
    "BoundedRange",
    "Calibration",
    "DeltaSchedule",
    "DiscreteLaplace",
    "Gaussian",
    "Laplace",
    "PlanItem",
    "PrivacyBudget",
    "PrivacyCost",
    "PureDP",
    "account",
    "advanced_composition",
    "basic_composition",
    "basic_composition_sequence",
    "calibrate",
    "calibrate_plan",
    "compose",
    "epsilon_of",
    "optimal_composition",
    "optimal_composition_delta",
]
