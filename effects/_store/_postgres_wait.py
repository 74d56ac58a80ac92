"""Waiting for a session's new inputs on PostgreSQL: ``LISTEN`` on a connection of its own, no polling."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio

from ._errors import StoreUnavailable
from ._postgres_schema import CHANNEL, driver, shown

RECONNECT_DELAYS = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0)
"""Seconds between attempts to reach a restarted server; the last one repeats until the waiter gives up."""

DEFAULT_RECONNECT_FOR = 30.0
"""Seconds a waiter keeps trying to reach a server that went away before it raises :class:`StoreUnavailable`."""

_PERMANENT = (
    "authentication failed",
    "does not exist",
    "not permitted to log in",
    "no pg_hba.conf entry",
    "no password supplied",
    "permission denied",
)
"""What the server says (in English) when trying again cannot help: raised at once, not after the time bound."""


async def wait_for_inputs(
    dsn: str, session_id: str, after: int, length: Callable[[], int], *, reconnect_for: float = DEFAULT_RECONNECT_FOR
) -> int:
    """Block (without a thread and without polling) until ``length()`` exceeds ``after``; return it.

    The connection listens before the length is read, so an append that
    commits in between is never missed. A broken connection is opened again
    and the length read again: notifications sent while it was down are lost,
    the length is not. A server unreachable for ``reconnect_for`` seconds, or
    refusing for a reason that will not pass (a wrong password, a database
    dropped, a replica that cannot ``LISTEN``), raises :class:`StoreUnavailable`.
    """
    psycopg = driver()
    retry = _Retry(dsn, session_id, reconnect_for)
    while True:
        try:
            connection = await anyio.to_thread.run_sync(_listening, dsn)
        except (psycopg.OperationalError, StoreUnavailable) as error:
            await retry.after(error)
            continue
        except psycopg.Error as error:  # the server answered, and refuses (a replica in recovery cannot LISTEN)
            raise retry.refused(error) from None
        try:
            return await _wait_on(connection, session_id, after, length, retry)
        except (psycopg.OperationalError, StoreUnavailable) as error:
            await retry.after(error)  # the server went away: listen again on a new connection, read the length again
        finally:
            connection.close()


class _Retry:
    """Counts the time a waiter has been cut off from the server, backs off, and gives up with a clear error."""

    def __init__(self, dsn: str, session_id: str, limit: float) -> None:
        self._dsn, self._session_id, self._limit = dsn, session_id, limit
        self._since: float | None = None
        self._attempt = 0

    def reached(self) -> None:
        """The server answered (the length was read): the next failure starts a new count."""
        self._since, self._attempt = None, 0

    async def after(self, error: Exception) -> None:
        """Sleep before the next attempt, or raise if ``error`` will not pass or the time is up."""
        reason = " ".join(str(error).split())
        if any(phrase in reason for phrase in _PERMANENT):
            raise self.refused(error) from None
        now = anyio.current_time()
        self._since = now if self._since is None else self._since
        if now - self._since >= self._limit:
            raise StoreUnavailable(
                f"{shown(self._dsn)}: stopped waiting for new inputs of session {self._session_id!r}: the server "
                f"could not be reached for {self._limit:g} s ({reason}); start the server, then wait again"
            ) from None
        await anyio.sleep(RECONNECT_DELAYS[min(self._attempt, len(RECONNECT_DELAYS) - 1)])
        self._attempt += 1

    def refused(self, error: Exception) -> StoreUnavailable:
        reason = " ".join(str(error).split())
        return StoreUnavailable(
            f"{shown(self._dsn)}: stopped waiting for new inputs of session {self._session_id!r}: the server "
            f"refuses ({reason}); trying again will not help: check the DSN's user, password and database, "
            "and that it names the primary server (a replica cannot LISTEN)"
        )


def _listening(dsn: str) -> Any:
    connection = driver().connect(dsn, autocommit=True)
    try:
        connection.execute(f"LISTEN {CHANNEL}")
    except BaseException:
        connection.close()  # never left open behind the error
        raise
    return connection


async def _wait_on(connection: Any, session_id: str, after: int, length: Callable[[], int], retry: _Retry) -> int:
    current = await anyio.to_thread.run_sync(length)
    retry.reached()
    while current <= after:
        await anyio.wait_readable(connection.pgconn.socket)
        # Reads what arrived without blocking; raises OperationalError if the server closed the connection.
        if any(n.payload == session_id for n in connection.notifies(timeout=0)):
            current = await anyio.to_thread.run_sync(length)
    return current
