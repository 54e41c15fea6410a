"""Yan's predictor: the public configuration — teachers, mode, cap, BetweenThresholds plan.

Everything here is a function of the constructor's parameters and the number of
features (public), never of the labelled rows.
"""

import math

from ..exceptions import PrivacyParameterError
from ..hypotheses import Halfspaces
from ._shrinkage_parameters import design, shrinkage_parameters, stemmer_cutoff
from ._teachers import _as_hypothesis_class

__all__: list[str] = []


class _ShrinkageConfig:
    """The configuration half of PrivatePredictor."""

    def _check_config(self, n_features):
        if self.hypotheses is not None and self.estimator is not None:
            raise ValueError("Pass either hypotheses= or estimator=, not both.")
        thresholds = self.thresholds
        if thresholds != "auto":
            thresholds = tuple(float(t) for t in thresholds)
            if len(thresholds) != 2 or not 0.0 <= thresholds[0] < thresholds[1] <= 1.0:
                raise ValueError("thresholds must be (t_l, t_u) with 0 ≤ t_l < t_u ≤ 1, got "
                                 f"{self.thresholds!r}.")
        if self.estimator is not None:
            if not hasattr(self.estimator, "fit") or not hasattr(self.estimator, "predict"):
                raise TypeError("estimator must be a scikit-learn classifier (fit/predict).")
            # A plain binary L2 LogisticRegression is the Halfspaces(d, C) class.
            hyp = _as_hypothesis_class(self.estimator, n_features)
            if hyp is None and self.mode == "halfspace":
                raise ValueError("mode='halfspace' needs halfspace teachers: "
                                 "hypotheses=Halfspaces(d) or estimator=LogisticRegression() "
                                 "(binary, L2, with intercept, no class_weight).")
            if hyp is None or self.mode == "oblivious":
                return None, thresholds, "oblivious"
            return hyp, thresholds, "halfspace"
        hyp = self.hypotheses if self.hypotheses is not None else Halfspaces(n_features)
        if self.mode == "halfspace" and not hyp.supports_through:
            raise ValueError(
                f"mode='halfspace' needs a class supporting through= (Halfspaces), got {hyp!r}."
            )
        n_hyp = getattr(hyp, "n_features", None)
        if n_hyp is not None and n_hyp != n_features:
            raise ValueError(f"{hyp!r} expects {n_hyp} feature(s); X has {n_features}.")
        mode = self.mode
        if mode == "auto":
            mode = "halfspace" if hyp.supports_through else "oblivious"
        return hyp, thresholds, mode

    def _resolve_cap(self, n_features, delta, hyp):
        """``max_hard_queries="auto"``: d + 1 in halfspace mode; in oblivious mode
        min(⌈VC·ln T⌉, ⌈4·ln(2/δ)⌉) for a class of known VC dimension (T =
        ``n_queries``; Yan's O(VC·log T) bound on hard queries with constant 1),
        else ⌈4·ln(2/δ)⌉. Public inputs only."""
        if self.max_hard_queries != "auto":
            return int(self.max_hard_queries)
        if self.mode_ == "halfspace":
            return n_features + 1
        if hyp is None and self.estimator is not None:
            hyp = _as_hypothesis_class(self.estimator, n_features)
        cutoff = stemmer_cutoff(delta, 1)
        vc = getattr(hyp, "vc_dimension", None)
        if vc is None:
            return cutoff
        return max(1, min(cutoff, math.ceil(vc * math.log(self._planned_queries()))))

    def _plan_for(self, epsilon, delta, n_features):
        """(hypotheses, mode, cap, BetweenThresholds plan, teachers k) for these parameters."""
        hyp, thresholds, mode = self._check_config(n_features)
        self.mode_ = mode
        cap = self._resolve_cap(n_features, delta, hyp)
        if thresholds == "auto":
            params = design(epsilon, delta, cap, self.accounting, self.calibration,
                            self._planned_queries())
        else:
            params = shrinkage_parameters(epsilon, delta, cap, self.accounting,
                                          self.calibration, thresholds)
        k_min = params["min_teachers"]
        k = k_min if self.n_teachers == "auto" else int(self.n_teachers)
        if k < k_min:
            raise PrivacyParameterError(
                f"n_teachers={k} is below the {k_min} teachers BetweenThresholds' gap "
                f"condition needs at ε_bt={params['epsilon_bt']:.4g}, δ_bt="
                f"{params['delta_bt']:.3g} ({params['calibration']} calibration). Use "
                "n_teachers='auto', a larger ε, wider thresholds or a smaller max_hard_queries."
            )
        return hyp, mode, cap, params, k

    def _too_few_rows_message(self, n, k):
        return (f"{type(self).__name__}: {n} labelled rows cannot make the {k} teachers "
                f"BetweenThresholds needs at ε = {float(self.epsilon):g}, δ = "
                f"{float(self.delta):g}; at least {k} rows are needed (one per teacher; "
                "several per teacher for accurate answers).")
