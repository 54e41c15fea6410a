"""Li–Wang–Ye adaptive private online learner: the core (closed forms, Update, caps),
streaming in blocks, plug-in base learners, and mistakes against adaptive adversaries."""

import math
import warnings

import numpy as np
import pytest
from _plugins import ProtocolOnlySOA
from hypothesis import given
from hypothesis import strategies as st

from skdp.exceptions import PrivacyWarning
from skdp.hypotheses.littlestone import (
    PointVersionSpace,
    ThresholdVersionSpace,
    point_class,
)
from skdp.online import (
    AdaptivePointAdversary,
    AdaptivePrivateOnlineClassifier,
    AdaptiveThresholdAdversary,
    ObliviousAdversary,
    SOALearner,
    first_disagreement,
    run_online,
)
from skdp.online._adaptive_core import LiWangYeCore, resolve_adaptive_parameters


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        yield


# ----------------------------------------------------------------- the core
def _soa_after(examples, n=16):
    learner = SOALearner(ThresholdVersionSpace(n))
    for x, y in examples:
        learner.update(x, y)
    return learner


@pytest.mark.parametrize("seed", range(5))
def test_update_is_algorithm_1(seed):
    """Colliding pairs get a tournament example appended to the member that errs on it, at a
    random position of the next layer; agreeing or ⊥ pairs give ⊥ (Alg 1)."""
    params = resolve_adaptive_parameters(1.0, 1e-6, 100, 0.05, 4, n_layers=2, n_sequences=8)
    core = LiWangYeCore(SOALearner(ThresholdVersionSpace(16)), params,
                        lambda i: np.random.default_rng([seed, i]))
    a, b, c = _soa_after([]), _soa_after([(8, -1)]), _soa_after([(3, 1)])
    bottom = _soa_after([(8, -1), (8, 1)])
    assert bottom.hypothesis_key() is None
    core._seqs = [a, a.copy(), a, b, bottom, a, b, c]
    core._keys = [s.hypothesis_key() for s in core._seqs]
    core._update()
    new = [s.hypothesis_key() for s in core._seqs if s is not None]
    assert core.layer == 1 and len(core._seqs) == 4 and len(new) == 2
    expected = []
    for p, q in [(a, b), (b, c)]:
        xbar = first_disagreement(p, q)
        options = set()
        for loser in (p, q):  # ȳ = −loser(x̄): the loser errs and gets (x̄, ȳ) appended
            grown = loser.copy()
            assert grown.update(xbar, -loser.predict_one(xbar))
            options.add(grown.hypothesis_key())
        expected.append(options)
    assert any(new[0] in e0 and new[1] in e1 for e0, e1 in (expected, expected[::-1]))


# ----------------------------------------------------------------- parameters
def test_paper_preset_constants():
    T, beta, eps, delta = 10**6, 0.05, 1.0, 1e-6
    p = resolve_adaptive_parameters(eps, delta, T, beta, 1, preset="paper")
    eps0 = eps / 2
    alpha = 8 * (math.log(T) + math.log(6 * T / beta)) / eps0
    n0 = p.n_sequences
    assert p.n_layers == 1 and p.epsilon_svt == eps0
    assert (p.hist_epsilon, p.hist_delta) == (eps0, delta)
    assert n0 % 4 == 0 and n0 >= 2 ** (6 * 2 + 1)
    assert p.svt_thresholds == pytest.approx((n0 + alpha, n0 / 2 + alpha))
    m1 = 128 * 2.0 ** (-12) * n0 / 2
    assert p.keep_thresholds[1] == pytest.approx(0.75 * m1)
    assert m1 >= 4 * math.log(3 * T / beta) and m1 >= 4 * p.hist_error
    with pytest.raises(ValueError, match="astronomically"):
        resolve_adaptive_parameters(eps, delta, T, beta, 2, preset="paper")


@pytest.mark.parametrize("d", [0, 1, 3, 16])
def test_practical_preset_is_feasible_and_capped(d):
    p = resolve_adaptive_parameters(1.0, 1e-6, 10**5, 0.05, d)
    assert p.n_layers == 1
    assert p.n_sequences % 2 ** (p.n_layers + 1) == 0
    assert p.hist_epsilon * p.n_layers + p.epsilon_svt == pytest.approx(1.0)
    assert p.hist_delta * p.n_layers == pytest.approx(1e-6)


# ----------------------------------------------------------------- streaming
def _point_stream(n, n_domain=64, target=7, seed=0):
    """Uniform points, and the target on 30% of the rounds (so that the learner errs)."""
    rng = np.random.default_rng(seed)
    x = np.where(rng.random(n) < 0.3, target, rng.integers(0, n_domain, size=n))
    return x[:, None], np.where(x == target, 1, -1)


def _state(clf):
    grid = np.arange(clf.n_domain_)
    return (clf._n_mistakes, clf.n_switches_, clf.layer_, clf.list_sizes_, clf.n_histograms_,
            clf.status_, clf.predict(grid[:, None]).tolist())


@pytest.mark.parametrize("cuts", [[1, 2, 700, 701, 3000], [5000], [33, 97, 2500, 2501]])
def test_blocks_equal_one_pass(cuts):
    X, y = _point_stream(6000)
    kw = dict(epsilon=4.0, hypothesis_class=PointVersionSpace(64), n_rounds=6000,
              n_sequences=256, random_state=3)
    one = AdaptivePrivateOnlineClassifier(**kw)
    wrong_one = one._partial_fit_mistakes(X, y, classes=[-1, 1])
    parts = AdaptivePrivateOnlineClassifier(**kw)
    wrong_parts = []
    for lo, hi in zip([0, *cuts], [*cuts, 6000], strict=True):
        wrong_parts.append(parts._partial_fit_mistakes(X[lo:hi], y[lo:hi], classes=[-1, 1]))
    assert one.n_switches_ >= 1  # the cut points straddle real switches
    np.testing.assert_array_equal(np.concatenate(wrong_parts), wrong_one)
    assert _state(parts) == _state(one)
    # round by round (the run_online fast path) too
    steps = AdaptivePrivateOnlineClassifier(**kw)
    steps.partial_fit(X[:1], y[:1], classes=[-1, 1])
    for t in range(1, 1500):
        steps._online_step(int(X[t, 0]), int(y[t]), np.array([-1, 1]))
    head = AdaptivePrivateOnlineClassifier(**kw).partial_fit(X[:1500], y[:1500],
                                                             classes=[-1, 1])
    assert _state(steps) == _state(head)


def test_learns_points_and_stops_erring():
    X, y = _point_stream(8000)
    clf = AdaptivePrivateOnlineClassifier(4.0, hypothesis_class=PointVersionSpace(64),
                                          random_state=0, release="histogram")
    wrong = clf._partial_fit_mistakes(X, y, classes=[-1, 1])
    assert clf.status_ == "learning" and clf.layer_ == 1
    assert not wrong[-2000:].any()  # the released hypothesis is the target
    assert clf.predict(np.arange(64)[:, None]).tolist() == [int(i == 7) * 2 - 1
                                                            for i in range(64)]
    assert clf.n_histograms_ == 1 <= clf.parameters_.n_layers


def test_any_mistake_bounded_learner_plugs_in():
    X, y = _point_stream(4000, n_domain=16, target=3)
    kw = dict(epsilon=4.0, n_sequences=256, random_state=5)
    plug = AdaptivePrivateOnlineClassifier(
        hypothesis_class=ProtocolOnlySOA(SOALearner(point_class(16),
                                                    on_inconsistent="skip")),
        **kw).fit(X, y)
    # a MistakeBoundedLearner gets Alg 2's histogram release; the same for the class
    soa = AdaptivePrivateOnlineClassifier(hypothesis_class=point_class(16), release="histogram",
                                          **kw).fit(X, y)
    assert plug.n_switches_ >= 1
    assert _state(plug) == _state(soa)


# ----------------------------------------------------------------- caps
@given(st.integers(0, 2**32 - 1), st.sampled_from([1, 2, 3]))
def test_caps_hold_on_any_stream(seed, n_layers):
    """Random labels (not realizable): histograms ≤ D, switches ≤ the cap, lists ≤ the cap."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 32, size=1500)
    y = rng.integers(0, 2, size=1500)
    clf = AdaptivePrivateOnlineClassifier(
        8.0, hypothesis_class=ThresholdVersionSpace(32), n_layers=n_layers, n_sequences=64,
        max_list_size=2, max_switches=4, random_state=seed, release="histogram")
    clf.fit(x[:, None], y)
    p = clf.parameters_
    assert clf.n_histograms_ <= n_layers == p.n_layers
    assert clf.n_switches_ <= 4 and max(clf.list_sizes_) <= 2
    assert clf.updates_stopped_ == clf.status_.startswith("stopped")


def test_cap_stops_updating_and_warns():
    x = np.tile(np.arange(32), 100)
    y = np.random.default_rng(0).integers(0, 2, size=x.size)  # noise: every h errs often
    clf = AdaptivePrivateOnlineClassifier(
        8.0, hypothesis_class=ThresholdVersionSpace(32), n_sequences=64, max_switches=2,
        random_state=0)
    with pytest.warns(PrivacyWarning, match="stops updating"):
        clf.partial_fit(x[:1600, None], y[:1600], classes=[0, 1])
    assert clf.updates_stopped_ and clf.status_.startswith("stopped:")
    frozen = _state(clf)
    clf.partial_fit(x[1600:, None], y[1600:])
    assert _state(clf)[1:] == frozen[1:]  # same hypothesis, no switch, no histogram


def test_beyond_horizon_warns_and_verbose_reports(capsys):
    X, y = _point_stream(3000)
    clf = AdaptivePrivateOnlineClassifier(4.0, hypothesis_class=PointVersionSpace(64),
                                          n_rounds=1000, n_sequences=64, random_state=0,
                                          verbose=1)
    clf.partial_fit(X[:1000], y[:1000], classes=[-1, 1])
    with pytest.warns(UserWarning, match="passed n_rounds=1000"):
        clf.partial_fit(X[1000:], y[1000:])
    assert "switch 1" in capsys.readouterr().out
    assert clf.privacy_spent_.epsilon == 4.0


# ----------------------------------------------------------------- adversaries
def test_mistakes_grow_slowly_against_the_adaptive_threshold_adversary():
    n_domain = 2**10
    curves = []
    for seed in range(2):
        clf = AdaptivePrivateOnlineClassifier(4.0, hypothesis_class=ThresholdVersionSpace(
            n_domain), n_rounds=6000, random_state=seed)
        curves.append(run_online(clf, AdaptiveThresholdAdversary(n_domain, sees_current=True),
                                 6000, random_state=seed))
        assert clf.n_switches_ >= 1 and clf.status_ == "learning"
    for m in curves:
        # the adversary forces a mistake every round at first, then the learner finds the
        # target: the second half costs (almost) nothing
        assert m[2999] < 3000 and m[-1] - m[2999] <= 20


def test_adaptive_point_adversary_and_oblivious_stream():
    clf = AdaptivePrivateOnlineClassifier(4.0, hypothesis_class=PointVersionSpace(256),
                                          n_rounds=6000, random_state=1)
    m = run_online(clf, AdaptivePointAdversary(256, sees_current=True), 6000, random_state=2)
    assert m[-1] - m[2999] <= 20
    obl = AdaptivePrivateOnlineClassifier(4.0, hypothesis_class=ThresholdVersionSpace(256),
                                          n_rounds=6000, random_state=1)
    m = run_online(obl, ObliviousAdversary(ThresholdVersionSpace(256)), 6000, random_state=3)
    assert m[-1] < 3000
