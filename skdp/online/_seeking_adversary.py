"""A mistake-seeking adaptive adversary that keeps a hidden target and does not collapse."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from .._validation import RandomStateLike, check_positive_int
from ._adversaries import HiddenTargetAdversary, Probe

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["MistakeSeekingAdversary"]


class MistakeSeekingAdversary(HiddenTargetAdversary):
    """Each round, probe the released hypothesis near the target's boundary; play an error.

    A hidden target h* is drawn per game (uniformly from the class, as
    :class:`~skdp.online.ObliviousAdversary` does); every example is labelled by h*, so
    the stream is realizable whatever the learner does and — unlike the binary-search
    adversaries, which pin their target where the learner's first hypothesis is wrong
    and then repeat one point — it does not collapse onto the easiest stream. Each
    round draws ``n_probes`` candidate points (half uniform on the domain, half at a
    log-uniform distance 2^U, U ~ U[0, log₂ N], from a random point of h*'s boundary —
    the points whose label differs from their successor's), evaluates the learner's
    *released* hypothesis at them (``probe``), and plays the first candidate it gets
    wrong; when it is right on all of them, the first candidate. A learner that keeps
    a wrong hypothesis therefore pays a mistake on almost every round, and the points
    it is shown come from where it is wrong.

    Adversary model (checked for issue 17): the standard adaptive one of Golowich &
    Livni §3 and Li, Wang & Ye §2 — it reads only what the learner *outputs*, the
    released hypothesis h_t (a function of rounds < t, fixed before round t; the probes
    evaluate it through ``predict``), never the copies, noise or counts behind it; and
    its labels come from a target drawn before the game, independent of the learner, so
    the stream is realizable by a target fixed in advance. Reading h_t rather than
    h_{t−1} differs only on the round right after each switch.

    Parameters
    ----------
    hypothesis_class : FiniteClass, label matrix or version space
    n_probes : int, default=8
        Candidate points per round (probes of the released hypothesis).
    target : int, optional
        As in :class:`~skdp.online.ObliviousAdversary` (random per game if None).

    Attributes
    ----------
    labels_ : ndarray of int8
        h* on the whole domain (after ``reset``).
    n_found_ : int
        Rounds on which a probe found an error of the released hypothesis.

    Examples
    --------
    >>> from skdp.hypotheses.littlestone import ThresholdVersionSpace
    >>> from skdp.online import MistakeSeekingAdversary, SOAClassifier, run_online
    >>> adv = MistakeSeekingAdversary(ThresholdVersionSpace(2**10))
    >>> curve = run_online(SOAClassifier(ThresholdVersionSpace(2**10)), adv, 2000,
    ...                    random_state=0)
    >>> int(curve[-1]) <= 10  # the SOA still makes at most Ldim = 10 mistakes
    True
    """

    oblivious = False

    def __init__(self, hypothesis_class: Any, *, n_probes: int = 8,
                 target: int | None = None) -> None:
        self.n_probes = check_positive_int(n_probes, "n_probes")
        self._setup(hypothesis_class, target)
        self.reset(None)

    def reset(self, rng: RandomStateLike) -> Self:
        """Start a game: draw h* and locate its boundary; ``n_found_`` back to 0."""
        super().reset(rng)
        edges = np.flatnonzero(self.labels_[1:] != self.labels_[:-1])
        self._boundary = np.unique(np.concatenate([edges, edges + 1]))
        self._log2n = float(np.log2(max(self.n_domain, 2)))
        self.n_found_ = 0
        return self

    def _candidates(self) -> NDArray[np.int64]:
        rng, k, n = self._rng, self.n_probes, self.n_domain
        x = rng.integers(0, n, size=k)
        if self._boundary.size:
            near = k // 2
            base = self._boundary[rng.integers(0, self._boundary.size, size=near)]
            step = np.floor(2.0 ** rng.uniform(0.0, self._log2n, size=near)).astype(np.int64)
            sign = rng.choice(np.array([-1, 1]), size=near)
            x[:near] = np.clip(base + sign * (step - 1), 0, n - 1)
        return x

    def next_round(self, probe: Probe | None = None) -> tuple[int, int]:
        cands = self._candidates()
        if probe is not None:
            for c in cands.tolist():
                got = probe(c)
                if got is not None and int(got) != int(self.labels_[c]):
                    self.n_found_ += 1
                    return c, int(self.labels_[c])
        c = int(cands[0])
        return c, int(self.labels_[c])

    def observe(self, x: int, y: int, y_hat: int) -> None:
        """Nothing to remember: every round probes the current release afresh."""
