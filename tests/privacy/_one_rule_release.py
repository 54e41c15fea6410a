"""A vectorised sampler of one-rule DP decision-list releases (max_rules=1, 0/1 features).

Such a release is one rule-step draw from scores that are fixed by the data, then the
noisy (rule × class) histogram of the regions that rule leaves, then post-processing
(:func:`skdp.decision_list._frequencies.smoothed_proba` and ``_set_list``). The whole-fit
sampler (:func:`_decision_list_audit_runs.private_sampler`) runs all of it n times. This
one runs the estimator's own ``_release`` only to read what is deterministic — the rule
step's scores, and for each rule drawn the exact counts, the selected labels and prior
handed to the post-processing — then draws the randomness through the estimator's (or
its twin's) own methods: n rule draws from its ``_selector``, and for each rule the
noise of all its trials in ONE ``_release_counts`` call. Each trial's post-processing
is the estimator's own ``smoothed_proba`` + ``_set_list`` on its noisy counts.

The law is the whole fit's: the rule step's draw and the histogram noise are the
release's only random inputs (``max_rules`` fixed: no noisy row count), the draws are
independent, and the counts depend on the data and the rule only.
:func:`check_against_release` replays trials through the real ``_release`` with their
draws injected and compares the outputs (used by the audits' tests).
"""

import numpy as np
import scipy.sparse as sp
from _decision_list_audit_runs import private_run

from skdp.decision_list import _private


class _Capture:
    """Patches ``clf`` (instance attributes) and ``_private.smoothed_proba`` for one
    release: records the selector's scores and the inputs of the histogram step;
    optionally forces the rule drawn and the noisy counts."""

    def __init__(self, clf, choice=None, noisy=None):
        self.clf, self.choice, self.noisy = clf, choice, noisy
        self.selects, self.counts, self.post = [], [], []

    def __enter__(self):
        clf = self.clf
        real_selector, real_noise = clf._selector, clf._release_counts
        real_smoothed, real_set_list = _private.smoothed_proba, clf._set_list

        def selector(step, rng):
            select = real_selector(step, rng)

            def recorded(scores, coverage):
                self.selects.append((step, np.array(scores), np.array(coverage)))
                return select(scores, coverage) if self.choice is None else self.choice

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
    """n trials: (rule drawn, noisy counts, encoded output) of each."""
    Xc, y, w = _data(data)
    clf.classes_ = np.array([0, 1])
    with _Capture(clf) as cap:
        private_run(clf, Xc, y, rng, w)
    (step, scores, coverage), = cap.selects  # one rule step, scores fixed by the data
    select = clf._selector(step, rng)
    choices = np.array([select(scores, coverage) for _ in range(n)])
    outs = np.empty((n, width), dtype=np.int64)
    noisy_of = [None] * n
    for choice in np.unique(choices):
        trials = np.flatnonzero(choices == choice)
        with _Capture(clf, choice=choice) as cap:
            private_run(clf, Xc, y, rng, w)
        (counts, unit, eps_h), = cap.counts
        (selected, prior), = cap.post
        stacked = np.broadcast_to(counts, (trials.size, *counts.shape))
        noisy = clf._release_counts(stacked, unit, eps_h, rng)
        for i, trial_noisy in zip(trials, noisy, strict=True):
            proba = _private.smoothed_proba(trial_noisy, selected, prior)
            clf._set_list(cap.result, trial_noisy, proba)
            outs[i] = encode(clf)
            noisy_of[i] = trial_noisy
    return choices, noisy_of, outs


def one_rule_sampler(clf, encode, width):
    """Sampler for :func:`skdp.audit.audit_mechanism`: ``encode(clf)`` of n releases."""

    def sample(data, n, rng):
        return _draw(clf, encode, width, data, n, rng)[2]

    return sample


def check_against_release(clf, encode, width, data, n=40, seed=0):
    """Replay n batched trials through the real ``_release``, each with its rule draw
    and noisy counts injected, and assert the same encoded output."""
    choices, noisy_of, outs = _draw(clf, encode, width, data, n, np.random.default_rng(seed))
    Xc, y, w = _data(data)
    for choice, noisy, out in zip(choices, noisy_of, outs, strict=True):
        with _Capture(clf, choice=choice, noisy=noisy):
            private_run(clf, Xc, y, np.random.default_rng(seed), w)
        np.testing.assert_array_equal(encode(clf), out)
    return outs
