"""``SessionHost``: sessions opened on demand, the least recently used idle ones closed past a bound, and a
session whose machine stopped on a bug reported once, then resumed from its log."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agent_core import UserMessageReceived
from effects import MemoryStore, load_state
from effects.protocols import Refused, SessionHost
from effects.testing import ScriptedModel, say

pytestmark = pytest.mark.anyio


def message(text: str, message_id: str) -> Any:
    return lambda state, now: [UserMessageReceived(timestamp=now, message_id=message_id, content=text)]


async def test_idle_sessions_past_the_bound_are_closed_and_open_again_from_their_log() -> None:
    store = MemoryStore()
    model = ScriptedModel(lambda context: say("ok"))
    async with SessionHost(store, model, max_sessions=1) as host:
        await host.submit("a", message("hi", "m1"), create=True)
        first = host.running("a")
        assert first is not None
        await first.turn_done()
        await host.submit("b", message("hi", "m1"), create=True)
        with anyio.fail_after(5):
            while host.running("a") is not None:  # closing is the session's task ending
                await anyio.sleep(0)
        await host.submit("a", message("again", "m2"))
        again = host.running("a")
        assert again is not None and again is not first
        state = await again.turn_done()
    assert [m.content for m in state.messages] == ["hi", "ok", "again", "ok"]


async def test_a_session_stopped_by_a_bug_is_reported_once_then_resumed() -> None:
    store = MemoryStore()
    async with SessionHost(store, ScriptedModel(lambda context: say("ok"))) as host:
        await host.submit("a", message("hi", "m1"), create=True)
        session = host.running("a")
        assert session is not None
        await session.turn_done()

        def broken(event: object) -> None:
            raise RuntimeError("a subscriber's bug")

        session.subscribe(broken)
        with pytest.raises(Refused) as stopped:
            await host.submit("a", message("boom", "m2"))
        assert stopped.value.code == "session-stopped"
        assert stopped.value.message.startswith("session 'a' stopped: RuntimeError: a subscriber's bug")
        resumed = await host.open("a")  # opened again from the log: the turn the bug interrupted goes on
        assert resumed is not session
        await resumed.turn_done()
        await host.submit("a", message("still there?", "m3"))
        await resumed.turn_done()
    assert [m.content for m in load_state(store, "a").messages][2:] == ["boom", "ok", "still there?", "ok"]


async def test_an_unknown_session_and_a_bad_id_are_refused() -> None:
    async with SessionHost(MemoryStore(), ScriptedModel([])) as host:
        with pytest.raises(Refused) as unknown:
            await host.state("nobody")
        assert (unknown.value.status, unknown.value.code) == (404, "not-found")
        with pytest.raises(Refused) as bad:
            await host.submit("x" * 201, message("hi", "m1"), create=True)
        assert bad.value.message == "expected a session id of 1 to 200 printable characters, got " + repr("x" * 60)
