"""A provider's API key never reaches any artifact of a session: the store's file, the inputs, an export, the
spans, what the CLI prints, logs or error messages; not even when the provider echoes it back in errors."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from agent_core import AgentConfig, encode_input, replay
from effects import SqliteStore, export_session, open_session, session_spans, tool
from effects.cli import main
from effects.testing import FakeProviderServer, FakeToolCall, Reply, error_reply, sse

from ._providers import PROVIDERS, Provider

pytestmark = pytest.mark.anyio
SECRET = "sk-live-7f3a9c2e5b8d1f4a6c0e9b2d"


@tool
def lookup(word: str) -> str:
    """Look a word up."""
    return f"{word}: a small example"


def _echoing_replies(provider: Provider) -> list[Reply]:
    """A rate limit and a mid-stream error that both echo the key, then a tool call and an answer."""
    echoed = f"Too many requests for key {SECRET}."
    if provider.name == "openai":
        mid_stream = sse({"error": {"message": echoed, "type": "server_error"}})
    else:
        mid_stream = sse({"type": "error", "error": {"type": "overloaded_error", "message": echoed}}, "error")
    return [
        error_reply(429, echoed, kind="rate_limit_error", headers={"retry-after-ms": "1"}),
        Reply.stream([mid_stream]),
        provider.reply(["Let me look."], [FakeToolCall("call_1", "lookup", ['{"word": "otel"}'])]),
        provider.reply(["otel: a small example."]),
    ]


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
async def test_the_api_key_reaches_no_artifact_of_a_session(
    provider: Provider,
    server: FakeProviderServer,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    server.enqueue(*_echoing_replies(provider))
    db = tmp_path / "agent.db"
    store = SqliteStore(db)
    config = AgentConfig(retry_base_ms=1, retry_max_ms=1, llm_max_attempts=5)
    async with provider.build(server, api_key=SECRET) as model:
        async with open_session(store, "s", model, tools=[lookup], config=config) as session:
            session.send("What is otel?")
            state = await session.turn_done()
        seen = [repr(model), repr(session.state)]
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    assert all(request.headers.get("authorization", request.headers.get("x-api-key", "")) for request in server.requests)

    inputs = [record.decode() for record in store.read("s")]
    artifacts = {
        "inputs": b"".join(encode_input(inp) for inp in inputs).decode(),
        "export": export_session(store, "s").decode(),
        "spans": repr(session_spans(store, "s")),
        "state": repr(replay(inputs)),
        "objects": "".join(seen),
        "logs": "\n".join(record.getMessage() for record in caplog.records),
    }
    store.close()
    for command in (["inspect"], ["show"], ["stats"], ["export"], ["replay", "--verify"]):
        main([command[0], str(db), "s", *command[1:]])
        out, err = capsys.readouterr()
        artifacts[command[0]] = out + err
    artifacts["store file"] = b"".join(p.read_bytes() for p in tmp_path.iterdir()).decode("latin-1")

    leaked = sorted(name for name, text in artifacts.items() if SECRET in text)
    assert leaked == []
    assert "Too many requests for key ***." in artifacts["inputs"]  # the echoed errors were kept, redacted
