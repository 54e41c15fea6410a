"""``skdp serve`` over real HTTP (issue 32, item 2).

Each test starts ``python -m skdp serve`` (uvicorn) in a subprocess on a free loopback
port and talks to it with the standard library's HTTP client: tokens, 401/422/429,
the budget endpoint, a ``kill -9`` and restart that continues the same mechanism, and
several workers and replicas answering concurrently on one SQLite and one PostgreSQL
ledger without passing any cap.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import warnings

import numpy as np
import pytest
from _postgres import PG_PASSWORD

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

import itertools

from skdp import PrivacyBudget
from skdp.hypotheses import Thresholds
from skdp.prediction import PrivatePredictor, SubsampleAggregatePredictor
from skdp.prediction._scored import _row_hashes

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKEN = "tok-" + "a1b2c3d4" * 4
OTHER = "tok-" + "e5f6a7b8" * 4
RNG = np.random.default_rng(11)
X = RNG.random((20_000, 1))
Y = (X[:, 0] >= 0.3).astype(int)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``python -m skdp serve`` in a subprocess (its own process group, for kill -9)."""

    def __init__(self, model, tokens_file, *args, env=None):
        self.port = _free_port()
        self.log = open(str(model) + f".{self.port}.log", "w+b")  # noqa: SIM115
        environ = {**os.environ, "PYTHONPATH": ROOT, **(env or {})}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "skdp", "serve", str(model), "--port", str(self.port),
             "--tokens", str(tokens_file), *args],
            env=environ, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 120
        while True:
            try:
                if self.get("/healthz", token=None)[0] == 200:
                    return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the server did not start:\n" + self.output())
            time.sleep(0.2)

    def request(self, method, path, body=None, token=TOKEN):
        data = None if body is None else (body if isinstance(body, bytes)
                                          else json.dumps(body).encode())
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data,
                                     method=method)
        if token is not None:
            req.add_header("Authorization", f"Bearer {token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())

    def get(self, path, token=TOKEN):
        return self.request("GET", path, token=token)

    def predict(self, rows, token=TOKEN):
        return self.request("POST", "/v1/predict", {"X": np.asarray(rows).tolist()}, token)

    def output(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def kill(self, sig=signal.SIGKILL):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            self.proc.wait(timeout=60)

    def stop(self):
        self.kill(signal.SIGTERM)
        self.log.close()


@pytest.fixture
def serving(tmp_path):
    """Start servers on a model; all are stopped at the end of the test."""
    servers = []
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(f"# clients\n{TOKEN}\n\n{OTHER}  \n")

    def start(model, *args, env=None):
        server = Server(model, tokens, *args, env=env)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def _model(tmp_path, store, cls=PrivatePredictor, name="model.pkl", **params):
    budget = PrivacyBudget(10.0, 1e-5, store=store)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = cls(Thresholds(), epsilon=1.0, classes=[0, 1], budget=budget, **params).fit(X, Y)
    path = tmp_path / name
    path.write_bytes(pickle.dumps(clf))
    return path


def _journal(model_path):
    """The saved state's answer memory and ledger labels, read by a fresh copy."""
    clf = pickle.loads(model_path.read_bytes())
    clf.make_durable()
    state = clf._state
    state._durable.sync(state)
    return clf, state.answers


def _journaled(answers, rows):
    a, b = _row_hashes(np.asarray(rows, dtype=float))
    order = np.argsort(a, kind="stable")
    out = np.empty(a.size)
    out[order] = answers.lookup(a[order], b[order])
    return out


def test_tokens_errors_budget_and_docs(tmp_path, serving):
    server = serving(_model(tmp_path, "sqlite:///" + str(tmp_path / "l.db")))
    rows = [[0.1], [0.5], [0.31]]
    assert server.predict(rows, token=None)[0] == 401
    status, body = server.predict(rows, token="tok-" + "0" * 32)
    assert status == 401 and body["error"] == "unauthorized"
    assert server.get("/v1/budget", token=None)[0] == 401
    status, body = server.predict(rows)
    assert status == 200 and len(body["y"]) == 3
    proba = np.asarray(body["proba"])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert body["y"] == [int(p > 0.5) for p in proba[:, 1]]
    # A row asked again (by any client) gets the same answer.
    assert server.predict(rows[::-1], token=OTHER)[1]["proba"] == body["proba"][::-1]
    status, budget = server.get("/v1/budget")
    assert status == 200 and budget["queries_answered"] == 3
    assert budget["spent"]["epsilon"] <= budget["total"]["epsilon"]
    assert budget["hard_queries_left"] >= 0
    # 422s name positions, never the values sent.
    secret = 987654.125
    for bad in ({"X": [[0.2], [secret, secret]]}, {"X": [[0.2], ["s3cr3t-value"]]},
                {"X": []}, {"rows": [[secret]]}, b'{"X": [[NaN]]}', b"{not json"):
        status, body = server.request("POST", "/v1/predict", bad)
        assert status == 422, body
        assert "987654" not in body["message"] and "s3cr3t" not in body["message"]
    status, spec = server.get("/openapi.json", token=None)
    assert status == 200 and "/v1/predict" in spec["paths"]
    log = server.output()
    assert TOKEN not in log and OTHER not in log and "a1b2c3d4" not in log


def test_429_when_the_planned_queries_are_used_and_quota(tmp_path, serving):
    model = _model(tmp_path, "sqlite:///" + str(tmp_path / "l.db"),
                   cls=SubsampleAggregatePredictor, n_queries=12)
    server = serving(model, "--quota", "10")
    rows = np.random.default_rng(0).random((12, 1))
    assert server.predict(rows[:8])[0] == 200
    status, body = server.predict(rows[8:11])  # 11 > the token's quota of 10
    assert status == 429 and body["error"] == "quota_exceeded"
    assert server.predict(rows[8:10])[0] == 200  # exactly the quota
    status, body = server.predict(rows[10:], token=OTHER)
    assert status == 200
    status, body = server.predict(rows[:1] + 5, token=OTHER)  # the 13th query
    assert status == 429 and body["error"] == "cap_reached" and "y" not in body
    clf, answers = _journal(model)
    assert clf.n_queries_used_ == 12
    assert np.isnan(_journaled(answers, rows[:1] + 5)).all()  # nothing released


def test_kill_9_and_restart_continue_the_same_mechanism(tmp_path, serving):
    model = _model(tmp_path, "sqlite:///" + str(tmp_path / "l.db"))
    server = serving(model)
    rng = np.random.default_rng(3)
    near = 0.3 + 0.03 * (rng.random((60, 1)) - 0.5)  # hard queries
    before = [server.predict(near[i:i + 10])[1]["proba"] for i in range(0, 60, 10)]
    spent = server.get("/v1/budget")[1]["spent"]
    server.kill()  # kill -9: no shutdown
    server = serving(model)
    after = [server.predict(near[i:i + 10])[1]["proba"] for i in range(0, 60, 10)]
    assert after == before  # no query answered before the kill is answered differently
    status, _ = server.predict(rng.random((20, 1)))
    assert status == 200
    assert server.get("/v1/budget")[1]["spent"] == spent
    clf, answers = _journal(model)
    labels = [label for _, _, label in clf.budget_.charges]
    assert sum("reserved the planned run" in label for label in labels) == 1
    assert sum("BetweenThresholds instance" in label for label in labels) == 1
    np.testing.assert_array_equal(_journaled(answers, near), np.concatenate(before)[:, 1])


def _hammer(servers, n_clients=8, per_client=6, seed=0):
    """Clients sending requests of 5 rows (near the threshold: hard queries, so the cap
    is reached) to the servers round-robin at once; returns [(rows, status, body)]."""
    # First one request of rows far from the threshold (easy: answered well before any
    # cap), so that there is something released to check against the journal.
    far = np.array([[0.02], [0.95], [0.6]])
    results = [(far, *servers[0].predict(far))]
    lock = threading.Lock()
    barrier = threading.Barrier(n_clients)

    def client(c):
        rng = np.random.default_rng(seed * 1000 + c)
        barrier.wait()
        for r in range(per_client):
            rows = 0.3 + 0.05 * (rng.random((5, 1)) - 0.5)
            status, body = servers[(c + r) % len(servers)].predict(rows)
            with lock:
                results.append((rows, status, body))

    threads = [threading.Thread(target=client, args=(c,)) for c in range(n_clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def _check_invariants(model, results, cap):
    clf, answers = _journal(model)
    labels = [label for _, _, label in clf.budget_.charges]
    assert sum("reserved the planned run" in label for label in labels) == 1
    assert sum("BetweenThresholds instance" in label for label in labels) <= cap
    assert sum("hard query" in label for label in labels) <= cap
    spent, total = clf.budget.spent, clf.budget.epsilon
    assert spent.epsilon <= total
    ok = [(rows, body) for rows, status, body in results if status == 200]
    assert ok, results[:3]
    for _, status, body in results:
        assert status in (200, 429), body
    # answered = journaled: every released answer is in the saved state, unchanged.
    for rows, body in ok:
        np.testing.assert_array_equal(_journaled(answers, rows),
                                      np.asarray(body["proba"])[:, 1])
    return len(ok)


def test_workers_on_one_sqlite_ledger(tmp_path, serving):
    cap = 3
    model = _model(tmp_path, "sqlite:///" + str(tmp_path / "l.db"), calibration="bsu",
                   max_hard_queries=cap)
    server = serving(model, "--workers", "2")
    results = _hammer([server])
    # (Whether the cap is reached depends on the noise: after a hard query the teachers
    # learn its label and the rows near it become easy. The invariants hold either way.)
    _check_invariants(model, results, cap)


def test_replicas_on_one_postgresql_ledger(tmp_path, serving, postgresql_db_url):
    cap = 3
    model = _model(tmp_path, postgresql_db_url, calibration="bsu", max_hard_queries=cap)
    env = {"PGPASSWORD": PG_PASSWORD}
    os.environ["PGPASSWORD"] = PG_PASSWORD  # for _journal's own connection
    try:
        replicas = [serving(model, env=env), serving(model, env=env)]
        results = _hammer(replicas, seed=1)
        _check_invariants(model, results, cap)
    finally:
        os.environ.pop("PGPASSWORD", None)


def test_tokens_file_env_and_refusals(tmp_path, capsys):
    from skdp.__main__ import main
    from skdp.serve import TokenError, load_tokens
    from skdp.serve._tokens import token_digest

    path = tmp_path / "tokens"
    path.write_text(f"# a comment\n\n  {TOKEN}  \n# {OTHER}\n")
    assert load_tokens(str(path)) == {token_digest(TOKEN)}
    assert load_tokens(None, {"SKDP_SERVE_TOKENS": f"{TOKEN}, {OTHER}"}) == {
        token_digest(TOKEN), token_digest(OTHER)}
    with pytest.raises(TokenError, match="no bearer tokens"):
        load_tokens(None, {})
    path.write_text(f"{TOKEN}\nshort-secret\n")
    with pytest.raises(TokenError, match="#2") as info:
        load_tokens(str(path))
    assert "short-secret" not in str(info.value)
    # The command line refuses before listening, naming no token.
    model = _model(tmp_path, "sqlite:///" + str(tmp_path / "l.db"))
    assert main(["serve", str(model), "--tokens", str(path)]) == 2
    err = capsys.readouterr().err
    assert "shorter than 16" in err and "short-secret" not in err


# ---------------------------------------------------------------- PERP
PERP_EPS = 1000.0  # Stemmer's construction needs ε·√n large (tests/prediction/test_perp.py)


def _perp_model(tmp_path, store, budget_delta=1e-5):
    from skdp.prediction import RectanglesPERPClassifier, perp_parameters

    need = perp_parameters(PERP_EPS, 1e-6, 0.1, 0.05, 1.0, 2, preset="charged").initial_sample_size
    Xp = np.random.default_rng(12).random((need, 2))
    yp = np.all((Xp > 0.2) & (Xp < 0.8), axis=1).astype(int)
    budget = PrivacyBudget(PERP_EPS, budget_delta, store=store)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = RectanglesPERPClassifier(epsilon=PERP_EPS, gamma=1.0, classes=[0, 1],
                                       budget=budget).fit(Xp, yp)
    path = tmp_path / "perp.pkl"
    path.write_bytes(pickle.dumps(clf))
    return path


def _perp_saved(model_path):
    """A fresh copy of the served PERP predictor, synced to the saved state."""
    clf = pickle.loads(model_path.read_bytes()).make_durable()
    clf._state._durable.sync(clf._state)
    return clf


def _perp_ledger(clf):
    """(initial payments, the δ charges' query ranges in ledger order)."""
    labels = [label for _, _, label in clf.budget_.charges]
    ranges = [tuple(int(v) for v in label.rsplit(" ", 1)[1].split("–"))
              for label in labels if ": queries " in label]
    return sum("initial sample" in label for label in labels), ranges


def _as_set(rows):
    return sorted(map(tuple, np.asarray(rows).tolist()))


def test_perp_kill_9_and_restart_continue_the_same_stream(tmp_path, serving):
    model = _perp_model(tmp_path, "sqlite:///" + str(tmp_path / "l.db"))
    server = serving(model)
    rng = np.random.default_rng(4)
    before = [rng.random((100, 2)) for _ in range(3)]
    answers = [server.predict(rows)[1] for rows in before]
    status, budget = server.get("/v1/budget")
    assert status == 200 and budget["queries_answered"] == 300
    run = _perp_saved(model)._state.mechanism
    thresholds = [(c.mechanism._bt._noisy_lower, c.mechanism._bt._noisy_upper)
                  for c in run.copies]
    server.kill()  # kill -9: no shutdown
    server = serving(model)
    after = [rng.random((100, 2)) for _ in range(2)]
    answers += [server.predict(rows)[1] for rows in after]
    assert server.get("/v1/budget")[1]["queries_answered"] == 500
    clf = _perp_saved(model)
    # One start, paid once; δ charged for 1–500 exactly, request by request.
    assert _perp_ledger(clf) == (1, [(1, 100), (101, 200), (201, 300), (301, 400),
                                     (401, 500)])
    assert clf.budget_.spent.epsilon == PERP_EPS
    # The same copies continued (their noisy thresholds), and the phase's sample holds
    # exactly the rows answered "inside" before and after the kill, in order.
    run = clf._state.mechanism
    assert [(c.mechanism._bt._noisy_lower, c.mechanism._bt._noisy_upper)
            for c in run.copies] == thresholds
    inside = np.concatenate([rows[np.asarray(body["y"]) == 1]
                             for rows, body in zip(before + after, answers, strict=True)])
    np.testing.assert_array_equal(np.concatenate(run.positives), inside)


def _perp_check(model, results):
    """Every 200 is in the one stream, every 429 released nothing (budget_exhausted)."""
    clf = _perp_saved(model)
    ok = [(rows, body) for rows, status, body in results if status == 200]
    refused = [(rows, body) for rows, status, body in results if status == 429]
    assert ok and refused, [s for _, s, _ in results]
    assert all(body["error"] == "budget_exhausted" and "y" not in body for _, body in refused)
    assert all(status in (200, 429) for _, status, _ in results)
    n = sum(len(rows) for rows, _ in ok)
    starts, ranges = _perp_ledger(clf)
    assert starts == 1 and clf.queries_answered_ == n
    # budget_'s δ ranges tile 1..n: no refused request charged it, none overlap.
    assert ranges[0][0] == 1 and ranges[-1][1] == n
    assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(ranges))
    assert clf.budget.spent.delta <= clf.budget.delta
    # answered = journaled: the phase sample is the rows answered "inside" (as a set: the
    # requests' order is the record lock's); no refused row is in it.
    inside = np.concatenate([np.asarray(rows)[np.asarray(body["y"]) == 1] for rows, body in ok])
    assert _as_set(np.concatenate(clf._state.mechanism.positives)) == _as_set(inside)


def _perp_hammer(servers, n_clients=6, per_client=5, seed=0):
    results, lock = [], threading.Lock()
    barrier = threading.Barrier(n_clients)

    def client(c):
        rng = np.random.default_rng(seed * 1000 + c)
        barrier.wait()
        for r in range(per_client):
            rows = rng.random((20, 2))
            status, body = servers[(c + r) % len(servers)].predict(rows)
            with lock:
                results.append((rows, status, body))

    threads = [threading.Thread(target=client, args=(c,)) for c in range(n_clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def _perp_room(n_queries):
    """A user budget's δ: the initial δ(0) and about ``n_queries`` queries' δ(i)."""
    from skdp.prediction import perp_parameters

    params = perp_parameters(PERP_EPS, 1e-6, 0.1, 0.05, 1.0, 2, preset="charged")
    sched = params.delta_schedule
    spent = sched.remaining_after(0) - sched.remaining_after(n_queries)
    return (params.initial_delta + float(spent)) * (1 + 1e-9)


def test_perp_workers_on_one_sqlite_ledger(tmp_path, serving):
    model = _perp_model(tmp_path, "sqlite:///" + str(tmp_path / "l.db"),
                        budget_delta=_perp_room(350))
    server = serving(model, "--workers", "2")
    _perp_check(model, _perp_hammer([server]))


def test_perp_replicas_on_one_postgresql_ledger(tmp_path, serving, postgresql_db_url):
    model = _perp_model(tmp_path, postgresql_db_url, budget_delta=_perp_room(350))
    env = {"PGPASSWORD": PG_PASSWORD}
    os.environ["PGPASSWORD"] = PG_PASSWORD  # for _perp_saved's own connection
    try:
        replicas = [serving(model, env=env), serving(model, env=env)]
        _perp_check(model, _perp_hammer(replicas, seed=1))
    finally:
        os.environ.pop("PGPASSWORD", None)
