"""PostgreSQL: many writers on one log (separate processes), and wake-ups on new inputs across a server restart."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from postgres_server import PostgresServer  # type: ignore[import-not-found]

from agent_core import replay
from effects import NotAStore, PostgresStore, SessionJournal, StoreError, StoreUnavailable, replay_session

from .conftest import session

WRITER = Path(__file__).resolve().parent / "_pg_writer.py"


def writer(dsn: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WRITER), dsn, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )


def outcome(process: subprocess.Popen[str]) -> dict[str, int]:
    out, _ = process.communicate(timeout=120)
    assert process.returncode == 0
    result: dict[str, int] = json.loads(out.splitlines()[-1])
    return result


@pytest.mark.slow
def test_two_processes_racing_on_one_session_never_interleave(postgres_dsn: str) -> None:
    store = PostgresStore(postgres_dsn)
    inputs = session(2, session_id="race")
    SessionJournal(store, "race").append(inputs[:1])
    racers = [writer(postgres_dsn, "race", "race") for _ in range(2)]
    for racer in racers:
        assert racer.stdout is not None and racer.stdout.readline() == "ready\n"
    for racer in racers:
        assert racer.stdin is not None
        racer.stdin.write("go\n")
        racer.stdin.flush()
    results = [outcome(racer) for racer in racers]
    assert sum(r["won"] for r in results) == len(inputs) - 1  # each input written once, by one of them
    assert [r.decode() for r in store.read("race")] == inputs
    assert replay_session(store, "race").state == replay(inputs)


@pytest.mark.slow
def test_fifty_sessions_written_from_four_processes_all_verify(postgres_dsn: str) -> None:
    processes = [writer(postgres_dsn, "many", str(k), "4", "50") for k in range(4)]
    assert sum(outcome(p)["sessions"] for p in processes) == 50
    store = PostgresStore(postgres_dsn, readonly=True)
    infos = store.sessions()
    assert sorted(info.session_id for info in infos) == sorted(f"m{i}" for i in range(50))
    for info in infos:
        report = replay_session(store, info.session_id, verify=True)
        assert report.state == replay(session(2, session_id=info.session_id))


@pytest.mark.anyio
async def test_a_waiter_wakes_when_another_connection_appends(postgres_dsn: str) -> None:
    waiting, writing = PostgresStore(postgres_dsn), PostgresStore(postgres_dsn)
    inputs = session(1)
    journal = SessionJournal(writing, "s1")
    journal.append(inputs[:1])
    assert await waiting.wait_for_inputs("s1", 0) == 1  # already there: returns at once
    woke: list[int] = []
    async with anyio.create_task_group() as group:

        async def wait() -> None:
            woke.append(await waiting.wait_for_inputs("s1", 1))

        group.start_soon(wait)
        await anyio.wait_all_tasks_blocked()
        journal.append(inputs[1:3])
    assert woke == [3]


@pytest.mark.anyio
async def test_a_waiter_for_a_session_not_yet_created_wakes_on_its_first_input(postgres_dsn: str) -> None:
    store = PostgresStore(postgres_dsn)
    woke: list[int] = []
    async with anyio.create_task_group() as group:

        async def wait() -> None:
            woke.append(await store.wait_for_inputs("later", 0))

        group.start_soon(wait)
        await anyio.wait_all_tasks_blocked()
        SessionJournal(PostgresStore(postgres_dsn), "other").append(session(0, session_id="other"))
        SessionJournal(PostgresStore(postgres_dsn), "later").append(session(0, session_id="later"))
    assert woke == [1]


def test_a_database_without_the_tables_is_not_a_store_when_read(postgres_dsn: str) -> None:
    psycopg = pytest.importorskip("psycopg")
    with psycopg.connect(postgres_dsn, autocommit=True) as db:
        if db.execute("SELECT 1 FROM pg_database WHERE datname = 'other'").fetchone() is None:
            db.execute("CREATE DATABASE other")
    other = postgres_dsn.rsplit("/", 1)[0] + "/other"
    with pytest.raises(NotAStore) as raised:
        PostgresStore(other, readonly=True)
    assert str(raised.value) == (
        f"{other}: the database has no agent-core tables; "
        "expected a store written by `agent-core run --db` or `agent-core import`"
    )


def test_an_unreachable_server_is_one_clear_error() -> None:
    with pytest.raises(StoreError) as raised:
        PostgresStore("postgresql://someone:secret@127.0.0.1:9/db")
    message = str(raised.value)
    assert message.startswith("postgresql://someone@127.0.0.1:9/db: cannot reach the PostgreSQL store (")
    assert message.endswith("check that the server runs and the DSN is right, then retry")
    assert "secret" not in message


async def listening(dsn: str) -> None:
    """Until a connection of the server sits in ``LISTEN`` (the waiter's own connection is not visible otherwise)."""
    psycopg = pytest.importorskip("psycopg")
    query = "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND state = 'idle'"
    with anyio.fail_after(10):
        while True:
            with psycopg.connect(dsn, autocommit=True) as db:
                if db.execute(query).fetchone() == (1,):
                    return
            await anyio.sleep(0.01)


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_waiter_and_a_writer_carry_on_after_the_server_restarts(
    postgres_server: PostgresServer, postgres_dsn: str
) -> None:
    waiting, writing = PostgresStore(postgres_dsn), PostgresStore(postgres_dsn)
    inputs = session(1)
    journal = SessionJournal(writing, "s1")
    journal.append(inputs[:1])
    woke: list[int] = []
    async with anyio.create_task_group() as group:

        async def wait() -> None:
            woke.append(await waiting.wait_for_inputs("s1", 1))

        group.start_soon(wait)
        await listening(postgres_dsn)
        await anyio.to_thread.run_sync(postgres_server.stop)
        await anyio.to_thread.run_sync(postgres_server.start)
        journal.append(inputs[1:2])  # the writer's connection broke too: it connects again, once
    assert woke == [2]
    assert [r.decode() for r in waiting.read("s1")] == inputs[:2]


def test_a_read_only_store_writes_nothing(postgres_dsn: str) -> None:
    SessionJournal(PostgresStore(postgres_dsn), "s1").append(session(0))
    journal = SessionJournal.open(PostgresStore(postgres_dsn, readonly=True), "s1")
    with pytest.raises(StoreUnavailable) as raised:
        journal.append(session(1)[1:2])
    assert str(raised.value) == (
        f"{postgres_dsn}: the store is read-only (cannot execute SELECT FOR UPDATE in a read-only transaction); nothing was "
        "written; open it without readonly=True, or use a command that only reads"
    )
    assert PostgresStore(postgres_dsn).session("s1").length == 1
