"""The red team's ledger attacks (issue 26, items 3 and 5), each one a regression test.

Every attack is made as the attacker made it on ad97106 — with write access to the store
(the SQLite file; PostgreSQL's owner role, or the application role where that was
enough) and without the ledger key — and must now be refused. Every test here failed on
ad97106. The store fixture runs each on a real SQLite file and a real PostgreSQL server
(tests/_postgres.py).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sqlite3
import stat
import subprocess
import sys
import textwrap
import uuid

import pytest

from skdp import LedgerIntegrityError, PrivacyBudget, PrivacyError

KEY = "k" * 40  # a ledger key shared by this process and its fresh processes


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    """``(url, attacker_url)``: the application's URL and a URL with write access to the
    tables (SQLite: the same file; PostgreSQL: the owner role)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'ledger.db'}"
        return url, url
    url = request.getfixturevalue("postgresql_db_url")
    try:
        attacker = request.getfixturevalue("postgresql_db_owner_url")
    except pytest.FixtureLookupError:  # ad97106: the application role owned the tables
        attacker = url
    return url, attacker


@pytest.fixture(autouse=True)
def _private_dir(tmp_path, monkeypatch):
    """A ledger directory and key of the test's own (the witness starts empty on disk)."""
    folder = tmp_path / "private"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("SKDP_LEDGER_DIR", str(folder))
    monkeypatch.setenv("SKDP_LEDGER_KEY", KEY)
    return folder


def _sql(url, *statements, fetch=False):
    """Run statements with write access to the store, the append-only guards lifted."""
    if url.startswith("sqlite:///"):
        conn = sqlite3.connect(url[len("sqlite:///"):], isolation_level=None)
        try:
            for trigger in ("skdp_charges_no_update", "skdp_charges_no_delete"):
                conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
            rows = [conn.execute(s).fetchall() for s in statements]
        finally:  # put back: the tampering leaves no trace in the schema
            for trigger, verb in (("skdp_charges_no_update", "UPDATE"),
                                  ("skdp_charges_no_delete", "DELETE")):
                conn.execute(f"CREATE TRIGGER IF NOT EXISTS {trigger} BEFORE {verb} ON "
                             "skdp_charges BEGIN SELECT RAISE(ABORT, 'skdp charges are "
                             "append-only'); END")
            conn.close()
        return rows[-1] if fetch else None
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER TABLE skdp_charges DISABLE TRIGGER USER")
        try:
            rows = [conn.execute(s) for s in statements]
            out = rows[-1].fetchall() if fetch else None
        finally:  # re-enabled: the tampering leaves no trace in the catalogue
            conn.execute("ALTER TABLE skdp_charges ENABLE TRIGGER USER")
    return out


def _fresh_process(code, env_dir=None, key=KEY):
    """Run ``code`` in a new Python process (another run of the program, later)."""
    env = dict(os.environ, SKDP_LEDGER_KEY=key)
    if env_dir is not None:
        env["SKDP_LEDGER_DIR"] = str(env_dir)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=env, cwd=os.getcwd(), timeout=300)


def _spend_in_fresh_process(url, ledger_id, amount, env_dir=None, key=KEY):
    from _postgres import PG_PASSWORD

    return _fresh_process(f"""
        import os
        os.environ.setdefault("PGPASSWORD", {PG_PASSWORD!r})
        from skdp import PrivacyBudget
        b = PrivacyBudget(1.0, store={url!r}, ledger_id={ledger_id!r})
        b.spend({amount!r})
        print("spent", b.spent.epsilon)
    """, env_dir, key)


# ------------------------------------------------------------------ item 3: rows
def test_deleting_the_newest_charges_and_moving_the_head_back_is_refused(store, tmp_path):
    """ad97106: delete the last charges, copy the kept row's hash into the head: verify()
    passed and the deleted ε could be spent again."""
    url, attacker = store
    ledger_id = f"study-{uuid.uuid4().hex[:8]}"
    budget = PrivacyBudget(1.0, store=url, ledger_id=ledger_id)
    for _ in range(4):
        budget.spend(0.25)
    _sql(attacker,
         f"DELETE FROM skdp_charges WHERE ledger_id = '{ledger_id}' AND seq >= 2",
         f"UPDATE skdp_ledgers SET head_count = 2, head_hash = (SELECT hash FROM skdp_charges "
         f"WHERE ledger_id = '{ledger_id}' AND seq = 1) WHERE ledger_id = '{ledger_id}'")
    with pytest.raises(LedgerIntegrityError, match="this machine has seen 4"):
        budget.verify()
    with pytest.raises(LedgerIntegrityError):
        budget.spend(0.5)
    # Another run of the program on this machine remembers the head too.
    done = _spend_in_fresh_process(url, ledger_id, 0.5)
    assert done.returncode != 0 and "LedgerIntegrityError" in done.stderr, done.stdout


def _rechain_unkeyed(url, ledger_id):
    """What an attacker without a key could always do: recompute the ad97106 SHA-256
    chain over the rows as they now are (after deleting or editing some)."""
    def digest(*parts):
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()

    eps, delta = _sql(url, f"SELECT epsilon, delta FROM skdp_ledgers WHERE ledger_id = "
                           f"'{ledger_id}'", fetch=True)[0]
    rows = _sql(url, f"SELECT seq, epsilon, delta, label FROM skdp_charges WHERE ledger_id = "
                     f"'{ledger_id}' ORDER BY seq", fetch=True)
    prev = digest("skdp-ledger-v1", ledger_id, repr(float(eps)), repr(float(delta)))
    total_e = total_d = 0.0
    statements = [f"DELETE FROM skdp_charges WHERE ledger_id = '{ledger_id}'"]
    for seq, (_, e, d, label) in enumerate(rows):
        total_e, total_d = total_e + e, total_d + d  # exact: costs are multiples of 1/4
        run = (total_e, total_d, 0.0, 0.0)
        h = digest(ledger_id, str(seq), repr(float(e)), repr(float(d)), label,
                   *(repr(float(t)) for t in run), prev)
        statements.append(
            "INSERT INTO skdp_charges (ledger_id, seq, epsilon, delta, label, total_epsilon, "
            "total_delta, comp_epsilon, comp_delta, prev_hash, hash) VALUES "
            f"('{ledger_id}', {seq}, {e!r}, {d!r}, '{label}', {total_e!r}, {total_d!r}, 0.0, "
            f"0.0, '{prev}', '{h}')")
        prev = h
    statements.append(f"UPDATE skdp_ledgers SET head_count = {len(rows)}, head_hash = "
                      f"'{prev}' WHERE ledger_id = '{ledger_id}'")
    _sql(url, *statements)


def test_a_re_chained_ledger_is_refused_without_any_witness(store, tmp_path):
    """Delete a charge and recompute the chain: only the key can tell. Checked in a fresh
    process with an empty private directory (no witness), the same key."""
    url, attacker = store
    ledger_id = f"study-{uuid.uuid4().hex[:8]}"
    budget = PrivacyBudget(1.0, store=url, ledger_id=ledger_id)
    for _ in range(4):
        budget.spend(0.25)
    _sql(attacker, f"DELETE FROM skdp_charges WHERE ledger_id = '{ledger_id}' AND seq = 1")
    _rechain_unkeyed(attacker, ledger_id)
    empty = tmp_path / "elsewhere"
    empty.mkdir(mode=0o700)
    done = _spend_in_fresh_process(url, ledger_id, 0.25, env_dir=empty)
    assert done.returncode != 0 and "LedgerIntegrityError" in done.stderr, done.stdout
    with pytest.raises(LedgerIntegrityError):
        budget.verify()


def test_raised_totals_are_refused_under_a_live_handle(store):
    """ad97106: UPDATE the ledger's epsilon under a live handle: it spent 5.5 against 1."""
    url, attacker = store
    budget = PrivacyBudget(1.0, store=url)
    budget.spend(0.5)
    _sql(attacker, f"UPDATE skdp_ledgers SET epsilon = 10 WHERE ledger_id = "
                   f"'{budget.ledger_id}'")
    with pytest.raises(LedgerIntegrityError, match="totals were altered"):
        budget.spend(1.0)
    with pytest.raises(LedgerIntegrityError):
        budget.verify()


def test_a_deleted_ledger_is_never_re_created_empty(store):
    """ad97106: PrivacyBudget(ledger_id=...) silently re-created a deleted ledger at 0."""
    url, attacker = store
    ledger_id = f"study-{uuid.uuid4().hex[:8]}"
    PrivacyBudget(1.0, store=url, ledger_id=ledger_id).spend(0.6)
    _sql(attacker, f"DELETE FROM skdp_ledgers WHERE ledger_id = '{ledger_id}'")
    with pytest.raises(LedgerIntegrityError, match=r"deleted|existed"):
        PrivacyBudget(1.0, store=url, ledger_id=ledger_id)
    # Its charges too; another process of this machine still knows it existed.
    _sql(attacker, f"DELETE FROM skdp_charges WHERE ledger_id = '{ledger_id}'")
    done = _spend_in_fresh_process(url, ledger_id, 0.6)
    assert done.returncode != 0 and "LedgerIntegrityError" in done.stderr, done.stdout


def test_a_deleted_ledger_row_with_its_charges_kept_is_refused_anywhere(store, tmp_path):
    """Without any witness (a fresh machine), the orphaned charges still say it existed."""
    url, attacker = store
    ledger_id = f"study-{uuid.uuid4().hex[:8]}"
    PrivacyBudget(1.0, store=url, ledger_id=ledger_id).spend(0.6)
    _sql(attacker, f"DELETE FROM skdp_ledgers WHERE ledger_id = '{ledger_id}'")
    empty = tmp_path / "elsewhere"
    empty.mkdir(mode=0o700)
    done = _spend_in_fresh_process(url, ledger_id, 0.6, env_dir=empty)
    assert done.returncode != 0 and "record was deleted" in done.stderr, done.stdout


def test_restoring_an_older_copy_of_the_sqlite_file_is_refused(tmp_path):
    """ad97106: restoring an older copy of the file let 1.5 be spent against 1.0."""
    path = tmp_path / "ledger.db"
    url = f"sqlite:///{path}"
    budget = PrivacyBudget(1.0, store=url, ledger_id="study")
    budget.spend(0.5)
    live = sqlite3.connect(path)
    snapshot = sqlite3.connect(tmp_path / "copy.db")
    live.backup(snapshot)  # the older copy
    budget.spend(0.5)
    snapshot.backup(live)  # ... put back in place of the file's content
    live.close()
    snapshot.close()
    with pytest.raises(LedgerIntegrityError, match="older copy"):
        budget.spend(0.5)
    done = _spend_in_fresh_process(url, "study", 0.5)
    assert done.returncode != 0 and "older copy" in done.stderr, done.stdout


def test_sqlite_triggers_dropped_with_the_table_are_refused(tmp_path):
    """ad97106: DROP and re-CREATE the charges table: the triggers vanish silently."""
    path = tmp_path / "ledger.db"
    url = f"sqlite:///{path}"
    budget = PrivacyBudget(1.0, store=url, ledger_id="study")
    budget.spend(0.5)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE kept AS SELECT * FROM skdp_charges")
    conn.execute("DROP TABLE skdp_charges")
    conn.execute("CREATE TABLE skdp_charges AS SELECT * FROM kept")
    conn.execute("DROP TABLE kept")
    conn.close()
    done = _spend_in_fresh_process(url, "study", 0.25)
    assert done.returncode != 0 and "triggers" in done.stderr, done.stdout


def test_the_postgresql_application_role_cannot_truncate_alter_or_disable(store):
    """ad97106: the application role owned the tables, so TRUNCATE and DISABLE TRIGGER
    worked without a superuser."""
    url, _ = store
    if url.startswith("sqlite:///"):
        pytest.skip("PostgreSQL roles")
    import psycopg

    budget = PrivacyBudget(1.0, store=url)
    budget.spend(0.5)
    for statement in ("TRUNCATE skdp_charges", "ALTER TABLE skdp_charges DISABLE TRIGGER ALL",
                      "ALTER TABLE skdp_ledgers ADD COLUMN x int", "DROP TABLE skdp_streams",
                      "DELETE FROM skdp_charges", "DELETE FROM skdp_ledgers",
                      "UPDATE skdp_ledgers SET epsilon = 10", "CREATE TABLE other (x int)"):
        with psycopg.connect(url, autocommit=True) as conn, pytest.raises(
                psycopg.errors.InsufficientPrivilege):
            conn.execute(statement)
    assert budget.spent.epsilon == 0.5 and budget.verify()


def test_a_disabled_postgresql_trigger_is_refused(store):
    url, attacker = store
    if url.startswith("sqlite:///"):
        pytest.skip("PostgreSQL trigger")
    import psycopg

    from skdp.accounting import stores

    PrivacyBudget(1.0, store=url).spend(0.25)
    with psycopg.connect(attacker, autocommit=True) as conn:
        conn.execute("ALTER TABLE skdp_charges DISABLE TRIGGER USER")
    stores._STORES.clear()  # as a process that opens the store now
    with pytest.raises(LedgerIntegrityError, match=r"trigger .* disabled"):
        PrivacyBudget(1.0, store=url)


def test_a_reset_stream_version_is_refused(store):
    """ad97106: resetting a stream record's version let a stale pickle continue."""
    url, attacker = store
    budget = PrivacyBudget(1.0, store=url)
    backend = budget._ledger.store
    stream_id = uuid.uuid4().hex
    backend.create_stream(budget.ledger_id, stream_id)
    old = _sql(attacker, f"SELECT * FROM skdp_streams WHERE stream_id = '{stream_id}'",
               fetch=True)[0]
    assert backend.advance_stream(stream_id, 0, "the live copy") == 1
    # Put the genuine older record back (every column, as it was).
    values = ", ".join(repr(v) if isinstance(v, str) else str(v) for v in old)
    _sql(attacker, f"DELETE FROM skdp_streams WHERE stream_id = '{stream_id}'",
         f"INSERT INTO skdp_streams VALUES ({values})")
    with pytest.raises(PrivacyError, match="reset"):
        backend.advance_stream(stream_id, 0, "the stale pickle")
    with pytest.raises(PrivacyError, match="reset"):
        backend.charge(budget.ledger_id, 0.1, 0.0, "stale", stream=(stream_id, 0))


_CONTINUE = """
import pickle, sys
import numpy as np
clf = pickle.load(open(sys.argv[1], "rb"))
X = np.random.default_rng(5).choice([-1.0, 1.0], size=(100, 4))
clf.partial_fit(X, (X[:, 0] > 0).astype(int))
print("continued")
"""


def test_a_stale_pickle_is_refused_after_its_stream_record_is_reset(tmp_path, _private_dir):
    """The attack end to end: a learner's pickle, the original continued, the stream row
    put back as it was when the pickle was made, the pickle loaded by a new process."""
    import numpy as np

    from skdp import DPWinnowClassifier

    rng = np.random.default_rng(0)
    X = rng.choice([-1.0, 1.0], size=(400, 4))
    y = (X[:, 0] > 0).astype(int)
    clf = DPWinnowClassifier(epsilon=4.0, delta=1e-6, margin=1.0, classes=[0, 1],
                             n_rounds=10_000, random_state=0).partial_fit(X, y)
    path = tmp_path / "winnow.pkl"
    path.write_bytes(pickle.dumps(clf))  # its ledger moves to the private directory
    url = f"sqlite:///{_private_dir / 'ledgers.sqlite'}"
    old = _sql(url, "SELECT * FROM skdp_streams", fetch=True)
    clf.partial_fit(X[:100], y[:100])  # the original continues the stream
    values = ", ".join("(" + ", ".join(repr(v) if isinstance(v, str) else str(v) for v in row)
                       + ")" for row in old)
    _sql(url, "DELETE FROM skdp_streams", f"INSERT INTO skdp_streams VALUES {values}")
    done = subprocess.run([sys.executable, "-c", _CONTINUE, str(path)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode != 0 and "reset" in done.stderr, done.stdout


def test_another_machines_key_is_refused_not_chained_afresh(postgresql_db_url):
    """Every machine sharing a PostgreSQL ledger needs the same key: a wrong one is a
    clear error, and nothing is created or spent."""
    ledger_id = f"study-{uuid.uuid4().hex[:8]}"
    PrivacyBudget(1.0, store=postgresql_db_url, ledger_id=ledger_id).spend(0.25)
    done = _spend_in_fresh_process(postgresql_db_url, ledger_id, 0.25, key="x" * 40)
    assert done.returncode != 0 and "LedgerKeyError" in done.stderr
    assert "SKDP_LEDGER_KEY" in done.stderr and "x" * 40 not in done.stderr
    assert PrivacyBudget(1.0, store=postgresql_db_url, ledger_id=ledger_id).spent.epsilon == 0.25


def test_the_key_is_never_stored_or_pickled(store):
    url, attacker = store
    budget = PrivacyBudget(1.0, store=url)
    budget.spend(0.25, label="x")
    assert KEY.encode() not in pickle.dumps(budget)
    for table in ("skdp_ledgers", "skdp_charges", "skdp_streams"):
        assert KEY not in repr(_sql(attacker, f"SELECT * FROM {table}", fetch=True))


def test_the_store_works_with_a_schema_it_cannot_create(postgresql_server):
    """The application role may not create tables: the owner creates them (schema_sql)
    and the store works; without them, the error names the fix."""
    bare = postgresql_server.create_database(schema=False)
    try:
        with pytest.raises(LedgerIntegrityError, match="schema_sql"):
            PrivacyBudget(1.0, store=postgresql_server.url_for(bare))
    finally:
        postgresql_server.drop_database(bare)


def test_a_role_that_owns_the_tables_is_warned(postgresql_server):
    """The store still works for a role that may create (and so owns) the tables, but it
    says which rights that role keeps and how to take them away."""
    from psycopg import sql

    from skdp import PrivacyWarning

    name = f"skdp_own_{uuid.uuid4().hex[:8]}"
    with postgresql_server._admin() as conn:
        conn.execute(sql.SQL("CREATE DATABASE {} OWNER skdp").format(sql.Identifier(name)))
    try:
        with pytest.warns(PrivacyWarning, match="owns its tables"):
            budget = PrivacyBudget(1.0, store=postgresql_server.url_for(name))
        budget.spend(0.5)
        assert budget.verify()
    finally:
        postgresql_server.drop_database(name)


# ------------------------------------------------------------ item 5: the directory
def test_memory_ledgers_move_to_a_private_per_user_directory(tmp_path, monkeypatch):
    """ad97106: a predictable folder under /tmp, created with exist_ok and files 0644."""
    from skdp.accounting.stores import promotion_url

    monkeypatch.delenv("SKDP_LEDGER_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    url = promotion_url()
    assert url == f"sqlite:///{tmp_path / 'state' / 'skdp' / 'ledgers.sqlite'}"
    budget = PrivacyBudget(1.0)
    pickle.dumps(budget)  # moves the ledger there
    assert budget.store == url
    folder = tmp_path / "state" / "skdp"
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    for name in os.listdir(folder):
        assert stat.S_IMODE(os.stat(folder / name).st_mode) & 0o077 == 0, name


@pytest.mark.parametrize("how", ["world-writable", "group-writable", "another owner"])
def test_a_ledger_directory_others_can_write_is_refused(tmp_path, monkeypatch, how):
    """ad97106: another local user pre-created the folder and swapped in an older copy;
    the victim paid 0.6 again. Now such a folder is refused, with the fix named."""
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o700)
    if how == "another owner":
        if os.geteuid() != 0:
            pytest.skip("making a folder another user's needs root")
        os.chown(folder, 12345, 12345)
    else:
        os.chmod(folder, 0o777 if how == "world-writable" else 0o770)
    monkeypatch.setenv("SKDP_LEDGER_DIR", str(folder))
    budget = PrivacyBudget(1.0)
    budget.spend(0.6)
    with pytest.raises(LedgerIntegrityError, match="not private") as info:
        pickle.dumps(budget)
    assert "chmod 700" in str(info.value) or "SKDP_LEDGER_DIR" in str(info.value)
    assert budget.store == "memory" and budget.spent.epsilon == 0.6


def test_a_ledger_file_others_can_read_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "private2"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("SKDP_LEDGER_DIR", str(folder))
    pickle.dumps(PrivacyBudget(1.0))
    os.chmod(folder / "ledgers.sqlite", 0o644)
    with pytest.raises(LedgerIntegrityError, match="chmod 600"):
        pickle.dumps(PrivacyBudget(1.0))


def test_the_key_file_is_made_private_on_first_use(tmp_path, monkeypatch):
    from skdp.exceptions import LedgerKeyError

    monkeypatch.delenv("SKDP_LEDGER_KEY")
    url = f"sqlite:///{tmp_path / 'l.db'}"
    PrivacyBudget(1.0, store=url, ledger_id="k").spend(0.5)
    key_file = tmp_path / "private" / "ledger.key"
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    secret = key_file.read_text().strip()
    assert len(secret) >= 32
    assert secret.encode() not in (tmp_path / "l.db").read_bytes()
    # The same secret through the environment is the same key (how machines share one).
    monkeypatch.setenv("SKDP_LEDGER_KEY", secret)
    budget = PrivacyBudget(1.0, store=url, ledger_id="k")
    budget.spend(0.25)
    assert budget.verify() and budget.spent.epsilon == 0.75
    monkeypatch.setenv("SKDP_LEDGER_KEY", "short")
    with pytest.raises(LedgerKeyError, match="32 characters"):
        PrivacyBudget(1.0, store=url)
