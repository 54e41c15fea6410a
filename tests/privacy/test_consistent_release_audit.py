"""Privacy audit of Li–Wang–Ye with the consistency release, with a broken twin.

Neighbouring streams of T rows over the points class on {0, 1} differ in row 0 only:

    D : (0, +1), (1, +1), (0, +1), (1, +1), … — every row is a mistake of A(∅) (the
        SOA's all-negative hypothesis), and the two points are tied within one row;
    D′: row 0 is (1, +1) instead — still a mistake, so AboveThreshold sees the same
        counts, but point 1 now contradicts two rows fewer than point 0.

With ``max_switches=1`` the output is (round of the switch, released point): the
exponential mechanism's draw is the only thing that differs. Events, fixed from this
structure before any sample: "point 1 released", "point 0 released"; both directions.

* The real estimator must keep the Clopper–Pearson lower bound ≤ ε.
* ``ExactRelease`` — the release is the exact empirical risk minimiser (ties to the first
  point), the deviation without its noise: on D it always releases point 0, on D′ always
  point 1. The same audit must catch it.
"""

import warnings

import numpy as np

from skdp.audit import audit_mechanism
from skdp.exceptions import PrivacyWarning
from skdp.hypotheses.littlestone import PointVersionSpace
from skdp.online import AdaptivePrivateOnlineClassifier
from skdp.online._adaptive import _KeyedRngs
from skdp.online._consistent_release import ConsistentReleaseCore

EPSILON, DELTA, ALPHA = 1.0, 1e-6, 1e-6
N_ROWS = 200
PARAMS = dict(epsilon=EPSILON, delta=DELTA, hypothesis_class=PointVersionSpace(2),
              n_rounds=N_ROWS, max_switches=1)


def _argmin(scores, epsilon, sensitivity, *, random_state=None):
    del epsilon, sensitivity, random_state
    return int(np.argmax(scores))  # scores are −errors: the exact minimiser, no noise


class ExactRelease(AdaptivePrivateOnlineClassifier):
    def _make_core(self, learner, params):
        return ConsistentReleaseCore(learner, params, _KeyedRngs(self._noise),
                                     self._scorer, release_factory=_argmin)


def _streams():
    X0 = (np.arange(N_ROWS) % 2)[:, None].astype(float)
    X1 = X0.copy()
    X1[0, 0] = 1.0
    y = np.ones(N_ROWS, dtype=int)
    return (X0, y), (X1, y.copy())


def _run(cls, data, seed):
    X, y = data
    est = cls(**PARAMS, random_state=seed)
    est._partial_fit_mistakes(X, y, classes=[0, 1])
    released = est._core.hypothesis.hypothesis_key()
    point = released[1] if released[1] is not None else -1
    first = est.switch_rounds_[0] if est.switch_rounds_ else N_ROWS
    return [first, point]


def _sampler(cls):
    def sample(data, n, rng):
        seeds = rng.integers(2**62, size=n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)
            return np.array([_run(cls, data, int(s)) for s in seeds])

    return sample


EVENTS = [lambda out: out[:, 1] == 1, lambda out: out[:, 1] == 0]


def test_streams_switch_once_with_the_release_in_play():
    d0, d1 = _streams()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        outs = np.array([_run(AdaptivePrivateOnlineClassifier, d, s)
                         for d in (d0, d1) for s in range(20)])
        exact = [_run(ExactRelease, d, 0)[1] for d in (d0, d1)]
    assert (outs[:, 0] < N_ROWS).all() and set(outs[:, 1]) == {0, 1}
    assert exact == [0, 1]


def test_audit_passes_and_the_exact_release_is_caught():
    d0, d1 = _streams()
    runs = {"real": (AdaptivePrivateOnlineClassifier, 1500, 1),
            "exact": (ExactRelease, 200, 2)}
    bounds = {name: audit_mechanism(_sampler(cls), d0, d1, n_samples=n, events=EVENTS,
                                    alpha=ALPHA, delta=DELTA, random_state=seed)
              for name, (cls, n, seed) in runs.items()}
    assert bounds["real"].epsilon_lower_bound <= EPSILON, str(bounds["real"])
    assert bounds["exact"].epsilon_lower_bound > EPSILON, str(bounds["exact"])
