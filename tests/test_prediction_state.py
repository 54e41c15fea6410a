"""A predictor's running mechanism as one durable state object (issue 32, item 1).

``make_durable()`` keeps ``_state`` in the ledger's store (SQLite, PostgreSQL): a
restarted process or a second replica continues the *same* mechanism (no new
BetweenThresholds instance, no second payment, the same answers to rows answered
before), a stale copy cannot save over a newer state, and the saved state is
encrypted and sealed under the ledger key.
"""

from __future__ import annotations

import pickle
import sqlite3
import threading
import warnings

import numpy as np
import pytest
from _model_subprocess import in_new_process
from _postgres import PG_PASSWORD

from skdp import PrivacyBudget, StaleStateError
from skdp.accounting.stores._states import load_state, save_state
from skdp.exceptions import LedgerIntegrityError
from skdp.hypotheses import Thresholds
from skdp.prediction import PrivatePredictor, QueryBudgetExhaustedError, SubsampleAggregatePredictor

RNG = np.random.default_rng(7)
X = RNG.random((20_000, 1))
Y = (X[:, 0] >= 0.3).astype(int)
# Queries around the threshold, so that the stream has hard queries.
Q1 = 0.3 + 0.02 * (RNG.random((40, 1)) - 0.5)
Q2 = RNG.random((30, 1))


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path, monkeypatch):
    if request.param == "sqlite":
        return "sqlite:///" + str(tmp_path / "ledger.db")
    monkeypatch.setenv("PGPASSWORD", PG_PASSWORD)  # for the subprocesses' libpq
    return request.getfixturevalue("postgresql_db_url")


def _fitted(store, cls=PrivatePredictor, **params):
    budget = PrivacyBudget(10.0, 1e-5, store=store)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(Thresholds(), epsilon=1.0, classes=[0, 1], budget=budget, **params).fit(X, Y)


def _labels(clf):
    return [label for _, _, label in clf.budget_.charges]


def _count(labels, prefix):
    return sum(label.startswith(f"PrivatePredictor: {prefix}") for label in labels)


def test_restart_continues_the_same_mechanism(store, tmp_path):
    clf = _fitted(store).make_durable()
    assert clf.durable_
    first = clf.predict_proba(Q1)
    assert clf.n_hard_queries_ >= 1  # the stream is mid-way: a live instance, hard queries
    spent = clf.budget_.spent
    model = pickle.dumps(clf)
    del clf
    q1, q2 = Q1, Q2
    out = in_new_process(tmp_path, model, f"""
        q1, q2 = np.array({q1.tolist()}), np.array({q2.tolist()})
        out["again"] = clf.predict_proba(q1)
        out["new"] = clf.predict_proba(q2)
        out["labels"] = [label for _, _, label in clf.budget_.charges]
        out["spent"] = clf.budget_.spent
        out["hard"] = clf.hard_queries_
    """)
    # The rows answered before the restart get the same answers (the answer memory).
    np.testing.assert_array_equal(out["again"], first)
    # One plan paid, one instance: the restarted process continued it.
    labels = out["labels"]
    assert _count(labels, "reserved the planned run") == 1
    assert _count(labels, "BetweenThresholds instance") == 1
    assert out["spent"] == spent
    assert out["hard"].shape[0] == _count(labels, "hard query")
    # And its answers are saved: a third copy (this process) sees them.
    back = pickle.loads(model)
    np.testing.assert_array_equal(back.predict_proba(Q2), out["new"])


def test_without_make_durable_a_copy_cannot_continue(store):
    """The contrast (the test above can fail): an ordinary copy drops the live
    instance, and the charged calibration's single instance cannot be started twice."""
    clf = _fitted(store)
    clf.predict(Q1)
    copy = pickle.loads(pickle.dumps(clf))
    with pytest.raises(QueryBudgetExhaustedError, match="cannot be resumed"):
        copy.predict(Q2)


def test_a_stale_copy_is_refused_and_copies_do_not_fork(store):
    clf = _fitted(store).make_durable()
    clf.predict(Q1[:10])
    state = clf._state
    link = state._durable
    old_version, old_payload = state._version, state._payload()
    other = pickle.loads(pickle.dumps(clf))
    answered = other.predict_proba(Q1[10:])
    # A save from the version the first copy holds is refused: the record moved on.
    with pytest.raises(StaleStateError, match="stale copy"):
        save_state(link.store, link.stream_id, old_version, old_payload, link.what)
    # The first copy does not fork: it reloads and answers those rows as the other did.
    np.testing.assert_array_equal(clf.predict_proba(Q1[10:]), answered)


def test_a_run_that_committed_without_saving_taints_the_instance(tmp_path):
    """A process killed between a ledger step (a hard query, an instance) and its save
    leaves a step no saved state knows: the instance is not continued (its noisy
    thresholds produced that step), a new one is started instead. Without such a step
    the instance is continued (the contrast)."""
    clf = _fitted("sqlite:///" + str(tmp_path / "l.db"), calibration="bsu",
                  max_hard_queries=6).make_durable()
    clf.predict(Q2[:5])
    blob = pickle.dumps(clf)
    calm = pickle.loads(blob)
    calm._state._durable.sync(calm._state)
    assert calm._state.mechanism is not None  # nothing unsaved: the same instance
    # A step committed by a run that never saved (as if killed before its save).
    clf.budget_._charge(0.0, 0.0, "PrivatePredictor: hard query (unsaved run)")
    tainted = pickle.loads(blob)
    tainted._state._durable.sync(tainted._state)
    assert tainted._state.mechanism is None
    before = _count(_labels(clf), "BetweenThresholds instance")
    tainted.predict(Q1[:3] + 0.5)
    assert _count(_labels(clf), "BetweenThresholds instance") == before + 1


def test_durable_predictor_takes_no_more_rows(tmp_path):
    clf = _fitted("sqlite:///" + str(tmp_path / "l.db")).make_durable()
    with pytest.raises(ValueError, match="durable"):
        clf.partial_fit(X[:100], Y[:100])


def test_saved_state_is_encrypted_and_sealed(tmp_path):
    path = tmp_path / "ledger.db"
    clf = _fitted("sqlite:///" + str(path)).make_durable()
    clf.predict(Q1)
    link = clf._state._durable
    with sqlite3.connect(path) as db:
        (payload,) = db.execute("SELECT payload FROM skdp_states").fetchone()
    plain = clf._state._payload()
    assert len(payload) == len(plain)
    # No trace of the pickle (module names, the hard queries' bytes) in the store.
    assert b"skdp" not in payload and b"numpy" not in payload
    assert clf._state.forced_X.tobytes() not in payload
    # A flipped byte is caught before anything is unpickled.
    tampered = bytes([payload[0] ^ 1]) + payload[1:]
    with sqlite3.connect(path) as db:
        db.execute("UPDATE skdp_states SET payload = ?", (tampered,))
    with pytest.raises(LedgerIntegrityError, match="altered or replaced"):
        load_state(link.store, link.stream_id, link.what)
    clf._state._version = None
    with pytest.raises(LedgerIntegrityError):
        clf.predict(Q2)
    # A deleted state row is not taken for a fresh start.
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM skdp_states")
    with pytest.raises(LedgerIntegrityError, match="deleted"):
        load_state(link.store, link.stream_id, link.what)


def test_concurrent_copies_answer_one_transcript(store):
    """Four threads, each with its own pickled copy, answer at once: one instance, the
    hard-query cap held, and every answer any copy released is in the saved answer
    memory with the same score."""
    clf = _fitted(store, calibration="bsu", max_hard_queries=4).make_durable()
    blob = pickle.dumps(clf)
    copies = [pickle.loads(blob) for _ in range(4)]
    rows = [0.3 + 0.04 * (np.random.default_rng(i).random((25, 1)) - 0.5) for i in range(4)]
    released = [None] * 4
    barrier = threading.Barrier(4)

    def work(i):
        barrier.wait()
        try:
            released[i] = copies[i].predict_proba(rows[i])[:, 1]
        except QueryBudgetExhaustedError as exc:
            released[i] = exc.answers[:, 1] if exc.n_answered else np.empty(0)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    labels = _labels(clf)
    assert _count(labels, "hard query") <= 4
    assert _count(labels, "BetweenThresholds instance") <= 4
    assert _count(labels, "reserved the planned run") == 1
    final = pickle.loads(blob)
    final._state._durable.sync(final._state)
    cache = final._state.answers
    from skdp.prediction._scored import _row_hashes

    for i in range(4):
        got = released[i]
        a, b = _row_hashes(rows[i][: got.size])
        order = np.argsort(a, kind="stable")
        stored = np.empty(got.size)
        stored[order] = cache.lookup(a[order], b[order])
        np.testing.assert_array_equal(stored, got)


def test_subsample_aggregate_durable_keeps_its_query_count(store):
    clf = _fitted(store, cls=SubsampleAggregatePredictor, n_queries=50).make_durable()
    clf.predict(Q2)  # 30 of 50
    copy = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(copy.predict_proba(Q2), clf.predict_proba(Q2))  # free
    assert copy.n_queries_used_ == 30
    with pytest.raises(QueryBudgetExhaustedError, match="only 20"):
        copy.predict(Q1[:21])
    copy.predict(Q1[:20])
    assert clf._state.scores.n == 30  # the first copy's local state: not yet reloaded
    clf.predict(Q1[:20])  # reloads; answered from the memory, free
    assert clf._state.scores.n == 50 and clf.n_queries_used_ == 50
