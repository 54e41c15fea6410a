"""Load test of ``skdp serve``: answers/s and latency under 100 concurrent clients.

One fitted :class:`~skdp.prediction.PrivatePredictor` (Yan's predictor, threshold
teachers on 20 000 rows, ε = 1, δ = 10⁻⁶, its default ``calibration="charged"``: one
BetweenThresholds instance, at most 64 hard queries) is served by
``python -m skdp serve`` on loopback in three set-ups:

* 1 uvicorn worker on an SQLite ledger;
* 4 uvicorn workers on one SQLite ledger;
* 2 replicas (two ``skdp serve`` processes) on one PostgreSQL ledger (a throwaway server
  from ``tests/_postgres.py``, ``fsync=off``: a lower bound for a production server).

In each, ``--clients`` threads (default 100) start together and send ``--requests``
requests (default 5) of ``--rows`` rows (default 10) each, round-robin over the
replicas, and stop. Reported: rows answered per second, answered requests per second,
p50/p99 request latency (of all requests), the counts of 200 and 429 answers, and beside
them the predictor's in-process speed answering the same rows in batches of the same
size (no HTTP, no durable state). At the end of each set-up the script checks the
invariant and fails loudly if it does not hold: the predictor's ledger spent ≤ its total
and the user's budget ≤ its total, the hard-query and instance caps never exceeded, one
plan paid, and answered = journaled (every answer a client received is in the saved
state with the same score).

Run ``PYTHONPATH=. python benchmarks/serve.py`` (full: a few minutes on 2 cores) or
``--quick``. Needs ``pip install "skdp[serve]"``. See ``benchmarks/README.md``.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import warnings
from pathlib import Path

import numpy as np
from _report import bar_chart, make_parser, output_dir, rng_for, write_report

from skdp import PrivacyBudget
from skdp.hypotheses import Thresholds
from skdp.prediction import PrivatePredictor
from skdp.prediction._scored import _row_hashes

NAME = "serve"
ROOT = Path(__file__).resolve().parent.parent
TESTS_DIR = ROOT / "tests"
TOKEN = "bench-" + "9f8e7d6c" * 4
CAP = 64


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Server:
    def __init__(self, model: Path, tokens: Path, workers: int, env: dict[str, str]):
        self.port = _free_port()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "skdp", "serve", str(model), "--port", str(self.port),
             "--tokens", str(tokens), "--workers", str(workers)],
            env={**os.environ, "PYTHONPATH": str(ROOT), **env},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=5):
                    return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("skdp serve did not start") from None
                time.sleep(0.2)

    def predict(self, rows: np.ndarray) -> tuple[int, dict]:
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/v1/predict",
            data=json.dumps({"X": rows.tolist()}).encode(), method="POST",
            headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=600) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=60)


def _data(seed: int):
    rng = rng_for(seed, "serve-data")
    X = rng.random((20_000, 1))
    return X, (X[:, 0] >= 0.3).astype(int)


def _fit(store: str, seed: int, budget_epsilon: float = 10.0) -> PrivatePredictor:
    X, y = _data(seed)
    budget = PrivacyBudget(budget_epsilon, 1e-5, store=store)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return PrivatePredictor(Thresholds(), epsilon=1.0, delta=1e-6, max_hard_queries=CAP,
                                classes=[0, 1], budget=budget).fit(X, y)


def _queries(seed: int, clients: int, requests: int, rows: int) -> np.ndarray:
    return rng_for(seed, "serve-queries").random((clients, requests, rows, 1))


def load(servers: list[_Server], queries: np.ndarray):
    """All clients at once; returns (wall seconds, [(client, request, status, body, s)])."""
    clients, requests = queries.shape[:2]
    results: list = []
    lock = threading.Lock()
    barrier = threading.Barrier(clients + 1)

    def client(c: int) -> None:
        barrier.wait()
        for r in range(requests):
            t = time.perf_counter()
            status, body = servers[(c + r) % len(servers)].predict(queries[c, r])
            with lock:
                results.append((c, r, status, body, time.perf_counter() - t))

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    return time.perf_counter() - start, results


def check_invariant(model_path: Path, queries: np.ndarray, results: list) -> str:
    """Raise AssertionError unless spent ≤ totals, caps held, answered = journaled."""
    clf = pickle.loads(model_path.read_bytes())
    clf.make_durable()
    state = clf._state
    state._durable.sync(state)
    labels = [label for _, _, label in clf.budget_.charges]
    count = lambda what: sum(what in label for label in labels)  # noqa: E731
    assert count("reserved the planned run") == 1, "the plan was paid more than once"
    # The charged calibration runs one instance: replicas continue it, never start another.
    assert count("hard query") <= CAP and count("BetweenThresholds instance") == 1
    for budget in (clf.budget_, clf.budget):
        assert budget.spent.epsilon <= budget.epsilon * (1 + 1e-12)
        assert budget.spent.delta <= budget.delta * (1 + 1e-12)
    journaled = 0
    for c, r, status, body, _ in results:
        if status != 200:
            assert status == 429, (status, body)
            continue
        a, b = _row_hashes(queries[c, r])
        order = np.argsort(a, kind="stable")
        saved = np.empty(a.size)
        saved[order] = state.answers.lookup(a[order], b[order])
        assert np.array_equal(saved, np.asarray(body["proba"])[:, 1]), "answer not journaled"
        journaled += a.size
    return (f"{count('hard query')}/{CAP} hard queries, {count('BetweenThresholds instance')} "
            f"instance(s), {journaled} answers journaled")


def in_process(seed: int, queries: np.ndarray) -> float:
    """Rows/s of the same predictor answering the same batches in this process."""
    clf = _fit("memory", seed)
    batches = queries.reshape(-1, *queries.shape[2:])
    start = time.perf_counter()
    answered = 0
    for batch in batches:
        try:
            clf.predict(batch)
            answered += batch.shape[0]
        except Exception:  # the cap: the rest would be refused too
            break
    return answered / (time.perf_counter() - start)


def run_setup(name: str, store: str, replicas: int, workers: int, queries: np.ndarray,
              tmp: Path, seed: int, env: dict[str, str]) -> dict:
    model = tmp / f"{name.replace(' ', '_')}.pkl"
    model.write_bytes(pickle.dumps(_fit(store, seed)))
    tokens = tmp / "tokens.txt"
    tokens.write_text(TOKEN + "\n")
    servers = [_Server(model, tokens, workers, env) for _ in range(replicas)]
    try:
        wall, results = load(servers, queries)
    finally:
        for server in servers:
            server.stop()
    invariant = check_invariant(model, queries, results)
    latencies = np.array([r[4] for r in results])
    ok = [r for r in results if r[2] == 200]
    rows = sum(len(r[3]["y"]) for r in ok)
    return {"setup": name, "clients": queries.shape[0], "requests": len(results),
            "ok": len(ok), "refused_429": len(results) - len(ok),
            "rows_per_s": rows / wall, "requests_per_s": len(ok) / wall,
            "p50_ms": 1e3 * float(np.median(latencies)),
            "p99_ms": 1e3 * float(np.percentile(latencies, 99)), "invariant": invariant}


def main() -> None:
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--requests", type=int, default=5)
    parser.add_argument("--rows", type=int, default=10)
    args = parser.parse_args()
    if args.quick:
        args.clients, args.requests = min(args.clients, 20), min(args.requests, 2)
    out = output_dir(args)
    queries = _queries(args.seed, args.clients, args.requests, args.rows)
    notes = []
    tmp = Path(tempfile.mkdtemp(prefix="skdp-serve-bench-"))
    os.environ.setdefault("SKDP_LEDGER_DIR", str(tmp / "ledgers"))
    os.makedirs(os.environ["SKDP_LEDGER_DIR"], mode=0o700, exist_ok=True)
    rows = []
    for name, replicas, workers in (("SQLite, 1 worker", 1, 1), ("SQLite, 4 workers", 1, 4)):
        store = f"sqlite:///{tmp}/{name.replace(' ', '_').replace(',', '')}.db"
        rows.append(run_setup(name, store, replicas, workers, queries, tmp, args.seed, {}))
    sys.path.insert(0, str(TESTS_DIR))
    try:
        from _postgres import PG_PASSWORD, PostgresServer

        pg = PostgresServer()
        pg.start()
    except Exception as exc:  # no binaries / psycopg
        pg = None
        notes.append(f"PostgreSQL rows skipped: the server did not start ({exc!s:.200}).")
    if pg is not None:
        try:
            url = pg.url_for(pg.create_database())
            os.environ["PGPASSWORD"] = PG_PASSWORD
            rows.append(run_setup("PostgreSQL, 2 replicas", url, 2, 1, queries, tmp,
                                  args.seed, {"PGPASSWORD": PG_PASSWORD}))
            notes.append("PostgreSQL: a throwaway local server with fsync=off (commits not "
                         "durable): a lower bound for a production server's latency.")
        finally:
            pg.stop()
    batch = in_process(args.seed, queries)
    rows.append({"setup": f"in process, batches of {args.rows} (no HTTP)", "clients": 1,
                 "requests": int(np.prod(queries.shape[:2])), "ok": None, "refused_429": None,
                 "rows_per_s": batch, "requests_per_s": batch / args.rows, "p50_ms": None,
                 "p99_ms": None, "invariant": "—"})
    notes += [
        f"{args.clients} clients × {args.requests} requests × {args.rows} rows, all clients "
        "started together; each request is answered under the predictor's state lock, so "
        "the mechanism answers one request at a time whatever the number of workers.",
        f"429s would be the hard-query cap ({CAP}) or the budget: nothing of those requests "
        "is released. The queries are U[0, 1]; the charged calibration's one instance is "
        "continued by every worker and replica (the ledger shows 1 instance).",
        "Invariant checked after each set-up (the script fails otherwise): spent ≤ total in "
        "both ledgers, caps held, one plan paid, answered = journaled.",
    ]
    columns = {"setup": "set-up", "clients": "clients", "requests": "requests", "ok": "200",
               "refused_429": "429", "rows_per_s": "rows/s",
               "requests_per_s": "answered requests/s",
               "p50_ms": "p50 ms", "p99_ms": "p99 ms", "invariant": "invariant"}

    def plot(path: Path) -> None:
        bar_chart(path, [r["setup"] for r in rows], [r["rows_per_s"] for r in rows],
                  title="skdp serve: answered rows per second", xlabel="rows/s", log=True)

    write_report(NAME, rows, columns, out_dir=out, title="skdp serve under load",
                 notes=notes, plot=plot)


if __name__ == "__main__":
    main()
