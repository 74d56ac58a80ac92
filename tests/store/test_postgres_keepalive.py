"""Every connection a PostgreSQL store opens has TCP keepalives on (a half-open socket ends), and the DSN can tune them.

Read on the sockets themselves (``getsockopt`` on this process's connections to
the server), so what is checked is what the kernel will do, not what was asked.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from effects import PostgresStore, SessionJournal

from .conftest import session

pytestmark = pytest.mark.anyio

DEFAULTS = {"keepalive": 1, "idle": 30, "interval": 10, "count": 3, "user_timeout": 60_000}


@contextmanager
def sockets_to(port: int) -> Iterator[dict[int, socket.socket]]:
    """This process's TCP sockets connected to ``port`` on loopback, by inode (duplicates, closed on exit)."""
    found: dict[int, socket.socket] = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # closed meanwhile (the listing's own descriptor)
        if not target.startswith("socket:"):
            continue
        duplicate = socket.socket(fileno=os.dup(int(fd)))
        try:
            connected = duplicate.family == socket.AF_INET and duplicate.getpeername() == ("127.0.0.1", port)
        except OSError:
            connected = False
        if connected:
            found[int(target[len("socket:[") : -1])] = duplicate
        else:
            duplicate.close()
    try:
        yield found
    finally:
        for duplicate in found.values():
            duplicate.close()


def options(sock: socket.socket) -> dict[str, int]:
    return {
        "keepalive": sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
        "idle": sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
        "interval": sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL),
        "count": sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT),
        "user_timeout": sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT),
    }


def inodes(port: int) -> set[int]:
    with sockets_to(port) as found:
        return set(found)


async def opened_by_a_store(dsn: str, port: int) -> list[dict[str, int]]:
    """The options of each connection a store on ``dsn`` opens: its reads', its writer's and its listener's."""
    before = inodes(port)
    store = PostgresStore(dsn)
    name = f"s{len(store.sessions())}"
    SessionJournal(store, name).append(session(0, session_id=name))  # the writer connects
    try:
        async with store.listen() as listener:
            assert await listener.wait_for_inputs(name, 0) == 1  # the listener connects
            with sockets_to(port) as found:
                return [options(sock) for inode, sock in sorted(found.items()) if inode not in before]
    finally:
        store.close()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def port(postgres_dsn: str) -> int:
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("reads the sockets through /proc (Linux)")
    return int(postgres_dsn.rsplit(":", 1)[1].split("/")[0])


async def test_every_connection_of_a_store_has_keepalives_on(postgres_dsn: str, port: int) -> None:
    assert await opened_by_a_store(postgres_dsn, port) == [DEFAULTS] * 3


async def test_the_dsn_overrides_the_keepalive_settings(postgres_dsn: str, port: int) -> None:
    tuned = await opened_by_a_store(f"{postgres_dsn}?keepalives_idle=7&tcp_user_timeout=5000", port)
    assert tuned == [{**DEFAULTS, "idle": 7, "user_timeout": 5000}] * 3
    off = await opened_by_a_store(f"{postgres_dsn}?keepalives=0", port)
    assert [sock["keepalive"] for sock in off] == [0] * 3
