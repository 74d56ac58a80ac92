"""Decisions written into the log from outside (the viewer's path) reach a running session that follows its store."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agent_core import AgentConfig, tag_of
from effects import DecisionRefused, SharedStore, SqliteStore, StateUpdated, decide, follow_store, open_session
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
