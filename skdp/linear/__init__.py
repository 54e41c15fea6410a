"""Winnow family: multiplicative-weights online learners of large-margin halfspaces.

* :class:`WinnowClassifier` — normalised Winnow (update on every mistake).
* :class:`ConfidentWinnowClassifier` — Bun & Fang Alg 2 (also updates when unconfident).
* :class:`DPWinnowClassifier` — Bun & Fang Alg 3, (ε, δ)-DP for every stream; by
  default on a public update schedule, with a guard that falls back to a private
  constant where it cannot learn (its docstring has the map).
* :class:`OnlineDecisionListClassifier` — DP-Winnow on the Lemma 15 embedding.
* :func:`solve_dp_winnow_parameters` — Thm 11–12 constants (K ↔ η fixed point).

All share one block loop (``_base.py``): between updates the predicting weights are
fixed, so blocks are processed with numpy and Python iterates once per update
(once per window of rows for the scheduled DP-Winnow).
"""

from ._decision_list_embedding import (
    DecisionListEmbedding,
    OnlineDecisionListClassifier,
    decision_list_halfspace,
    decision_list_margin,
)
from ._dp_winnow import DPWinnowClassifier
from ._parameters import DPWinnowParameters, solve_dp_winnow_parameters
from ._winnow import ConfidentWinnowClassifier, WinnowClassifier

__all__ = [
    "ConfidentWinnowClassifier",
    "DPWinnowClassifier",
    "DPWinnowParameters",
    "DecisionListEmbedding",
    "OnlineDecisionListClassifier",
    "WinnowClassifier",
    "decision_list_halfspace",
    "decision_list_margin",
    "solve_dp_winnow_parameters",
]
