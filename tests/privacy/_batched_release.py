"""A vectorised sampler of DP decision-list releases of fixed length (``max_rules`` set,
0/1 features).

Such a release is a sequence of rule-step draws, each from scores fixed by the data and
the rules drawn before it, then the noisy (rule × class) histogram of the regions the
rules leave, then post-processing (:func:`skdp.decision_list._frequencies.smoothed_proba`
and ``_set_list``). The whole-fit sampler
(:func:`_decision_list_audit_runs.private_sampler`) runs all of it n times. This one runs
the estimator's own ``_release`` only to read what is deterministic — each step's scores
given the rules before it, and for each list of rules drawn the exact counts, the
selected labels and prior handed to the post-processing — then draws the randomness
through the estimator's (or its twin's) own methods: each step's draws for all trials
sharing the rules before it from its ``_selector``, and for each list of rules the noise
of all its trials in ONE ``_release_counts`` call. Each trial's post-processing is the
estimator's own ``smoothed_proba`` + ``_set_list`` on its noisy counts.

The law is the whole fit's: the rule steps' draws and the histogram noise are the
release's only random inputs (``max_rules`` fixed: no noisy row count), the draws are
independent given the rules before them, and the scores and counts depend on the data
and those rules only.
:func:`check_against_release` replays trials through the real ``_release`` with their
draws injected and compares the outputs (used by the audits' tests).
"""

import numpy as np
import scipy.sparse as sp
from _decision_list_audit_runs import private_run

from skdp.decision_list import _private


class _Stop(Exception):
    """Ends a release at the first rule step not forced by the prefix."""


class _Capture:
    """Patches ``clf`` (instance attributes) and ``_private.smoothed_proba`` for one
    release: the rule steps take the rules of ``prefix`` in order; the next step records
    its scores and stops the release; a release with no further step records the inputs
    of the histogram step (its noisy counts forced to ``noisy`` if given)."""

    def __init__(self, clf, prefix=(), noisy=None):
        self.clf, self.prefix, self.noisy = clf, tuple(prefix), noisy
        self.selects, self.counts, self.post = [], [], []

    def __enter__(self):
        clf = self.clf
        real_noise = clf._release_counts
        real_smoothed, real_set_list = _private.smoothed_proba, clf._set_list

        def selector(step, rng):  # the draws are made by _draw, from the real selector
            def recorded(scores, coverage):
                self.selects.append((step, np.array(scores), np.array(coverage)))
                if len(self.selects) > len(self.prefix):
                    raise _Stop
                return self.prefix[len(self.selects) - 1]

            return recorded

        def noise(counts, unit, step_epsilon, rng):
            self.counts.append((counts.copy(), unit, step_epsilon))
            if self.noisy is None:
                return real_noise(counts, unit, step_epsilon, rng)
            return self.noisy

        def smoothed(noisy, selected, prior):
            self.post.append((np.array(selected), prior))
            return real_smoothed(noisy, selected, prior)

        def set_list(result, counts, proba):
            self.result = result
            return real_set_list(result, counts, proba)

        clf._selector, clf._release_counts, clf._set_list = selector, noise, set_list
        _private.smoothed_proba = smoothed
        self._restore = real_smoothed
        return self

    def __exit__(self, *exc):
        for name in ("_selector", "_release_counts", "_set_list"):
            delattr(self.clf, name)
        _private.smoothed_proba = self._restore


def _data(data):
    X, y = data[:2]
    return sp.csr_matrix(X), y, (data[2] if len(data) > 2 else None)


def _draw(clf, encode, width, data, n, rng):
    """n trials: (rules drawn, noisy counts, encoded output) of each."""
    Xc, y, w = _data(data)
    clf.classes_ = np.array([0, 1])
    # what the law above assumes: 0/1 features (greedy_cover + _set_list) and a length
    # fixed by the plan (no noisy row count drawn before the rule steps)
    assert not clf._real_valued() and not clf._auto_length()
    outs = np.empty((n, width), dtype=np.int64)
    paths, noisy_of = [None] * n, [None] * n

    def expand(prefix, trials):
        further = False
        with _Capture(clf, prefix) as cap:
            try:
                private_run(clf, Xc, y, rng, w)
            except _Stop:
                further = True
        if further:  # a further rule step: draw it (the real selector) for these trials
            step, scores, coverage = cap.selects[-1]
            select = clf._selector(step, rng)
            draws = np.array([select(scores, coverage) for _ in trials])
            for rule in np.unique(draws):
                expand((*prefix, int(rule)), trials[draws == rule])
            return
        (counts, unit, eps_h), = cap.counts
        (selected, prior), = cap.post
        stacked = np.broadcast_to(counts, (trials.size, *counts.shape))
        noisy = clf._release_counts(stacked, unit, eps_h, rng)
        for i, trial_noisy in zip(trials, noisy, strict=True):
            proba = _private.smoothed_proba(trial_noisy, selected, prior)
            clf._set_list(cap.result, trial_noisy, proba)
            outs[i], paths[i], noisy_of[i] = encode(clf), prefix, trial_noisy

    expand((), np.arange(n))
    return paths, noisy_of, outs


def release_sampler(clf, encode, width):
    """Sampler for :func:`skdp.audit.audit_mechanism`: ``encode(clf)`` of n releases."""

    def sample(data, n, rng):
        return _draw(clf, encode, width, data, n, rng)[2]

    return sample


def check_against_release(clf, encode, width, data, n=40, seed=0):
    """Replay n batched trials through the real ``_release``, each with its rules and
    noisy counts injected, and assert the same encoded output."""
    paths, noisy_of, outs = _draw(clf, encode, width, data, n, np.random.default_rng(seed))
    Xc, y, w = _data(data)
    for path, noisy, out in zip(paths, noisy_of, outs, strict=True):
        with _Capture(clf, path, noisy) as cap:
            private_run(clf, Xc, y, np.random.default_rng(seed), w)
        assert len(cap.selects) == len(path)  # no step beyond the trial's rules
        np.testing.assert_array_equal(encode(clf), out)
    return outs
