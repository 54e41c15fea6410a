"""Whole-estimator privacy audit of AdaptivePrivateOnlineClassifier, with negative controls.

Neighbouring streams of T rows over the points class on {0, 1} differ in row 0 only:

    D : (x = 0, y = 1) on every row — every row is a mistake of the first hypothesis
        (the SOA's all-negative one), so AboveThreshold's count grows by one per row;
    D′: row 0 is (x = 1, y = 0) — correct, so every later count is one lower, and row 0
        is not inserted into any sequence.

The audited output is what the estimator releases over the whole stream, summarised as
(round of the first switch, number of switches, |L_1|, layer): the released hypothesis of
every round is a function of it. Here (N_0 = 32 at ε = 1) the layer-1 histogram never
releases, so the output is the first switch round: the events "first switch at round ≤ r",
r ∈ {70, 79, 84, 90} (its 10%–90% range), are fixed from this structure before any sample
is drawn, and both directions are tested (Bonferroni over all of them).

* The real estimator must keep the Clopper–Pearson lower bound ≤ ε.
* ``NoiselessSVT`` — AboveThreshold without threshold or query noise: the first switch
  happens one round later on D′, deterministically. The same audit must catch it.
The histogram's own audit (negative controls included) is tests/privacy/
test_histogram_audit.py; here a slow test runs the estimator where its histogram releases.
"""

import warnings

import numpy as np
import pytest

from skdp.audit import audit_mechanism
from skdp.exceptions import PrivacyWarning
from skdp.hypotheses.littlestone import PointVersionSpace
from skdp.mechanisms import AboveThreshold
from skdp.online import AdaptivePrivateOnlineClassifier
from skdp.online._adaptive import _KeyedRngs
from skdp.online._adaptive_core import LiWangYeCore

EPSILON, DELTA, ALPHA = 1.0, 1e-6, 1e-6
N_ROWS = 120
PARAMS = dict(epsilon=EPSILON, delta=DELTA, hypothesis_class=PointVersionSpace(2),
              n_rounds=N_ROWS, n_sequences=32, release="histogram")


class _ZeroNoiseSVT(AboveThreshold):
    _threshold_noise_scale = 0.0
    _query_noise_scale = 0.0


class NoiselessSVT(AdaptivePrivateOnlineClassifier):
    def _make_core(self, learner, params):
        return LiWangYeCore(learner, params, _rngs(self), svt_factory=_ZeroNoiseSVT)


def _rngs(est):
    return _KeyedRngs(est._noise)


def _streams(n_rows=N_ROWS):
    X0 = np.zeros((n_rows, 1))
    X1 = X0.copy()
    X1[0, 0] = 1.0
    y0 = np.ones(n_rows, dtype=int)
    y1 = y0.copy()
    y1[0] = 0
    return (X0, y0), (X1, y1)


def _summary(est, wrong):
    """What the stream released, as integers: the first switch round, the switches, |L_1|
    and the final layer. (The mistakes pattern of D is all ones until the first switch.)"""
    del wrong
    first = est._first_switch if est._first_switch is not None else N_ROWS
    sizes = [*est.list_sizes_, -1]
    return [first, est.n_switches_, sizes[1], est.layer_]


def _run(cls, data, seed, **kw):
    X, y = data
    est = cls(**{**PARAMS, **kw}, random_state=seed)
    est._first_switch = None
    step = est._step

    def recording(x, y_, wrong):
        if est._first_switch is None:
            est._first_switch = est.n_rounds_seen_
        step(x, y_, wrong)

    est._step = recording
    wrong = est._partial_fit_mistakes(X, y, classes=[0, 1])
    return est, wrong


def _sampler(cls, **kw):
    def sample(data, n, rng):
        seeds = rng.integers(2**62, size=n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)
            return np.array([_summary(*_run(cls, data, int(s), **kw)) for s in seeds])

    return sample


def test_audit_path_is_the_fit_path():
    d0, _ = _streams()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        for seed in range(3):
            est, wrong = _run(AdaptivePrivateOnlineClassifier, d0, seed)
            fitted = AdaptivePrivateOnlineClassifier(**PARAMS, random_state=seed)
            fitted_wrong = fitted._partial_fit_mistakes(*d0, classes=[0, 1])
            np.testing.assert_array_equal(wrong, fitted_wrong)
            assert est.n_switches_ == fitted.n_switches_ >= 1
            assert est._first_switch < N_ROWS


EVENTS = [lambda out, r=r: out[:, 0] <= r for r in (70, 79, 84, 90)]


def test_adaptive_learner_audit_passes():
    d0, d1 = _streams()
    result = audit_mechanism(_sampler(AdaptivePrivateOnlineClassifier), d0, d1,
                             n_samples=1000, events=EVENTS, alpha=ALPHA, delta=DELTA,
                             random_state=1)
    assert result.epsilon_lower_bound <= EPSILON, str(result)


def test_noiseless_svt_is_caught():
    d0, d1 = _streams()
    result = audit_mechanism(_sampler(NoiselessSVT), d0, d1, n_samples=200, events=EVENTS,
                             alpha=ALPHA, delta=DELTA, random_state=2)
    assert result.epsilon_lower_bound > EPSILON, str(result)


@pytest.mark.slow
def test_adaptive_learner_audit_more_samples():
    d0, d1 = _streams()
    result = audit_mechanism(_sampler(AdaptivePrivateOnlineClassifier), d0, d1,
                             n_samples=20000, events=EVENTS, alpha=ALPHA, delta=DELTA,
                             random_state=4)
    assert result.epsilon_lower_bound <= EPSILON, str(result)


@pytest.mark.slow
def test_audit_where_the_histogram_releases():
    """ε = 2, N_0 = 2048: the layer-1 histogram releases the target's hypothesis on most
    runs, so the output varies in |L_1|, the layer and later switches too; events are
    chosen on a pilot sample (likelihood ratio of the discrete outputs)."""
    n_rows, epsilon = 1400, 2.0
    d0, d1 = _streams(n_rows)
    kw = dict(epsilon=epsilon, n_sequences=2048, n_rounds=n_rows)
    est, _ = _run(AdaptivePrivateOnlineClassifier, d0, 0, **kw)
    assert est.list_sizes_[1] >= 1
    result = audit_mechanism(_sampler(AdaptivePrivateOnlineClassifier, **kw), d0, d1,
                             n_samples=1500, n_pilot=500, alpha=ALPHA, delta=DELTA,
                             random_state=5)
    assert result.epsilon_lower_bound <= epsilon, str(result)
