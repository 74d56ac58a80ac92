"""Waiting for sessions' new inputs on PostgreSQL: ``LISTEN`` on a connection of its own, no polling."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio

from .._errors import StoreUnavailable
from ._schema import CHANNEL, driver, open_connection, shown

logger = logging.getLogger("effects.store")

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


def permanent(reason: str) -> bool:
    """Whether the server's ``reason`` for refusing says that trying again cannot help (see :data:`_PERMANENT`)."""
    return any(phrase in reason for phrase in _PERMANENT)


class InputsListener:
    """One connection in ``LISTEN`` for as long as it is open: waits for sessions' new inputs without polling.

    Open it with :meth:`PostgresStore.listen` (``async with store.listen() as
    listener``) to wait many times on one connection, as
    :func:`~effects.follow_store` does; :meth:`PostgresStore.wait_for_inputs`
    opens one for a single wait. A connection that breaks (the server
    restarted, keepalives found the peer gone) is logged with its reason on
    the ``effects.store`` logger and opened again: notifications sent while it
    was down are lost, the length is not, as it is read again. A server
    unreachable for ``reconnect_for`` seconds, or refusing for a reason that
    will not pass (a wrong password, a database dropped, a replica that cannot
    ``LISTEN``), raises :class:`StoreUnavailable`. One wait at a time.
    """

    def __init__(self, dsn: str, length: Callable[[str], int], *, reconnect_for: float = DEFAULT_RECONNECT_FOR) -> None:
        self._dsn, self._length, self._reconnect_for = dsn, length, reconnect_for
        self._connection: Any = None
        self._waiting = False

    async def __aenter__(self) -> InputsListener:
        return self

    async def __aexit__(self, *_: object) -> None:
        self.close()

    async def wait_for_inputs(self, session_id: str, after: int) -> int:
        """Block until session ``session_id`` has more than ``after`` inputs; return its length.

        Returns at once if it already has. The connection listens before the
        length is read, so an append that commits in between is never missed.
        """
        if self._waiting:
            raise RuntimeError(
                f"{shown(self._dsn)}: this listener is already waiting; one wait at a time: "
                "open another listener (store.listen()) for a second waiter"
            )
        self._waiting = True
        try:
            return await self._wait(session_id, after)
        finally:
            self._waiting = False

    def close(self) -> None:
        """Close the listening connection (the next wait opens a new one)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    async def _wait(self, session_id: str, after: int) -> int:
        psycopg = driver()
        retry = _Retry(self._dsn, session_id, self._reconnect_for)
        while True:
            try:
                if self._connection is None:
                    await anyio.to_thread.run_sync(self._listen)
            except (psycopg.OperationalError, StoreUnavailable) as error:
                await retry.after(error)
                continue
            except psycopg.Error as error:  # the server answered, and refuses (a replica in recovery cannot LISTEN)
                raise retry.refused(error) from None
            try:
                return await _wait_on(self._connection, session_id, after, lambda: self._length(session_id), retry)
            except (psycopg.OperationalError, StoreUnavailable) as error:
                self._broke(error)
                await retry.after(error)  # then listen again if the connection broke, and read the length again

    def _listen(self) -> None:
        """Connect and ``LISTEN`` (on a worker thread); kept on ``self`` at once, so :meth:`close` always closes it."""
        connection = open_connection(self._dsn)
        try:
            connection.execute(f"LISTEN {CHANNEL}")
        except BaseException:
            connection.close()  # never left open behind the error
            raise
        self._connection = connection

    def _broke(self, error: Exception) -> None:
        if self._connection is not None and self._connection.broken:
            reason = " ".join(str(error).split())
            logger.warning(
                "%s: the connection listening for new inputs broke (%s); listening again", shown(self._dsn), reason
            )
            self.close()


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
        if permanent(reason):
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


async def _wait_on(connection: Any, session_id: str, after: int, length: Callable[[], int], retry: _Retry) -> int:
    current = await anyio.to_thread.run_sync(length)
    retry.reached()
    while current <= after:
        if session_id in _arrived(connection):
            current = await anyio.to_thread.run_sync(length)
        else:
            await anyio.wait_readable(connection.pgconn.socket)
    return current


def _arrived(connection: Any) -> set[str]:
    """The sessions notified since the last look, read without blocking (raises if the server closed the connection)."""
    return {notify.payload for notify in connection.notifies(timeout=0)}
