"""ContinualReleaseClassifier: every row used by exactly one release, the stream paid
once, stale copies refused, bad input refused before anything is spent."""

import copy
import pickle
import warnings

import numpy as np
import pytest
from _stream_recording import FITS, NoisyCountClassifier
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import SGDClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skdp import (
    BudgetExhaustedError,
    ContinualReleaseClassifier,
    DPDecisionListClassifier,
    PrivacyBudget,
    PrivacyParameterError,
    StaleStateError,
)
from skdp import (
    TestingSeed as Seed,
)
from skdp.decision_list import _private as dl_private
from skdp.preprocessing import PublicBoundsBinarizer
from skdp.streams import release_schedule


def _calls(sizes, n_features=3, seed=0):
    """Calls with row ids in column 0 (0, 1, 2, … across the stream), labels in {0, 1}."""
    rng = np.random.default_rng(seed)
    start, out = 0, []
    for n in sizes:
        X = np.column_stack([np.arange(start, start + n), rng.integers(0, 2, (n, n_features))])
        out.append((X.astype(float), rng.integers(0, 2, n)))
        start += n
    return out


def _rule_rows(n):
    """0/1 features and the labels of a two-rule list (x0 → 1, else x2): learnable."""
    X = np.random.default_rng(0).integers(0, 2, (n, 6))
    return X, np.where(X[:, 0] == 1, 1, X[:, 2])


def _stream(clf, calls):
    for X, y in calls:
        clf.partial_fit(X, y)
    return clf


@pytest.fixture(autouse=True)
def _fresh_record():
    FITS.clear()
    yield
    FITS.clear()


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.integers(1, 7), min_size=1, max_size=40),
       schedule=st.sampled_from(["doubling", "fixed"]), block=st.integers(1, 4),
       max_block=st.one_of(st.none(), st.integers(1, 6)),
       guard=st.sampled_from([None, 0.5]))
def test_every_row_of_a_finished_block_is_released_once(sizes, schedule, block, max_block,
                                                        guard):
    """Without the guard the blocks are the public schedule's; with it the schedule
    may restart (after a check the constant wins), and still every row of a closed
    block is in exactly one release, each release holding its block's calls."""
    FITS.clear()
    clf = ContinualReleaseClassifier(NoisyCountClassifier(), epsilon=1.0, schedule=schedule,
                                     block=block, max_block=max_block, classes=[0, 1],
                                     guard=guard)
    _stream(clf, _calls(sizes))
    ends = list(np.cumsum(clf.block_calls_))
    if guard is None:
        assert ends == release_schedule(schedule, block, len(sizes), max_block)
    released = int(sum(sizes[:ends[-1]])) if ends else 0
    used = np.concatenate(FITS) if FITS else np.array([], dtype=int)
    assert np.array_equal(np.sort(used), np.arange(released))  # once each, none missing
    assert clf.n_releases_ == len(ends) and clf.n_calls_ == len(sizes)
    assert clf.privacy_spent_.epsilon == 1.0
    starts = [0, *ends][:len(ends)]
    # Each release's rows are exactly its block's calls, in order.
    bounds = np.cumsum([0, *sizes])
    for fit, s, e in zip(FITS, starts, ends, strict=True):
        assert np.array_equal(fit, np.arange(bounds[s], bounds[e]))


def test_release_schedule_doubling_and_fixed():
    assert release_schedule("doubling", 1, 31) == [1, 3, 7, 15, 31]
    assert release_schedule("doubling", 3, 30) == [3, 9, 21]
    assert release_schedule("fixed", 4, 13) == [4, 8, 12]
    assert release_schedule("doubling", 2, 30, max_block=5) == [2, 6, 11, 16, 21, 26]


def test_decision_list_partial_fit_through_the_wrapper_uses_every_row(monkeypatch):
    """ContinualReleaseClassifier(DPDecisionListClassifier()) fits its lists on all
    rows since the last release (the decision list's own partial_fit releases at calls
    1, 3, 7, … too, but the lead wires it to this wrapper)."""
    seen = []
    fit = dl_private.DPDecisionListClassifier.fit

    def recording_fit(self, X, y, sample_weight=None):
        seen.append(X.shape[0])
        return fit(self, X, y, sample_weight)

    monkeypatch.setattr(dl_private.DPDecisionListClassifier, "fit", recording_fit)
    X, y = _rule_rows(15 * 200)
    budget = PrivacyBudget(1.0, 1e-6)
    clf = ContinualReleaseClassifier(DPDecisionListClassifier(), epsilon=1.0, budget=budget,
                                     classes=[0, 1], random_state=Seed(0))
    for start in range(0, X.shape[0], 200):
        clf.partial_fit(X[start:start + 200], y[start:start + 200])
    assert seen == [200, 400, 800, 1600]  # 15 calls: blocks 1, 2, 4, 8 — all 3,000 rows
    assert budget.spent.epsilon == pytest.approx(1.0) and budget.spent.delta == 1e-6
    # the guard's checks take 10 % of ε (each row: one check, one release)
    assert all(m.budget is None and m.epsilon == pytest.approx(0.9) for m in clf.estimators_)
    assert clf.score(X, y) > 0.95


def test_the_stream_pays_once_and_predicting_is_free():
    budget = PrivacyBudget(2.0, 1e-5)
    clf = ContinualReleaseClassifier(NoisyCountClassifier(), epsilon=2.0, budget=budget,
                                     classes=[0, 1], random_state=Seed(1))
    for X, y in _calls([5] * 20):
        if hasattr(clf, "estimators_"):
            clf.predict(X)  # prequential: predict, then learn
        clf.partial_fit(X, y)
    assert len(budget.charges) == 1 and budget.spent.epsilon == 2.0
    assert clf.n_releases_ == 4 and clf.next_release_ == 31


def test_ensemble_weights_blocks_by_calls_and_latest_uses_the_last_model():
    clf = ContinualReleaseClassifier(DPDecisionListClassifier(), epsilon=8.0, classes=[0, 1],
                                     combine="ensemble", guard=None)
    rng = np.random.default_rng(3)
    for _ in range(7):
        X = rng.integers(0, 2, (300, 4))
        clf.partial_fit(X, X[:, 1])
    X = rng.integers(0, 2, (50, 4))
    manual = sum(w * m.predict_proba(X) for w, m in zip(clf.block_calls_, clf.estimators_,
                                                          strict=True)) / 7
    np.testing.assert_allclose(clf.predict_proba(X), manual)
    clf.set_params(combine="recent")  # the newest has weight 1/2, then 1/4, …
    recent = sum(w * m.predict_proba(X) for w, m in zip([0.25, 0.5, 1.0], clf.estimators_,
                                                          strict=True)) / 1.75
    np.testing.assert_allclose(clf.predict_proba(X), recent)
    clf.set_params(combine="latest")
    np.testing.assert_allclose(clf.predict_proba(X), clf.estimators_[-1].predict_proba(X))
    assert np.array_equal(clf.predict(X), clf.classes_[clf.predict_proba(X).argmax(1)])


def test_before_the_first_release_predictions_are_uniform():
    clf = ContinualReleaseClassifier(NoisyCountClassifier(), block=3, classes=["a", "b"])
    X, _ = _calls([4])[0]
    clf.partial_fit(X, np.array(["a", "b", "a", "b"]))
    assert clf.n_releases_ == 0
    np.testing.assert_allclose(clf.predict_proba(X), 0.5)
    assert list(clf.predict(X)) == ["a"] * 4


def test_defaults_cap_the_doubling_blocks_at_16_calls():
    clf = ContinualReleaseClassifier(NoisyCountClassifier(), classes=[0, 1], guard=None)
    _stream(clf, _calls([2] * 60))
    assert clf.block_calls_ == [1, 2, 4, 8, 16, 16] and clf.next_release_ == 63
    assert clf.get_params()["combine"] == "recent"


def test_fit_releases_at_once_and_starts_a_new_stream():
    clf = ContinualReleaseClassifier(NoisyCountClassifier(), block=4, classes=[0, 1])
    calls = _calls([3, 3, 3])
    clf.fit(*calls[0])
    assert clf.n_releases_ == 1 and clf.next_release_ == 1 + 8
    _stream(clf, calls[1:])
    first = clf._stream
    clf.fit(*calls[0])  # a new stream: a new record, one release
    assert clf._stream.id != first.id and clf.n_releases_ == 1 and clf.n_calls_ == 1


def test_copies_and_pickles_of_a_mid_stream_wrapper_are_refused():
    budget = PrivacyBudget(5.0, 1e-5)
    clf = ContinualReleaseClassifier(NoisyCountClassifier(), budget=budget, classes=[0, 1],
                                     random_state=Seed(0))
    calls = _calls([4] * 6)
    _stream(clf, calls[:2])
    branch, pickled = copy.deepcopy(clf), pickle.dumps(clf)
    clf.partial_fit(*calls[2])  # the original continues (and releases at call 3)
    state = dict(branch.__dict__)
    with pytest.raises(StaleStateError):
        branch.partial_fit(*calls[2])
    assert branch.__dict__.keys() == state.keys() and branch.n_calls_ == 2
    with pytest.raises(StaleStateError):
        pickle.loads(pickled).partial_fit(*calls[3])
    assert budget.spent.epsilon == 1.0
    clf.partial_fit(*calls[3])  # the original is not disturbed by the refusals


def test_bad_input_and_exhausted_budget_spend_nothing():
    budget = PrivacyBudget(0.5)
    clf = ContinualReleaseClassifier(NoisyCountClassifier(), epsilon=1.0, delta=0.0,
                                     budget=budget, classes=[0, 1])
    X, y = _calls([5])[0]
    with pytest.raises(BudgetExhaustedError):
        clf.partial_fit(X, y)
    assert not hasattr(clf, "estimators_") and budget.spent.epsilon == 0
    budget = PrivacyBudget(1.0)
    clf.set_params(budget=budget)
    bad = X.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clf.partial_fit(bad, y)
    with pytest.raises(ValueError, match="not in classes"):
        clf.partial_fit(X, y + 5)
    with pytest.raises(PrivacyParameterError):
        clf.set_params(epsilon=-1.0).partial_fit(X, y)
    with pytest.raises(ValueError, match="classes must be passed"):
        ContinualReleaseClassifier(NoisyCountClassifier()).partial_fit(X, y)
    assert budget.spent.epsilon == 0 and len(budget.charges) == 0


def test_wraps_only_private_learners_after_public_transforms():
    X, y = _calls([20])[0]
    with pytest.raises(TypeError, match="private skdp learner"):
        ContinualReleaseClassifier(SGDClassifier(), classes=[0, 1]).partial_fit(X, y)
    with pytest.raises(TypeError, match="fitted on the data without privacy"):
        ContinualReleaseClassifier(make_pipeline(StandardScaler(), DPDecisionListClassifier()),
                                   classes=[0, 1]).partial_fit(X, y)
    pipe = make_pipeline(PublicBoundsBinarizer(thresholds=0.5), DPDecisionListClassifier())
    clf = ContinualReleaseClassifier(pipe, epsilon=3.0, classes=[0, 1]).partial_fit(X, y)
    step = clf.estimators_[0].steps[-1][1]
    assert step.epsilon == pytest.approx(2.7) and list(step.classes) == [0, 1]  # guard: 10 %
    assert clf.predict(X).shape == (20,)


def test_a_seed_reproduces_the_releases_and_none_does_not_store_one():
    calls = _calls([30] * 7)

    def counts(random_state):
        clf = ContinualReleaseClassifier(NoisyCountClassifier(), epsilon=0.5, classes=[0, 1],
                                         random_state=random_state)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _stream(clf, calls)
        return [m.noisy_count_ for m in clf.estimators_], clf

    assert counts(7)[0] == counts(7)[0]
    _, clf = counts(None)
    assert all(m.random_state is None for m in clf.estimators_)


# -- the guard: a private check against a constant on every call ---------------------
def _sorted_stream(n_calls=12, rows=400, seed=0):
    """Labels sorted like a file sorted by its label: positives first, then negatives;
    the features say nothing about them (no model can beat the constant)."""
    rng = np.random.default_rng(seed)
    y = np.r_[np.ones(3 * rows, int), np.zeros((n_calls - 3) * rows, int)]
    X = rng.integers(0, 2, (y.size, 4)).astype(float)
    return [(X[i:i + rows], y[i:i + rows]) for i in range(0, y.size, rows)]


def test_guard_falls_back_to_the_constant_where_the_models_lose():
    calls = _sorted_stream()
    errors = {}
    for guard in (None, 0.1):
        clf = ContinualReleaseClassifier(DPDecisionListClassifier(), epsilon=1.0,
                                         classes=[0, 1], guard=guard, random_state=Seed(3))
        wrong = 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i, (X, y) in enumerate(calls):
                if i:
                    wrong += np.count_nonzero(clf.predict(X) != y)
                clf.partial_fit(X, y)
        errors[guard] = wrong / sum(y.size for _, y in calls[1:])
    constant = 2 * 400 / (11 * 400)  # best constant over calls 2…: 0, wrong on 2 calls
    assert errors[None] > constant + 0.1  # models learned from the positive calls
    assert errors[0.1] <= constant + 0.01
    assert clf._choice == ("constant", 0)
    assert (clf.predict(calls[-1][0]) == 0).all()
    assert clf._guard.n_checks == len(calls) - 1  # every call but the first (no model yet)


def test_guard_keeps_the_models_where_they_win_and_costs_its_share():
    X, y = _rule_rows(20 * 300)
    budget = PrivacyBudget(1.0, 1e-6)
    clf = ContinualReleaseClassifier(DPDecisionListClassifier(), epsilon=1.0, budget=budget,
                                     classes=[0, 1], random_state=Seed(0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for start in range(0, X.shape[0], 300):
            clf.partial_fit(X[start:start + 300], y[start:start + 300])
    assert clf._choice[0] == "model" and clf.score(X, y) > 0.95
    assert len(budget.charges) == 1 and budget.spent.epsilon == pytest.approx(1.0)
    assert all(m.epsilon == pytest.approx(0.9) for m in clf.estimators_)
    assert clf._guard.epsilon == pytest.approx(0.1) and clf._guard.scale == pytest.approx(30)
    off = ContinualReleaseClassifier(DPDecisionListClassifier(), guard=None,
                                     classes=[0, 1]).partial_fit(X[:300], y[:300])
    assert off._guard is None and off.estimators_[0].epsilon == 1.0


def test_predicting_first_changes_nothing_the_stream_releases():
    """The check reuses a predict on the same rows (prequential use); the released
    checks and models are the same with or without it (seeded noise)."""
    calls = _sorted_stream(n_calls=8, rows=200, seed=1)

    def run(predict_first):
        clf = ContinualReleaseClassifier(DPDecisionListClassifier(), classes=[0, 1],
                                         random_state=Seed(5))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i, (X, y) in enumerate(calls):
                if predict_first and i:
                    clf.predict(X)
                clf.partial_fit(X, y)
        return clf

    a, b = run(True), run(False)
    assert [list(v) for v in a._guard._noisy] == [list(v) for v in b._guard._noisy]
    assert [m.rules_ for m in a.estimators_] == [m.rules_ for m in b.estimators_]
    X = calls[0][0]
    before = dict(a.__dict__)
    np.testing.assert_array_equal(a.predict(X), a.predict(X))
    assert a.__dict__ == before  # predicting leaves the estimator's attributes alone


def test_guard_restarts_the_schedule_after_an_abrupt_change():
    """A concept that flips in the middle of a long block: the checks see every model
    lose to the constant, the rows before the change are released as a block of their
    own and the next call starts the doubling again (a model of post-change rows
    after one call, not at the end of the 16-call block)."""
    rng = np.random.default_rng(0)
    n_calls, rows = 60, 400
    X = rng.integers(0, 2, (n_calls * rows, 4))
    y = X[:, 0].copy()
    y[40 * rows:] = 1 - y[40 * rows:]  # calls 41…: the label is the other value
    y = np.where(rng.uniform(size=y.size) < 0.2, y, np.where(X[:, 1] == 1, 1, y))
    clf = ContinualReleaseClassifier(DPDecisionListClassifier(), epsilon=4.0, classes=[0, 1],
                                     random_state=Seed(2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(n_calls):
            clf.partial_fit(X[i * rows:(i + 1) * rows], y[i * rows:(i + 1) * rows])
    ends = list(np.cumsum(clf.block_calls_))
    assert ends[:5] == [1, 3, 7, 15, 31]  # the schedule up to the change
    assert ends[5] == 40 and ends[6] == 41  # calls 32-40 released early; 41 alone
    assert clf.score(X[-rows:], y[-rows:]) > 0.9 and clf._choice[0] == "model"


def test_changing_combine_mid_stream_keeps_the_checks_running():
    X, y = _rule_rows(6 * 200)
    for first, then in (("recent", "latest"), ("latest", "recent")):
        clf = ContinualReleaseClassifier(DPDecisionListClassifier(), classes=[0, 1],
                                         combine=first)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i in range(6):
                if i == 3:
                    clf.set_params(combine=then)
                clf.partial_fit(X[i * 200:(i + 1) * 200], y[i * 200:(i + 1) * 200])
        assert clf._guard.n_checks == 5 and clf.predict(X[:5]).shape == (5,)
        # the guard's choice indexes K = 2 candidates fixed at the stream's start;
        # "latest" has one: the second (the latest model) is that one (a CI run failed
        # here on noise that chose it, with an IndexError)
        clf._choice = ("model", 1)
        latest = clf.estimators_[-1].predict_proba(X[:5])
        np.testing.assert_allclose(clf.set_params(combine="latest").predict_proba(X[:5]),
                                   latest)
