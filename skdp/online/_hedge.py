"""Many independent copies of Hedge over one finite class, vectorised.

The copies of Li, Wang & Ye's Alg 3 (one per slot of a batch) are non-private proper
online learners over the class; here they are exponential-weights (Hedge) learners held
as one (copies × hypotheses) array of cumulative losses, so that a batch's updates and
the next batch's distributions are a few array operations. Two step-size rules:

* a fixed η for every copy (Cesa-Bianchi & Lugosi 2006, Thm 2.2: expected regret
  ln H/η + η·n/8 after n rounds, √(n ln H / 2) at η = √(8 ln H/n));
* AdaHedge (de Rooij, van Erven, Grünwald & Koolen 2014): each copy sets
  η = ln H / Δ from its own cumulative *mixability gap* Δ (η = ∞, follow-the-leader
  with ties split uniformly, while Δ = 0). Worst-case regret ≤ 2√(ln H · L*(n − L*)/n)
  + (16/3) ln H + 2 on any sequence, and O(ln H) — constant in n — where
  follow-the-leader does well, e.g. on stochastic streams with a unique best
  hypothesis. No horizon needed.

Everything here is non-private bookkeeping; what the copies see decides their privacy.
"""

import math

import numpy as np

__all__ = ["HedgeCopies"]


class HedgeCopies:
    """``n_copies`` Hedge learners over ``n_hypotheses`` experts.

    Parameters
    ----------
    n_copies, n_hypotheses : int
    learning_rate : float or None
        A fixed η > 0 for every copy, or None for AdaHedge.
    """

    def __init__(self, n_copies, n_hypotheses, learning_rate=None):
        self.loss = np.zeros((n_copies, n_hypotheses))
        self.gap = np.zeros(n_copies)
        self.learning_rate = learning_rate
        self._log_h = math.log(n_hypotheses)

    def _eta(self):
        if self.learning_rate is not None:
            return np.full(self.gap.shape, float(self.learning_rate))
        with np.errstate(divide="ignore"):
            return np.where(self.gap > 0, self._log_h / self.gap, np.inf)

    def probs(self):
        """(n_copies, n_hypotheses) distribution of every copy."""
        eta = self._eta()
        z = self.loss - self.loss.min(axis=1, keepdims=True)
        finite = np.isfinite(eta)
        w = (z == 0).astype(np.float64)  # η = ∞: the leaders, uniformly
        w[finite] = np.exp(-eta[finite, None] * z[finite])
        return w / w.sum(axis=1, keepdims=True)

    def update(self, losses):
        """Add one round's losses (n_copies, n_hypotheses) in [0, 1] to every copy."""
        losses = np.asarray(losses, dtype=np.float64)
        if self.learning_rate is None:
            self.gap += self._mixability_gap(losses)
        self.loss += losses

    def _mixability_gap(self, losses):
        """δ = (expected loss) − (mix loss) ≥ 0 of each copy for this round."""
        p, eta = self.probs(), self._eta()
        expected = np.einsum("ch,ch->c", p, losses)
        on = np.where(p > 0, losses, np.inf)
        least = on.min(axis=1)  # η = ∞: the mix loss is the best leader's loss
        mix = least.copy()
        finite = np.isfinite(eta)
        if finite.any():
            e = eta[finite, None]
            shifted = np.einsum("ch,ch->c", p[finite],
                                np.exp(-e * (losses[finite] - least[finite, None])))
            mix[finite] = least[finite] - np.log(shifted) / e[:, 0]
        return np.maximum(expected - mix, 0.0)
