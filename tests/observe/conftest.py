"""Fixtures of the observability tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from effects import SqliteStore

from ._session import recorded


@pytest.fixture
def db(tmp_path: Path) -> str:
    """A SQLite store holding the known session (see ``_session``), as a path."""
    path = tmp_path / "log.db"
    store = SqliteStore(path, synchronous="NORMAL")
    recorded(store)
    store.close()
    return str(path)
