"""Every cap a plan was paid for holds under concurrent copies (issue 26, item 2).

Six spawned processes load one pickled fitted object and use it at the same moment
(a barrier), on a SQLite and on a PostgreSQL ledger; afterwards the ledger is counted.
The red team's attack on main@0895168: six copies of one
``PrivatePredictor(calibration="bsu", max_hard_queries=3)`` started up to 7
BetweenThresholds instances and 6 hard queries, because each copy counted the ledger's
labels and recorded its step in a separate transaction. Predictors now record every
capped step with ``cap=`` (check and append in one transaction) before the answer that
depends on it leaves the call; online learners are refused by their stream's version
compare-and-swap.

The six processes are the session's ``racers`` (tests/_spawned.py: spawning and
importing skdp six times costs more than the races themselves).
"""

from __future__ import annotations

import pickle
import warnings

import _spawned
import numpy as np
import pytest
from _spawned import N_PROCS

import skdp
from skdp import PrivacyBudget, StaleStateError
from skdp.hypotheses import Thresholds
from skdp.prediction import (
    DecisionStumpPERPClassifier,
    PrivatePredictor,
    QueryBudgetExhaustedError,
    RectanglesPERPClassifier,
    SubsampleAggregatePredictor,
)

#: Races per test, each on a fresh fitted object: on main@ad97106 a single race is
#: sometimes won by chance. On SQLite the busy handler's back-off tends to run one
#: copy's few transactions back to back, so there the BSU and PERP-start races passed
#: on main even over 8 rounds; on PostgreSQL every race test fails on main.
ROUNDS = 5


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    if request.param == "postgresql":
        return request.getfixturevalue("postgresql_db_url")
    return f"sqlite:///{tmp_path / 'ledger.db'}"


def _labels(budget: PrivacyBudget, fragment: str) -> list[str]:
    return [label for *_, label in budget.charges if label and fragment in label]


def _ranges(budget: PrivacyBudget, tag: str) -> list[tuple[int, int]]:
    """The (first, last) query ranges recorded under ``tag``, in ledger order."""
    out = []
    for label in _labels(budget, tag):
        first, last = label.rsplit(tag, 1)[1].split("-")
        out.append((int(first), int(last)))
    return out


def _assert_tiled(ranges: list[tuple[int, int]], limit: int) -> int:
    """Recorded ranges are disjoint and consecutive from 1, and end by ``limit``."""
    end = 0
    for first, last in ranges:
        assert first == end + 1 and last >= first, ranges
        end = last
    assert end <= limit, ranges
    return end


# ----------------------------------------------------------------- worker tasks
def _answer_until_refused(blob: bytes, n_queries: int, batch: int, seed: int):
    """Load a pickled predictor, then answer fresh queries in batches until refused.

    Returns (answers released, refused?, the released scores' first value)."""
    predictor = pickle.loads(blob)
    queries = np.random.default_rng(1000 + seed).random((n_queries, predictor.n_features_in_))
    _spawned.start()
    released, first = 0, None
    for start in range(0, n_queries, batch):
        try:
            scores = predictor.decision_function(queries[start:start + batch])
        except QueryBudgetExhaustedError as exc:
            return released + exc.n_answered, True, first
        first = float(scores[0]) if first is None else first
        released += scores.size
    return released, False, first


def _continue_stream(blob: bytes, X, y, seed: int):
    """Load a pickled mid-stream learner and continue its stream once."""
    learner = pickle.loads(blob)
    _spawned.start()
    try:
        learner.partial_fit(X, y)
    except StaleStateError:
        return "stale"
    return "continued"


# ----------------------------------------------------------------- Yan's predictor
def _random_labels(n, d=1, seed=0):
    """Labels independent of X: teacher votes sit near ½, so ⊤ (a hard query) is common
    and every copy reaches its caps within a few dozen queries."""
    rng = np.random.default_rng(seed)
    return rng.random((n, d)), rng.integers(0, 2, n)


# Slow: "charged" (its noise search costs 0.6 s a fit, five fits) races like "stemmer".
@pytest.mark.parametrize("calibration", ["bsu", "stemmer",
                                         pytest.param("charged", marks=pytest.mark.slow)])
def test_copies_of_yans_predictor_never_pass_its_caps(racers, store, calibration):
    for _ in range(ROUNDS):
        _copies_of_yans_predictor_never_pass_its_caps_once(racers, store, calibration)


def _copies_of_yans_predictor_never_pass_its_caps_once(racers, store, calibration):
    cap = 3
    user = PrivacyBudget(5.0, 1e-5, store=store)
    clf = PrivatePredictor(Thresholds(), calibration=calibration, max_hard_queries=cap,
                           budget=user, classes=[0, 1])
    clf.fit(*_random_labels(20_000))
    if calibration == "bsu":
        # Answer until the first hard query here: the plan is reserved and one
        # instance used, so the copies race for the remaining cap − 1 (the red team's
        # setting: a predictor in use, copied to six processes).
        queries = np.random.default_rng(1).random((100, 1))
        clf.decision_function(queries[:1])
        for row in queries[1:]:
            if _labels(clf.budget_, "hard query"):
                break
            clf.decision_function(row[None, :])
    results = racers.race(_answer_until_refused, pickle.dumps(clf), 3000, 25)
    ledger = clf.budget_
    instances = _labels(ledger, "BetweenThresholds instance")
    hard = _labels(ledger, "hard query")
    # BSU: one instance per hard query, at most cap of them over all copies, and six
    # copies racing for the last two take both; Stemmer / charged: one instance for the
    # predictor's life, so exactly one copy answers. Hard queries: at most cap (how
    # many a copy meets is data-dependent: the teachers shrink the hard region).
    assert len(instances) == (cap if calibration == "bsu" else 1), instances
    assert len(hard) <= cap, hard
    if calibration != "bsu":
        assert sum(n > 0 for n, _, _ in results) == 1
    assert len(_labels(ledger, "reserved the planned run")) == 1
    assert len(_labels(user, "reserved the planned run")) == 1
    assert ledger.spent.epsilon <= ledger.epsilon and ledger.spent.delta <= ledger.delta
    assert user.spent == ledger.spent  # the plan is paid once, in both ledgers
    assert ledger.verify() and user.verify()


def test_copies_of_the_small_sample_fallback_never_pass_planned_queries(racers, store):
    for _ in range(ROUNDS):
        _copies_of_the_small_sample_fallback_never_pass_planned_queries_once(racers, store)


def _copies_of_the_small_sample_fallback_never_pass_planned_queries_once(racers, store):
    planned = 60
    user = PrivacyBudget(5.0, 1e-5, store=store)
    clf = PrivatePredictor(Thresholds(), n_queries=planned, budget=user, classes=[0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(*_random_labels(50))
    results = racers.race(_answer_until_refused, pickle.dumps(clf), planned, 4)
    ledger = clf.budget_
    used = _assert_tiled(_ranges(ledger, "fallback queries "), planned)
    assert sum(n for n, _, _ in results) == used == planned
    assert len(_labels(ledger, "reserved the subsample-and-aggregate fallback")) == 1
    assert len(_labels(user, "reserved the subsample-and-aggregate fallback")) == 1
    assert user.spent == ledger.spent and ledger.spent.epsilon <= ledger.epsilon
    assert ledger.verify() and user.verify()


# ----------------------------------------------------------------- subsample-and-aggregate
def test_copies_of_subsample_aggregate_never_pass_n_queries(racers, store):
    for _ in range(ROUNDS):
        _copies_of_subsample_aggregate_never_pass_n_queries_once(racers, store)


def _copies_of_subsample_aggregate_never_pass_n_queries_once(racers, store):
    n_queries = 60
    user = PrivacyBudget(5.0, 1e-5, store=store)
    clf = SubsampleAggregatePredictor(Thresholds(), n_queries=n_queries, budget=user,
                                      classes=[0, 1])
    clf.fit(*_random_labels(2_000))
    results = racers.race(_answer_until_refused, pickle.dumps(clf), n_queries, 4)
    ledger = clf.budget_
    used = _assert_tiled(_ranges(ledger, "queries "), n_queries)
    assert sum(n for n, _, _ in results) == used == n_queries
    # The running total telescopes: exactly the composition of n_queries answers.
    assert ledger.spent.epsilon == pytest.approx(clf._spent_after(n_queries))
    assert ledger.spent.epsilon <= ledger.epsilon and ledger.spent.delta <= ledger.delta
    assert user.spent == ledger.spent
    assert ledger.verify() and user.verify()


# ----------------------------------------------------------------- PERP
_PERP = {"rectangles": RectanglesPERPClassifier, "stump": DecisionStumpPERPClassifier}
# The stump predictor pays through the same _PERPBase code as the rectangles one.
_PERP_NAMES = ["rectangles", pytest.param("stump", marks=pytest.mark.slow)]


@pytest.mark.parametrize("name", _PERP_NAMES)
def test_copies_of_perp_start_one_mechanism(racers, store, name):
    for _ in range(ROUNDS):
        _copies_of_perp_start_one_mechanism_once(racers, store, name)


def _copies_of_perp_start_one_mechanism_once(racers, store, name):
    user = PrivacyBudget(5000.0, 1e-4, store=store)
    clf = _PERP[name](epsilon=2000.0, gamma=1.0, budget=user, classes=[0, 1])
    rng = np.random.default_rng(0)
    X = rng.random((3_000, 2))
    clf.fit(X, (X[:, 0] > 0.4).astype(int))
    assert not clf.mechanism_started_
    results = racers.race(_answer_until_refused, pickle.dumps(clf), 40, 20)
    ledger = clf.budget_
    assert sum(not refused for _, refused, _ in results) == 1  # one copy runs it
    assert len(_labels(ledger, "initial sample")) == 1
    assert len(_labels(user, "initial sample")) == 1  # no refused copy paid the user
    assert ledger.spent.epsilon <= ledger.epsilon
    assert ledger.verify() and user.verify()


@pytest.mark.parametrize("name", _PERP_NAMES)
def test_copies_of_perp_release_one_majority_label(racers, store, name):
    for _ in range(ROUNDS):
        _copies_of_perp_release_one_majority_label_once(racers, store, name)


def _copies_of_perp_release_one_majority_label_once(racers, store, name):
    user = PrivacyBudget(5000.0, 1e-4, store=store)
    clf = _PERP[name](epsilon=1.0, budget=user, classes=[0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(*_random_labels(30, d=2))
    results = racers.race(_answer_until_refused, pickle.dumps(clf), 10, 5)
    assert not any(refused for _, refused, _ in results)  # copies read the released one
    assert len({first for *_, first in results}) == 1
    ledger = clf.budget_
    assert len(_labels(ledger, "majority label")) == 1
    assert len(_labels(user, "majority label")) == 1
    assert ledger.spent.epsilon == pytest.approx(1.0) and user.spent == ledger.spent
    assert ledger.verify() and user.verify()


# ----------------------------------------------------------------- online learners
_ONLINE = ["AdaptivePrivateOnlineClassifier", "BatchSanitizedOnlineClassifier",
           "DPSOAClassifier", "PrivateExpertsClassifier", "DPWinnowClassifier",
           "OnlineDecisionListClassifier", "DPDecisionListClassifier"]


class _UncheckedDPSOA(skdp.DPSOAClassifier):
    """Broken twin: continues its stream without the version compare-and-swap."""

    def _before_block(self, n_rows, first_call, from_fit, plan):
        if first_call:
            super()._before_block(n_rows, first_call, from_fit, plan)


def _stream_race(racers, cls, store):
    """Race six copies of one pickled mid-stream ``cls``; (results, budget, charges
    before the race, the original learner, the rest of the stream)."""
    budget = PrivacyBudget(10.0, 1e-4, store=store)
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, (300, 2))
    y = (X.sum(axis=1) > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = cls(epsilon=2.0, budget=budget, classes=[0, 1])
        clf.partial_fit(X[:100], y[:100])
    charges = budget.charges
    results = racers.race(_continue_stream, pickle.dumps(clf), X[100:], y[100:])
    return results, budget, charges, clf, (X[100:], y[100:])


def test_a_stream_without_its_compare_and_swap_fails_the_race(racers, tmp_path):
    results, *_ = _stream_race(racers, _UncheckedDPSOA, f"sqlite:///{tmp_path / 'l.db'}")
    assert results.count("continued") == N_PROCS  # what the test below must catch


@pytest.mark.parametrize("name", _ONLINE)
def test_copies_of_one_stream_continue_once(racers, store, name):
    """Six processes continue one pickled mid-stream learner: the stream's version
    compare-and-swap lets exactly one through, the others are stale, and the stream
    was charged once."""
    results, budget, charges, clf, (X, y) = _stream_race(racers, getattr(skdp, name), store)
    assert sorted(results) == ["continued"] + ["stale"] * (N_PROCS - 1)
    assert budget.charges == charges and len(charges) == 1
    with pytest.raises(StaleStateError):  # the original is stale too now
        clf.partial_fit(X, y)
    assert budget.verify()


# ----------------------------------------------------------------- one process
def _answer_until_hard(clf, queries):
    """Answer rows one at a time until the next hard query is recorded."""
    before = clf.n_hard_queries_
    for row in queries:
        clf.decision_function(row[None, :])
        if clf.n_hard_queries_ > before:
            return
    raise AssertionError("no hard query")


def test_a_hard_query_refused_by_its_cap_is_not_released():
    """When the cap is filled by another copy's record, this copy's ⊤ is refused
    before it leaves the call: the answers before it are released, the teachers and
    hard queries stay as they were."""
    clf = PrivatePredictor(Thresholds(), calibration="stemmer", max_hard_queries=2,
                           random_state=0, classes=[0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a fixed seed (a test) warns
        clf.fit(*_random_labels(20_000))
    queries = np.random.default_rng(3).random((3000, 1))
    _answer_until_hard(clf, queries[:1000])
    clf.budget_._charge(0.0, 0.0, "PrivatePredictor: hard query 2 (another copy)")
    hard_X, hard_y = clf.hard_queries_, clf.hard_labels_
    with pytest.raises(QueryBudgetExhaustedError, match="all 2 hard queries") as info:
        clf.decision_function(queries[1000:])
    assert 0 <= info.value.n_answered < 2000
    np.testing.assert_array_equal(clf.hard_queries_, hard_X)
    np.testing.assert_array_equal(clf.hard_labels_, hard_y)
    assert clf.n_hard_queries_ == 2
    with pytest.raises(QueryBudgetExhaustedError):  # and it stays refused
        clf.decision_function(queries[2500:2501])


def test_copies_find_the_plan_paid_even_when_a_second_payment_would_not_fit():
    """The reservation is ≈ ε, so a second payment does not fit: the store refuses it
    for the budget before it looks at the cap. The copy must read that as "paid",
    answer, and leave both ledgers with one reservation."""
    user = PrivacyBudget(5.0, 1e-5)
    clf = PrivatePredictor(Thresholds(), calibration="bsu", max_hard_queries=3, budget=user,
                           classes=[0, 1]).fit(*_random_labels(20_000))
    twin = pickle.loads(pickle.dumps(clf))
    queries = np.random.default_rng(4).random((3000, 1))
    clf.decision_function(queries[:1])
    twin.decision_function(queries[1:2])  # starts instance 2 on the paid plan
    assert len(_labels(clf.budget_, "BetweenThresholds instance")) == 2
    for budget in (clf.budget_, user):
        assert len(_labels(budget, "reserved the planned run")) == 1
    assert user.spent == clf.budget_.spent


def test_a_payment_interrupted_between_the_two_ledgers_is_completed_once():
    """A copy that paid the user's budget and died before ``budget_`` left the plan
    half paid; the next copy pays ``budget_`` only."""
    user = PrivacyBudget(5.0, 1e-5)
    clf = PrivatePredictor(Thresholds(), n_queries=10, budget=user, classes=[0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(*_random_labels(50))
    what = "reserved the subsample-and-aggregate fallback (10 queries)"
    tag = f"PrivatePredictor [budget_ {clf.budget_.ledger_id}]: {what}"
    user._charge(0.5, 1e-6, tag)  # the dead copy's half
    spent = user.spent
    clf.decision_function(np.random.default_rng(5).random((3, 1)))
    assert user.spent == spent and len(_labels(user, what)) == 1
    assert len(_labels(clf.budget_, what)) == 1 and clf.budget_.spent.epsilon > 0


def test_clones_sharing_the_users_budget_each_pay_their_own_plan():
    """The once-only label in the user's budget names the predictor's own ledger, so
    two fitted clones on one budget (a search) each pay their plan."""
    user = PrivacyBudget(5.0, 1e-5)
    data = _random_labels(20_000)
    clones = [PrivatePredictor(Thresholds(), calibration="bsu", max_hard_queries=3,
                               budget=user, classes=[0, 1]).fit(*data) for _ in range(2)]
    for clf in clones:
        clf.decision_function(np.random.default_rng(6).random((1, 1)))
    assert len(_labels(user, "reserved the planned run")) == 2
    assert user.spent.epsilon == pytest.approx(sum(c.budget_.spent.epsilon for c in clones))
