"""Waiting for a session's new inputs on PostgreSQL: ``LISTEN`` on a connection of its own, no polling."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio

from ._errors import StoreUnavailable
from ._postgres_schema import CHANNEL, driver

RECONNECT_DELAYS = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0)
"""Seconds between attempts to reach a restarted server; the last one repeats until cancelled."""


async def wait_for_inputs(dsn: str, session_id: str, after: int, length: Callable[[], int]) -> int:
    """Block (without a thread and without polling) until ``length()`` exceeds ``after``; return it.

    The connection listens before the length is read, so an append that
    commits in between is never missed. A broken connection is opened again
    and the length read again: notifications sent while it was down are lost,
    the length is not.
    """
    lost = (driver().OperationalError, StoreUnavailable)
    attempt = 0
    while True:
        try:
            connection = await anyio.to_thread.run_sync(_listening, dsn)
        except lost:
            await anyio.sleep(RECONNECT_DELAYS[min(attempt, len(RECONNECT_DELAYS) - 1)])
            attempt += 1
            continue
        attempt = 0
        try:
            return await _wait_on(connection, session_id, after, length)
        except lost:
            continue  # the server went away: listen again on a new connection (the length is read again)
        finally:
            connection.close()


def _listening(dsn: str) -> Any:
    connection = driver().connect(dsn, autocommit=True)
    connection.execute(f"LISTEN {CHANNEL}")
    return connection


async def _wait_on(connection: Any, session_id: str, after: int, length: Callable[[], int]) -> int:
    current = await anyio.to_thread.run_sync(length)
    while current <= after:
        await anyio.wait_readable(connection.pgconn.socket)
        # Reads what arrived without blocking; raises OperationalError if the server closed the connection.
        if any(n.payload == session_id for n in connection.notifies(timeout=0)):
            current = await anyio.to_thread.run_sync(length)
    return current
