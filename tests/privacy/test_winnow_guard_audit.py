"""Exact privacy audit of DP-Winnow's guard (Lemma G of ``DPWinnowClassifier``: the
private check of its own answer against a constant on every ``partial_fit`` call),
with two broken twins the same audit catches.

The stream is one the learnability guard rules out (T = 256, ρ = 0.1), so the learner
releases only counts of positive labels (its fallback, Lemma S (3)): rows 1–64 (call
1), 65–128 (call 2), 129–256 (call 3), each geometric at the learner's ε_c. Calls 2
and 3 are checked first: the mistakes of the released constant on the call's rows
and the count of positive labels, discrete Laplace of the guard's scale (the
negatives' count released is the call's public length minus the noisy positives). Every released
number is an integer with independent noise around a centre that is a function of the
data and of what was released before; the neighbour D′ flips the label of one row of
call 3, the last call, so everything released before it is identical (same seed, same
rows) and only two releases see the row: check 3 (its mistake count and positive
count move by 1) and the count of rows 129–256 (by 1). Their exact law is the product
of discrete Laplace laws around the recorded centres, and
:func:`skdp.audit.exact_epsilon` gives the exact ε between D and D′.

Claims: the checks cost g·ε (L1 sensitivity 2 under a replaced row, scale 2/(g·ε)),
the whole stream ε (the learner at (1 − g)·ε). Twins: ``AddRemoveGuard`` noises both
class counts at the add/remove scale (K + 1)/(g·ε), forgetting that a replaced row
moves both: 1.5·g·ε. ``FreeGuard`` runs the learner at the full ε as
if the checks were free: (1 + g)·ε.
"""

import warnings

import numpy as np
import pytest
from _exact_noisy_counts import exact_noisy_counts_epsilon

import skdp.linear._scheduled as scheduled
from skdp.linear import DPWinnowClassifier
from skdp.streams._guard import ConstantGuard

EPSILON, SHARE = 2.0, 0.5  # the learner at (1 − g)·ε = 1: counts over 64 rows at ε ≥ 1
WIDTH = 6  # grid points kept on each side of a centre: pure ε is attained past both
CHECKS: list = []  # (centres, scale) of every check, in order
COUNTS: list = []  # (centre, scale) of every count of the learner, in order
_REAL = scheduled.geometric_mechanism


class RecordingGuard(ConstantGuard):
    def check(self, mistakes, counts, rng):
        CHECKS.append((self._centres(mistakes, counts), self.scale))
        super().check(mistakes, counts, rng)


class AddRemoveGuard(RecordingGuard):
    """Broken twin: both class counts noised at the add/remove sensitivity K + 1, for
    a replace-one guarantee (a replaced row moves both)."""

    def _derived_first_count(self):
        return False

    @property
    def sensitivity(self):
        return self.n_models + 1


class Audited(DPWinnowClassifier):
    _guard_class = RecordingGuard


class AuditedAddRemove(DPWinnowClassifier):
    _guard_class = AddRemoveGuard


class FreeGuard(Audited):
    """Broken twin: the learner's plan at the full ε, the checks added on top."""

    def _resolve_parameters(self, n_features, horizon):
        share, self._guard_share = self._guard_share, None
        epsilon, delta, params = super()._resolve_parameters(n_features, horizon)
        self._guard_share = share
        return epsilon, delta, type(params)(**{**params.as_dict(),
                                               "guard_epsilon": share * epsilon})


def _stream():
    rng = np.random.default_rng(0)
    X = rng.choice([-1.0, 1.0], size=(256, 3))
    y = (rng.uniform(size=256) < 0.7).astype(int)
    return X, y


def _run(cls, y, monkeypatch):
    CHECKS.clear()
    COUNTS.clear()

    def recording(value, epsilon, sensitivity=1, **kw):
        COUNTS.append((int(value), float(sensitivity) / float(epsilon)))
        return _REAL(value, epsilon, sensitivity, **kw)

    monkeypatch.setattr(scheduled, "geometric_mechanism", recording)
    X, _ = _stream()
    clf = cls(epsilon=EPSILON, margin=0.1, n_rounds=256, bounds=(-1.0, 1.0),
              classes=[0, 1], random_state=0, guard=SHARE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for start, stop in [(0, 64), (64, 128), (128, 256)]:
            clf.partial_fit(X[start:stop], y[start:stop])
    assert clf.constant_fallback_ and clf.parameters_.count_rows == 64
    return list(CHECKS), list(COUNTS), clf


def _exact(parts, parts2):
    return exact_noisy_counts_epsilon(parts, parts2, WIDTH)


def _audit(cls, monkeypatch):
    _, y = _stream()
    y2 = y.copy()
    y2[200] = 1 - y2[200]  # a row of call 3
    checks, counts, clf = _run(cls, y, monkeypatch)
    checks2, counts2, _ = _run(cls, y2, monkeypatch)
    assert len(checks) == 2 and len(counts) == 3  # calls 2, 3 checked; 3 counts
    moved = [i for i, ((c, _), (c2, _)) in enumerate(zip(checks, checks2, strict=True))
             if not np.array_equal(c, c2)]
    assert moved == [1]  # only call 3's check sees the row …
    # … its mistake count and the noised class count(s) move by 1
    assert set(np.abs(checks2[1][0] - checks[1][0])) == {1}
    assert [a != b for (a, _), (b, _) in zip(counts, counts2, strict=True)] == [
        False, False, True]
    return _exact(checks, checks2), _exact(checks + counts, checks2 + counts2), clf


def test_the_checks_cost_their_share_and_the_stream_stays_at_epsilon(monkeypatch):
    check_eps, stream_eps, clf = _audit(Audited, monkeypatch)
    assert check_eps == pytest.approx(SHARE * EPSILON, abs=1e-6)
    assert stream_eps == pytest.approx(EPSILON, abs=1e-6)
    p = clf.parameters_
    assert p.guard_epsilon == SHARE * EPSILON and p.count_epsilon == EPSILON - SHARE * EPSILON
    assert clf.privacy_spent_.epsilon == EPSILON


def test_broken_twin_with_the_add_remove_sensitivity_is_caught(monkeypatch):
    check_eps, stream_eps, _ = _audit(AuditedAddRemove, monkeypatch)
    assert check_eps == pytest.approx(1.5 * SHARE * EPSILON, abs=1e-6)
    assert stream_eps > EPSILON * 1.2


def test_broken_twin_running_the_learner_at_full_epsilon_is_caught(monkeypatch):
    check_eps, stream_eps, _ = _audit(FreeGuard, monkeypatch)
    assert check_eps == pytest.approx(SHARE * EPSILON, abs=1e-6)
    assert stream_eps == pytest.approx((1 + SHARE) * EPSILON, abs=1e-6)
