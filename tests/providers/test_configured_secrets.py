"""A configured secret value (``secrets=[...]``) reaches no artifact of a session, though the model streams it
(split across chunks) and puts it in tool-call arguments, a tool returns it, another raises with it, the
provider's error message echoes it and the person types it: the store's file, the inputs, the JSON-lines and
OTLP exports, the spans (live and from the log, content captured), what the CLI prints, the events a
subscriber sees, and the error messages the session records."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from otlp_receiver import serving

from agent_core import AgentConfig, AgentInput, encode_input, replay
from effects import (
    Conventions,
    MachineEvent,
    SessionTracer,
    SqliteStore,
    TextDelta,
    export_session,
    open_session,
    session_spans,
    tool,
)
from effects.cli import main
from effects.testing import FakeProviderServer, FakeToolCall, Reply, error_reply

from ._providers import PROVIDERS, Provider

pytestmark = pytest.mark.anyio
CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
SECRET = "pg-pass-9d8e7f6a5b4c"
CONTENT = Conventions(capture_content=True)


@tool
def lookup(word: str) -> str:
    """Look a word up."""
    return f"{word}: found in the vault next to {SECRET}"


@tool
def connect() -> str:
    """Connect to the database."""
    raise ConnectionError(f"could not log in as admin with password {SECRET}")


def _leaking_replies(provider: Provider) -> list[Reply]:
    """A rate limit echoing the secret, then text and tool-call arguments carrying it in pieces, then an answer."""
    arguments = ['{"word": "pg-pass', '-9d8e7f6a5b4c"}']
    return [
        error_reply(429, f"Too many logins for {SECRET}.", kind="rate_limit_error", headers={"retry-after-ms": "1"}),
        provider.reply(
            ["The password is pg-", "pass-9d8e", "7f6a5b4c; checking."],
            [FakeToolCall("call_1", "lookup", arguments), FakeToolCall("call_2", "connect", ["{}"])],
        ),
        provider.reply([f"Done. (It was {SECRET[:5]}", f"{SECRET[5:]}.)"]),
    ]


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
async def test_a_configured_secret_reaches_no_artifact_of_a_session(
    provider: Provider,
    server: FakeProviderServer,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caplog.set_level(logging.DEBUG)
    server.enqueue(*_leaking_replies(provider))
    db = tmp_path / "agent.db"
    store = SqliteStore(db)
    config = AgentConfig(retry_base_ms=1, retry_max_ms=1, system_prompt=f"Never say {SECRET}.")
    events: list[MachineEvent] = []
    exporter = InMemorySpanExporter()
    tools = [lookup, connect]
    async with (
        provider.build(server) as model,
        open_session(store, "s", model, tools=tools, config=config, secrets=[SECRET]) as session,
    ):
        session.subscribe(events.append)
        with SessionTracer(session, SimpleSpanProcessor(exporter), CONTENT):
            session.send(f"My password is {SECRET}, keep it safe.")
            state = await session.turn_done()
            session.deny("call_2", f"do not use {SECRET}")  # refused: the call needs no approval
            await session.settled()
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    assert [r for r in server.requests if SECRET in str(r.body)] == []  # nor did the model get it back

    inputs: list[AgentInput] = [record.decode() for record in store.read("s")]
    logged = b"".join(encode_input(inp) for inp in inputs).decode()
    artifacts = {
        "inputs": logged,
        "state": repr(replay(inputs)) + repr(session.state),
        "export": export_session(store, "s").decode(),
        "spans from the log": repr(session_spans(store, "s", CONTENT)),
        "live spans": repr([(span.name, span.attributes, span.events) for span in exporter.get_finished_spans()]),
        "events": repr(events),
        "logs": "\n".join(record.getMessage() for record in caplog.records),
    }
    store.close()
    monkeypatch.setenv(CAPTURE_CONTENT, "true")  # `export --otlp` puts the messages in the spans
    with serving() as receiver:  # a real OTLP/HTTP receiver on loopback
        url = f"http://127.0.0.1:{receiver.server_port}/v1/traces"
        commands = (["inspect"], ["inspect", "--json"], ["show"], ["stats"], ["export"], ["export", "--otlp", url])
        for command in (*commands, ["replay", "--verify"]):
            main([command[0], str(db), "s", *command[1:]])
            out, err = capsys.readouterr()
            artifacts[" ".join(command[:2])] = out + err
        artifacts["otlp requests"] = repr([request for _, request in receiver.requests])  # type: ignore[attr-defined]
    artifacts["store files"] = b"".join(p.read_bytes() for p in tmp_path.iterdir()).decode("latin-1")

    leaked = sorted(name for name, text in artifacts.items() if SECRET in text)
    assert leaked == []
    # Each way in was redacted where it entered, not dropped: the person's message, the system prompt,
    # the model's text and arguments, the tool's result, the tool's exception, the provider's error.
    for kept in (
        "My password is [redacted], keep it safe.",
        "Never say [redacted].",
        "The password is [redacted]; checking.",
        '{\\"word\\": \\"[redacted]\\"}',
        "[redacted]: found in the vault next to [redacted]",
        "could not log in as admin with password [redacted]",
        "Too many logins for [redacted].",
        "Done. (It was [redacted].)",
    ):
        assert kept in logged, kept
    streamed = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert streamed == "The password is [redacted]; checking.Done. (It was [redacted].)"
    assert "[redacted]" in artifacts["live spans"] and "[redacted]" in artifacts["otlp requests"]
