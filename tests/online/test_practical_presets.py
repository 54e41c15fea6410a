"""The practical presets of DP-SOA and Li–Wang–Ye learn where they can, and say so.

Against the binary-search adaptive adversary every round before the first real switch is a
mistake (the forced phase), and after it the learners are flat; the diagnostics report it.
Against the mistake-seeking adversary on a large domain DP-SOA and Li–Wang–Ye's histogram
release do not learn (documented); Li–Wang–Ye with the consistency release (the practical
default) does, flat after its last release.
"""

import warnings

import numpy as np
import pytest

from skdp.exceptions import PrivacyWarning
from skdp.hypotheses.littlestone import ThresholdVersionSpace
from skdp.online import (
    AdaptivePrivateOnlineClassifier,
    AdaptiveThresholdAdversary,
    DPSOAClassifier,
    SOALearner,
    run_online,
)
from skdp.online._seeking_adversary import MistakeSeekingAdversary

N, T = 2**10, 4000


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        yield


def _learners(epsilon):
    return [DPSOAClassifier(epsilon, 1e-6, ThresholdVersionSpace(N), random_state=0),
            AdaptivePrivateOnlineClassifier(epsilon, 1e-6, ThresholdVersionSpace(N), T,
                                            random_state=0, release="histogram"),
            AdaptivePrivateOnlineClassifier(epsilon, 1e-6, ThresholdVersionSpace(N), T,
                                            random_state=0)]


@pytest.mark.parametrize("index", [0, 1])
def test_forced_phase_then_flat_against_binary_search(index):
    clf = _learners(4.0)[index]
    adv = AdaptiveThresholdAdversary(N, sees_current=True, pinned="seek")
    curve = run_online(clf, adv, T, random_state=1)
    forced = clf.switch_rounds_[0]
    assert curve[forced - 1] == forced  # every round of the forced phase errs
    assert curve[-1] - curve[forced] <= 2  # then (nearly) flat
    assert not clf.released_is_initial_ and clf.n_switches_ >= 1
    assert forced < T // 2


@pytest.mark.parametrize("adversary", ["binary search", "mistake-seeking"])
def test_consistent_release_learns_then_is_flat(adversary):
    clf = _learners(1.0)[2]
    adv = (AdaptiveThresholdAdversary(N, sees_current=True, pinned="seek")
           if adversary == "binary search" else MistakeSeekingAdversary(ThresholdVersionSpace(N)))
    curve = run_online(clf, adv, T, random_state=3)
    last = clf.switch_rounds_[-1]
    assert clf.parameters_.release == "consistent" and clf.n_histograms_ == 0
    assert clf.n_switches_ <= clf.parameters_.max_switches
    assert curve[-1] - curve[last] <= 2  # flat after the last release
    assert curve[-1] < T // 4 and not clf.released_is_initial_


def test_dp_soa_fires_only_to_switch():
    clf = _learners(4.0)[0]
    run_online(clf, AdaptiveThresholdAdversary(N, sees_current=True, pinned="seek"), T,
               random_state=2)
    assert clf.n_svt_firings_ == clf.n_switches_ == 1  # no wasted switch


@pytest.mark.parametrize("index", [1, 2])
def test_forced_phase_shrinks_as_epsilon_grows(index):
    phases = []
    for eps in (1.0, 4.0):
        clf = _learners(eps)[index]
        run_online(clf, AdaptiveThresholdAdversary(N, sees_current=True, pinned="seek"), T,
                   random_state=1)
        phases.append(clf.switch_rounds_[0])
    assert phases[1] < phases[0] / 2


def test_skip_keeps_a_pinned_copy():
    soa = SOALearner(ThresholdVersionSpace(8), on_inconsistent="skip")
    assert soa.update(3, 1) and soa.update(2, -1)  # pins t = 3
    key = soa.hypothesis_key()
    assert not soa.update(3, -1)  # contradicts every hypothesis left: ignored
    assert soa.hypothesis_key() == key and not soa.failed
    paper = SOALearner(ThresholdVersionSpace(8))
    paper.update(3, 1), paper.update(2, -1), paper.update(3, -1)
    assert paper.hypothesis_key() is None  # the paper's ⊥
    with pytest.raises(ValueError, match="on_inconsistent"):
        SOALearner(ThresholdVersionSpace(8), on_inconsistent="ignore")


def test_mistake_seeking_adversary_is_realizable_and_seeks():
    adv = MistakeSeekingAdversary(ThresholdVersionSpace(N), n_probes=8).reset(
        np.random.default_rng(0))
    t = int(np.argmax(adv.labels_ > 0))
    rows = [adv.next_round(lambda x: -1) for _ in range(200)]  # always predicts −1
    assert all(y == adv.labels_[x] for x, y in rows)
    shown = sum(y == 1 and x >= t for x, y in rows)  # the errors of "always −1"
    assert adv.n_found_ >= 150 and shown >= adv.n_found_
    found = adv.n_found_
    right = [adv.next_round(lambda x: int(adv.labels_[x])) for _ in range(50)]
    assert adv.n_found_ == found and {y for _, y in right} == {-1, 1}
