"""PERP predictors made durable (issue 32): one running phase across restarts and copies.

``make_durable()`` keeps the PERP predictor's ``_state`` in the ledger's store (a real
SQLite file and a real PostgreSQL server): a restarted process or a second copy
continues the *same* phase — the same ChallengeBT copies and noisy thresholds, the
initial sample paid once — where an ordinary copy of a started predictor refuses; a
stale copy cannot save over a newer state; a lost run (killed between its charge and
its save) released nothing and is continued, a lost *start* is started again without a
second payment, but a start paid by an ordinary copy is never repeated.
"""

from __future__ import annotations

import itertools
import pickle
import threading
import warnings

import numpy as np
import pytest
from _model_subprocess import in_new_process
from _postgres import PG_PASSWORD

from skdp import PrivacyBudget, StaleStateError
from skdp.accounting.stores._states import save_state
from skdp.prediction import (
    DecisionStumpPERPClassifier,
    QueryBudgetExhaustedError,
    RectanglesPERPClassifier,
    perp_parameters,
)
from skdp.prediction._perp_phase import RectanglesRun

EPS = 1000.0  # Stemmer's construction needs ε·√n large; see tests/prediction/test_perp.py
NEED = perp_parameters(EPS, 1e-6, 0.1, 0.05, 1.0, 2, preset="charged").initial_sample_size
RNG = np.random.default_rng(5)
X = RNG.random((NEED, 2))
Y = np.all((X > 0.2) & (X < 0.8), axis=1).astype(int)
Q1 = RNG.random((300, 2))
Q2 = RNG.random((200, 2))
INITIAL = "initial sample (phase-1 slices)"


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path, monkeypatch):
    if request.param == "sqlite":
        return "sqlite:///" + str(tmp_path / "ledger.db")
    monkeypatch.setenv("PGPASSWORD", PG_PASSWORD)  # for the subprocesses' libpq
    return request.getfixturevalue("postgresql_db_url")


def _fitted(store, cls=RectanglesPERPClassifier, budget=(EPS, 1e-5), X=X, Y=Y, epsilon=EPS):
    budget = PrivacyBudget(*budget, store=store)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(epsilon=epsilon, gamma=1.0, classes=[0, 1], budget=budget).fit(X, Y)


def _labels(clf):
    return [label for _, _, label in clf.budget_.charges]


def _ranges(labels):
    """The (first, last) query numbers of the ledger's δ charges, in ledger order."""
    out = []
    for label in labels:
        if ": queries " in label:
            first, last = label.rsplit(" ", 1)[1].split("–")
            out.append((int(first), int(last)))
    return out


def _thresholds(clf):
    """The live copies' noisy thresholds (the mechanism's noise drawn at its start)."""
    run = clf._state.mechanism
    return [(c.mechanism._bt._noisy_lower, c.mechanism._bt._noisy_upper) for c in run.copies]


def test_restart_continues_the_same_phase(store, tmp_path):
    clf = _fitted(store).make_durable()
    assert clf.durable_
    first = clf.predict_proba(Q1)
    thresholds, spent = _thresholds(clf), clf.budget_.spent
    model = pickle.dumps(clf)
    assert spent.epsilon == EPS
    del clf
    out = in_new_process(tmp_path, model, f"""
        q2 = np.array({Q2.tolist()})
        out["proba"] = clf.predict_proba(q2)
        out["labels"] = [label for _, _, label in clf.budget_.charges]
        out["answered"] = clf.queries_answered_
        run = clf._state.mechanism
        out["thresholds"] = [(c.mechanism._bt._noisy_lower, c.mechanism._bt._noisy_upper)
                             for c in run.copies]
        out["reexecutions"] = clf.n_reexecutions_
        out["positives"] = np.concatenate(run.positives)
    """)
    labels = out["labels"]
    # One start, paid once; the restarted process charged δ for queries 301–500 only.
    assert sum(INITIAL in label for label in labels) == 1
    assert _ranges(labels) == [(1, 300), (301, 500)]
    assert out["answered"] == 500
    # The same copies (no re-execution at ε = 1000): their noisy thresholds went on.
    assert out["reexecutions"] == 0
    assert out["thresholds"] == thresholds
    # The phase's sample (positively answered queries) holds both processes' answers.
    inside = np.concatenate([Q1[first[:, 1] > 0.5], Q2[out["proba"][:, 1] > 0.5]])
    np.testing.assert_array_equal(out["positives"], inside)
    # A third copy (this process) continues after it.
    back = pickle.loads(model)
    back.predict(Q1[:7])
    assert back.queries_answered_ == 507 and _ranges(_labels(back))[-1] == (501, 507)


def test_without_make_durable_a_copy_of_a_started_predictor_refuses(tmp_path):
    """The contrast: an ordinary copy drops the running phase and cannot continue it."""
    clf = _fitted("sqlite:///" + str(tmp_path / "l.db"))
    clf.predict(Q1)
    copy = pickle.loads(pickle.dumps(clf))
    with pytest.raises(QueryBudgetExhaustedError, match="copy"):
        copy.predict(Q2)


def test_stump_keeps_its_axis_and_run(tmp_path):
    rng = np.random.default_rng(2)
    Xs = rng.random((20_000, 3))
    ys = (Xs[:, 1] > 0.4).astype(int)
    clf = _fitted("sqlite:///" + str(tmp_path / "l.db"), DecisionStumpPERPClassifier,
                  budget=(2 * EPS, 1e-5), X=Xs, Y=ys, epsilon=2 * EPS).make_durable()
    clf.predict(Xs[:50])
    axis = clf._state.axis
    thresholds = _thresholds(clf)
    twin = pickle.loads(pickle.dumps(clf))
    Xq = rng.random((500, 3))
    err = np.mean(twin.predict(Xq) != (Xq[:, 1] > 0.4))
    assert twin._state.axis == axis == 1 and _thresholds(twin) == thresholds
    assert err <= 0.1 and twin.queries_answered_ == 550
    assert sum(INITIAL in label for label in _labels(twin)) == 1


def test_a_stale_copy_is_refused_and_copies_do_not_fork(store):
    clf = _fitted(store).make_durable()
    clf.predict(Q1[:100])
    state, link = clf._state, clf._state._durable
    old_version, old_payload = state._version, state._payload()
    other = pickle.loads(pickle.dumps(clf))
    other.predict(Q1[100:150])
    with pytest.raises(StaleStateError, match="stale copy"):
        save_state(link.store, link.stream_id, old_version, old_payload, link.what)
    # The first copy reloads and goes on after the other's queries: one stream.
    clf.predict(Q1[150:160])
    assert clf.queries_answered_ == 160
    assert _ranges(_labels(clf)) == [(1, 100), (101, 150), (151, 160)]


def _die(*args):
    raise KeyboardInterrupt  # a process killed at this point


def test_a_lost_run_is_continued_and_a_lost_start_restarted_once(tmp_path, monkeypatch):
    from skdp.prediction._state import _DurableLink

    clf = _fitted("sqlite:///" + str(tmp_path / "l.db")).make_durable()
    blob = pickle.dumps(clf)
    # Killed before its charges committed (they are held until the call has answered):
    # nothing of the call is in the ledger.
    monkeypatch.setattr(RectanglesRun, "answer", _die)
    with pytest.raises(KeyboardInterrupt):
        clf.predict(Q1[:10])
    monkeypatch.undo()
    assert _labels(clf) == [] and clf.budget.spent.epsilon == 0
    # Killed after the commit, before the save: the start was paid, nothing of it was
    # released, so the next call starts again from the sample without paying again.
    monkeypatch.setattr(_DurableLink, "_save", _die)
    with pytest.raises(KeyboardInterrupt):
        clf.predict(Q1[:10])
    monkeypatch.undo()
    assert sum(INITIAL in label for label in _labels(clf)) == 1
    restarted = pickle.loads(blob)
    restarted.predict(Q1[:10])
    assert restarted.budget_.spent.epsilon == EPS
    assert sum(INITIAL in label for label in _labels(restarted)) == 1
    thresholds = _thresholds(restarted)
    # A run lost after its δ charge committed: over-counted in the ledger, continued.
    monkeypatch.setattr(_DurableLink, "_save", _die)
    with pytest.raises(KeyboardInterrupt):
        restarted.predict(Q1[10:30])
    monkeypatch.undo()
    again = pickle.loads(blob)
    again.predict(Q1[10:30])
    assert again.queries_answered_ == 30 and _thresholds(again) == thresholds
    assert _ranges(_labels(again)) == [(1, 10), (1, 10), (11, 30), (11, 30)]


def test_a_start_paid_by_an_ordinary_copy_is_never_repeated(tmp_path):
    """The contrast of the lost start: a copy that was never durable started (and may have
    released answers); the durable predictor must refuse, not start a second run."""
    clf = _fitted("sqlite:///" + str(tmp_path / "l.db"))
    blob = pickle.dumps(clf)
    pickle.loads(blob).predict(Q1[:10])  # an ordinary copy starts and answers
    durable = pickle.loads(blob).make_durable()
    with pytest.raises(QueryBudgetExhaustedError, match="copy"):
        durable.predict(Q1[:10])
    assert clf.budget_.spent.epsilon == EPS
    assert sum(INITIAL in label for label in _labels(clf)) == 1


def test_durable_predictor_takes_no_more_rows(tmp_path):
    clf = _fitted("sqlite:///" + str(tmp_path / "l.db")).make_durable()
    with pytest.raises(ValueError, match="durable"):
        clf.partial_fit(X[:100], Y[:100])


def test_concurrent_copies_answer_one_stream_and_refusals_release_nothing(store):
    """Four threads with their own pickled copies answer at once while the user's budget
    runs out of δ: every call either answers (its rows are the next of the one stream)
    or is refused with nothing released and the state unchanged."""
    params = perp_parameters(EPS, 1e-6, 0.1, 0.05, 1.0, 2, preset="charged")
    sched = params.delta_schedule
    # Room for the initial δ(0) and about 200 queries of δ(i).
    room = params.initial_delta + float(sched.remaining_after(0) - sched.remaining_after(200))
    clf = _fitted(store, budget=(EPS, room * (1 + 1e-9))).make_durable()
    blob = pickle.dumps(clf)
    copies = [pickle.loads(blob) for _ in range(4)]
    rows = [np.random.default_rng(i).random((6, 25, 2)) for i in range(4)]
    results = [[] for _ in range(4)]
    barrier = threading.Barrier(4)

    def work(i):
        barrier.wait()
        for batch in rows[i]:
            try:
                results[i].append((batch, copies[i].predict_proba(batch)))
            except QueryBudgetExhaustedError as exc:
                assert exc.n_answered == 0
                results[i].append((batch, None))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    answered = [(b, p) for res in results for b, p in res if p is not None]
    refused = [b for res in results for b, p in res if p is None]
    assert answered and refused
    final = pickle.loads(blob)
    final._state._durable.sync(final._state)
    n = sum(b.shape[0] for b, _ in answered)
    # The ledger's δ ranges tile 1..n: no refused call charged budget_, none overlap.
    ranges = _ranges(_labels(final))
    assert ranges[0][0] == 1 and ranges[-1][1] == n == final.queries_answered_
    assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(ranges))
    assert sum(INITIAL in label for label in _labels(final)) == 1
    # The saved phase sample is exactly the rows answered "inside" (as a set: the calls'
    # order is the lock's), and no refused row is in it.
    inside = np.concatenate([b[p[:, 1] > 0.5] for b, p in answered])
    stored = np.concatenate(final._state.mechanism.positives)
    key = lambda A: sorted(map(tuple, A))  # noqa: E731
    assert key(stored) == key(inside)
    assert final.budget.spent.delta <= final.budget.delta
