"""The adapters inside an agent: streamed text, tool calls and failures become the core's inputs."""

from __future__ import annotations

import json

import pytest

from agent_core import AgentConfig, AgentInput, LlmCallFailed, ToolSuccess, encode_input
from effects import Agent, MachineEvent, StateUpdated, TextDelta, tool
from effects.testing import FakeProviderServer, FakeToolCall, ManualClock, SequentialIds, error_reply

from ._providers import KEY, PROVIDERS, Provider

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Recorder:
    """Collects the inputs the session applied and the text it streamed."""

    def __init__(self) -> None:
        self.inputs: list[AgentInput] = []
        self.deltas: list[str] = []

    def __call__(self, event: MachineEvent) -> None:
        if isinstance(event, StateUpdated):
            self.inputs.append(event.input)
        elif isinstance(event, TextDelta):
            self.deltas.append(event.text)


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
async def test_a_turn_streams_text_calls_the_tool_and_answers(provider: Provider, server: FakeProviderServer) -> None:
    server.enqueue(
        provider.reply(["Let me ", "add."], [FakeToolCall("call_add", "add", ['{"a": 2,', ' "b": 3}'])]),
        provider.reply(["It is ", "5."]),
    )
    recorder = Recorder()
    async with provider.build(server) as model:
        agent = Agent(model, tools=[add], clock=ManualClock(), ids=SequentialIds())
        async with agent.running() as session:
            session.subscribe(recorder)
            session.send("What is 2 + 3?")
            await session.settled()
            state = session.state

    assert recorder.deltas == ["Let me ", "add.", "It is ", "5."]
    assert [(m.role, m.content) for m in state.messages] == [
        ("user", "What is 2 + 3?"),
        ("assistant", "Let me add."),
        ("assistant", "It is 5."),
    ]
    assert state.tool_calls["call_add"].parameters == '{"a": 2, "b": 3}'
    assert state.tool_calls["call_add"].result == ToolSuccess(content="5")
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    second = json.dumps(server.requests[1].body)
    assert '"call_add"' in second and "Let me add." in second  # the call and its result went back to the model


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
async def test_a_refused_key_fails_the_turn_and_the_log_keeps_the_body_without_the_key(
    provider: Provider, server: FakeProviderServer
) -> None:
    server.enqueue(error_reply(401, f"Incorrect API key provided: {KEY}.", kind="authentication_error"))
    recorder = Recorder()
    async with provider.build(server) as model, Agent(model, clock=ManualClock()).running() as session:
        session.subscribe(recorder)
        session.send("Hello?")
        await session.settled()
        state = session.state

    [failed] = [i for i in recorder.inputs if isinstance(i, LlmCallFailed)]
    assert (failed.retryable, failed.retry_after_ms) == (False, None)
    assert '"message":"Incorrect API key provided: ***."' in failed.error  # the provider's body is in the log
    assert all(KEY not in encode_input(i).decode() for i in recorder.inputs)
    assert state.last_outcome is not None and (state.last_outcome.kind, state.last_outcome.reason) == (
        "failed",
        "llm-error",
    )


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
async def test_a_rate_limit_is_retried_by_the_reducer_after_the_servers_hint(
    provider: Provider, server: FakeProviderServer
) -> None:
    server.enqueue(
        error_reply(429, "Slow down.", kind="rate_limit_error", headers={"retry-after": "2"}),
        provider.reply(["Hello!"]),
    )
    clock, recorder = ManualClock(), Recorder()
    async with provider.build(server) as model:
        agent = Agent(model, clock=clock, config=AgentConfig(llm_max_attempts=2))
        async with agent.running() as session:
            session.subscribe(recorder)
            session.send("Hi")
            await session.settled()
            assert (session.phase, len(server.requests)) == ("retrying", 1)
            clock.advance(30_000)
            await session.settled()
            state = session.state

    [failed] = [i for i in recorder.inputs if isinstance(i, LlmCallFailed)]
    assert (failed.retryable, failed.retry_after_ms) == (True, 2000)
    assert len(server.requests) == 2
    assert state.messages[1].content == "Hello!"
