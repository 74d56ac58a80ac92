"""Decisions written into the log from outside (the viewer's path) reach a running session that follows its store."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from agent_core import AgentConfig, tag_of
from effects import (
    DecisionRefused,
    EventStore,
    PostgresStore,
    SessionInfo,
    SharedStore,
    SqliteStore,
    StateUpdated,
    StoredInput,
    decide,
    follow_store,
    open_session,
)
from effects.testing import ManualClock, SequentialIds

from ._session import CLOCKS, SESSION, START, TOOLS, script, until_awaiting

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_an_approval_appended_by_another_writer_lets_the_running_session_continue(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    running, other = SharedStore(SqliteStore(path, synchronous="NORMAL")), SqliteStore(path, synchronous="NORMAL")
    clock = ManualClock(START)
    CLOCKS.append(clock)
    config = AgentConfig(system_prompt="You are terse.")
    async with (
        open_session(
            running, SESSION, script(), tools=TOOLS, config=config, clock=clock, ids=SequentialIds()
        ) as session,
        follow_store(running, session, interval=0.01),
    ):
        await until_awaiting(session, clock)
        done = anyio.Event()
        session.subscribe(lambda e: done.set() if isinstance(e, StateUpdated) and e.state.last_outcome else None)
        seq = decide(other, SESSION, "c3", approve=True, now_ms=START + 5000)
        with anyio.fail_after(10):
            await done.wait()
        await session.settled()
        assert session.state.last_outcome is not None and session.state.last_outcome.kind == "completed"
    tags = [tag_of(r.decode()) for r in other.read(SESSION)]
    assert tags[seq - 1] == "tool-call-approved"
    assert tags.count("tool-call-approved") == 1  # taken from the log, not written twice
    assert tags[-1] == "re-act-observed" and len(tags) == 16
    with pytest.raises(DecisionRefused, match="c3"):
        decide(other, SESSION, "c3", approve=False)
    running.close()
    other.close()


class Watched(SharedStore):
    """Records every look the follower takes at the log (which method, on which thread), once ``watching`` is set."""

    def __init__(self, store: EventStore) -> None:
        super().__init__(store)
        self.watching = False
        self.threads: list[int] = []
        self.looks: list[str] = []

    def session(self, session_id: str) -> SessionInfo:
        if self.watching:
            self.threads.append(threading.get_ident())
            self.looks.append("session")
        return super().session(session_id)

    def read(self, session_id: str, start: int = 1, stop: int | None = None) -> Iterator[StoredInput]:
        if self.watching:
            self.threads.append(threading.get_ident())
            self.looks.append("read")
        return super().read(session_id, start, stop)


async def follow_a_decision(running: SharedStore, other: EventStore, interval: float) -> None:
    """Run the known session until it waits for approval, approve through ``other``, wait for the turn's end."""
    clock = ManualClock(START)
    CLOCKS.append(clock)
    async with (
        open_session(running, SESSION, script(), tools=TOOLS, clock=clock, ids=SequentialIds()) as session,
        follow_store(running, session, interval=interval),
    ):
        await until_awaiting(session, clock)
        done = anyio.Event()
        session.subscribe(lambda e: done.set() if isinstance(e, StateUpdated) and e.state.last_outcome else None)
        if isinstance(running, Watched):
            running.watching = True
        decide(other, SESSION, "c3", approve=True, now_ms=START + 5000)
        with anyio.fail_after(10):
            await done.wait()
        await session.settled()
        assert session.state.last_outcome is not None and session.state.last_outcome.kind == "completed"


async def test_the_follower_reads_the_store_off_the_event_loop(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    running = Watched(SqliteStore(path, synchronous="NORMAL"))
    other = SqliteStore(path, synchronous="NORMAL")
    await follow_a_decision(running, other, interval=0.01)
    loop = threading.get_ident()
    assert running.threads and loop not in running.threads  # the loop never waited for the store
    running.close()
    other.close()


async def test_each_look_of_the_follower_reads_the_session_once(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    running = Watched(SqliteStore(path, synchronous="NORMAL"))
    other = SqliteStore(path, synchronous="NORMAL")
    await follow_a_decision(running, other, interval=0.01)
    assert running.looks and set(running.looks) == {"read"}  # the read finds the length itself: no second query
    running.close()
    other.close()


async def test_the_follower_wakes_on_the_notification_of_a_postgres_store(postgres_dsn: str) -> None:
    running, other = SharedStore(PostgresStore(postgres_dsn)), PostgresStore(postgres_dsn)
    await follow_a_decision(running, other, interval=3600)  # no look at the store before the hour: woken at once
    assert [tag_of(r.decode()) for r in other.read(SESSION)].count("tool-call-approved") == 1
    running.close()
    other.close()


class Waiting(SqliteStore):
    """A store of the user's own that offers ``wait_for_inputs``: it returns once the session has more inputs."""

    async def wait_for_inputs(self, session_id: str, after: int) -> int:
        while (length := self.session(session_id).length) <= after:
            await anyio.sleep(0.01)
        return length


async def test_the_follower_waits_on_a_stores_own_wait_for_inputs(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    running, other = SharedStore(Waiting(path, synchronous="NORMAL")), SqliteStore(path, synchronous="NORMAL")
    await follow_a_decision(running, other, interval=3600)  # a sleep of an hour would not wake it: its wait does
    assert [tag_of(r.decode()) for r in other.read(SESSION)].count("tool-call-approved") == 1
    running.close()
    other.close()


async def test_deciding_a_call_that_was_already_decided_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    store = SqliteStore(path, synchronous="NORMAL")
    clock = ManualClock(START)
    CLOCKS.append(clock)
    async with open_session(store, SESSION, script(), tools=TOOLS, clock=clock, ids=SequentialIds()) as session:
        await until_awaiting(session, clock)
        journal_length = store.session(SESSION).length
        session.approve("c3")  # the session decides first, through its own journal
        await session.settled()
    assert store.session(SESSION).length > journal_length
    length = store.session(SESSION).length
    with pytest.raises(DecisionRefused, match="c3"):
        decide(store, SESSION, "c3", approve=True)
    assert store.session(SESSION).length == length
    store.close()
