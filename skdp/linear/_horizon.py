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

    def _warn_horizon(self, horizon):
        if not self._horizon_warned:
            warnings.warn(
                f"{type(self).__name__}: the stream passed n_rounds={horizon} rows. "
                "Privacy is unchanged (it is capped by max_updates, not by T), but the "
                "mistake bound assumed T rows.", UserWarning, stacklevel=6)
            self._horizon_warned = True
