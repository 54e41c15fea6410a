"""Statistical privacy audits of the stable histogram, with negative controls.

Three ways the mechanism could leak, each audited on neighbouring inputs that make
it work hard (replacement of one record), each with a broken variant the same audit
must catch:

1. an item of count 1 present in D but not in D′ must (almost) never be released
   → broken: no threshold;
2. the δ spent on truncation: the edge outcomes c ± A of a shifted count occur with
   probability ≤ δ in total → broken: truncation computed too small; and the audit
   is *tight* (claiming δ/4 instead of δ fails);
3. the pure ε part: two counts move by one each → broken: half the noise.
"""

import math

import numpy as np
import pytest

from skdp.audit import audit_mechanism, epsilon_lower_bound
from skdp.mechanisms.histogram import StableHistogram

ALPHA = 1e-6
EPS, DELTA = 1.0, 1e-3


class NoThreshold(StableHistogram):
    """Broken: releases every present item, however rare (count-1 items leak)."""

    def _threshold(self, n_records):
        return 1


class HalfNoise(StableHistogram):
    """Broken: noise scale 1/ε instead of 2/ε (ignores that two counts move)."""

    @property
    def _noise_scale(self):
        return 1.0 / self.epsilon


class ShortTruncation(StableHistogram):
    """Broken: truncation A/2 — the edge outcomes carry far more than δ."""

    @property
    def _truncation(self):
        return super()._truncation // 2


def _sampler(cls, items, **kw):
    def sample(data, n, rng):
        return cls(EPS, DELTA, random_state=rng, **kw).simulate(data, n, items)

    return sample


def _audit(cls, d0, d1, items, events, n, **kw):
    return audit_mechanism(
        _sampler(cls, items, **kw),
        d0,
        d1,
        n_samples=n,
        events=events,
        alpha=ALPHA,
        delta=DELTA,
        random_state=2024,
    )


# 1. the count-1 item ------------------------------------------------------------

X, Y = 0, 1
D_RARE = [X] + [Y] * 40  # x appears once
D_RARE_NB = [Y] * 41  # x replaced by y


def _x_released(out):
    return out[:, 0] > 0


@pytest.mark.parametrize("cls", [StableHistogram])
def test_count_one_item_audit_passes(cls):
    res = _audit(cls, D_RARE, D_RARE_NB, [X, Y], [_x_released], 50_000)
    assert res.epsilon_lower_bound <= EPS, str(res)


def test_count_one_item_audit_catches_no_threshold():
    res = _audit(NoThreshold, D_RARE, D_RARE_NB, [X, Y], [_x_released], 50_000)
    assert res.epsilon_lower_bound > EPS, str(res)


def test_count_one_item_with_eta_threshold():
    # with η the list length is public: D and D′ have the same length (replacement)
    res = _audit(StableHistogram, D_RARE, D_RARE_NB, [X, Y], [_x_released], 20_000, eta=0.1)
    assert res.epsilon_lower_bound <= EPS, str(res)


# 2. the δ of the truncation ----------------------------------------------------


def _edge_setup(cls):
    a = cls(EPS, DELTA)._truncation
    c = 2 * a + 5  # always released, so the edge outcomes are visible
    d0 = [X] * c + [Y] * c
    d1 = [X] * (c - 1) + [Y] * (c + 1)

    def edge(out):
        return (out[:, 0] == c + a) | (out[:, 1] == c - a)

    return d0, d1, edge


def test_edge_delta_audit_passes():
    d0, d1, edge = _edge_setup(StableHistogram)
    res = _audit(StableHistogram, d0, d1, [X, Y], [edge], 200_000)
    assert res.epsilon_lower_bound <= EPS, str(res)


def test_edge_delta_is_tight():
    # The same counts, judged against δ/4: the audit proves δ is really spent,
    # i.e. the analysis is not loose and the audit has power at this δ.
    d0, d1, edge = _edge_setup(StableHistogram)
    sample = _sampler(StableHistogram, [X, Y])
    rng0, rng1 = np.random.default_rng(1), np.random.default_rng(2)
    n = 200_000
    k0 = int(edge(sample(d0, n, rng0)).sum())
    k1 = int(edge(sample(d1, n, rng1)).sum())
    assert k1 == 0
    assert epsilon_lower_bound(k0, n, k1, n, ALPHA, DELTA / 4) > EPS
    assert epsilon_lower_bound(k0, n, k1, n, ALPHA, DELTA) <= EPS


def test_edge_delta_audit_catches_short_truncation():
    d0, d1, edge = _edge_setup(ShortTruncation)
    res = _audit(ShortTruncation, d0, d1, [X, Y], [edge], 50_000)
    assert res.epsilon_lower_bound > EPS, str(res)


# 3. the pure ε part --------------------------------------------------------------

C = 200  # far above any threshold here
D_SHIFT, D_SHIFT_NB = [X] * C + [Y] * C, [X] * (C - 1) + [Y] * (C + 1)


def _shift_event(out):
    # likelihood ratio exactly e^{2/b} on this event (both coordinates on the far side)
    return (out[:, 0] >= C) & (out[:, 1] <= C)


def test_pure_epsilon_audit_passes():
    res = _audit(StableHistogram, D_SHIFT, D_SHIFT_NB, [X, Y], [_shift_event], 200_000)
    assert res.epsilon_lower_bound <= EPS, str(res)
    assert res.epsilon_lower_bound > 0.8 * EPS  # the audit is near-tight here


def test_pure_epsilon_audit_catches_half_noise():
    res = _audit(HalfNoise, D_SHIFT, D_SHIFT_NB, [X, Y], [_shift_event], 200_000)
    assert res.epsilon_lower_bound > EPS, str(res)


def test_generic_events_audit_passes():
    # Events chosen by the audit itself on a pilot sample (likelihood-ratio sets).
    d0 = [X] * 18 + [Y] * 18
    d1 = [X] * 17 + [Y] * 19
    res = audit_mechanism(
        _sampler(StableHistogram, [X, Y]),
        d0,
        d1,
        n_samples=100_000,
        alpha=ALPHA,
        delta=DELTA,
        random_state=7,
    )
    assert res.epsilon_lower_bound <= EPS, str(res)


@pytest.mark.slow
@pytest.mark.parametrize("eps", [0.25, 0.5, 2.0])
@pytest.mark.parametrize("delta", [1e-2, 1e-4])
def test_sweep(eps, delta):
    a = StableHistogram(eps, delta)._truncation
    c = 2 * a + 5
    d0, d1 = [X] * c + [Y] * c, [X] * (c - 1) + [Y] * (c + 1)

    def sample(data, n, rng):
        return StableHistogram(eps, delta, random_state=rng).simulate(data, n, [X, Y])

    events = [
        lambda o: (o[:, 0] >= c) & (o[:, 1] <= c),
        lambda o: (o[:, 0] == c + a) | (o[:, 1] == c - a),
    ]
    res = audit_mechanism(
        sample, d0, d1, n_samples=400_000, events=events, alpha=ALPHA, delta=delta, random_state=1
    )
    assert res.epsilon_lower_bound <= eps, str(res)
    assert math.isfinite(res.epsilon_lower_bound)


def test_generic_events_audit_catches_half_noise():
    d0 = [X] * 18 + [Y] * 18
    d1 = [X] * 17 + [Y] * 19
    res = audit_mechanism(
        _sampler(HalfNoise, [X, Y]),
        d0,
        d1,
        n_samples=100_000,
        alpha=ALPHA,
        delta=DELTA,
        random_state=7,
    )
    assert res.epsilon_lower_bound > EPS, str(res)
