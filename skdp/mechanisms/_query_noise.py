"""Per-query noise that does not depend on how the queries are batched."""

import numpy as np


class BufferedQueryNoise:
    """Mixin for interactive mechanisms that add fresh Laplace noise to every query.

    Query i always receives the i-th draw of the mechanism's noise stream, however
    the caller splits the queries into calls: noise drawn for queries a call did
    not answer (it halted, or stopped after a positive) waits in a buffer for the
    next call. So processing a stream in blocks gives exactly the answers of one
    pass with the same seed.

    The host class provides ``_rng`` (a numpy Generator) and ``_query_noise_scale``.
    """

    _noise_buffer = np.empty(0)  # rebound, never mutated in place

    def _take_noise(self, n):
        missing = n - self._noise_buffer.size
        if missing > 0:
            fresh = self._rng.laplace(0.0, self._query_noise_scale, size=missing)
            self._noise_buffer = np.concatenate([self._noise_buffer, fresh])
        noise, self._noise_buffer = self._noise_buffer[:n], self._noise_buffer[n:]
        return noise

    def _give_back_noise(self, noise):
        self._noise_buffer = np.concatenate([noise, self._noise_buffer])
