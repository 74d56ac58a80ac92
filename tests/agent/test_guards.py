"""Guards through a live session: retry through the timer, budgets, stuck detection, the turn deadline."""

from __future__ import annotations

import anyio
import pytest

from agent_core import LlmCallFailed, TimerFired, ToolFailure, TurnOutcome
from effects import tool
from effects.testing import call_tools, fail, say

from ._helpers import START, Recorder, make_agent, texts


@tool
async def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@pytest.mark.anyio
async def test_a_transient_model_failure_is_retried_when_the_clock_reaches_the_backoff() -> None:
    agent, model, clock = make_agent([fail("overloaded"), fail("overloaded"), say("third time lucky")])
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("hi")
        await session.settled()
        assert session.phase == "retrying"
        assert clock.sleepers() == [START + 1000]
        clock.advance(999)
        await session.settled()
        assert session.phase == "retrying"
        clock.advance(1)
        await session.settled()
        assert clock.sleepers() == [START + 1000 + 2000]  # exponential backoff
        clock.advance(2000)
        await session.settled()
        state = session.state

    assert texts(state)[-1] == ("assistant", "third time lucky")
    assert len(model.calls) == 3
    fired = [i for i in recorder.inputs if isinstance(i, TimerFired)]
    assert [t.timestamp for t in fired] == [START + 1000, START + 3000]
    failed = [i for i in recorder.inputs if isinstance(i, LlmCallFailed)]
    assert [(f.error, f.retryable) for f in failed] == [("overloaded", True), ("overloaded", True)]
    recorder.assert_replays_to(state)


@pytest.mark.anyio
async def test_the_servers_retry_after_is_honoured_and_attempts_are_bounded() -> None:
    agent, _, clock = make_agent([fail("slow down", retry_after_ms=5000), fail("still down")], llm_max_attempts=2)
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("hi")
        await session.settled()
        assert clock.sleepers() == [START + 5000]
        clock.advance(5000)
        await session.settled()
        state = session.state

    assert state.last_outcome == TurnOutcome(
        kind="failed",
        reason="llm-error",
        detail="model call failed 2 of 2 attempts: still down",
        turn=1,
        at=START + 5000,
    )
    recorder.assert_replays_to(state)


@pytest.mark.anyio
async def test_the_tool_call_budget_ends_the_turn() -> None:
    agent, model, _ = make_agent(
        [call_tools(("lookup", {"key": "a"})), call_tools(("lookup", {"key": "b"}), ("lookup", {"key": "c"}))],
        tools=[lookup],
        max_tool_calls=2,
    )
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("look up a, b and c")
        await session.settled()
        state = session.state

    assert state.last_outcome is not None
    assert (state.last_outcome.kind, state.last_outcome.reason) == ("failed", "max-tool-calls")
    assert state.tool_calls["call-3"].result == ToolFailure(
        error="not run: the turn's budget of 2 tool calls is spent (1 used, 2 asked)"
    )
    assert len(model.calls) == 2
    recorder.assert_replays_to(state)


@pytest.mark.anyio
async def test_with_final_answer_a_spent_budget_asks_once_more_without_tools() -> None:
    agent, model, _ = make_agent(
        [call_tools(("lookup", {"key": "a"})), call_tools(("lookup", {"key": "b"})), say("best I can do: a")],
        tools=[lookup],
        max_model_calls=2,
        on_budget_exhausted="final-answer",
    )
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("look things up")
        await session.settled()
        state = session.state

    assert [c.tools_enabled for c in model.calls] == [True, True, False]
    assert model.calls[-1].tools == ()
    assert texts(state)[-1] == ("assistant", "best I can do: a")
    assert state.last_outcome == TurnOutcome(kind="completed", reason="max-model-calls", turn=1, at=START)
    recorder.assert_replays_to(state)


@pytest.mark.anyio
async def test_the_same_call_again_and_again_is_detected_as_stuck() -> None:
    same = call_tools(("lookup", {"key": "a"}))
    agent, model, _ = make_agent([same, same, same, say("unreachable")], tools=[lookup])
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("look up a")
        await session.settled()
        state = session.state

    assert state.last_outcome is not None
    assert (state.last_outcome.kind, state.last_outcome.reason) == ("failed", "stuck")
    assert len(model.calls) == 3
    recorder.assert_replays_to(state)


@pytest.mark.anyio
async def test_the_turn_deadline_stops_a_running_tool() -> None:
    entered, cancelled = anyio.Event(), []

    @tool
    async def forever() -> str:
        """Never returns."""
        entered.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.append(True)
            raise
        return ""

    agent, _, clock = make_agent([call_tools(("forever", {}))], tools=[forever], max_turn_ms=30_000)
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("go")
        await entered.wait()
        clock.advance(30_000)
        await session.settled()
        state = session.state

    assert cancelled == [True]
    assert state.last_outcome is not None
    assert (state.last_outcome.kind, state.last_outcome.reason) == ("failed", "timeout")
    assert "call-tool:call-1" in recorder.canceled()
    recorder.assert_replays_to(state)
