"""What every private skdp estimator shares: its privacy parameters and how it pays.

Budget semantics for estimators
-------------------------------
* ``epsilon`` and ``delta`` are constructor parameters: the guarantee of *one*
  release (one ``fit``, or one model release from ``partial_fit`` where the
  estimator documents that). They describe the total; they are never decremented.
* ``budget`` (optional) is a :class:`~skdp.accounting.PrivacyBudget` to charge
  before each release. ``clone`` deep-copies parameters, and a deep-copied budget
  shares its ledger, so every clone made by ``GridSearchCV`` or
  ``cross_val_score`` charges the *same* ledger: the total privacy loss of a whole
  model search on one dataset is accounted, and the search stops with
  :class:`~skdp.exceptions.BudgetExhaustedError` when it is spent.
* The privacy a fitted estimator has spent lives in fitted state
  (``privacy_spent_``, a :class:`~skdp.accounting.PrivacyCost`); predictors that
  answer queries privately own a fitted ``budget_`` ledger, which copies of the
  fitted estimator share (so a copy cannot answer more queries than ε allows).
* Charges happen after input validation and before any data-dependent randomness:
  bad input never costs privacy, and a charge that does not fit leaves the
  estimator unchanged.
"""

from ._validation import check_delta, check_epsilon
from .accounting import PrivacyBudget, PrivacyCost

__all__ = ["PrivateEstimatorMixin"]


class PrivateEstimatorMixin:
    """Mixin for estimators with ``epsilon``, ``delta`` and ``budget`` parameters.

    Place it first among the bases, before sklearn's mixins:
    ``class X(PrivateEstimatorMixin, ClassifierMixin, BaseEstimator)``.
    """

    def _check_privacy_params(self):
        """Validate ε, δ and the budget with privacy-specific messages; return (ε, δ)."""
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(getattr(self, "delta", 0.0))
        budget = getattr(self, "budget", None)
        if budget is not None and not isinstance(budget, PrivacyBudget):
            raise TypeError(
                f"budget must be a skdp.PrivacyBudget or None, got {type(budget).__name__}."
            )
        return epsilon, delta

    def _charge(self, epsilon, delta, label, *, accumulate=True):
        """Pay (ε, δ) from ``self.budget`` (if any), then record it in ``privacy_spent_``.

        ``accumulate=False`` starts a new model (``fit``): ``privacy_spent_`` becomes
        this charge; otherwise (e.g. another release from ``partial_fit``) it adds up.
        Raises :class:`~skdp.exceptions.BudgetExhaustedError` without changing the
        estimator when the budget cannot pay.
        """
        budget = getattr(self, "budget", None)
        if budget is not None:
            budget.spend(epsilon, delta, label=f"{type(self).__name__}: {label}")
        spent = getattr(self, "privacy_spent_", None) if accumulate else None
        if spent is None:
            spent = PrivacyCost(0.0, 0.0)
        self.privacy_spent_ = PrivacyCost(spent.epsilon + epsilon, spent.delta + delta)
