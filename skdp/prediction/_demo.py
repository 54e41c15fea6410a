"""The ``skdp demo`` row for private prediction (Yan's predictor via shrinkage)."""

import numpy as np

__all__ = ["demo_row"]


def demo_row(rng, budget):
    """Answer 2 000 queries privately with Yan's predictor, spending from ``budget``.

    The predictor's total is ε = 0.5 (cap 8 hard queries); only the instances it
    actually starts are charged to ``budget``. Runs in about a second.
    """
    from ..hypotheses import Thresholds
    from ._base import QueryBudgetExhaustedError
    from .shrinkage import PrivatePredictor, shrinkage_parameters

    eps, delta, cap, threshold = 0.5, 1e-7, 8, 0.37
    k = shrinkage_parameters(eps, delta, cap)["min_teachers"]
    X = rng.random((10 * k, 1))  # ten labelled rows per teacher
    y = (X[:, 0] >= threshold).astype(int)
    Xq = rng.random((2000, 1))
    truth = Xq[:, 0] >= threshold
    clf = PrivatePredictor(Thresholds(), epsilon=eps, delta=delta, max_hard_queries=cap,
                           budget=budget, random_state=rng).fit(X, y)
    try:
        answers, note = clf.predict(Xq), ""
    except QueryBudgetExhaustedError as exc:
        # The hard-query cap holds for every stream; show where it stopped.
        answers, note = exc.answers, f" (cap hit: {exc.n_answered} answered)"
    accuracy = np.mean(answers == truth[: len(answers)])
    # Non-private: the ERM threshold of the whole sample, answering every query.
    erm = Thresholds().fit_blocks(X, 2 * y - 1, np.zeros(len(y), dtype=int), 1)[0]
    return {
        "what": f"2000 queries, private prediction (Yan; {k} teachers)",
        "privacy": f"ε={clf.privacy_spent_.epsilon:.3g} of {eps} "
        f"({clf.n_hard_queries_} hard q.)",
        "private result": f"acc {accuracy:.3f}{note}",
        "non-private": f"acc {np.mean((Xq[:, 0] >= erm) == truth):.3f}",
    }
