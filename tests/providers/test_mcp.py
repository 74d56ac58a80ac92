"""MCP tools through the real protocol: the agent calls ``mcp-server-time`` and the model reads the result."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from install_hint import editable_install

from agent_core import AgentConfig, ContextToolResult, LlmContext, ToolFailure, ToolSuccess
from effects import Agent, ModelReply
from effects.providers import McpServer, McpServerError, MissingExtra
from effects.testing import ScriptedModel, call_tools, say

pytestmark = pytest.mark.anyio

TIME_SERVER = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "America/New_York"]
FAILING_SERVER = [sys.executable, str(Path(__file__).with_name("mcp_failing_server.py"))]


@pytest.fixture
def anyio_backend() -> str:
    """The MCP client runs on anyio; asyncio is the backend the agent uses here."""
    return "asyncio"


def ask_then_answer(tool: str, arguments: dict[str, str]) -> ScriptedModel:
    """A model that calls ``tool`` once, then answers with the result it was shown."""

    def step(context: LlmContext) -> ModelReply:
        results = [e for e in context.entries if isinstance(e, ContextToolResult)]
        if not results:
            return call_tools((tool, arguments, "call-1"))
        shown = results[0]
        return say(("failed: " if shown.is_error else "result: ") + shown.content)

    return ScriptedModel(step)


async def run_turn(model: ScriptedModel, server: McpServer, question: str) -> str:
    """One turn of an agent with the server's tools; returns the final answer."""
    agent = Agent(model, tools=server.tools(), config=AgentConfig(max_model_calls=4))
    async with agent.running() as session:
        session.send(question)
        await session.settled()
        messages = session.state.messages
        return messages[len(messages) - 1].content


@pytest.mark.slow  # starts an MCP server process
async def test_the_agent_calls_the_time_server_and_the_model_sees_the_result() -> None:
    async with McpServer(TIME_SERVER) as server:
        assert [d.name for d in server.definitions] == ["convert_time", "get_current_time"]  # by name
        assert json.loads(server.definitions[1].parameters)["required"] == ["timezone"]
        assert server.definitions[0].idempotent  # the server hints read-only
        model = ask_then_answer("get_current_time", {"timezone": "Asia/Tokyo"})
        answer = await run_turn(model, server, "What time is it in Tokyo?")
        mars = await run_turn(ask_then_answer("get_current_time", {"timezone": "Mars/Olympus"}), server, "And Mars?")

    [_, second_call] = model.calls
    result = second_call.entries[-1]
    assert isinstance(result, ContextToolResult) and not result.is_error
    shown = json.loads(result.content)
    assert shown["timezone"] == "Asia/Tokyo"
    assert datetime.fromisoformat(shown["datetime"]).utcoffset() == timedelta(hours=9)
    assert answer == "result: " + result.content
    # An isError result is a failure the model reads.
    assert (
        mars
        == "failed: Error executing tool get_current_time: Invalid timezone: 'No time zone found with key Mars/Olympus'"
    )
    # The server process stopped with the block.
    assert await server.call("get_current_time", '{"timezone":"UTC"}') == ToolFailure(
        error=f"MCP server {' '.join(TIME_SERVER)!r} is not running (use it inside `async with`)"
    )


@pytest.mark.slow  # starts an MCP server process
async def test_json_rpc_errors_and_a_dead_server_are_failures_not_crashes() -> None:
    label = " ".join(FAILING_SERVER)
    async with McpServer(FAILING_SERVER, prefix="x_", requires_approval={"crash"}) as server:
        assert [(d.name, d.requires_approval) for d in server.definitions] == [
            ("x_crash", True),
            ("x_protocol_error", False),
        ]
        answer = await run_turn(ask_then_answer("x_protocol_error", {}), server, "Try it.")
        assert answer == f"failed: tool 'x_protocol_error' failed on MCP server {label!r}: the backend is down"
        crashed = await server.call("x_crash", "{}")
        after = await server.call("x_protocol_error", "{}")
    assert isinstance(crashed, ToolFailure) and crashed.error.startswith(
        f"tool 'x_crash' failed on MCP server {label!r}: "
    )
    assert isinstance(after, ToolFailure)


def test_bad_arguments_and_the_missing_extra_are_said_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="either a command"):
        McpServer()
    monkeypatch.setitem(sys.modules, "mcp", None)
    with pytest.raises(MissingExtra) as info:
        McpServer(TIME_SERVER)
    assert str(info.value).endswith(f"install it with: {editable_install('mcp')}")


@pytest.mark.slow  # starts an MCP server process
async def test_a_streamable_http_server_works_the_same() -> None:
    with subprocess.Popen([*FAILING_SERVER, "--http"], stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            url = process.stdout.readline().strip()
            async with McpServer(url=url) as server:
                assert [d.name for d in server.definitions] == ["crash", "protocol_error"]
                result = await server.call("protocol_error", "{}")
        finally:
            process.terminate()
    assert result == ToolFailure(error=f"tool 'protocol_error' failed on MCP server {url!r}: the backend is down")


@pytest.mark.slow  # starts an MCP server process
async def test_a_json_response_past_the_bound_is_cut_off_and_the_call_fails_saying_so() -> None:
    with subprocess.Popen([*FAILING_SERVER, "--http", "--json"], stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            url = process.stdout.readline().strip()
            async with McpServer(url=url) as server:
                flooded = await server.call("flood", "{}")
                after = await server.call("protocol_error", "{}")
        finally:
            process.terminate()
    assert isinstance(flooded, ToolFailure)
    assert flooded.error.startswith(f"tool 'flood' failed on MCP server {url!r}: "), flooded.error
    assert flooded.error.endswith(f"the response from {url} passed 16,000,000 bytes; expected a smaller one")
    assert after == ToolFailure(error=f"tool 'protocol_error' failed on MCP server {url!r}: the backend is down")


ODD_SERVER = [sys.executable, str(Path(__file__).with_name("mcp_odd_server.py"))]


@pytest.mark.slow  # starts MCP server processes
async def test_a_server_that_pages_its_tools_forever_or_in_a_loop_is_refused_at_start() -> None:
    endless = " ".join([*ODD_SERVER, "endless"])
    with pytest.raises(McpServerError) as error:
        async with McpServer([*ODD_SERVER, "endless"]):
            pass
    assert str(error.value) == (
        f"MCP server {endless!r} returned a next page of tools 100 times; expected the last page (no nextCursor) "
        "sooner"
    )
    looping = " ".join([*ODD_SERVER, "looping"])
    with pytest.raises(McpServerError) as error:
        async with McpServer([*ODD_SERVER, "looping"]):
            pass
    assert str(error.value) == (
        f"MCP server {looping!r} listed its tools in a loop: tools/list gave the cursor 'again' twice; expected "
        "each page to lead to a new one and the last to none"
    )


@pytest.mark.slow  # starts an MCP server process
async def test_arguments_nested_too_deeply_are_a_failure_the_model_reads() -> None:
    async with McpServer([*ODD_SERVER, "chatty"], errlog=subprocess.DEVNULL) as server:  # type: ignore[arg-type]
        deep = await server.call("echo", '{"text": ' + "[" * 50_000 + "]" * 50_000 + "}")
        fine = await server.call("echo", '{"text": "hi"}')
    assert deep == ToolFailure(
        error="tool 'echo': the arguments are nested deeper than 100 levels; call it again with a JSON object of "
        "arguments"
    )
    assert fine == ToolSuccess(content="hi")


@pytest.mark.slow  # starts the command line and an MCP server process
def test_a_chatty_server_s_stray_output_is_one_line_in_the_chat_not_a_traceback(tmp_path: Path) -> None:
    server = " ".join([*ODD_SERVER, "chatty"])
    done = subprocess.run(
        [sys.executable, "-m", "effects", "chat", "--demo", "--mcp", server, "--db", "c.db"],
        input="hi\n",
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "[MCP server: Failed to parse JSONRPC message from server: " in done.stderr
    assert "hello from a chatty serv" in done.stderr
