"""A PostgreSQL connection opened again, once, when the server dropped it: the reads' and the writer's."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from .._errors import StoreUnavailable
from ._listen import DEFAULT_RECONNECT_FOR, RECONNECT_DELAYS, permanent
from ._schema import connect, driver, unusable

T = TypeVar("T")


class Reconnecting:
    """One connection of a :class:`PostgresStore`; :meth:`run` runs a body again on a new connection when the server
    dropped the old one, for up to ``reconnect_for`` seconds (a server restarting).

    Opened at once (``opened=True``: a bad DSN fails where the store is made)
    or by the first :meth:`run`, on the thread that uses it.
    """

    def __init__(self, dsn: str, *, readonly: bool, opened: bool, reconnect_for: float = DEFAULT_RECONNECT_FOR) -> None:
        self.dsn = dsn
        self._readonly = readonly
        self._reconnect_for = reconnect_for
        self._db: Any = connect(dsn, readonly=readonly) if opened else None

    def run(self, body: Callable[[Any, bool], T]) -> T:
        """``body(connection, again)``; if the server dropped the connection, again on a new one (``again``).

        A connection lost is opened again at once, then, while the server
        cannot be reached (restarting), every 0.05 s to 2 s (backing off) for
        up to ``reconnect_for`` seconds; the caller waits meanwhile (a session's
        commit is late, not lost). Then, or at once for an error on a
        connection still open (a read-only server) or a refusal that trying
        again cannot mend (a wrong password, a database dropped), it raises
        :class:`StoreUnavailable` naming the DSN without its password. The body
        must be safe to run twice: what an attempt did may or may not have
        been committed when the connection was lost.
        """
        psycopg = driver()
        again, attempt, since = False, 0, 0.0
        while True:
            try:
                if self._db is None or self._db.broken:
                    self._db = connect(self.dsn, readonly=self._readonly)
                return body(self._db, again)
            except (psycopg.OperationalError, psycopg.errors.ReadOnlySqlTransaction) as error:
                if self._db is None or not self._db.broken:  # the server answered, and refused
                    raise unusable(self.dsn, error) from None
                failure = unusable(self.dsn, error)
            except StoreUnavailable as error:  # the server could not be reached again
                failure = error
            again = True
            if permanent(str(failure)):
                raise failure
            if attempt == 0:  # a connection dropped while the server runs (an idle timeout): at once
                attempt, since = 1, time.monotonic()
                continue
            waited = time.monotonic() - since
            if waited >= self._reconnect_for:
                raise StoreUnavailable(
                    f"{failure} (the store tried again for {waited:.1f} s: reconnect_for={self._reconnect_for:g})"
                ) from None
            time.sleep(min(RECONNECT_DELAYS[min(attempt - 1, len(RECONNECT_DELAYS) - 1)], self._reconnect_for - waited))
            attempt += 1

    def close(self) -> None:
        """Close the connection, if it was opened."""
        if self._db is not None:
            self._db.close()
