"""The default turn deadline through a running session: a hanging turn ends at 30 minutes of running
time, and time spent waiting for a person's approval does not count."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agent_core import DEFAULT_MAX_TURN_MS, AgentConfig, AgentState, ToolFailure, TurnOutcome
from effects import Agent, Session, Toolbox, ToolLimits, parked, tool
from effects.testing import ManualClock, ScriptedModel, SequentialIds, call_tools, say

from ._helpers import START, Recorder

pytestmark = pytest.mark.anyio
HOUR = 3_600_000


def hanging(entered: anyio.Event) -> tuple[Any, Any]:
    """``wait``, a tool that never returns, and ``deploy``, the same needing approval.

    It waits parked, as on a service outside the machine that never answers, so
    ``session.settled()`` returns while it hangs: the tests await the session's
    real condition, never a guess at how long the tasks take."""

    async def wait() -> str:
        """Never returns."""
        entered.set()
        async with parked():
            await anyio.sleep_forever()
        return ""

    return tool(wait), tool(name="deploy", requires_approval=True)(wait)


async def reach_the_deadline(session: Session, clock: ManualClock) -> AgentState:
    """Run the clock to 1 ms before the deadline (the turn still runs), then to it; the state the turn ended in."""
    [deadline] = clock.sleepers()
    clock.advance(deadline - clock.now_ms() - 1)
    await session.settled()  # all that 1 ms short of the deadline sets going has run; the tool hangs on
    assert session.phase == "acting"
    assert clock.sleepers() == [deadline]  # the deadline's timer still waits
    clock.advance(1)
    with anyio.fail_after(10):  # without a deadline the turn would hang on
        return await session.turn_done()


def agent_with(script: list[Any], entered: anyio.Event, config: AgentConfig | None = None) -> tuple[Agent, ManualClock]:
    """Tools that hang and no tool timeout (nor a model timeout): only the turn's deadline can end the turn."""
    clock = ManualClock(START)
    tools = Toolbox(hanging(entered), limits=ToolLimits(timeout_ms=None))
    model = ScriptedModel(script)
    agent = Agent(model, tools=tools, clock=clock, ids=SequentialIds(), session_id="s", model_timeout_ms=None)
    if config is not None:
        agent.config = config
    return agent, clock


async def test_a_hanging_turn_ends_at_the_default_deadline_with_its_tool_cancelled() -> None:
    entered = anyio.Event()
    agent, clock = agent_with([call_tools(("wait", {})), say("unreached")], entered)
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("go")
        await entered.wait()
        assert clock.sleepers() == [START + DEFAULT_MAX_TURN_MS]
        state = await reach_the_deadline(session, clock)

    detail = "the turn ran past its deadline of 1800000 ms"
    assert state.last_outcome == TurnOutcome(kind="failed", reason="timeout", detail=detail, turn=1, at=clock.now_ms())
    result = state.tool_calls["call-1"].result
    assert isinstance(result, ToolFailure) and result.error.startswith("interrupted: the turn was failed")
    assert "call-tool:call-1" in recorder.canceled()
    assert clock.sleepers() == []
    recorder.assert_replays_to(state)


async def test_time_waiting_for_approval_does_not_count_towards_the_deadline() -> None:
    entered = anyio.Event()
    agent, clock = agent_with([call_tools(("deploy", {})), say("unreached")], entered)
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("deploy it")
        await session.turn_done()
        assert session.phase == "awaiting-approval"
        await session.settled()  # the cancelled timer's task has ended
        assert clock.sleepers() == []  # no deadline timer while a person decides
        clock.advance(5 * HOUR)
        await session.settled()
        assert session.phase == "awaiting-approval"
        session.approve("call-1")
        await entered.wait()
        # The manual clock stood still until the wait, so the whole 30 minutes are left after it.
        assert clock.sleepers() == [START + 5 * HOUR + DEFAULT_MAX_TURN_MS]
        state = await reach_the_deadline(session, clock)

    assert state.last_outcome is not None
    assert (state.last_outcome.kind, state.last_outcome.reason) == ("failed", "timeout")
    assert state.last_outcome.at == START + 5 * HOUR + DEFAULT_MAX_TURN_MS
    recorder.assert_replays_to(state)


async def test_none_lets_a_turn_run_on() -> None:
    entered = anyio.Event()
    agent, clock = agent_with([call_tools(("wait", {}))], entered, AgentConfig(max_turn_ms=None))
    async with agent.running() as session:
        session.send("go")
        await entered.wait()
        clock.advance(10 * 24 * HOUR)
        await session.settled()
        assert session.phase == "acting"
        assert clock.sleepers() == []
        session.cancel("enough")
        state = await session.turn_done()
    assert state.last_outcome is not None and state.last_outcome.kind == "cancelled"
