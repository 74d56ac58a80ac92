"""Following a session's log on PostgreSQL: one listening connection for the whole follow, whatever comes."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from effects import PostgresStore, SharedStore, decide, follow_store, open_session, tool
from effects.testing import ManualClock, ScriptedModel, SequentialIds, call_tools, say

from ._session import START

pytestmark = pytest.mark.anyio
DECISIONS = 20


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@tool(requires_approval=True)
def send_mail(to: str) -> str:
    """Send a mail (a person approves first)."""
    return f"sent to {to}"


def twenty_mails() -> ScriptedModel:
    calls = [("send_mail", {"to": f"ops{i}"}, f"c{i}") for i in range(DECISIONS)]
    return ScriptedModel([call_tools(*calls), say("Mailed them all.")])


def listeners(dsn: str, application: str) -> list[int]:
    """The server processes of ``application``'s connections that sit in ``LISTEN``."""
    psycopg: Any = pytest.importorskip("psycopg")
    query = "SELECT pid FROM pg_stat_activity WHERE application_name = %s AND query LIKE 'LISTEN%%' ORDER BY pid"
    with psycopg.connect(dsn, autocommit=True) as db:
        return [row[0] for row in db.execute(query, (application,)).fetchall()]


async def gone(dsn: str, application: str) -> None:
    """Until the server ended the backends of ``application``'s closed listening connections (it does so shortly)."""
    with anyio.fail_after(10):
        while listeners(dsn, application):
            await anyio.sleep(0.01)


async def test_a_follow_keeps_one_listening_connection_for_all_its_inputs(postgres_dsn: str) -> None:
    running = SharedStore(PostgresStore(postgres_dsn + "?application_name=follower"))
    other = PostgresStore(postgres_dsn + "?application_name=decider")
    clock = ManualClock(START)
    seen: list[list[int]] = []
    async with (
        open_session(running, "mails", twenty_mails(), tools=[send_mail], clock=clock, ids=SequentialIds()) as session,
        follow_store(running, session, interval=3600),  # no look at the store before the hour: only notifications
    ):
        session.send("Mail ops, all twenty of them.")
        await session.turn_done()
        assert session.phase == "awaiting-approval"
        for i in range(DECISIONS):
            clock.advance(10)
            decide(other, "mails", f"c{i}", approve=True, now_ms=clock.now_ms())
            with anyio.fail_after(10):
                await session.machine.until(lambda s, i=i: s.tool_calls[f"c{i}"].status == "completed")
            await session.settled()  # the session's own inputs are stored before the next decision reads the log
            seen.append(listeners(postgres_dsn, "follower"))
        state = await session.turn_done()
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    assert all(len(pids) == 1 for pids in seen), seen  # one listener at every moment...
    assert len({pid for pids in seen for pid in pids}) == 1  # ...and the same one: LISTEN once for the whole follow
    await gone(postgres_dsn, "follower")  # closed when the follow ended
    running.close()
    other.close()
