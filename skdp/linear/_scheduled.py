"""DP-Winnow's scheduled loop: one release per public window of B rows.

Within a window the predicting weights are fixed, so a window is one matrix–vector
product; Python iterates once per window (plus once per ``partial_fit`` block).
The privacy argument is in :class:`~skdp.linear.DPWinnowClassifier` (Lemma S).
"""

import math
import warnings
from collections import deque
from dataclasses import replace

import numpy as np

from ..exceptions import PrivacyWarning
from ..mechanisms import geometric_mechanism
from ..streams._guard import _variance
from ._base import _prediction_errors
from ._schedule import solve_schedule

__all__ = ["ScheduledUpdatesMixin"]


#: ℓ1-sensitivity of a check's mistake difference (one row's term lies in {−1, 0, 1}).
CHECK_SENSITIVITY = 2
#: The fallback's constant pools its newest per-call counts until their rows are at
#: least POOL_Z standard deviations of their summed noise (public): the pooled share's
#: noise is then ≤ 1/(2·POOL_Z) ≈ 3 % of the rows. One call of ≥ 25 rows at ε_c = 0.9.
POOL_Z = 16.0
#: Per-call counts kept for that pooling (public).
MAX_POOL = 4096


class ScheduledUpdatesMixin:
    """The ``setting="scheduled"`` stream of DP-Winnow (used by DPWinnowClassifier).

    Needs ``parameters_`` (a :class:`~skdp.linear._schedule.DPWinnowSchedule`),
    ``_scores``, ``_release_weights``, ``_child_rng`` and ``_cap`` from the host.
    """

    def _solve_schedule(self, epsilon, delta, n_features, horizon):
        if self.threshold is not None:
            raise ValueError(
                f"{type(self).__name__}: threshold is the sparse-vector threshold of "
                "setting='practical' or 'theory'; the scheduled setting has none.")
        return solve_schedule(
            epsilon, delta, float(self._margin_value(n_features)), int(horizon),
            self._n_coords(n_features),
            fit_intercept=bool(self.fit_intercept and self.double_features),
            max_updates=self.max_updates, n_samples=self.n_samples, window=self.window)

    def _start_schedule(self, n_rows, from_fit):
        """At the start of a stream, when the guard rules learning out: the constant's
        first count covers the first call's rows (n and T are public; ``fit`` is one
        call), as every later count covers one call (``_consume_recount``); and warn."""
        p = self.parameters_
        if p.max_updates > 0:
            return
        self.parameters_ = replace(p, count_rows=min(self.n_rounds_, n_rows))
        warnings.warn(
            f"{type(self).__name__} cannot learn within n_rounds={self.n_rounds_} rows at "
            f"these public parameters ({p.reason}); it predicts a privately "
            "estimated constant instead (one noisy label count, all of ε). A "
            "larger ε, margin or horizon moves it into the region where it learns "
            "(see benchmarks/results/winnow.md).", UserWarning, stacklevel=6)

    def _init_schedule(self):
        self._in_window = 0
        self._batch = np.zeros_like(self._scores)
        self._batch_n = 0
        self._positives = 0
        self._prior = 0.0  # the warm start's bias score (kept apart from S)
        self.constant_fallback_ = False
        self._schedule_warned = False
        self._balance = None  # the released constant's margin 2q̂ − 1, once released
        self._check_diff = 0  # private: the current check window's mistake difference
        self.predicts_constant_ = False
        self.n_checks_ = 0
        self.n_recounts_ = 0

    def _segment_end(self):
        """Rows in the current window: B, except that the window holding row T ends
        there (windows (k−1)B < t ≤ min(kB, T), all public), so the K-th release is
        made at the horizon instead of never; past T (``beyond_horizon="warn"``,
        overridden K) windows are B again. The count's window is n_c rows."""
        p = self.parameters_
        if p.max_updates == 0:
            return p.count_rows
        left = self.n_rounds_ - self.n_updates_ * p.window
        return min(p.window, left) if left > 0 else p.window

    def _consume_scheduled(self, X, ys):
        p = self.parameters_
        n, pos = X.shape[0], 0
        while pos < n:
            if self.constant_fallback_:
                self._consume_recount(X[pos:], ys[pos:])
                break
            if self.updates_exhausted_:
                self._warn_after_schedule()
                self._after_frozen_block(X[pos:], ys[pos:])
                break
            take = min(n - pos, self._segment_end() - self._in_window)
            xs, yc = X[pos:pos + take], ys[pos:pos + take]
            margins = self._margins(xs)
            wrong = _prediction_errors(margins, yc)
            self._n_mistakes += wrong
            if self._comparing():
                self._check_diff += wrong - _prediction_errors(
                    np.full(yc.size, self._balance), yc)
            if self.n_updates_ == 0 and p.count_epsilon > 0:
                self._positives += int(np.count_nonzero(yc > 0))
            room = p.max_batch - self._batch_n
            if room > 0:
                # The first ≤ room mistakes of the window (zero margin counts, as sgn(0) ≠ y).
                idx = np.flatnonzero(yc * margins <= 0)[:room]
                if idx.size:
                    self._fold(xs[idx], yc[idx])
            self._in_window += take
            pos += take
            if self._in_window == self._segment_end():
                self._end_window()
        self.n_rounds_seen_ += n

    def _fold(self, xs, yc):
        """Add Σ ŷ·û over a window's update rows to the pending batch."""
        d = xs.shape[1]
        self._batch[:d] += yc @ xs
        if self.fit_intercept:
            self._batch[d] += yc.sum()
        self._batch_n += yc.size

    _check_sensitivity = CHECK_SENSITIVITY  # a class attribute: the audit's twin lowers it

    def _comparing(self):
        """Whether rows now enter a comparison with the constant: once the constant is
        released (end of window 1), while the learner still releases weights."""
        return self._balance is not None and not self.constant_fallback_

    def _release_check(self):
        """Release the noisy difference of the released weights' and the constant's
        mistakes over the check window just ended; predict with whichever made fewer
        (the constant on ties). Sensitivity 2 (one row's term lies in {−1, 0, 1});
        discrete Laplace at the count's ε (Lemma C in DPWinnowClassifier)."""
        noisy = geometric_mechanism(self._check_diff, self.parameters_.count_epsilon,
                                    sensitivity=self._check_sensitivity,
                                    random_state=self._child_rng(self.n_updates_, 0))
        self.predicts_constant_ = bool(noisy >= 0)
        self._check_diff = 0
        self.n_checks_ += 1

    def _private_balance(self, rows=None, index=0):
        """2q̂ − 1 ∈ [−1, 1], q̂ the geometric-noised share of positive labels in the
        count window (``rows`` rows; count ``index`` of the stream): its sign is the
        private constant, its size how much better than a coin that constant is."""
        p = self.parameters_
        rows = p.count_rows if rows is None else rows
        noisy = geometric_mechanism(self._positives, p.count_epsilon,
                                    random_state=self._child_rng(index, 0))
        self._positives = 0
        self._constant_rows = rows
        return float(np.clip(2.0 * noisy / rows - 1.0, -1.0, 1.0))

    def _predict_constant(self, balance):
        """Mass (1 ± b)/2 on the ±bias coordinates: the margin of every row is
        b = 2q̂ − 1 (its sign the constant), and predict_proba's vote share over the
        counted labels is (noisy count + 1)/(rows + 2)."""
        half = self._scores.size
        w = np.zeros(2 * half)
        w[half - 1], w[-1] = (1.0 + balance) / 2.0, (1.0 - balance) / 2.0
        self._set_predicting_weights(w)
        self._balance = balance

    def _consume_recount(self, X, ys):
        """The learnability guard's fallback after its first count (the first call's
        rows): the constant is recounted on each later ``partial_fit`` call's rows
        (rows past T in the first call: with its rest), each count at ε_c on its own
        rows — disjoint windows whose ends, the call ends, are public: parallel
        composition, Lemma S (3). The
        newest counts predict, pooled (newest first) until their rows are ``POOL_Z``
        noise widths: a stream whose base rate changes is followed from the next
        call on (fair in file order, chunks of 1,000: 0.549 → 0.176 error; doubling
        windows lagged by 2,000 rows). Called with the rest of a call; the caller,
        ``_consume_scheduled``, counts the rows in ``n_rounds_seen_``."""
        self._n_mistakes += _prediction_errors(self._margins(X), ys)
        self._positives += int(np.count_nonzero(ys > 0))
        self.n_recounts_ += 1
        self._pool.append((self._private_balance(X.shape[0], self.n_recounts_),
                           X.shape[0]))
        self._predict_constant(self._pooled_balance())

    def _pooled_balance(self):
        """The released counts' pooled balance Σ rows·b / Σ rows over the newest
        counts whose rows reach ``POOL_Z`` standard deviations of their summed noise
        (post-processing); sets the rows behind it (``predict_proba``'s votes)."""
        sd = math.sqrt(_variance(1.0 / self.parameters_.count_epsilon))
        total = rows = 0.0
        for k, (balance, n) in enumerate(reversed(self._pool), 1):
            total, rows = total + balance * n, rows + n
            if rows >= POOL_Z * sd * math.sqrt(k):
                break
        self._constant_rows = int(rows)
        return float(np.clip(total / rows, -1.0, 1.0))

    def _end_window(self):
        p = self.parameters_
        self._in_window = 0
        if self.n_updates_ == 0 and p.count_epsilon > 0:
            balance = self._balance = self._private_balance()
            if p.max_updates == 0:  # the guard: predict the private constant
                self._predict_constant(balance)
                self.constant_fallback_ = True
                self._pool = deque([(balance, p.count_rows)], maxlen=MAX_POOL)
                return
            # Warm start towards that constant, as strongly as the labels are unbalanced:
            # at |2q̂ − 1| ≥ 1/2 the bias coordinate holds most of the mass (it predicts
            # the constant), near a balanced stream the start stays near uniform.
            strength = min(1.0, 2.0 * abs(balance)) * p.prior_strength
            self._prior = math.copysign(strength, balance) / p.learning_rate
            # Until the first comparison, predict the constant: the learner has to earn
            # its way in (the guarantee "never worse than the private constant").
            self.predicts_constant_ = True
        self._scores += self._batch
        self._batch[:] = 0.0
        self._batch_n = 0
        scores = self._full_scores()
        if self._prior:
            half = self._scores.size
            scores[half - 1] += self._prior
            scores[-1] -= self._prior
        self._set_predicting_weights(self._release_weights(scores))
        self.n_updates_ += 1
        if self._balance is not None and self.n_updates_ >= 2 and \
                self.n_updates_ & (self.n_updates_ - 1) == 0:
            # Check windows: windows 2, 3–4, 5–8, … (public; disjoint from the count's
            # window 1 and from each other).
            self._release_check()
        if self.n_updates_ >= self._cap():
            self.updates_exhausted_ = True

    def _warn_after_schedule(self):
        if not self._schedule_warned:
            warnings.warn(
                f"{type(self).__name__} made its {self.n_updates_} scheduled updates "
                "(max_updates K = ⌈n_rounds/window⌉): to keep its privacy guarantee it "
                "stops learning and keeps predicting with its last released weights.",
                PrivacyWarning, stacklevel=7)
            self._schedule_warned = True
