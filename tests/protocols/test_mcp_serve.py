"""``agent-core mcp-serve`` in its own process on loopback, driven by the MCP SDK's own client.

An IDE's view of an agent: start a session, read its answer, send a message whose tool call needs approval,
approve it, read the final answer. Mistakes (an unknown session, a decision on a call that waits for
nothing) are tool errors saying what was expected, and write nothing. The HTTP app refuses a request
without credentials when an authentication hook is set.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from effects import SqliteStore
from effects.protocols import SessionHost, mcp_app
from effects.testing import ScriptedModel, say

from ._serving import serving

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextmanager
def mcp_serve(db: Path) -> Iterator[str]:
    """``agent-core mcp-serve --demo --http`` on a free loopback port; yields its URL."""
    command = [sys.executable, "-m", "effects", "mcp-serve", "--demo", "--http", "--port", "0", "--db", str(db)]
    with subprocess.Popen(command, stderr=subprocess.PIPE, text=True) as process:
        try:
            assert process.stderr is not None
            line = process.stderr.readline()
            assert " on http://127.0.0.1:" in line, line + process.stderr.read()
            yield line.split(" on ", 1)[1].split(" ", 1)[0]
        finally:
            process.terminate()
            process.wait(timeout=10)


def reply(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    return dict(result.structured_content or json.loads(result.content[0].text))


@pytest.mark.slow  # starts the command line as a server process
async def test_an_mcp_client_starts_a_session_approves_a_call_and_reads_the_answer(tmp_path: Path) -> None:
    db = tmp_path / "agent.db"
    with mcp_serve(db) as url:
        async with Client(url) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            assert tools == [
                "start_session",
                "send_message",
                "read_answer",
                "approve",
                "answer_questions",
                "cancel_turn",
            ]
            started = reply(await client.call_tool("start_session", {"message": "what is 17 * 23?"}))
            sid = started["session_id"]
            assert started["status"] == "completed" and started["answer"].endswith("calculate says: 391")

            asked = reply(await client.call_tool("send_message", {"session_id": sid, "message": "remember: buy milk"}))
            assert asked["status"] == "waiting"
            [pending] = asked["pending"]
            assert (pending["kind"], pending["tool"], pending["arguments"]) == (
                "approval",
                "save_note",
                {"text": "buy milk"},
            )

            mistaken = await client.call_tool("approve", {"session_id": sid, "tool_call_id": "nope"})
            unknown = await client.call_tool("read_answer", {"session_id": "no-such-session"})
            done = reply(
                await client.call_tool("approve", {"session_id": sid, "tool_call_id": pending["tool_call_id"]})
            )
            read = reply(await client.call_tool("read_answer", {"session_id": sid}))

    assert mistaken.is_error and mistaken.content[0].text == (
        f"Error executing tool approve: tool call 'nope' does not wait for a decision; expected one of: "
        f"{pending['tool_call_id']}"
    )
    assert unknown.is_error and unknown.content[0].text.startswith(
        "Error executing tool read_answer: no session 'no-such-session'"
    )
    assert done["status"] == "completed" and "buy milk" in done["answer"]
    assert read == done
    store = SqliteStore(db)
    assert [s.session_id for s in store.sessions()] == [sid]  # the mistakes wrote nothing, made no session
    store.close()


async def test_the_http_app_refuses_a_request_without_credentials_when_a_hook_is_set(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "agent.db")

    def bearer(request: Any) -> bool:
        return bool(request.headers.get("authorization") == "Bearer s3cret")

    async with (
        SessionHost(store, ScriptedModel([say("hi")])) as host,
        serving(mcp_app(host, authenticate=bearer), lifespan="on") as url,
    ):
        async with httpx.AsyncClient() as http:
            refused = await http.post(url + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "server/discover"})
        credentials = httpx2.AsyncClient(headers={"authorization": "Bearer s3cret"})
        async with credentials, Client(streamable_http_client(url + "/mcp", http_client=credentials)) as client:
            started = reply(await client.call_tool("start_session", {"message": "hello"}))
    assert refused.status_code == 401
    assert refused.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32001,
            "message": "expected credentials the server's authentication accepts; the request carried none it accepts",
        },
    }
    assert (started["status"], started["answer"]) == ("completed", "hi")
    assert [s.session_id for s in store.sessions()] == [started["session_id"]]
    store.close()
