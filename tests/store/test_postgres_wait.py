"""Waiting for new inputs on PostgreSQL ends with a clear error when waiting on cannot help, and leaks nothing."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest
from postgres_server import PostgresServer, binaries  # type: ignore[import-not-found]

from effects import PostgresStore, SessionJournal, StoreUnavailable

from .conftest import session
from .test_postgres import listening


def psycopg() -> Any:
    return pytest.importorskip("psycopg")


def with_password(dsn: str, database: str) -> str:
    """``dsn`` with a password (the test server trusts loopback, so it is ignored) and another database."""
    return dsn.replace("postgres@", "postgres:hunter2@").rsplit("/", 1)[0] + f"/{database}"


def connections(dsn: str, application: str) -> int:
    with psycopg().connect(dsn, autocommit=True) as db:
        row = db.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (application,))
        return int(row.fetchone()[0])


@pytest.mark.anyio
async def test_a_waiter_raises_when_its_database_is_dropped(postgres_dsn: str) -> None:
    with psycopg().connect(postgres_dsn, autocommit=True) as db:
        db.execute("DROP DATABASE IF EXISTS doomed")
        db.execute("CREATE DATABASE doomed")
    dsn = with_password(postgres_dsn, "doomed")
    store = PostgresStore(dsn)
    SessionJournal(store, "s1").append(session(0))
    with anyio.fail_after(10):  # it used to try again forever
        async with anyio.create_task_group() as group:

            async def drop() -> None:
                await listening(postgres_dsn)
                with psycopg().connect(postgres_dsn, autocommit=True) as db:
                    db.execute("DROP DATABASE doomed WITH (FORCE)")

            group.start_soon(drop)
            with pytest.raises(StoreUnavailable) as raised:
                await store.wait_for_inputs("s1", 1)
    message = str(raised.value)
    shown = dsn.replace(":hunter2", "")
    assert message.startswith(f"{shown}: stopped waiting for new inputs of session 's1': the server refuses (")
    assert 'database "doomed" does not exist' in message
    assert message.endswith("trying again will not help: check the DSN's user, password and database, "
                            "and that it names the primary server (a replica cannot LISTEN)")  # fmt: skip
    assert "hunter2" not in message


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_waiter_gives_up_on_a_server_that_stays_away(
    postgres_server: PostgresServer, postgres_dsn: str
) -> None:
    store = PostgresStore(postgres_dsn)
    SessionJournal(store, "s1").append(session(0))
    try:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:

                async def stop() -> None:
                    await listening(postgres_dsn)
                    await anyio.to_thread.run_sync(postgres_server.stop)

                group.start_soon(stop)
                with pytest.raises(StoreUnavailable) as raised:
                    await store.wait_for_inputs("s1", 1, reconnect_for=0.5)
    finally:
        postgres_server.ensure_running()
    message = str(raised.value)
    assert message.startswith(f"{postgres_dsn}: stopped waiting for new inputs of session 's1': the server could "
                              "not be reached for 0.5 s (")  # fmt: skip
    assert message.endswith("start the server, then wait again")


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_waiter_on_a_replica_raises_and_closes_its_connection() -> None:
    found = binaries()
    if found is None:
        pytest.skip("no PostgreSQL server binaries")
    server = PostgresServer(found)
    try:
        server.start()
        PostgresStore(server.dsn()).close()  # the tables, copied to the replica
        server.restart_as_replica()
        dsn = server.dsn() + "?application_name=waiter"
        store = PostgresStore(dsn, readonly=True)
        with anyio.fail_after(10), pytest.raises(StoreUnavailable) as raised:
            await store.wait_for_inputs("s1", 0)
        assert "cannot execute LISTEN during recovery" in str(raised.value)
        assert connections(server.dsn(), "waiter") == 1  # the store's own; the waiter's is closed
        store.close()
    finally:
        server.remove()


def listeners(dsn: str, application: str) -> list[int]:
    """The server processes of ``application``'s connections that sit in ``LISTEN``."""
    query = "SELECT pid FROM pg_stat_activity WHERE application_name = %s AND query LIKE 'LISTEN%%' ORDER BY pid"
    with psycopg().connect(dsn, autocommit=True) as db:
        return [row[0] for row in db.execute(query, (application,)).fetchall()]


@pytest.mark.anyio
async def test_a_listener_whose_connection_breaks_says_why_and_listens_again(
    postgres_dsn: str, caplog: pytest.LogCaptureFixture
) -> None:
    dsn = postgres_dsn + "?application_name=waiter"
    store, writer = PostgresStore(dsn), PostgresStore(postgres_dsn)
    journal = SessionJournal(writer, "s1")
    inputs = session(1)
    journal.append(inputs[:1])
    async with store.listen() as listener:
        assert await listener.wait_for_inputs("s1", 0) == 1
        [first] = listeners(postgres_dsn, "waiter")
        with psycopg().connect(postgres_dsn, autocommit=True) as db:
            db.execute("SELECT pg_terminate_backend(%s)", (first,))  # as a server restart or a dead peer would
        woke: list[int] = []
        async with anyio.create_task_group() as group:

            async def wait() -> None:
                woke.append(await listener.wait_for_inputs("s1", 1))

            group.start_soon(wait)
            with anyio.fail_after(10):
                while listeners(postgres_dsn, "waiter") in ([], [first]):  # until it listens again, on a new one
                    await anyio.sleep(0.01)
            journal.append(inputs[1:3])
        assert woke == [3]
    logged = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "effects.store"]
    assert [level for level, _ in logged] == [logging.WARNING]
    assert logged[0][1].startswith(f"{dsn}: the connection listening for new inputs broke (")
    assert logged[0][1].endswith("); listening again")
    store.close()
    writer.close()


@pytest.mark.anyio
async def test_a_second_wait_on_one_listener_at_the_same_time_is_refused(postgres_dsn: str) -> None:
    store = PostgresStore(postgres_dsn)
    SessionJournal(store, "s1").append(session(0))
    async with store.listen() as listener, anyio.create_task_group() as group:
        group.start_soon(listener.wait_for_inputs, "s1", 1)
        await listening(postgres_dsn)
        with pytest.raises(RuntimeError) as raised:
            await listener.wait_for_inputs("s1", 1)
        group.cancel_scope.cancel()
    assert str(raised.value) == (
        f"{postgres_dsn}: this listener is already waiting; one wait at a time: "
        "open another listener (store.listen()) for a second waiter"
    )
    store.close()
