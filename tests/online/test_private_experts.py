"""PrivateExpertsClassifier specifics: the constructed experts of Li, Wang & Ye's
Alg 5–7 (tiny classes and horizons), their refusal beyond max_experts, and the horizon."""

import math
import warnings

import numpy as np
import pytest

from skdp import PrivacyBudget
from skdp.exceptions import PrivacyWarning
from skdp.hypotheses import threshold_class
from skdp.online import PrivateExpertsClassifier
from skdp.online._experts import _ConstructedExperts, constructed_expert_count

CLASS = threshold_class(3)  # 4 thresholds, Ldim 2


def _stream(rng, n, rate=0.0):
    x = rng.integers(0, 3, size=n)
    y = (x >= 2).astype(int)
    return x[:, None], np.where(rng.random(n) < rate, 1 - y, y)


def _make(**kw):
    return PrivateExpertsClassifier(4.0, experts=CLASS, n_rounds=16,
                                    construction="constructed", random_state=0, **kw)


@pytest.mark.parametrize(("T", "M"), [(1, 1), (5, 2), (9, 3), (16, 2)])
def test_expert_count_matches_the_enumeration(T, M):
    n = len(_ConstructedExperts._enumerate(T, M))
    assert n == constructed_expert_count(T, M)
    assert constructed_expert_count(T, 1) == 1 + T * (T + 1) // 2
    assert n == sum(math.comb(T + m, 2 * m) for m in range(M + 1))


def test_constructed_blocks_give_the_same_run_as_one_pass(rng):
    X, y = _stream(rng, 16, 0.1)
    one = _make()
    wrong = one._partial_fit_mistakes(X, y, classes=[0, 1])
    split = _make()
    parts = [split._partial_fit_mistakes(X[a:b], y[a:b], classes=[0, 1])
             for a, b in [(0, 5), (5, 6), (6, 16)]]
    np.testing.assert_array_equal(np.concatenate(parts), wrong)
    assert one.n_experts_ == constructed_expert_count(16, 2) == 3197
    np.testing.assert_array_equal(one.predict([[0], [1], [2]]), split.predict([[0], [1], [2]]))


def test_constructed_experts_contain_the_target(rng):
    """With little noise, some expert's SOA run simulates the target: the best expert's
    noisy loss is close to the target's mistakes."""
    X, y = _stream(rng, 16)
    clf = _make().fit(X, y)
    engine = clf._engine
    labels = engine.labels[engine.g]  # every expert's final hypothesis
    assert np.any(np.all(labels == np.where(np.arange(3) >= 2, 1, -1), axis=1))


def test_stops_at_the_horizon_and_warns(rng):
    X, y = _stream(rng, 20)
    clf = _make()
    with pytest.warns(PrivacyWarning, match="n_rounds=16"):
        clf.partial_fit(X, y, classes=[0, 1])
    assert clf.updates_stopped_ and clf.n_rounds_seen_ == 20 and clf.n_buckets_ == 1
    before = clf.predict([[0], [1], [2]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf.partial_fit(X, y)  # frozen: predicted and counted only
    np.testing.assert_array_equal(clf.predict([[0], [1], [2]]), before)


def test_refuses_too_many_experts_before_spending(rng):
    budget = PrivacyBudget(1.0)
    X, y = _stream(rng, 10)
    with pytest.raises(ValueError, match="max_experts"):
        PrivateExpertsClassifier(1.0, experts=CLASS, n_rounds=1000,
                                 construction="constructed", budget=budget).fit(X, y)
    with pytest.raises(ValueError, match="needs n_rounds"):
        PrivateExpertsClassifier(1.0, experts=CLASS, construction="constructed",
                                 budget=budget).fit(X, y)
    assert budget.spent.epsilon == 0.0


def test_class_experts_regret_is_sublinear(rng):
    x = rng.integers(0, 16, size=40000)
    y = np.where(rng.random(x.size) < 0.2, x < 7, x >= 7).astype(int)
    L = threshold_class(16).label_matrix
    best = np.min(np.count_nonzero(L[:, x] != np.where(y == 1, 1, -1), axis=1))
    regret = {}
    for n in (4000, 40000):
        clf = PrivateExpertsClassifier(4.0, experts=threshold_class(16), n_rounds=n,
                                       random_state=0).fit(x[:n, None], y[:n])
        b = np.min(np.count_nonzero(L[:, x[:n]] != np.where(y[:n] == 1, 1, -1), axis=1))
        regret[n] = clf._n_mistakes - b
    assert best > 0.15 * 40000 and regret[40000] < 0.02 * 40000
    assert regret[40000] < 10 * max(regret[4000], 1)  # far from linear growth
