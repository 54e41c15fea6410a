"""Reads do not wait for writers, and a waiting writer gets the lock (issue 32)."""

import sqlite3
import threading
import time

from skdp import PrivacyBudget


def test_reads_do_not_wait_for_a_held_write_lock_and_a_charge_waits_its_turn(tmp_path):
    path = tmp_path / "l.sqlite"
    budget = PrivacyBudget(1.0, store=f"sqlite:///{path}", ledger_id="w")
    budget.spend(0.25, label="first")
    holder = sqlite3.connect(str(path), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process's charge in progress
    try:
        start = time.monotonic()
        # Before: every read took the write lock and waited here (up to 120 s).
        assert budget.spent.epsilon == 0.25
        assert len(budget.charges) == 1 and budget.verify()
        assert time.monotonic() - start < 5
        done = threading.Event()

        def charge():
            budget.spend(0.25, label="second")
            done.set()

        worker = threading.Thread(target=charge)
        worker.start()
        assert not done.wait(0.5)  # it waits for the lock …
    finally:
        holder.execute("COMMIT")
        holder.close()
    worker.join(timeout=30)
    assert done.is_set()  # … and gets it once released
    assert budget.spent.epsilon == 0.5 and budget.verify()
