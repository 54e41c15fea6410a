"""``skdp demo`` row: the default DP decision list next to the non-private greedy one."""

import numpy as np

from .._validation import TestingSeed
from ..datasets import breast_cancer_public_bounds

__all__ = ["demo_row"]


def demo_row(rng, budget):
    """Default DP decision list (ε = 1) vs the greedy list on breast_cancer (90 public bits)."""
    from sklearn.datasets import load_breast_cancer

    from ..preprocessing import PublicBoundsBinarizer
    from ._greedy import GreedyDecisionListClassifier
    from ._private import DPDecisionListClassifier

    data = load_breast_cancer()
    bits = PublicBoundsBinarizer(
        bounds=breast_cancer_public_bounds(data.feature_names), n_thresholds=3
    ).fit_transform(data.data)
    order = rng.permutation(data.target.size)
    train, test = order[:400], order[400:]
    y = np.asarray(data.target_names)[data.target]
    eps = 1.0
    dp = DPDecisionListClassifier(epsilon=eps, classes=data.target_names, budget=budget,
                                  random_state=TestingSeed(rng)).fit(bits[train], y[train])
    greedy = GreedyDecisionListClassifier().fit(bits[train], y[train])
    return {
        "what": "Diagnose breast cancer from 90 yes/no facts (DP decision list, defaults)",
        "privacy": f"ε={eps:g}",
        "private result": (f"{dp.score(bits[test], y[test]):.1%} right on new patients, "
                           f"{len(dp.rules_)}-rule list"),
        "non-private": (f"{greedy.score(bits[test], y[test]):.1%} right, "
                        f"{len(greedy.rules_)}-rule greedy list"),
    }
