"""``skdp demo`` row for agnostic private online learning (Li–Wang–Ye §4)."""

import numpy as np

from .._validation import TestingSeed
from ..hypotheses.littlestone import threshold_class
from ._adversaries import ObliviousAdversary, run_online
from ._batch_sanitized import BatchSanitizedOnlineClassifier
from ._experts import PrivateExpertsClassifier
from ._noisy import NoisyLabels

__all__ = ["demo_row"]


def demo_row(rng, budget):
    """Private experts and Alg 3 vs non-private Hedge: thresholds over 16 points, 10 % noise.

    20 000 rounds of an oblivious stream with flipped labels (the same stream for every
    learner); regret is measured against the best threshold in hindsight. Spends ε = 1
    (δ = 0) per private learner from ``budget``; runs in about a second.
    """
    n_domain, n_rounds, eps = 16, 20_000, 1.0
    cls = threshold_class(n_domain)
    L = cls.label_matrix
    adversary = NoisyLabels(ObliviousAdversary(cls), 0.1)
    game = int(rng.integers(2**31))
    private = PrivateExpertsClassifier(eps, experts=cls, n_rounds=n_rounds, budget=budget,
                                       random_state=TestingSeed(rng))
    mistakes = run_online(private, adversary, n_rounds, random_state=game)[-1]
    batch = BatchSanitizedOnlineClassifier(eps, hypothesis_class=cls, n_rounds=n_rounds,
                                           budget=budget, random_state=TestingSeed(rng))
    batch_mistakes = run_online(batch, adversary, n_rounds, random_state=game)[-1]
    x, y = adversary.history()
    best = int(np.min(np.count_nonzero(L[:, x] != y, axis=1)))
    # Non-private Hedge (η = √(8 ln H / T)), one sampled threshold per round.
    losses = np.cumsum(L[:, x] != y, axis=1).T
    before = np.vstack([np.zeros((1, L.shape[0])), losses[:-1]])
    eta = np.sqrt(8.0 * np.log(L.shape[0]) / n_rounds)
    w = np.exp(-eta * (before - before.min(axis=1, keepdims=True)))
    cdf = np.cumsum(w / w.sum(axis=1, keepdims=True), axis=1)
    h = np.minimum(np.count_nonzero(cdf < rng.random(n_rounds)[:, None], axis=1),
                   L.shape[0] - 1)
    hedge = int(np.count_nonzero(L[h, x] != y))
    return {
        "what": f"Follow the best of {n_domain} cut-off rules on a stream where 10 % of the "
                "labels are wrong (online, private)",
        "privacy": f"ε={eps:g} per learner",
        "private result": f"{mistakes - best} (private experts) and {batch_mistakes - best} "
                          f"(batched) more mistakes than the best rule's {best} in "
                          f"{n_rounds} rounds",
        "non-private": f"{hedge - best} more than the best rule (Hedge)",
        "details": "regret vs the best threshold in hindsight; private experts (Li–Wang–Ye "
                   "§4) and batch-sanitized Alg 3, oblivious stream with label noise",
    }
