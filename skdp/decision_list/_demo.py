"""``skdp demo`` row: a private decision list next to the non-private greedy one."""

from ..datasets import planted_decision_list

__all__ = ["demo_row"]


def demo_row(rng, budget):
    """DP decision list (ε = 0.5) vs the greedy list on a planted list, 5 % label noise."""
    from ._classes import DPDecisionListClassifier, GreedyDecisionListClassifier

    n, d = 20_000, 30
    X, y, _ = planted_decision_list(rng, 2 * n, d, noise=0.05)
    eps = 0.5
    dp = DPDecisionListClassifier(epsilon=eps, max_rules=10, classes=[0, 1], budget=budget,
                                  random_state=rng)
    dp.fit(X[:n], y[:n])
    greedy = GreedyDecisionListClassifier().fit(X[:n], y[:n])
    return {
        "what": f"decision list (DP-GreedyCover), n={n}",
        "privacy": f"ε={eps}",
        "private result": f"acc {dp.score(X[n:], y[n:]):.3f}, {len(dp.rules_)} rules",
        "non-private": f"acc {greedy.score(X[n:], y[n:]):.3f}, {len(greedy.rules_)} rules",
    }
