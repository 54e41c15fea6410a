"""Exact ε between two runs whose releases are integer counts with discrete Laplace
noise (the streams' guard checks, releases and recounts).

A run is a list of ``(centres, scale)`` parts: each released count is its centre plus
independent DLap(scale) noise. Coordinates whose centres agree cancel in the ratio; the
rest are laid on integer grids ``width`` points past both centres (where the pure ε is
attained) and :func:`skdp.audit.exact_epsilon` compares the two product laws.
"""

from __future__ import annotations

import itertools

import numpy as np

from skdp.audit import exact_epsilon


def _log_law(centres, scales, grids):
    axes = []
    for c, b, grid in zip(centres, scales, grids, strict=True):
        alpha = np.exp(-1.0 / b)
        axes.append(np.log((1 - alpha) / (1 + alpha)) - np.abs(grid - c) / b)
    return np.array([sum(cell) for cell in itertools.product(*axes)])


def exact_noisy_counts_epsilon(parts, parts2, width):
    """Exact ε over the coordinates whose centres differ; the rest must agree."""
    centres, centres2, scales = [], [], []
    assert len(parts) == len(parts2)
    for (c, b), (c2, b2) in zip(parts, parts2, strict=True):
        c, c2 = np.atleast_1d(c), np.atleast_1d(c2)
        assert b == b2 and c.shape == c2.shape
        for a, a2 in zip(c, c2, strict=True):
            if a != a2:
                centres.append(a)
                centres2.append(a2)
                scales.append(b)
    grids = [np.arange(min(a, a2) - width, max(a, a2) + width + 1)
             for a, a2 in zip(centres, centres2, strict=True)]
    return exact_epsilon(_log_law(centres, scales, grids), _log_law(centres2, scales, grids))
