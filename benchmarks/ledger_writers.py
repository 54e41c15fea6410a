"""Many writers on one ledger: charges/s and fairness (issue 32, "a ledger that serves
many writers fairly").

``--writers`` processes (default 8 and 32; ``spawn``) attach to one shared ledger and,
after a common start, charge it in a loop for ``--seconds`` (default 8) each — every
fourth iteration also reads ``budget.spent``, as a server checking what is left does —
on an SQLite file and on a PostgreSQL database (a throwaway server from
``tests/_postgres.py``). Reported per store and writer count: committed charges/s over
the window, reads/s, and fairness — the slowest writer's share of the charges against
the fair share 1/N, and the share of the busiest one. A writer that commits nothing in
the window is *starved*. Afterwards the ledger is checked: spent = charges × amount,
the chain verifies, no error in any writer.

``--batch K …`` (default 1 and 4): each writer commits K charges per transaction, as a
durable predictor commits one request's charges (``skdp.accounting._ledger.charge_batch``):
K held charges, then one ``charge_many`` transaction (the read of ``spent`` stays one
per 4 charges).

Run ``PYTHONPATH=. python benchmarks/ledger_writers.py`` (≈ 4 min) or ``--quick``
(8 writers, 3 s).
"""

from __future__ import annotations

import multiprocessing
import sys
import tempfile
import time
import uuid
from pathlib import Path

from _report import make_parser, output_dir, write_report

from skdp import PrivacyBudget
from skdp.accounting._ledger import charge_batch

NAME = "ledger_writers"
TESTS_DIR = Path(__file__).resolve().parent.parent / "tests"
AMOUNT = 1e-6


def _writer(index, url, ledger_id, seconds, barrier, results, batch=1):
    budget = PrivacyBudget(1e6, store=url, ledger_id=ledger_id)
    budget.verify()  # connect before the clock starts
    barrier.wait()
    stop = time.time() + seconds
    charges = reads = 0
    waits = []
    errors = []
    while True:
        t0 = time.time()
        if t0 >= stop:
            break
        try:
            if batch == 1:
                budget.spend(AMOUNT, label=f"writer {index}")
            else:
                with charge_batch():
                    for _ in range(batch):
                        budget.spend(AMOUNT, label=f"writer {index}")
            charges += batch
            waits.append(time.time() - t0)
            if charges % 4 < batch:
                budget.spent  # noqa: B018  (a read, as a server's budget check)
                reads += 1
        except Exception as exc:  # reported and failed on by the parent
            errors.append(f"{type(exc).__name__}: {exc}"[:300])
            break
    waits.sort()
    results.put({"index": index, "charges": charges, "reads": reads, "errors": errors,
                 "max_wait": waits[-1] if waits else None,
                 "p99_wait": waits[int(0.99 * (len(waits) - 1))] if waits else None})


def run(store, url, n, seconds, batch=1):
    ledger_id = f"writers-{uuid.uuid4().hex[:12]}"
    owner = PrivacyBudget(1e6, store=url, ledger_id=ledger_id)
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=_writer,
                         args=(i, url, ledger_id, seconds, barrier, results, batch))
             for i in range(n)]
    for p in procs:
        p.start()
    try:
        reports = [results.get(timeout=600 + 10 * seconds) for _ in range(n)]
    finally:
        for p in procs:
            p.join(timeout=120)
            if p.is_alive():
                p.terminate()
    errors = [e for r in reports for e in r["errors"]]
    assert not errors, f"{store}: {len(errors)} writers failed, e.g. {errors[0]}"
    counts = sorted(r["charges"] for r in reports)
    total = sum(counts)
    spent = owner.spent.epsilon
    assert len(owner.charges) == total and owner.verify(), store
    assert abs(spent - total * AMOUNT) <= 1e-9 * max(1.0, spent), (store, spent, total)
    waits = [r["max_wait"] for r in reports if r["max_wait"] is not None]
    return {"store": store, "writers": n, "batch": batch, "seconds": seconds,
            "charges": total, "transactions_per_s": total / batch / seconds,
            "charges_per_s": total / seconds,
            "reads_per_s": sum(r["reads"] for r in reports) / seconds,
            "slowest_share": counts[0] / total if total else 0.0,
            "busiest_share": counts[-1] / total if total else 0.0,
            "fair_share": 1.0 / n, "starved": sum(c == 0 for c in counts),
            "max_wait_s": max(waits) if waits else None}


def main() -> None:
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--stores", nargs="+", default=["sqlite", "postgresql"])
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 4])
    args = parser.parse_args()
    if args.quick:
        args.writers, args.seconds = [8], 3.0
    out = output_dir(args)
    tmp = Path(tempfile.mkdtemp(prefix="skdp-writers-"))
    notes = []
    urls = {}
    if "sqlite" in args.stores:
        urls["sqlite"] = f"sqlite:///{tmp}/writers.sqlite"
    server = None
    if "postgresql" in args.stores:
        sys.path.insert(0, str(TESTS_DIR))
        try:
            from _postgres import PostgresServer

            server = PostgresServer()
            server.start()
            urls["postgresql"] = server.url
            notes.append(f"PostgreSQL {server.version}: a throwaway local server "
                         "(tests/_postgres.py), fsync off: commits are not durable.")
        except Exception as exc:  # no binaries / psycopg
            notes.append(f"PostgreSQL skipped: the server did not start ({exc!s:.200}).")
    rows = []
    try:
        for n in args.writers:
            for store, url in urls.items():
                for batch in args.batch:
                    row = run(store, url, n, args.seconds, batch)
                    print(f"{store} × {n}, batch {batch}: {row['charges_per_s']:.0f} "
                          f"charges/s, slowest {row['slowest_share']:.3f} (fair "
                          f"{row['fair_share']:.3f})", file=sys.stderr)
                    rows.append(row)
    finally:
        if server is not None:
            server.stop()
    columns = {"store": "store", "writers": "writers",
               "batch": "charges per transaction", "charges": "charges",
               "charges_per_s": "charges/s", "transactions_per_s": "transactions/s",
               "reads_per_s": "reads/s of spent",
               "slowest_share": "slowest writer's share", "busiest_share": "busiest's share",
               "fair_share": "fair share", "starved": "writers with 0 charges",
               "max_wait_s": "longest single charge (s)"}
    notes += [
        f"Each writer charges {AMOUNT:g} in a loop for {args.seconds:g} s after a common "
        "start (K at a time in one transaction: `charge_batch`), and reads `spent` after "
        "every 4th charge; checked after each run: "
        "spent = charges × amount, the chain verifies, no writer failed.",
        "The machine has 2 cores shared with other jobs: absolute rates are low; the shares "
        "are the fairness measure.",
    ]
    write_report(NAME, rows, columns, out_dir=out, title="One ledger, many writers",
                 notes=notes)


if __name__ == "__main__":
    main()
