import os
import sys
import tempfile
import warnings

import numpy as np
import pytest
from _postgres import PG_PASSWORD, REQUIRE_ENV, PostgresServer, PostgresUnavailable
from hypothesis import settings

# Memory ledgers that get pickled move to $SKDP_LEDGER_DIR/ledgers.sqlite; keep the
# suite's (and its subprocesses') in a folder of its own rather than the user's.
os.environ.setdefault("SKDP_LEDGER_DIR", tempfile.mkdtemp(prefix="skdp-test-ledgers-"))

settings.register_profile("skdp", deadline=None, max_examples=60, derandomize=True)
settings.load_profile("skdp")


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


# -- a real PostgreSQL server (see tests/_postgres.py) ---------------------------------
@pytest.fixture(scope="session")
def postgresql_server():
    """A throwaway PostgreSQL server for the session, stopped and removed at the end."""
    try:
        server = PostgresServer()
    except PostgresUnavailable as exc:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{exc} (and {REQUIRE_ENV}=1)", pytrace=False)
        print(f"\nskipping PostgreSQL tests: {exc}", file=sys.stderr)
        pytest.skip(str(exc))
    server.start()
    print(
        f"\nPostgreSQL {server.version} from {server.bindir} on port {server.port}, "
        f"started in {server.startup_seconds:.2f} s",
        file=sys.stderr,
    )
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def postgresql_url(postgresql_server):
    """``postgresql://skdp:s3cret-pw@127.0.0.1:PORT/skdp``: the application role ``skdp``
    (a password, not a superuser, owning nothing: only the grants the ledger store needs)
    on database ``skdp``, whose ledger tables the owner role created; shared by the whole
    session."""
    return postgresql_server.url


@pytest.fixture
def postgresql_db_url(postgresql_server):
    """Like ``postgresql_url`` but a fresh database of its own, dropped after the test."""
    name = postgresql_server.create_database()
    try:
        yield postgresql_server.url_for(name)
    finally:
        postgresql_server.drop_database(name)


@pytest.fixture
def postgresql_db_owner_url(postgresql_server, postgresql_db_url):
    """The owner role's URL of ``postgresql_db_url``'s database (it owns the tables)."""
    return postgresql_server.owner_url_for(postgresql_db_url.rsplit("/", 1)[1])


@pytest.fixture(scope="session")
def racers():
    """Six spawned processes for the race tests (tests/_spawned.py), started once per
    session with PGPASSWORD in their environment (what their libpq reads)."""
    from _spawned import Racers

    pool = Racers({"PGPASSWORD": PG_PASSWORD})
    yield pool
    pool.close()


def pytest_configure(config):
    # Seeds are skdp's warned testing mode (skdp.base): the suite seeds on purpose, so the
    # warning is silenced here; tests/test_noise_and_seeds.py checks where it is raised
    # (pytest.warns records it regardless of this filter).
    config.addinivalue_line(
        "filterwarnings", "ignore:.*random_state is set, so the noise is reproducible")
    # skdp.TestingSeed is a public class whose name starts with "Test": pytest tries to
    # collect it in every module that imports it (50 collection warnings per run).
    config.addinivalue_line(
        "filterwarnings",
        "ignore:cannot collect test class 'TestingSeed':pytest.PytestCollectionWarning")
    # Advice to a user about their data or call, which the suite triggers on purpose by
    # fitting small or random tables without classes= (thousands of lines in a run,
    # none news to a reader of the test output). The tests of these warnings use
    # pytest.warns, which records them regardless of these filters.
    for message in (
        r".*predicts one label almost everywhere",  # decision lists on random 0/1 data
        r".*are too few for a rule list",
        r".*the label set \(classes_\) was read from the private y",
        r".*hypothesis_class=None learns thresholds on the MEAN",
        r".*cannot learn within n_rounds=",  # DP-Winnow's constant fallback
    ):
        config.addinivalue_line("filterwarnings", f"ignore:{message}")


@pytest.fixture(scope="module")
def dask_client():
    """A two-process dask LocalCluster's client (closed with its cluster afterwards)."""
    distributed = pytest.importorskip("distributed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None)
        client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()
