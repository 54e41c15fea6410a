"""The PostgreSQL fixtures give a real server that several processes share."""

import multiprocessing

import psycopg
from _postgres import PG_PASSWORD, PG_USER


def _insert_and_read(url, queue):
    """In a spawned process: commit one row, then wait to see the parent's row."""
    import time

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO seen (who) VALUES ('child')")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            rows = {r[0] for r in conn.execute("SELECT who FROM seen")}
            if "parent" in rows:
                queue.put(sorted(rows))
                return
            time.sleep(0.05)
        queue.put(sorted(rows))


def test_select_one_and_version(postgresql_url):
    assert postgresql_url.startswith(f"postgresql://{PG_USER}:{PG_PASSWORD}@127.0.0.1:")
    with psycopg.connect(postgresql_url) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
        assert conn.info.server_version >= 120000
        assert conn.execute("SELECT current_user").fetchone() == (PG_USER,)
        assert conn.execute(
            "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"
        ).fetchone() == (False,)


def test_password_is_required(postgresql_url):
    import pytest

    wrong = postgresql_url.replace(PG_PASSWORD, "not-the-password")
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(wrong, connect_timeout=5)


def test_two_processes_see_each_others_commits(postgresql_db_url, postgresql_db_owner_url):
    with psycopg.connect(postgresql_db_owner_url, autocommit=True) as owner:
        # the application role may not create tables: the owner does
        owner.execute("CREATE TABLE seen (who text PRIMARY KEY)")
        owner.execute(f"GRANT SELECT, INSERT ON seen TO {PG_USER}")
    with psycopg.connect(postgresql_db_url, autocommit=True) as conn:
        ctx = multiprocessing.get_context("spawn")
        queue = ctx.Queue()
        child = ctx.Process(target=_insert_and_read, args=(postgresql_db_url, queue))
        child.start()
        try:
            conn.execute("INSERT INTO seen (who) VALUES ('parent')")
            child_saw = queue.get(timeout=60)
        finally:
            child.join(timeout=30)
        assert child.exitcode == 0
        assert child_saw == ["child", "parent"]
        assert {r[0] for r in conn.execute("SELECT who FROM seen")} == {"child", "parent"}


def test_each_test_gets_a_fresh_database(postgresql_db_url):
    with psycopg.connect(postgresql_db_url) as conn:
        assert conn.execute("SELECT to_regclass('seen')").fetchone() == (None,)
