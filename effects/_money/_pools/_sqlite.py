"""A budget pools database in one SQLite file: a transaction takes the file's write lock first."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ._schema import TABLES


class SqliteLedger:
    """One connection to ``path``, used by one thread at a time; ``BEGIN IMMEDIATE`` serialises the
    transactions of every process on the file (waiting up to 30 s for the lock)."""

    placeholder = "?"

    def __init__(self, path: str | Path) -> None:
        self.where = str(path)
        self._db = sqlite3.connect(self.where, isolation_level=None, check_same_thread=False, timeout=30)
        self._lock = threading.Lock()
        with self.transaction() as db:
            for statement in TABLES:
                db.execute(statement)

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """A cursor in a write transaction, committed when the block ends, rolled back if it raises."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def lock_pool(self, db: Any, pool: str) -> tuple[int, int] | None:
        """The pool's ``(cap, spent)``; the transaction already holds the file's write lock."""
        row = db.execute("SELECT cap, spent FROM agent_core_budget_pools WHERE pool = ?", (pool,)).fetchone()
        return None if row is None else (int(row[0]), int(row[1]))

    def close(self) -> None:
        """Close the connection."""
        self._db.close()
