"""``agent-core chat`` driven as a person would, in a pseudo-terminal, against a scripted provider."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect  # type: ignore[import-untyped]
import pytest

from agent_core import ToolSuccess
from effects import SqliteStore, load_state, timeline
from effects.testing import (
    HOLD,
    FakeProviderServer,
    FakeToolCall,
    Reply,
    StrictResponsesServer,
    Thought,
    anthropic_reply,
    openai_reply,
    openai_stream,
)

pytestmark = pytest.mark.slow  # each test starts the command line in a new process

TOOLS = '''
from pathlib import Path
from effects import tool

@tool(requires_approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    Path(path).unlink()
    return f"deleted {path}"
'''


@pytest.fixture
def server() -> Iterator[FakeProviderServer]:
    with FakeProviderServer() as fake:
        yield fake


def chat(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> pexpect.spawn:
    """``agent-core chat`` in a pseudo-terminal, in ``tmp_path``, with a clean environment, started with SIGINT
    ignored (as a script's background job starts every program): Ctrl-C must stop a turn all the same."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "AGENT_CORE_"))}
    child = pexpect.spawn(
        sys.executable,
        ["-m", "effects", "chat", *args],
        cwd=str(tmp_path),
        env={**clean, "PYTHONUNBUFFERED": "1", **(env or {})},
        encoding="utf-8",
        timeout=30,
        dimensions=(40, 200),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    child.expect("you> ")
    return child


def threads_taking_sigint(pid: int) -> list[int]:
    """The threads of ``pid`` that do not block SIGINT (the kernel gives a Ctrl-C to one of them)."""
    taking = []
    for task in sorted(Path(f"/proc/{pid}/task").iterdir(), key=lambda p: int(p.name)):
        status = dict(line.split(":\t", 1) for line in (task / "status").read_text().splitlines() if ":\t" in line)
        if not int(status["SigBlk"], 16) & (1 << (2 - 1)):  # bit SIGINT - 1
            taking.append(int(task.name))
    return taking


def ended(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    child.close()
    return int(child.exitstatus or 0)


def test_stream_approve_a_tool_interrupt_a_turn_and_resume(tmp_path: Path, server: FakeProviderServer) -> None:
    (tmp_path / "tools.py").write_text(TOOLS)
    (tmp_path / "notes.txt").write_text("old notes")
    counting = openai_stream(["Counting: 1, ", "2, "])
    server.enqueue(
        openai_reply(
            ["I will delete ", "it."], [FakeToolCall("call_rm", "delete_file", ['{"path": ', '"notes.txt"}'])]
        ),
        openai_reply(["Deleted ", "notes.txt."]),
        Reply.stream([*counting[:3], HOLD, *counting[3:]]),
        openai_reply(["Still ", "here."]),
    )
    flags = ["--provider", "openai", "--base-url", server.url + "/v1", "--model", "test-model", "--tools", "tools.py"]
    child = chat(tmp_path, *flags, "--session", "s1", env={"OPENAI_API_KEY": "sk-test"})

    child.sendline("Please delete notes.txt")
    child.expect_exact("agent> I will delete it.")
    child.expect_exact('-> delete_file({"path": "notes.txt"})')
    child.expect_exact('Allow delete_file({"path": "notes.txt"})? [y/N] ')
    assert (tmp_path / "notes.txt").exists()
    child.sendline("y")
    child.expect_exact("<- delete_file: deleted notes.txt")
    child.expect_exact("agent> Deleted notes.txt.")
    child.expect("you> ")
    assert not (tmp_path / "notes.txt").exists()

    child.sendline("Count to a million")
    child.expect_exact("agent> Counting: 1, 2, ")
    assert server.held.wait(10)
    assert threads_taking_sigint(child.pid) == [child.pid], "only the main thread may take Ctrl-C"
    child.sendintr()
    child.expect_exact("[turn cancelled]")
    child.expect("you> ")
    assert server.disconnected.wait(10), "cancelling the turn closes the model's HTTP stream"

    child.sendline("Are you there?")
    child.expect_exact("agent> Still here.")
    child.expect("you> ")
    child.sendeof()
    child.expect_exact(
        f"Resume with: agent-core chat --session s1 --provider openai --model test-model --base-url {server.url}/v1 "
        "--tools tools.py"
    )
    assert ended(child) == 0

    store = SqliteStore(tmp_path / "agent-core.db", readonly=True)
    state = load_state(store, "s1")
    types = [entry.type for entry in timeline(store, "s1")]
    store.close()
    assert "re-act-cancelled" in types
    assert [m.content for m in state.messages][-2:] == ["Are you there?", "Still here."]
    assert state.tool_calls["call_rm"].result == ToolSuccess(content="deleted notes.txt")
    fourth = server.requests[3].body["messages"]
    assert {"role": "tool", "tool_call_id": "call_rm", "content": "deleted notes.txt"} not in fourth  # a past turn
    assert fourth[-1] == {"role": "user", "content": "Are you there?"}

    server.enqueue(openai_reply(["Welcome back."]))
    child = chat(tmp_path, *flags, "--session", "s1", env={"OPENAI_API_KEY": "sk-test"})
    assert "  you: Are you there?\r\n  agent: Still here.\r\n" in child.before
    child.sendline("Hello again")
    child.expect_exact("agent> Welcome back.")
    child.expect("you> ")
    child.sendintr()  # Ctrl-C at the prompt ends the chat
    assert ended(child) == 0
    assert server.requests[4].body["messages"][-3:] == [
        {"role": "user", "content": "Are you there?"},
        {"role": "assistant", "content": "Still here."},
        {"role": "user", "content": "Hello again"},
    ]


def test_without_a_model_it_explains_and_offers_the_demo(tmp_path: Path) -> None:
    child = pexpect.spawn(
        sys.executable,
        ["-m", "effects", "chat"],
        cwd=str(tmp_path),
        env={k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "AGENT_CORE_"))},
        encoding="utf-8",
        timeout=30,
    )
    child.expect_exact("No model is configured.")
    child.expect_exact("--base-url URL")
    child.expect_exact("Try the scripted demo model now? [y/N] ")
    child.sendline("y")
    child.expect("you> ")
    child.sendline("what is 2 + 3?")
    child.expect_exact('-> calculate({"expression":"2 + 3"})')
    child.expect_exact("agent> Here is what I found. calculate says: 5")
    child.expect("you> ")
    child.sendeof()
    assert ended(child) == 0


def test_configured_from_the_environment_with_anthropic_and_an_mcp_server(
    tmp_path: Path, server: FakeProviderServer
) -> None:
    server.enqueue(
        anthropic_reply(["Checking."], [FakeToolCall("toolu_1", "get_current_time", ['{"timezone": "Asia/Tokyo"}'])]),
        anthropic_reply(["Done."]),
    )
    env = {
        "AGENT_CORE_PROVIDER": "anthropic",
        "AGENT_CORE_MODEL": "claude-test",
        "AGENT_CORE_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "sk-ant-test",
        "AGENT_CORE_DB": str(tmp_path / "chats.db"),
    }
    time_server = f"{sys.executable} -m mcp_server_time --local-timezone UTC"
    child = chat(tmp_path, "--mcp", time_server, env=env)
    assert "claude-test (Anthropic)" in child.before and "chats.db" in child.before
    child.sendline("What time is it in Tokyo?")
    child.expect_exact('-> get_current_time({"timezone": "Asia/Tokyo"})')
    child.expect_exact('<- get_current_time: { "timezone": "Asia/Tokyo", "datetime": "')
    child.expect_exact("agent> Done.")
    child.expect("you> ")
    child.sendeof()
    assert ended(child) == 0
    [result] = [b for b in server.requests[1].body["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert result["tool_use_id"] == "toolu_1" and '"timezone": "Asia/Tokyo"' in result["content"]
    assert (
        server.requests[0]
        .headers.get("x-api-key", server.requests[0].headers.get("authorization", ""))
        .endswith("sk-ant-test")
    )


def test_a_byte_that_is_not_utf8_reaches_the_log_as_a_replacement_character_and_the_hint_names_the_store(tmp_path: Path) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "AGENT_CORE_"))}
    done = subprocess.run(
        [sys.executable, "-m", "effects", "chat", "--demo", "--db", "chat.db"],
        input=b"hi\xff there\n",
        cwd=tmp_path,
        env={**clean, "PYTHONUTF8": "1"},
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert b"This is a bug" not in done.stdout + done.stderr
    store = SqliteStore(tmp_path / "chat.db", readonly=True)
    (session_id,) = [s.session_id for s in store.sessions()]
    state = load_state(store, session_id)
    assert state.messages[0].content == "hi\ufffd there"
    assert state.messages[1].role == "assistant" and state.messages[1].content
    assert f"Resume with: agent-core chat --session {session_id} --demo --db chat.db" in done.stdout.decode()


def test_a_chat_on_the_responses_api_sends_its_reasoning_back_with_the_call(tmp_path: Path) -> None:
    (tmp_path / "tools.py").write_text(TOOLS)
    (tmp_path / "notes.txt").write_text("old notes")
    call = FakeToolCall("call_rm", "delete_file", ['{"path": "notes.txt"}'])
    with StrictResponsesServer([[Thought("The user wants it gone."), call], ["Deleted."]]) as fake:
        flags = ["--provider", "openai-responses", "--base-url", fake.url + "/v1", "--model", "gpt-test"]
        child = chat(tmp_path, *flags, "--tools", "tools.py", env={"OPENAI_API_KEY": "sk-test"})
        assert "gpt-test (OpenAI Responses)" in child.before
        child.sendline("Delete notes.txt")
        child.expect_exact('Allow delete_file({"path": "notes.txt"})? [y/N] ')
        child.sendline("y")
        child.expect_exact("agent> Deleted.")
        child.expect("you> ")
        child.sendeof()
        assert ended(child) == 0
    assert fake.refusals == []
    assert [item.get("type") for item in fake.requests[-1].body["input"]] == [
        "message", "reasoning", "function_call", "function_call_output",
    ]  # fmt: skip
