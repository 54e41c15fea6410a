"""Stable-histogram noise of n trials drawn in ONE vectorised call of the mechanism's own
code, for audits whose histogram runs on a list that is fixed by the data.

A HistSparse run's histogram sees a list fixed by the data (and the rounds before it,
fixed too in the designs using this), and its noise is drawn from the histogram's own
generator, separate from the sparse vector's and the tie-break's. So the noisy counts of
all n trials can be drawn at once by the histogram's :meth:`StableHistogram.simulate`
(its ``_noisy`` on an (n, items) array: honest or a twin's override), and each trial then
runs the real whole path (``process``, ``release``, ``_mode``, the estimator around it)
with only its histogram's ``_noisy`` answering that trial's pre-drawn row (a patch of the
trial's own instance). :func:`check_injection` checks on real runs that this patch point
carries all of the histogram's randomness: a run that records its real draws and a run
with those draws injected give the same outputs.
"""

import contextlib
import functools

import numpy as np

from skdp.mechanisms import histogram
from skdp.mechanisms.histogram import _count_items


@contextlib.contextmanager
def cached_truncation():
    """Memoise ``histogram._truncation_bound`` (a pure function of (scale, δ), recomputed
    by every ``release``: half of a batched trial's time) while sampling."""
    real = histogram._truncation_bound
    histogram._truncation_bound = functools.lru_cache(maxsize=None)(real)
    try:
        yield
    finally:
        histogram._truncation_bound = real


def draw_rows(hist, data, n):
    """n released-count rows of ``hist`` (a StableHistogram or a twin) on ``data``, in the
    item order ``release`` counts them: one ``simulate`` call (its own generator)."""
    items = _count_items(np.asarray(data))[0]
    return hist.simulate(data, n, items)


def inject(hist, row, counts=None):
    """``hist``'s next release gets ``row`` as its noisy counts: released are the items
    with a row value > 0 (a released count is ≥ τ ≥ 2; unreleased are 0 in ``simulate``).
    ``counts``: the exact counts the row was drawn for, asserted (for a design whose
    histogram may run on any of several lists with the same counts: the noisy counts'
    law depends on the counts and τ only)."""
    def noisy(real_counts, tau, size, rng):
        assert tuple(size) == row.shape, "the list differs from the one the rows were drawn on"
        assert counts is None or np.array_equal(real_counts, counts)
        return row.copy(), row > 0

    hist._noisy = noisy


def record(hist, rows):
    """Let ``hist`` draw for real, appending each release's row as ``simulate`` reports it."""
    real = hist._noisy

    def noisy(counts, tau, size, rng):
        out, released = real(counts, tau, size, rng)
        rows.append(np.where(released, out, 0))
        return out, released

    hist._noisy = noisy


def check_injection(run, seeds):
    """``run(seed, prepare)`` builds a trial, calls ``prepare(hist)`` on its histogram and
    returns its output. Assert: recorded real draws, injected, give the same outputs.
    Returns the outputs and how many trials ran a histogram."""
    outs, ran = [], 0
    for seed in seeds:
        rows = []
        real = run(seed, lambda hist, rows=rows: record(hist, rows))
        assert len(rows) <= 1
        ran += len(rows)
        replay = run(seed, lambda hist, rows=rows: rows and inject(hist, rows[0]))
        np.testing.assert_array_equal(replay, real)
        outs.append(real)
    return outs, ran
