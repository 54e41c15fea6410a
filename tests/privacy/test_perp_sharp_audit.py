"""Privacy audit of RectanglesPERP's ``preset="sharp"`` (partitioned slices, svt Stopper),
and of ``preset="charged"`` (the same schedule, copies calibrated by the charged lemma).

Same harness as ``test_perp_audit.py`` (one fresh predictor per run, transcript =
its 0/1 answers to a fixed stream, neighbouring initial samples differ in one row,
claim = the initial sample's (ε, δ(0))); the ChallengeBT-with-svt-Stopper lemma the
preset rests on has its own audit in ``test_between_thresholds_audit.py``.

Design (d = 1): S has A = 5 positives at 0, an even number of positives at 1 and one
negative. The Left copy takes the m smallest positives of *its part* (part 1 of the
random partition): B ~ Bin(A, ½) zeros and m − B ones, so its count above the query
0.5 is m − B, placed just above t_l. S' appends one positive at 0: B ~ Bin(A + 1, ½).
Correct: the partition dice and the BetweenThresholds noise hide the shift.
Broken twin: the partition by *position* (row i → part i mod 2, a natural bug that
makes the parts data-dependent) and BetweenThresholds without noise — S' then
always puts its extra zero in the Left part: count m − 2 ("medium", label 0) under S
and m − 3 ("low", label 1) under S', deterministically.
"""

import math

import numpy as np
import pytest
from _perp_audit_helpers import AuditedRectangles as _Audited
from _perp_audit_helpers import NoiselessChallengeBT, query_audit

from skdp.audit import audit_mechanism
from skdp.prediction._perp_phase import RectanglesRun

ALPHA = 1e-6
EPS = 2.0
N_QUERIES = 5
FAST = dict(delta=0.05, gamma=1.0, slice_size=1, max_hard=400, threshold=1.0,
            first_phase_length=20, preset="sharp")
EVENTS = [lambda t: t[:, 0] == 1, lambda t: t.mean(axis=1) > 0.5]


class _NoiselessRun(RectanglesRun):
    def _challenge_bt(self, q, seed):
        charged = q.bt_calibration == "charged"
        return NoiselessChallengeBT(q.threshold, q.upper_threshold, q.epsilon_instance,
                                    q.delta_instance, q.max_hard, q.length + 1,
                                    stopper="svt", stopper_epsilon=q.stopper_epsilon,
                                    bt_calibration=q.bt_calibration,
                                    bt_noise_scale=q.bt_noise_scale if charged else None,
                                    random_state=seed)


class _PositionPartitionRun(_NoiselessRun):
    def _partition(self, n):
        return np.arange(n) % (2 * self.d)


class PositionPartitionNoiseless(_Audited):
    """Broken: parts by row position, BetweenThresholds without noise."""

    _run_class = _PositionPartitionRun


def _data(preset="sharp"):
    probe = _Audited(epsilon=EPS, classes=[0, 1], **{**FAST, "preset": preset})
    probe.fit(np.array([[0.0], [1.0]] * 40), np.array([1, 0] * 40))
    t_l = probe.parameters_.initial_copies.min_gap + 0.5  # not an integer
    m = math.floor(t_l) + 3  # counts m − 2 > t_l > m − 3
    a, ones = 5, 2 * (2 * m + 100)  # 5 + ones positives: S' adds positive number 5 + ones (odd)
    X0 = np.concatenate([np.zeros(a), np.ones(ones), [2.0]])[:, None]
    y0 = np.append(np.ones(a + ones, dtype=int), 0)
    X1, y1 = np.vstack([X0, [[0.0]]]), np.append(y0, 1)
    return (X0, y0), (X1, y1), dict(epsilon=EPS, **{**FAST, "slice_size": m, "threshold": t_l,
                                                     "preset": preset})


def _transcripts(cls, queries, **params):
    def sample(data, n, rng):
        out = np.empty((n, len(queries)), dtype=np.int8)
        for i in range(n):
            out[i] = cls(random_state=rng, classes=[0, 1], **params).fit(*data).predict(queries)
        return out

    return sample


def _audit(cls, n_samples, transcripts=_transcripts, events=EVENTS, seed=11, preset="sharp"):
    """(audit result, claimed ε) on the initial-sample design; ``transcripts`` makes the
    sampler (``test_perp_proba_audit.py`` audits the scores with it)."""
    d0, d1, params = _data(preset)
    clf = _Audited(classes=[0, 1], **params).fit(*d0)
    clf.predict(np.zeros((1, 1)))
    assert clf.mechanism_started_
    eps, delta0 = clf._initial_privacy()
    queries = np.full((N_QUERIES, 1), 0.5)
    result = audit_mechanism(transcripts(cls, queries, **params), d0, d1, n_samples=n_samples,
                             events=events, alpha=ALPHA, delta=delta0, random_state=seed)
    return result, eps


@pytest.mark.parametrize("preset", ["sharp", "charged"])
def test_sharp_rectangles_pass_the_audit(preset):
    result, eps = _audit(_Audited, 300, preset=preset)
    # measured −0.53 (sharp; copies at ε_bt = ε) / −0.57 (charged)
    assert result.epsilon_lower_bound <= eps, str(result)


@pytest.mark.parametrize("preset", ["sharp", "charged"])
def test_audit_catches_position_partition_without_noise(preset):
    # Deterministic: 300/300 vs 0/300, measured ε ≥ 2.90 > 2 (both presets).
    result, eps = _audit(PositionPartitionNoiseless, 300, preset=preset)
    assert result.epsilon_lower_bound > eps, str(result)


# ---------------------------------------------------------------- a query's privacy
# Neighbouring streams: one query x* present or absent (its own answer withheld), as in
# test_perp_audit.py. Design (d = 1): every positive sits at 0.7, so each initial copy's
# slice is m points at 0.7 and the Left copy counts m above 0.55 and 0.45 — mid-band
# (m = t_l + gap/2), "medium". The stream: G = ⌈t_l⌉ − 1 queries at 0.55, x* at 0.55 (or
# nothing), enough queries at 0.45 for the svt Stopper to halt, then probes at 0.5. The
# Left copy restarts on its mediums with phase 1's parameters and counts G + [x*] points
# above 0.5: at t_l (k = 400 keeps it from halting again on the rest of the filler).
# Broken twin: noiseless BetweenThresholds (all copies) answers the
# probes "medium" with x* and "low" without, deterministically.
QUERY_EPS, N_PROBES, T_L = 3.0, 5, 20.5


class NoiselessSharp(_Audited):
    """Broken: every ChallengeBT copy without BetweenThresholds noise."""

    _run_class = _NoiselessRun


def _query_design(preset="sharp"):
    base = dict(delta=0.05, alpha=0.99, gamma=1.0, threshold=T_L, max_hard=400,
                first_phase_length=20_000, preset=preset, classes=[0, 1])
    probe = _Audited(epsilon=QUERY_EPS, slice_size=1, **base).fit([[0.0], [1.0]], [1, 0])
    init, q = probe.parameters_.initial_copies, probe.parameters_.phases[0]
    m = math.ceil(T_L + init.min_gap / 2)
    X = np.append(np.full(4 * m + 200, 0.7), 10.0)[:, None]
    y = np.append(np.ones(X.shape[0] - 1, dtype=int), 0)
    n_g = math.ceil(T_L) - 1
    n_f = init.max_hard - n_g + math.ceil(12 * init.stopper_noise_scale)
    stream = np.concatenate([np.full(n_g, 0.55), np.full(n_f, 0.45), np.full(N_PROBES, 0.5)])
    assert stream.size + 1 <= q.length
    return (X, y), stream[:, None], n_g, dict(epsilon=QUERY_EPS, slice_size=m, **base), q


def _query_audit(cls, n_samples, preset="sharp"):
    return query_audit(cls, _query_design(preset), n_samples, 12, N_PROBES, ALPHA)[0]


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["sharp", "charged"])
def test_sharp_rectangles_protect_a_query(preset):
    result = _query_audit(_Audited, 500, preset)  # measured ε ≥ −0.52 (sharp) / −0.59 (charged)
    assert result.epsilon_lower_bound <= QUERY_EPS, str(result)


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["sharp", "charged"])
def test_audit_catches_noiseless_sharp_on_a_query(preset):
    # Deterministic: 500/500 vs 0/500, measured ε ≥ 3.43 > 3 (both presets).
    result = _query_audit(NoiselessSharp, 500, preset)
    assert result.epsilon_lower_bound > QUERY_EPS, str(result)
