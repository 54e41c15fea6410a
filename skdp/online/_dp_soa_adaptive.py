"""DP-SOA's variant for adaptive adversaries (Golowich & Livni 2021, Thm 4.2): every round's
hypothesis is the mode of a fresh stable histogram of the trees' list, for at most T
rounds. A mixin of :class:`~skdp.online.DPSOAClassifier` (kept apart by concept)."""

import numpy as np

from ..mechanisms import StableHistogram
from ._dp_soa_forest import BOTTOM, ROLE_RELEASE, event_key

__all__ = ["PerRoundRelease"]

# Rounds per batch of per-round histogram noise.
_RELEASE_BATCH = 64


class PerRoundRelease:
    """Per-round stable histograms over DP-SOA's forest (``adaptive=True``).

    Needs the estimator's ``parameters_``, ``_forest``, ``_noise``, ``_released_hid``
    and ``_switch``. Privacy: T histograms at (ε′, δ′) on a list that one row changes in
    one position compose to (ε, δ) (see :class:`~skdp.online.DPSOAClassifier`).
    """

    def _init_per_round(self, params):
        self._run_id, self._run_start, self._batch = 0, 0, (-1, None)
        hist = StableHistogram(params.release_epsilon, params.release_delta,
                               eta=params.eta, random_state=0)
        # a count below τ − A is never released (|noise| ≤ A): such items need no noise
        self._least_releasable = (hist.max_error(params.n_trees) + 1
                                  - 2 * hist.noise_bound)

    def _release_per_round(self, t0, n):
        """Adaptive variant: round t's hypothesis is the mode of a fresh stable histogram.

        Rounds of one run of an unchanged list draw their noise in fixed batches from a
        generator keyed by (run, batch), so the draws do not depend on block boundaries.
        """
        if n == 0:
            return -1
        counts = self._forest.list_counts
        items = np.flatnonzero(counts >= self._least_releasable)
        items = items[items != BOTTOM]
        if items.size == 0:
            return -1
        data = self._forest.out_hid
        offsets = np.arange(t0, t0 + n) - self._run_start
        chosen = np.empty(n, dtype=np.int64)
        for b in np.unique(offsets // _RELEASE_BATCH).tolist():
            sel = offsets // _RELEASE_BATCH == b
            chosen[sel] = self._batch_modes(data, items, b)[offsets[sel] % _RELEASE_BATCH]
        moved = np.flatnonzero((chosen >= 0) & (chosen != self._released_hid))
        if moved.size == 0:
            return -1
        self._switch(int(chosen[moved[0]]), t0 + int(moved[0]))
        return int(moved[0])

    def _batch_modes(self, data, items, batch):
        if self._batch[0] != (self._run_id, batch):
            p = self.parameters_
            gen = self._noise.generator(event_key(ROLE_RELEASE, (self._run_id << 24) | batch))
            hist = StableHistogram(p.release_epsilon, p.release_delta, eta=p.eta,
                                   random_state=gen)
            counts = hist.simulate(data, _RELEASE_BATCH, items.tolist())
            # ties among the largest noisy counts are broken uniformly at random
            best = np.argmax(counts + gen.random(counts.shape), axis=1)
            modes = np.where(counts[np.arange(_RELEASE_BATCH), best] > 0, items[best], -1)
            self._batch = ((self._run_id, batch), modes)
        return self._batch[1]
