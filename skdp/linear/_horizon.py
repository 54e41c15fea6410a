"""DP-Winnow's horizon T: rows past it are refused or go on under the same privacy.

T sizes the schedule and the mistake bound only (utility); privacy is capped by the
number of updates K, so ``beyond_horizon="warn"`` continues under the same (ε, δ).
"""

import warnings

__all__ = ["DEFAULT_STREAM_HORIZON", "StreamHorizonMixin"]

#: Horizon T used by ``partial_fit`` streams when ``n_rounds`` is None.
DEFAULT_STREAM_HORIZON = 10**6


class StreamHorizonMixin:
    """``beyond_horizon`` handling (used by DPWinnowClassifier)."""

    def _check_horizon(self, seen, n, horizon):
        """False if the block fits in the horizon; raise or return True otherwise."""
        if seen + n <= horizon:
            return False
        if self.beyond_horizon == "raise":
            raise ValueError(
                f"{type(self).__name__}: this block would take the stream to {seen + n} "
                f"rows, beyond n_rounds={horizon} (beyond_horizon='raise'); nothing was "
                "processed or spent. Start a new stream with fit, or set a larger n_rounds."
            )
        return True

    def _warn_unsized_horizon(self, n, from_fit):
        """Warn (parameters and the public row count only) when the horizon the schedule
        is sized to is a guess or contradicts the stream: a ``partial_fit`` stream
        without ``n_rounds`` (T = 10⁶ assumed), or a ``fit`` whose n rows are at most
        half of ``n_rounds`` (most of the K releases, and of ε, would go unused)."""
        if not from_fit and self.n_rounds is None:
            warnings.warn(
                f"{type(self).__name__}: n_rounds was not given, so the update schedule "
                f"assumes a stream of {DEFAULT_STREAM_HORIZON:,} rows. Pass n_rounds=the "
                "stream's expected length: on a much shorter stream most of ε goes to "
                "releases that never happen.", UserWarning, stacklevel=6)
        elif from_fit and self.n_rounds is not None and 2 * n <= self.n_rounds:
            warnings.warn(
                f"{type(self).__name__}: fit got {n} rows but n_rounds={self.n_rounds}: the "
                "schedule (and ε) was sized for the longer stream, and at most "
                "half of its releases happen.", UserWarning, stacklevel=6)

    def _warn_horizon(self, horizon):
        if not self._horizon_warned:
            warnings.warn(
                f"{type(self).__name__}: the stream passed n_rounds={horizon} rows. "
                "Privacy is unchanged (it is capped by max_updates, not by T), but the "
                "mistake bound assumed T rows.", UserWarning, stacklevel=6)
            self._horizon_warned = True
