"""Shared test configuration.

Hypothesis profiles, chosen with the ``HYPOTHESIS_PROFILE`` environment variable:

* ``ci`` (default): modest example counts, so the suite stays fast on two cores.
* ``dev``: ten times the examples, for a thorough run before a release:
  ``HYPOTHESIS_PROFILE=dev .venv/bin/pytest tests/test_properties.py``.

Tests scale their own counts from the active profile's ``max_examples``
(``settings().max_examples``), so ``dev`` deepens every property test.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings
from postgres_server import NOT_FOUND, PostgresServer, binaries

settings.register_profile(
    "ci",
    max_examples=40,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev",
    max_examples=400,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A real PostgreSQL server for the whole run (Debian's binaries, a temporary folder, a loopback port)."""
    found = binaries()
    if found is None:
        pytest.skip(NOT_FOUND)
    server = PostgresServer(found)
    try:
        server.start()
        yield server
    finally:
        server.remove()


@pytest.fixture
def postgres_dsn(postgres_server: PostgresServer) -> str:
    """The server's URL, with the store's tables emptied: each test starts from an empty store."""
    psycopg = pytest.importorskip("psycopg")
    postgres_server.ensure_running()  # a test that restarts the server may have failed half-way
    with psycopg.connect(postgres_server.dsn(), autocommit=True) as db:
        if db.execute("SELECT to_regclass('agent_core_sessions') IS NOT NULL").fetchone() == (True,):
            db.execute("TRUNCATE agent_core_sessions, agent_core_inputs, agent_core_snapshots RESTART IDENTITY")
        if db.execute("SELECT to_regclass('agent_core_leases') IS NOT NULL").fetchone() == (True,):
            db.execute("TRUNCATE agent_core_leases")
    return postgres_server.dsn()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Where no PostgreSQL server can start here, say so once (its tests are skipped, not failed)."""
    if binaries() is None:
        terminalreporter.write_line(f"PostgreSQL tests skipped: {NOT_FOUND}")
