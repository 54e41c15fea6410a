"""DP-Winnow's sparse-vector loop (Bun & Fang, Alg 3): an update where an
AboveThreshold instance watching the mistake count fires.

Used by ``setting="practical"`` and ``"theory"``; the privacy argument (Thm 11) is in
:class:`~skdp.linear.DPWinnowClassifier`.
"""

import warnings

import numpy as np

from ..exceptions import PrivacyWarning
from ..mechanisms import AboveThreshold
from ._parameters import solve_dp_winnow_parameters

__all__ = ["SparseVectorUpdatesMixin"]


class SparseVectorUpdatesMixin:
    """The sparse-vector stream of DP-Winnow (used by DPWinnowClassifier).

    Needs ``parameters_`` (a :class:`~skdp.linear.DPWinnowParameters`),
    ``_accumulate``, ``_full_scores``, ``_release_weights``, ``_child_rng`` and
    ``_cap`` from the host; the block loop of ``MultiplicativeWeightsMixin`` calls
    ``_scan`` and ``_apply_update``.
    """

    def _solve_sparse_vector(self, epsilon, delta, n_features, horizon):
        if self.window is not None:
            raise ValueError(f"{type(self).__name__}: window applies to setting='scheduled'.")
        params = solve_dp_winnow_parameters(
            epsilon, delta, self._margin_value(n_features), horizon,
            self._n_coords(n_features), beta=self.beta, confidence=self.confidence,
            setting=self.setting, max_updates=self.max_updates,
            n_samples=self.n_samples, threshold=self.threshold,
        )
        if not params.feasible:
            raise ValueError(f"{type(self).__name__}: no valid parameters: {params.reason}")
        return params

    def _start_sparse_vector(self):
        if self.parameters_.max_updates > self.n_rounds_:
            warnings.warn(
                f"{type(self).__name__}: the solved K={self.parameters_.max_updates} "
                f"updates exceed the horizon n_rounds={self.n_rounds_}: the sparse-vector "
                "learner cannot make the updates its mistake bound needs within the "
                "stream. setting='scheduled' sizes K to the horizon.", UserWarning,
                stacklevel=6)

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
