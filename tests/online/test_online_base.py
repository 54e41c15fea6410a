"""The shared base of skdp's online domain-index classifiers, through a toy private subclass."""

import copy
import pickle
from numbers import Integral, Real

import numpy as np
import pytest
from _domain_checks import FUZZED_X, FUZZED_Y, fuzzed_block
from hypothesis import given, settings
from sklearn.utils._param_validation import Interval

from skdp import PrivacyBudget, TestingSeed
from skdp._validation import RANDOM_STATE_CONSTRAINT
from skdp.exceptions import PrivacyWarning, StaleStateError
from skdp.online import AdaptiveThresholdAdversary, run_online
from skdp.online._base import PrivateOnlineDomainClassifier


class _ToyPrivate(PrivateOnlineDomainClassifier):
    """Redraws a random hypothesis on each mistake, at most ``max_switches`` times."""

    _parameter_constraints: dict = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "n_domain": [Interval(Integral, 1, None, closed="left")],
        "max_switches": [Interval(Integral, 1, None, closed="left")],
        "budget": [PrivacyBudget, None],
        "random_state": [*RANDOM_STATE_CONSTRAINT],
        "verbose": ["verbose"],
    }

    def __init__(self, epsilon=1.0, delta=0.0, n_domain=8, max_switches=3, *, budget=None,
                 random_state=None, verbose=0):
        self.epsilon = epsilon
        self.delta = delta
        self.n_domain = n_domain
        self.max_switches = max_switches
        self.budget = budget
        self.random_state = random_state
        self.verbose = verbose

    def _prepare_stream(self, from_fit):
        return self.n_domain, None

    def _init_stream(self, plan):
        self.hypothesis_ = np.ones(self.n_domain, dtype=np.int8)
        self.n_switches_ = 0

    def _released_predict(self, x):
        return self.hypothesis_[x]

    def _step(self, x, y, wrong):
        rng = self._event_rng(self.n_switches_)
        self.hypothesis_ = rng.choice(np.array([-1, 1], dtype=np.int8), self.n_domain)
        self.n_switches_ += 1
        if self.n_switches_ >= self.max_switches:
            self._stop_updating(f"made its maximum of {self.max_switches} switches")


def _data(rng, n=200, n_domain=8):
    x = rng.integers(0, n_domain, size=n)
    return x[:, None], np.where(x >= 3, "b", "a")


@pytest.fixture
def quiet():
    with pytest.warns(PrivacyWarning):
        yield


def test_charge_once_per_stream_and_blocks_equal_one_pass(rng):
    X, y = _data(rng)
    # Two fresh ledgers and one seed reproduce a run (noise is keyed by the charge's
    # place in its ledger).
    budget = PrivacyBudget(10.0)
    one = _ToyPrivate(max_switches=10**4, budget=PrivacyBudget(10.0),
                      random_state=TestingSeed(3)).fit(X, y)
    parts = _ToyPrivate(max_switches=10**4, budget=budget, random_state=TestingSeed(3))
    for lo, hi in [(0, 1), (1, 40), (40, 41), (41, 200)]:
        parts.partial_fit(X[lo:hi], y[lo:hi], classes=["a", "b"])
    assert budget.spent.epsilon == pytest.approx(1.0)  # the partial_fit stream paid once
    assert one.privacy_spent_ == parts.privacy_spent_
    assert one.n_switches_ == parts.n_switches_ > 0
    assert one._n_mistakes == parts._n_mistakes and parts.n_rounds_seen_ == 200
    np.testing.assert_array_equal(one.hypothesis_, parts.hypothesis_)
    wrong = _ToyPrivate(max_switches=10**4, random_state=3)._partial_fit_mistakes(
        X, y, classes=["a", "b"])
    assert wrong.sum() == one._n_mistakes


def test_cap_stops_updating_and_warns_once(rng):
    X, y = _data(rng, n=500)
    clf = _ToyPrivate(max_switches=2, random_state=0)
    with pytest.warns(PrivacyWarning, match="maximum of 2 switches") as record:
        clf.partial_fit(X[:250], y[:250], classes=["a", "b"])
        frozen = clf.hypothesis_.copy()
        clf.partial_fit(X[250:], y[250:])
    assert len([w for w in record if w.category is PrivacyWarning
                and "maximum of 2 switches" in str(w.message)]) == 1
    assert clf.updates_stopped_ and "2 switches" in clf.stop_reason_
    assert clf.n_switches_ == 2
    np.testing.assert_array_equal(clf.hypothesis_, frozen)
    grid = np.arange(8)[:, None]
    np.testing.assert_array_equal(clf.predict(grid), np.where(frozen > 0, "b", "a"))
    assert clf._n_mistakes == np.count_nonzero(clf.predict(X[250:]) != y[250:]) + \
        _ToyPrivate(max_switches=2, random_state=0)._partial_fit_mistakes(
            X[:250], y[:250], classes=["a", "b"]).sum()


def test_fork_refused(rng, quiet):
    X, y = _data(rng)
    clf = _ToyPrivate(random_state=0).partial_fit(X[:50], y[:50], classes=["a", "b"])
    fork, pickled = copy.deepcopy(clf), pickle.loads(pickle.dumps(clf))
    clf.partial_fit(X[50:100], y[50:100])
    for other in (fork, pickled):
        with pytest.raises(StaleStateError, match="stale copy"):
            other.partial_fit(X[100:], y[100:])
    clf.partial_fit(X[100:], y[100:])
    fork.fit(X, y)


def test_run_online_with_an_adaptive_adversary():
    clf = _ToyPrivate(n_domain=16, max_switches=100, random_state=1)
    assert clf._online_predict(3) is None  # nothing released before the stream starts
    curve = run_online(clf, AdaptiveThresholdAdversary(16), 60, random_state=0)
    assert curve[-1] == clf._n_mistakes and clf.n_rounds_seen_ == 60
    assert clf._online_predict(5) == int(clf.hypothesis_[5])


def test_online_step_replays_partial_fit():
    x = np.tile(np.arange(16), 5)
    y = np.where(x >= 7, 1, -1)
    a = _ToyPrivate(n_domain=16, max_switches=100, random_state=1)
    b = _ToyPrivate(n_domain=16, max_switches=100, random_state=1)
    a.partial_fit(x[:, None], y, classes=[-1, 1])
    errs = [b._online_step(int(xt), int(yt), np.array([-1, 1]))
            for xt, yt in zip(x, y, strict=True)]
    assert sum(errs) == a._n_mistakes == b._n_mistakes
    np.testing.assert_array_equal(a.hypothesis_, b.hypothesis_)


@pytest.mark.parametrize(
    ("X", "y", "match"),
    [
        ([[np.nan], [1]], [0, 1], "NaN"),
        ([[0], [8]], [0, 1], r"domain indices in \[0, 8\)"),
        ([[-1], [2]], [0, 1], "domain indices"),
        ([[0.5], [2]], [0, 1], "domain indices"),
        ([[0, 1], [2, 3]], [0, 1], r"shape \(n, 1\)"),
        ([[0], [1], [8]], [0, 1, 2], "domain indices"),  # 3 labels: one-vs-rest
        ([[0], [1]], [1, 1], "only one class"),
        ([[0], [1]], [0.5, 1.5], "Unknown label type"),
    ],
)
def test_bad_input_raises_before_any_charge(X, y, match):
    budget = PrivacyBudget(1.0)
    clf = _ToyPrivate(budget=budget, random_state=TestingSeed(0))
    with pytest.raises(ValueError, match=match):
        clf.fit(X, y)
    assert budget.spent.epsilon == 0 and not hasattr(clf, "privacy_spent_")


def test_bad_partial_fit_sequences():
    budget = PrivacyBudget(1.0)
    clf = _ToyPrivate(budget=budget, random_state=TestingSeed(0))
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit([[0]], [0])
    with pytest.raises(ValueError, match="not in classes"):
        clf.partial_fit([[0]], [5], classes=[0, 1])
    with pytest.raises(ValueError, match="exactly 2 labels"):
        clf.partial_fit([[0]], [0], classes=[0])
    assert budget.spent.epsilon == 0 and not hasattr(clf, "classes_")
    clf.partial_fit([[0]], [0], classes=[0, 1])
    with pytest.raises(ValueError, match="not in classes"):
        clf.partial_fit([[1]], [7])
    with pytest.raises(ValueError, match="differs"):
        clf.partial_fit([[1]], [1], classes=[1, 2])
    with pytest.raises(ValueError, match="domain indices"):
        clf.predict([[9]])
    with pytest.raises(ValueError, match="epsilon"):
        _ToyPrivate(epsilon=-1.0).fit([[0], [1]], [0, 1])
    assert budget.spent.epsilon == pytest.approx(1.0)


@settings(max_examples=40, deadline=None)
@given(FUZZED_X, FUZZED_Y)
def test_fuzzed_input_fails_before_any_charge(xs, ys):
    X, y, valid = fuzzed_block(xs, ys)
    n = len(y)
    budget = PrivacyBudget(1.0)
    clf = _ToyPrivate(n_domain=10, max_switches=100, budget=budget, random_state=TestingSeed(0))
    try:
        clf.partial_fit(X, y, classes=[0, 1])
    except ValueError:
        assert not valid
        assert budget.spent.epsilon == 0 and not hasattr(clf, "classes_")
        return
    assert valid and budget.spent.epsilon == pytest.approx(1.0)
    assert clf.n_rounds_seen_ == n and clf._n_mistakes <= n
