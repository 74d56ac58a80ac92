"""A budget pools database in PostgreSQL: a transaction locks the pool's row (``SELECT ... FOR UPDATE``)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..._extras import missing
from ._schema import TABLES

_SCHEMA_LOCK = 7_461_221_901  # an advisory lock: processes creating the tables at once wait for each other


class PostgresLedger:
    """One connection to ``dsn``, used by one thread at a time; row locks serialise the processes."""

    placeholder = "%s"

    def __init__(self, dsn: str) -> None:
        try:
            import psycopg
        except ImportError as error:
            raise missing("budget pools on PostgreSQL", "postgres", error) from error
        self.where = "PostgreSQL"
        self._db: Any = psycopg.connect(dsn, autocommit=True)
        self._lock = threading.Lock()
        with self.transaction() as db:
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            for statement in TABLES:
                db.execute(statement)

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """A connection in a transaction, committed when the block ends, rolled back if it raises."""
        with self._lock, self._db.transaction():
            yield self._db

    def lock_pool(self, db: Any, pool: str) -> tuple[int, int] | None:
        """The pool's ``(cap, spent)``, its row locked until the transaction ends."""
        row = db.execute("SELECT cap, spent FROM agent_core_budget_pools WHERE pool = %s FOR UPDATE", (pool,)).fetchone()
        return None if row is None else (int(row[0]), int(row[1]))

    def close(self) -> None:
        """Close the connection."""
        self._db.close()
