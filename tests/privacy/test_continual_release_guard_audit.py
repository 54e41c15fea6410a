"""Exact privacy audit of ContinualReleaseClassifier's guard (the private check of the
released predictors against a constant on every call), with a broken twin caught at
twice the check's ε.

The wrapped learner releases one geometric count of positive labels, as in
``test_continual_release_audit.py``, but predicts from a fixed public rule (label 1
where column 1 is set), so the predictors the guard checks do not depend on any
noise. Every released number is then an integer with independent noise around a
centre that is a function of the data alone: each release's count (two-sided
geometric at the release's ε) and each check's K mistake counts and C class counts
(discrete Laplace of scale (K + 1)/ε_check). The centres are recorded from the real
wrapper and guard; the whole stream's law is their product, so the exact ε between
neighbours D, D′ is :func:`skdp.audit.exact_epsilon` of the product over the
coordinates whose centres differ (the others cancel: the test checks they agree).

D′ has one more row in call 2, positive, mispredicted by the rule: it moves the
check of call 2 (each model's mistakes and the positive count, by 1) and the release
of the block of calls 2-3 (its count, by 1). The claim: ε_check = guard·ε for the
checks, ε for the whole stream (parallel composition across rows, a row in one check
and one release). ``ForgetsClassCounts`` scales the check's noise by K/ε_check, as if
a row moved only the mistake counts: its checks are caught at 2·ε_check with one
model predictor (``combine="latest"``), 1.5·ε_check with two.

The decision list's own ``partial_fit`` holds the same guard: audited below on its
checks (exact), with the same twin and one that releases checked rows at full ε.
"""


import numpy as np
import pytest
from _exact_noisy_counts import exact_noisy_counts_epsilon
from _stream_recording import NoisyCountClassifier

from skdp.decision_list import DPDecisionListClassifier
from skdp.streams import ContinualReleaseClassifier
from skdp.streams._guard import ConstantGuard

EPSILON = 1.0
WIDTH = 4  # grid points kept on each side of a centre: pure ε is attained past both centres
CHECKS: list = []  # (centres, scale) of every check, in order


class RuleCount(NoisyCountClassifier):
    """Releases a noisy positive count (ε-DP); predicts label 1 where column 1 is 1."""

    def predict(self, X):
        return self.classes_[(np.asarray(X)[:, 1] > 0.5).astype(int)]


class RecordingGuard(ConstantGuard):
    def check(self, mistakes, counts, rng):
        CHECKS.append((np.r_[mistakes, counts].astype(int), self.scale))
        super().check(mistakes, counts, rng)


class ForgetsClassCounts(RecordingGuard):
    """Broken twin: the sensitivity counts the K mistake counts and not the class
    count the row also moves."""

    @property
    def scale(self):
        return self.n_models / self.epsilon


def _streams():
    rng = np.random.default_rng(0)
    calls = [(np.column_stack([np.arange(4), rng.integers(0, 2, 4)]).astype(float),
              rng.integers(0, 2, 4)) for _ in range(7)]
    neighbour = list(calls)
    X, y = calls[1]
    neighbour[1] = (np.vstack([X, [[4.0, 0.0]]]), np.r_[y, 1])  # positive, rule says 0
    return calls, neighbour


def _run(guard_class, calls, combine, share):
    CHECKS.clear()
    cls = type("Audited", (ContinualReleaseClassifier,), {"_guard_class": guard_class})
    clf = cls(RuleCount(), epsilon=EPSILON, classes=[0, 1], combine=combine, guard=share)
    for X, y in calls:
        clf.partial_fit(X, y)
    releases = [(np.array([m.true_count_]), 1.0 / m.epsilon) for m in clf.estimators_]
    return list(CHECKS), releases


def _exact(parts, parts2):
    return exact_noisy_counts_epsilon(parts, parts2, WIDTH)


def _audit(guard_class, combine, share):
    calls, neighbour = _streams()
    checks, releases = _run(guard_class, calls, combine, share)
    checks2, releases2 = _run(guard_class, neighbour, combine, share)
    assert len(checks) == 6 and len(releases) == 3  # checks at calls 2-7; releases 1, 3, 7
    k = 1 if combine == "latest" else 2
    moved = [i for i, ((c, _), (c2, _)) in enumerate(zip(checks, checks2, strict=True))
             if not np.array_equal(c, c2)]
    assert moved == [0]  # only the check of call 2 sees the row …
    assert list(checks2[0][0] - checks[0][0]) == [1] * k + [0, 1]  # … every count moves
    return _exact(checks, checks2), _exact(checks + releases, checks2 + releases2)


@pytest.mark.parametrize("combine", ["recent", "latest"])
@pytest.mark.parametrize("share", [0.1, 0.5])
def test_the_checks_cost_their_share_and_the_stream_stays_at_epsilon(combine, share):
    check_eps, stream_eps = _audit(RecordingGuard, combine, share)
    assert check_eps == pytest.approx(share * EPSILON, abs=1e-6)
    assert stream_eps == pytest.approx(EPSILON, abs=1e-6)


@pytest.mark.parametrize("combine, factor", [("latest", 2.0), ("recent", 1.5)])
def test_broken_twin_forgetting_the_class_counts_is_caught(combine, factor):
    check_eps, stream_eps = _audit(ForgetsClassCounts, combine, 0.5)
    assert check_eps == pytest.approx(factor * 0.5 * EPSILON, abs=1e-6)
    assert stream_eps > EPSILON * 1.2  # the whole stream's claim is violated too


# ----------------------------------------------------------- the decision list's own guard
# DPDecisionListClassifier.partial_fit holds the same ConstantGuard (K = 1: the latest
# list). Three calls: call 1 opens the stream (its list is released from its rows,
# seeded, so identical under D and D′); calls 2 and 3 are checked against that list,
# then released together. D′ adds to call 2 one row the first list mispredicts: it
# moves check 2's mistake count and one class count by 1 (check 3 sees the same list
# and rows: its centres agree), and enters the block's release, which runs at
# (1 − g)·ε. The checks' exact ε must be g·ε; with the twin that forgets the class
# count, 2·g·ε.


def _list_calls():
    rng = np.random.default_rng(1)
    calls = [(rng.integers(0, 2, (40, 3)).astype(float), rng.integers(0, 2, 40))
             for _ in range(3)]
    calls[0] = (calls[0][0], (calls[0][0][:, 0] > 0.5).astype(int))  # a learnable list
    return calls


def _list_run(guard_class, calls, share, cls=DPDecisionListClassifier):
    CHECKS.clear()
    audited = type("AuditedList", (cls,), {"_guard_class": guard_class})
    clf = audited(epsilon=EPSILON, max_rules=1, classes=[0, 1], random_state=0,
                  guard=share)
    for X, y in calls:
        clf.partial_fit(X, y)
    return list(CHECKS), clf


def _list_audit(guard_class, share, cls=DPDecisionListClassifier):
    calls = _list_calls()
    _, first = _list_run(guard_class, calls[:1], share, cls)
    row = np.array([[1.0, 0.0, 1.0]])
    label = 1 - int(first.predict(row)[0])  # a row the released list gets wrong
    neighbour = list(calls)
    neighbour[1] = (np.vstack([calls[1][0], row]), np.r_[calls[1][1], label])
    checks, clf = _list_run(guard_class, calls, share, cls)
    checks2, clf2 = _list_run(guard_class, neighbour, share, cls)
    assert len(checks) == 2 and clf.n_releases_ == clf2.n_releases_ == 2
    moved = [i for i, ((c, _), (c2, _)) in enumerate(zip(checks, checks2, strict=True))
             if not np.array_equal(c, c2)]
    assert moved == [0]
    assert sorted(checks2[0][0] - checks[0][0]) == [0, 1, 1]  # mistakes and one class
    return _exact(checks, checks2), clf._release_plan.epsilon


@pytest.mark.parametrize("share", [0.1, 0.5])
def test_decision_list_partial_fit_checks_cost_their_share(share):
    check_eps, release_eps = _list_audit(RecordingGuard, share)
    assert check_eps == pytest.approx(share * EPSILON, abs=1e-6)
    # A row of a checked call is in one check and one release: ε in all.
    assert check_eps + release_eps == pytest.approx(EPSILON, abs=1e-6)


def test_decision_list_broken_twin_forgetting_the_class_counts_is_caught():
    check_eps, _ = _list_audit(ForgetsClassCounts, 0.5)
    assert check_eps == pytest.approx(2 * 0.5 * EPSILON, abs=1e-6)


class ReleasesAtFullEpsilon(DPDecisionListClassifier):
    """Broken twin: releases checked rows at the stream's ε, as if the check were free."""

    def _use_guarded_plan(self):
        pass


def test_decision_list_broken_twin_releasing_checked_rows_at_full_epsilon_is_caught():
    check_eps, release_eps = _list_audit(RecordingGuard, 0.5, ReleasesAtFullEpsilon)
    assert check_eps + release_eps == pytest.approx(1.5 * EPSILON, abs=1e-6)
