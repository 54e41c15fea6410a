"""Copies, pickles and seeds never replay privacy (issue 13, items 2 and 3).

On 1018f46: three fresh processes loading one pickled PrivatePredictor each answered
until its own full budget was spent (2.25 against 0.9); a DPWinnowClassifier pickle
could be continued three times with identical noise; two deepcopy branches of a
decision list released lists with identical noise.
"""

import copy
import gc
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

from skdp import (
    DPDecisionListClassifier,
    DPWinnowClassifier,
    PrivacyBudget,
    PrivacyParameterError,
    PrivacyWarning,
    PrivatePredictor,
    StaleStateError,
    TestingSeed,
)
from skdp.hypotheses import FiniteClass
from skdp.prediction import QueryBudgetExhaustedError, shrinkage_parameters

EPS, DELTA, CAP = 2.0, 1e-3, 6
K = shrinkage_parameters(EPS, DELTA, CAP)["min_teachers"]
_DOMAIN = 200
# Labels no hypothesis explains: every query is hard, so the budget runs out fast.
RICH = FiniteClass(np.random.default_rng(11).choice([-1, 1], size=(1024, _DOMAIN)))

_LOADER = """
import pickle, sys
import numpy as np
from skdp.prediction import QueryBudgetExhaustedError
clf = pickle.load(open(sys.argv[1], "rb"))
queries = np.random.default_rng(int(sys.argv[2])).integers(0, 200, (3000, 1))
try:
    clf.predict(queries)
except QueryBudgetExhaustedError:
    pass
print(clf.budget_.spent.epsilon)
"""


def test_three_loaders_of_one_pickle_share_one_budget(tmp_path):
    rng = np.random.default_rng(0)
    X, y = rng.integers(0, _DOMAIN, (K * 3, 1)), rng.integers(0, 2, K * 3)
    clf = PrivatePredictor(RICH, epsilon=EPS, delta=DELTA, max_hard_queries=CAP,
                           classes=[0, 1], random_state=0).fit(X, y)
    path = tmp_path / "predictor.pkl"
    path.write_bytes(pickle.dumps(clf))
    del clf
    gc.collect()
    for seed in range(3):
        subprocess.run([sys.executable, "-c", _LOADER, str(path), str(seed)], check=True,
                       capture_output=True)
    # What all three answered together, read from the one shared ledger.
    reloaded = pickle.loads(path.read_bytes())
    assert 0 < reloaded.budget_.spent.epsilon <= EPS * (1 + 1e-12)
    assert reloaded.budget_.verify()
    with pytest.raises(QueryBudgetExhaustedError):
        reloaded.predict(np.arange(_DOMAIN)[:, None])


def _winnow_stream(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.choice([-1.0, 1.0], size=(n, 4))
    return X, (X[:, 0] > 0).astype(int)


_CONTINUE = """
import pickle, sys
import numpy as np
from skdp import StaleStateError
clf = pickle.load(open(sys.argv[1], "rb"))
X = np.random.default_rng(5).choice([-1.0, 1.0], size=(100, 4))
try:
    clf.partial_fit(X, (X[:, 0] > 0).astype(int))
    print("continued")
except StaleStateError:
    print("refused")
"""


def test_a_winnow_pickle_can_be_continued_once(tmp_path):
    X, y = _winnow_stream()
    clf = DPWinnowClassifier(epsilon=4.0, delta=1e-6, margin=1.0, classes=[0, 1],
                             n_rounds=10_000, random_state=0).partial_fit(X, y)
    path = tmp_path / "winnow.pkl"
    path.write_bytes(pickle.dumps(clf))
    outcomes = [
        subprocess.run([sys.executable, "-c", _CONTINUE, str(path)], check=True,
                       capture_output=True, text=True).stdout.strip()
        for _ in range(3)
    ]
    assert outcomes == ["continued", "refused", "refused"]
    with pytest.raises(StaleStateError, match="stale copy"):
        clf.partial_fit(X, y)  # the original, too, is now behind the stream


def test_deepcopy_branches_of_a_decision_list_cannot_both_release():
    rng = np.random.default_rng(0)
    X, y = rng.integers(0, 2, (200, 6)), rng.integers(0, 2, 200)
    budget = PrivacyBudget(10.0, 1e-3)
    clf = DPDecisionListClassifier(epsilon=1.0, classes=[0, 1], budget=budget,
                                   random_state=TestingSeed(0)).fit(X, y)
    branch = copy.deepcopy(clf)
    clf.partial_fit(X[:50], y[:50])  # the original continues the stream
    clf.partial_fit(X[50:100], y[50:100])  # ... and releases (call 3 of the stream)
    spent, state = budget.spent, dict(branch.__dict__)
    with pytest.raises(StaleStateError):
        branch.partial_fit(X[50:100], y[50:100])  # the branch is refused, unpaid
    assert budget.spent == spent and branch.__dict__.keys() == state.keys()
    assert branch.predict(X[:5]).shape == (5,)  # it still predicts with what it had


def test_releases_on_one_ledger_draw_fresh_noise_and_a_fresh_ledger_reproduces():
    rng = np.random.default_rng(0)
    X, y = rng.integers(0, 2, (300, 20)), rng.integers(0, 2, 300)

    def lists(budget, n=6):
        return [DPDecisionListClassifier(epsilon=0.5, classes=[0, 1], budget=budget,
                                         random_state=TestingSeed(7)).fit(X, y).export_text()
                for _ in range(n)]

    first, again = lists(PrivacyBudget(10.0, 1e-3)), lists(PrivacyBudget(10.0, 1e-3))
    assert first == again  # same seed + fresh ledger: the run is reproduced
    assert len(set(first)) > 1  # one ledger: the six clones did not share noise


def test_a_fixed_seed_warns_at_every_fit_and_needs_testing_seed_with_a_budget():
    X, y = np.random.default_rng(0).integers(0, 2, (50, 3)), np.arange(50) % 2
    with pytest.warns(PrivacyWarning, match="reproducible") as record:
        for _ in range(3):
            DPDecisionListClassifier(epsilon=1.0, classes=[0, 1], random_state=0).fit(X, y)
    assert sum("reproducible" in str(w.message) for w in record) >= 3
    with pytest.raises(PrivacyParameterError, match="TestingSeed"):
        DPDecisionListClassifier(epsilon=1.0, classes=[0, 1], random_state=0,
                                 budget=PrivacyBudget(1.0, 1e-3)).fit(X, y)
    with warnings.catch_warnings():  # 50 rows are few for a list: only the seed warning matters
        warnings.simplefilter("error", PrivacyWarning)
        DPDecisionListClassifier(epsilon=1.0, classes=[0, 1], random_state=None).fit(X, y)
        DPDecisionListClassifier(epsilon=1.0, classes=[0, 1], random_state=None,
                                 budget=PrivacyBudget(1.0, 1e-3)).fit(X, y)
