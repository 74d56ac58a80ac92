"""A remote A2A agent (the official ``a2a-sdk``'s server, in another process) called as a tool.

Its task id and result are logged; a session that crashed while the remote task worked resumes by polling
that task and never sends the message again. A remote task that asks for input waits for a person, and the
answer is sent to it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from agent_core import ToolSuccess, tag_of
from effects import SqliteStore, load_state, open_session
from effects.protocols import remote_agent
from effects.testing import ScriptedModel, call_tools, say

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # starts an A2A server process

SERVER = str(Path(__file__).with_name("a2a_remote_server.py"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextmanager
def researcher_server(tmp_path: Path) -> Iterator[str]:
    command = [sys.executable, SERVER, str(tmp_path / "release"), str(tmp_path / "messages")]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            yield process.stdout.readline().strip()
        finally:
            process.terminate()
            process.wait(timeout=10)


async def test_a_crash_while_the_remote_task_works_resumes_by_polling_it(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "agent.db")
    with researcher_server(tmp_path) as url, anyio.fail_after(60):
        async with remote_agent(url, name="researcher", poll_seconds=0.02) as researcher:
            model = ScriptedModel([call_tools(("researcher", {"message": "research tides"}))])
            async with open_session(store, "s", model, tools=[researcher]) as session:
                session.send("find out about tides")
                await session.machine.until(
                    lambda s: bool(s.tool_calls.get("call-1") and s.tool_calls["call-1"].task_id)
                )
            # The "crash": the session ended while the remote task worked; its id is in the log.
            task_id = load_state(store, "s").tool_calls["call-1"].task_id
            (tmp_path / "release").write_text("")
            model = ScriptedModel([say("Tides come from the moon.")])
            async with open_session(store, "s", model, tools=[researcher]) as session:
                state = await session.turn_done()
    assert state.tool_calls["call-1"].result == ToolSuccess(content="a report on tides")
    assert (tmp_path / "messages").read_text() == "research tides\n"  # sent once, polled after the restart
    inputs = [record.decode() for record in store.read("s")]
    created = [i for i in inputs if tag_of(i) == "tool-call-task-created"]
    assert [(c.tool_call_id, c.task_id) for c in created] == [("call-1", task_id)]  # type: ignore[attr-defined]
    store.close()


async def test_a_remote_task_that_asks_waits_for_a_person_and_gets_the_answer(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "agent.db")
    with researcher_server(tmp_path) as url, anyio.fail_after(60):
        async with remote_agent(url, name="researcher", poll_seconds=0.02) as researcher:
            model = ScriptedModel([call_tools(("researcher", {"message": "paint"})), say("Painted.")])
            async with open_session(store, "s", model, tools=[researcher]) as session:
                session.send("paint the fence")
                state = await session.turn_done()
                record = state.tool_calls["call-1"]
                assert record.status == "awaiting-input", record.result
                question = json.loads(record.input_requests)["reply"]
                assert (question["agent"], question["message"]) == ("researcher", "Which colour?")
                session.answer("call-1", {"reply": "blue"})
                state = await session.turn_done()
    assert state.tool_calls["call-1"].result == ToolSuccess(content="painted it blue")
    assert (tmp_path / "messages").read_text() == "paint\nblue\n"
    store.close()
