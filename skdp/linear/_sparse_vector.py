"""DP-Winnow's sparse-vector loop (Bun & Fang, Alg 3): an update where an
AboveThreshold instance watching the mistake count fires.

Used by ``setting="practical"`` and ``"theory"``; the privacy argument (Thm 11) is in
:class:`~skdp.linear.DPWinnowClassifier`.
"""

import warnings

import numpy as np

from ..exceptions import PrivacyWarning
from ..mechanisms import AboveThreshold

__all__ = ["SparseVectorUpdatesMixin"]


class SparseVectorUpdatesMixin:
    """The sparse-vector stream of DP-Winnow (used by DPWinnowClassifier).

    Needs ``parameters_`` (a :class:`~skdp.linear.DPWinnowParameters`),
    ``_accumulate``, ``_full_scores``, ``_release_weights``, ``_child_rng`` and
    ``_cap`` from the host; the block loop of ``MultiplicativeWeightsMixin`` calls
    ``_scan`` and ``_apply_update``.
    """

    def _init_sparse_vector(self):
        self._count = 0
        self._cache = None
        self._svt = self._new_svt()

    def _new_svt(self):
        p = self.parameters_
        # Mistake counts since the last update, given the released history, move by
        # at most 1 and all in the same direction between neighbours: monotone.
        return AboveThreshold(p.threshold, p.svt_epsilon, sensitivity=1.0, max_positives=1,
                              monotonic=True, random_state=self._child_rng(self.n_updates_, 0))

    def _scan(self, margins, ys, X, start):
        wrong = ys * margins <= 0
        counts = self._count + np.cumsum(wrong)
        answers = self._svt.process(counts, stop_after_positive=True)
        fired = answers.size > 0 and bool(answers[-1])
        stop = answers.size
        if self._cache is None and wrong[:stop].any():
            first = int(np.argmax(wrong[:stop]))
            self._cache = (X[start + first].astype(float), float(ys[first]))
        if not fired:
            self._count = int(counts[-1])
            return -1
        return stop - 1

    def _apply_update(self, X, ys, row):
        if self._cache is not None:
            self._accumulate(*self._cache)
        self._set_predicting_weights(self._release_weights(self._full_scores()))
        self.n_updates_ += 1
        self._cache, self._count = None, 0
        if self.n_updates_ >= self._cap():
            self.updates_exhausted_ = True
            self._svt = None
            warnings.warn(
                f"{type(self).__name__} made its maximum of {self.n_updates_} updates "
                "(max_updates K): to keep its privacy guarantee it stops learning and "
                "keeps predicting with its last released weights.",
                PrivacyWarning, stacklevel=6)
        else:
            self._svt = self._new_svt()
