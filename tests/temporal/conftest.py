"""A real Temporal dev server for the run (the ``temporal`` CLI from the ``dev`` extra) beside the real PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from temporal_server import NOT_FOUND, TemporalServer, binary


@pytest.fixture(scope="session")
def temporal_server() -> Iterator[TemporalServer]:
    """The dev server, started once; each test uses its own task queue and session ids."""
    found = binary()
    if found is None:
        pytest.skip(NOT_FOUND)
    server = TemporalServer(found)
    try:
        asyncio.run(server.ready())
        yield server
    finally:
        server.stop()


@pytest.fixture
def anyio_backend() -> str:
    """The Temporal SDK runs on asyncio."""
    return "asyncio"
