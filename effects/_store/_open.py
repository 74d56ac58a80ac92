"""``open_store``: a store from a SQLite path or a PostgreSQL URL, the one way every command opens one."""

from __future__ import annotations

import os

from ._postgres import PostgresStore, is_dsn
from ._protocol import EventStore
from ._sqlite import SqliteStore


def open_store(target: str | os.PathLike[str], *, readonly: bool = False) -> EventStore:
    """A :class:`PostgresStore` for a ``postgresql://`` (or ``postgres://``) URL, else a :class:`SqliteStore` file.

    ``readonly=True`` never creates or changes anything (a missing SQLite
    file, or a database without the store's tables, is :class:`NotAStore`).
    """
    name = os.fspath(target)
    if is_dsn(name):
        return PostgresStore(name, readonly=readonly)
    return SqliteStore(name, readonly=readonly)
