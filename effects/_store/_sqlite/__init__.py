"""SQLite: the default store, one file (WAL) holding many sessions; its schema and the statements its writer runs."""

from ._schema import FORMAT
from ._store import SqliteStore

__all__ = ["FORMAT", "SqliteStore"]
