"""A PostgreSQL connection opened again, once, when the server dropped it: the reads' and the writer's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from .._errors import StoreUnavailable
from ._schema import connect, driver, unusable

T = TypeVar("T")


class Reconnecting:
    """One connection of a :class:`PostgresStore`; :meth:`run` tries a body once more on a new connection.

    Opened at once (``opened=True``: a bad DSN fails where the store is made)
    or by the first :meth:`run`, on the thread that uses it.
    """

    def __init__(self, dsn: str, *, readonly: bool, opened: bool) -> None:
        self.dsn = dsn
        self._readonly = readonly
        self._db: Any = connect(dsn, readonly=readonly) if opened else None

    def run(self, body: Callable[[Any, bool], T]) -> T:
        """``body(connection, again)``; if the server dropped the connection, once more on a new one (``again``).

        A second failure, or an error on a connection still open (a read-only
        server), is a :class:`StoreUnavailable` naming the DSN without its
        password. The body must be safe to run twice: what the first attempt
        did may or may not have been committed when the connection was lost.
        """
        psycopg = driver()
        for again in (False, True):
            try:
                if self._db is None or self._db.broken:
                    self._db = connect(self.dsn, readonly=self._readonly)
                return body(self._db, again)
            except (psycopg.OperationalError, psycopg.errors.ReadOnlySqlTransaction) as error:
                if again or self._db is None or not self._db.broken:
                    raise unusable(self.dsn, error) from None
            except StoreUnavailable:  # the server could not be reached again
                if again:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Close the connection, if it was opened."""
        if self._db is not None:
            self._db.close()
