"""Tool retries and loops through a live session: the scripted model, a manual clock, the log replayed."""

from __future__ import annotations

import pytest

from agent_core import AgentInput, TimerFired, ToolCallCompleted, ToolCallStarted, ToolFailure, ToolRetry, ToolSuccess
from effects import retry, tool
from effects.testing import ScriptedModel, call_tools, say

from ._helpers import START, Recorder, make_agent, texts


class Flaky(ConnectionError):
    """A transient failure of the tool's backend."""


def flaky_lookup(failures: int) -> object:
    """An idempotent lookup that raises ``Flaky`` on its first ``failures`` calls, then answers."""
    calls: list[str] = []

    @tool(idempotent=True, retry=retry(3, on=(ConnectionError,), base_ms=500))
    async def lookup(key: str, tool_call_id: str) -> str:
        """Look a key up."""
        calls.append(tool_call_id)
        if len(calls) <= failures:
            raise Flaky(f"backend unreachable ({len(calls)})")
        return f"value of {key}"

    lookup.calls = calls  # type: ignore[attr-defined]
    return lookup


@pytest.mark.anyio
async def test_a_flaky_idempotent_tool_fails_twice_then_succeeds_and_every_attempt_is_logged() -> None:
    lookup = flaky_lookup(2)
    agent, model, clock = make_agent([call_tools(("lookup", {"key": "a"})), say("a is known")], tools=[lookup])
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("look up a")
        await session.settled()
        assert clock.sleepers() == [START + 500]
        clock.advance(500)
        await session.settled()
        assert clock.sleepers() == [START + 1500]  # the backoff doubles
        clock.advance(1000)
        await session.settled()
        state = session.state

    assert lookup.calls == ["call-1", "call-1", "call-1"]  # type: ignore[attr-defined]
    assert texts(state)[-1] == ("assistant", "a is known")
    assert state.tool_calls["call-1"].result == ToolSuccess(content="value of a")
    assert state.tool_calls["call-1"].attempt == 2
    # Each attempt in the log: a failure (coded with the policy's class, which Flaky subclasses), a timer,
    # a new start of the same call.
    assert [_attempt(i) for i in recorder.inputs if _attempt(i)] == [
        "started call-1",
        "failed call-1 ConnectionError",
        f"timer {START + 500}",
        "started call-1",
        "failed call-1 ConnectionError",
        f"timer {START + 1500}",
        "started call-1",
        "succeeded call-1",
    ]
    assert len(model.calls) == 2
    recorder.assert_replays_to(state)


@pytest.mark.anyio
async def test_attempts_run_out_and_the_model_reads_the_last_error() -> None:
    lookup = flaky_lookup(5)
    agent, _, clock = make_agent([call_tools(("lookup", {"key": "a"})), say("no luck")], tools=[lookup])
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("look up a")
        await session.settled()
        clock.advance(500)
        await session.settled()
        clock.advance(1000)
        await session.settled()
        state = session.state

    assert lookup.calls == ["call-1"] * 3  # type: ignore[attr-defined]
    result = state.tool_calls["call-1"].result
    assert isinstance(result, ToolFailure) and result.code == "ConnectionError"
    assert result.error.endswith(
        "Flaky: backend unreachable (3). Check the arguments and try again, or answer "
        "without this tool (failed 3 of 3 attempts)"
    )
    recorder.assert_replays_to(state)


@pytest.mark.anyio
async def test_a_tool_that_is_not_idempotent_never_retries() -> None:
    calls: list[str] = []

    @tool
    async def charge(amount: int) -> str:
        """Charge a card."""
        calls.append("charged")
        raise ConnectionError("the bank hung up")

    agent, _, clock = make_agent([call_tools(("charge", {"amount": 5})), say("the charge failed")], tools=[charge])
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("charge 5")
        await session.settled()
        state = session.state

    assert calls == ["charged"]
    assert clock.sleepers() == []
    result = state.tool_calls["call-1"].result
    assert isinstance(result, ToolFailure) and result.code == "ConnectionError"
    assert texts(state)[-1] == ("assistant", "the charge failed")
    recorder.assert_replays_to(state)


def test_a_retry_policy_on_a_tool_that_is_not_idempotent_is_refused_unless_forced() -> None:
    async def charge(amount: int) -> str:
        """Charge a card."""
        return "ok"

    with pytest.raises(ValueError) as info:
        tool(retry=retry())(charge)
    assert str(info.value) == (
        "tool 'charge' has a retry policy but is not idempotent; expected idempotent=True (running it twice is "
        "safe), or force=True in its retry policy to retry it anyway"
    )
    forced = tool(retry=retry(2, force=True))(charge)
    assert forced.definition.retry == ToolRetry(max_attempts=2, force=True)


@pytest.mark.anyio
async def test_two_calls_taking_turns_are_caught_as_stuck_on_their_canonical_arguments() -> None:
    @tool
    async def search(q: str, page: int = 1) -> str:
        """Search."""
        return f"results for {q}"

    @tool
    async def summarise(text: str) -> str:
        """Summarise."""
        return text[:10]

    script = [
        call_tools(("search", '{"q": "cats", "page": 1}')),
        call_tools(("summarise", {"text": "results for cats"})),
        call_tools(("search", '{"page":1.0,"q":"cats"}')),
        call_tools(("summarise", '{ "text" : "results for cats" }')),
        say("unreachable"),
    ]
    agent, model, _ = make_agent(ScriptedModel(script), tools=[search, summarise])
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("find cats")
        await session.settled()
        state = session.state

    assert state.last_outcome is not None
    assert (state.last_outcome.kind, state.last_outcome.reason) == ("failed", "stuck")
    assert state.last_outcome.detail == (
        'the tool calls call-1 (search {"page":1,"q":"cats"}), call-2 (summarise {"text":"results for cats"}), '
        'call-3 (search {"page":1,"q":"cats"}), call-4 (summarise {"text":"results for cats"}) go round a cycle '
        "of the same 2 calls twice in this turn; the agent looks stuck"
    )
    assert len(model.calls) == 4
    recorder.assert_replays_to(state)


def _attempt(inp: AgentInput) -> str:
    if isinstance(inp, ToolCallStarted):
        return f"started {inp.tool_call_id}"
    if isinstance(inp, ToolCallCompleted):
        result = inp.result
        if isinstance(result, ToolFailure):
            return f"failed {inp.tool_call_id} {result.code}"
        return f"succeeded {inp.tool_call_id}"
    if isinstance(inp, TimerFired):
        return f"timer {inp.timestamp}"
    return ""
