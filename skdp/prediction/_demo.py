"""The ``skdp demo`` rows for private prediction: Yan's predictor and Stemmer's PERP."""

import numpy as np

from .._validation import TestingSeed

__all__ = ["demo_row", "perp_demo_row"]


def demo_row(rng, budget):
    """Answer 2 000 queries privately with Yan's predictor, spending from ``budget``.

    The predictor's total is ε = 0.5 (cap 8 hard queries); its first answer charges
    ``budget`` the whole planned cost. Runs in about a second.
    """
    from ..hypotheses import Thresholds
    from ._base import QueryBudgetExhaustedError
    from ._shrinkage_parameters import design
    from .shrinkage import PrivatePredictor

    eps, delta, cap, threshold = 0.5, 1e-7, 8, 0.37
    k = design(eps, delta, cap, "tight", "auto", 2000)["min_teachers"]
    X = rng.random((10 * k, 1))  # ten labelled rows per teacher
    y = (X[:, 0] >= threshold).astype(int)
    Xq = rng.random((2000, 1))
    truth = Xq[:, 0] >= threshold
    clf = PrivatePredictor(Thresholds(), epsilon=eps, delta=delta, max_hard_queries=cap,
                           n_queries=2000, classes=[0, 1], budget=budget,
                           random_state=TestingSeed(rng)).fit(X, y)
    try:
        answers, note = clf.predict(Xq), ""
    except QueryBudgetExhaustedError as exc:
        # The hard-query cap holds for every stream; show where it stopped.
        answers, note = exc.answers, f" (cap hit: {exc.n_answered} answered)"
    accuracy = np.mean(answers == truth[: len(answers)])
    # Non-private: the ERM threshold of the whole sample, answering every query.
    erm = Thresholds().fit_blocks(X, 2 * y - 1, np.zeros(len(y), dtype=int), 1)[0]
    return {
        "what": f"Keep {len(y)} labelled rows private and answer 2000 questions "
                "'is x above the cut-off?' from them",
        "privacy": f"ε={eps:g}, δ={delta:g} for the whole stream",
        "private result": f"{accuracy:.1%} right{note}",
        "non-private": f"{np.mean((Xq[:, 0] >= erm) == truth):.1%} right (the best cut-off "
                       "on all rows)",
        "note": "all of ε is charged at the first answer, whatever the number of questions "
                "up to the plan",
        "details": f"Yan's private predictor, {k} teachers, {clf.n_hard_queries_} of {cap} "
                   "hard queries",
    }


def perp_demo_row(rng, budget):
    """Stemmer's PERP for an interval: 20 000 queries, half from an adaptive adversary.

    At an ε the shared budget can afford (ε = 4), ``preset="charged"`` (issue 16:
    the ``"sharp"`` schedule — slices from a random partition, the svt Stopper,
    margin thresholds — with the copies' BetweenThresholds calibrated by the
    charged lemma) needs ≈ 1.0·10⁵ labelled rows for its own schedule — no
    overrides, so its utility guarantee holds too (``"sharp"`` ≈ 3.4·10⁵, the
    practical preset ≈ 3·10⁷).
    Spends (ε = 4, δ ≈ 2.5e-7: δ(0) = δ*/4) from ``budget``; runs in about a second.
    """
    from ..datasets import RobustPEPStream, play_robust_pep
    from . import RectanglesPERPClassifier, perp_parameters

    eps, delta, alpha, beta, gamma, t1 = 4.0, 1e-6, 0.1, 0.05, 0.5, 20_000
    n = perp_parameters(eps, delta, alpha, beta, gamma, 1, preset="charged").initial_sample_size
    stream = RobustPEPStream(1, gamma=gamma, adversary="challenge", random_state=rng)
    X, y = stream.sample(n)
    clf = RectanglesPERPClassifier(epsilon=eps, delta=delta, alpha=alpha, beta=beta,
                                   gamma=gamma, classes=[0, 1], budget=budget,
                                   preset="charged", random_state=TestingSeed(rng)).fit(X, y)
    result = play_robust_pep(clf, stream, t1, block_size=2_000)
    D, truth = result["from_D"], result["truth"]
    # Non-private: the smallest interval around the labelled positives.
    low, high = X[y == 1, 0].min(), X[y == 1, 0].max()
    queries = result["queries"][:, 0]
    erm = (queries >= low) & (queries <= high)
    if result["refused"] is not None and not D.any():
        private = non_private = "refused: the shared budget cannot pay ε = 4"
    else:
        private = (f"{1 - result['error_D']:.1%} right on the honest queries, "
                   f"half of all queries adversarial")
        non_private = f"{np.mean(erm[D] == truth[D]):.1%} right on the honest queries"
    spent = clf.privacy_spent_
    return {
        "what": f"Answer {t1} questions 'is x in the interval?' from {n} labelled rows, "
                "for ever, even when half the questions come from an attacker",
        "privacy": f"ε={eps:g}, δ={spent.delta:.2g} so far; δ stays below {delta:g} "
                   "however many questions follow",
        "private result": private,
        "non-private": non_private,
        "note": "it needs many labelled rows: about 1.0·10⁵ at ε = 4 and 1.3·10⁶ at ε = 1 "
                "for an interval (benchmarks/perp.py)",
        "details": f"Stemmer's truly everlasting robust prediction (PERP), preset='charged', "
                   f"{clf.n_reexecutions_} restarts, error on D {result['error_D']:.3f}",
    }
