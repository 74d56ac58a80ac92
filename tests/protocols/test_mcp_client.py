"""The MCP client of the stateless revision (2026-07-28) against the SDK's own server in another process.

A server's ``input_required`` is a pending input in the state: it survives a restart of the session, a person
answers it (here through the AG-UI endpoint's resume entry), and the call is sent again with the answers, all
in the log. A call the server hands to a task is followed by the task's id: after a crash the resumed session
polls the task, and the server sees the call once.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import httpx
import pytest

from agent_core import ToolSuccess, tag_of
from effects import SqliteStore, load_state, open_session
from effects.protocols import SessionHost, ag_ui_app
from effects.providers import McpServer
from effects.testing import ScriptedModel, call_tools, say

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # each starts an MCP server process

SERVER = str(Path(__file__).with_name("mcp_suspending_server.py"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def tags(store: SqliteStore, session_id: str) -> list[str]:
    return [tag_of(record.decode()) for record in store.read(session_id)]


async def test_a_servers_question_waits_in_the_log_survives_a_restart_and_a_person_answers_it(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "agent.db")
    command = [sys.executable, SERVER, str(tmp_path / "release"), str(tmp_path / "calls")]
    async with McpServer(command) as server:
        model = ScriptedModel([call_tools(("book", {"flight": "LH1"}))])
        async with open_session(store, "trip", model, tools=server.tools()) as session:
            session.send("book me on LH1")
            state = await session.turn_done()
        # The session stopped while the server's question waited for a person: it is in the log.
        record = load_state(store, "trip").tool_calls["call-1"]
        assert record.status == "awaiting-input"
        [(key, question)] = json.loads(record.input_requests).items()
        assert question["params"]["message"] == "Window or aisle on LH1?"
        assert state.turn is not None and state.turn.awaiting_ids == ("call-1",)

        # A new process serves the session over AG-UI; a person answers the interrupt there.
        model = ScriptedModel([say("Booked: window seat.")])
        async with SessionHost(store, model, tools=server.tools()) as host:
            app = ag_ui_app(host)
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as http:
                answer = {key: {"action": "accept", "content": {"seat": "window"}}}
                resume = [{"interruptId": "call-1", "status": "resolved", "payload": answer}]
                body = {"threadId": "trip", "runId": "r2", "messages": [], "resume": resume}
                response = await http.post("/", json=body)
        events = [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")]

    assert events[0]["input"]["resume"] == resume
    final = load_state(store, "trip")
    assert final.tool_calls["call-1"].result == ToolSuccess(content="booked LH1, window seat")
    assert tags(store, "trip")[2:] == [
        "re-act-observed",
        "tool-call-started",
        "tool-call-input-required",
        "tool-call-input-provided",
        "tool-call-started",
        "tool-call-completed",
        "llm-message-started",
        "llm-message-completed",
        "re-act-observed",
    ]
    store.close()


async def test_a_task_is_followed_by_its_id_after_a_crash_and_the_server_sees_the_call_once(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "agent.db")
    release, calls = tmp_path / "release", tmp_path / "calls"
    with anyio.fail_after(30):  # a session that called again, or never resumed, must not hang the run
        await follow_the_task_across_a_crash(store, release, calls)
    assert calls.read_text() == "sales\n"  # one tools/call: the resumed session polled the task
    store.close()


async def follow_the_task_across_a_crash(store: SqliteStore, release: Path, calls: Path) -> None:
    async with McpServer([sys.executable, SERVER, str(release), str(calls)]) as server:
        model = ScriptedModel([call_tools(("report", {"topic": "sales"}))])
        async with open_session(store, "work", model, tools=server.tools()) as session:
            session.send("write the sales report")
            await session.machine.until(lambda s: bool(s.tool_calls.get("call-1") and s.tool_calls["call-1"].task_id))
        # The "crash": the session ended while it followed the task; the task's id is in the log.
        assert load_state(store, "work").tool_calls["call-1"].task_id == "task-1"
        release.write_text("")
        model = ScriptedModel([say("Here is the report.")])
        async with open_session(store, "work", model, tools=server.tools()) as session:
            state = await session.turn_done()
    assert state.tool_calls["call-1"].result == ToolSuccess(content="the report on sales")
