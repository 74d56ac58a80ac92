"""Timeouts on the wall clock (``SystemClock``, the default), under asyncio and under trio.

Under trio a model or tool call's deadline cancels the effect's own scope
instead of a scope of its own (its last wait: nothing in the effect waits
after it). These runs check that it behaves as a scope of its own would: a
call past its deadline becomes the failure the model reads and the session
goes on; a deadline that passes after its call finished touches nothing and
leaves no timer running; a cancellation of the turn is not taken for a
timeout; a tool's own timed calls keep deadlines of their own. Deadlines here
are tens of milliseconds of real time: the wall clock is what is under test.
"""

from __future__ import annotations

import anyio
import pytest

from agent_core import AgentConfig, LlmContext, ToolFailure, ToolSuccess
from effects import Agent, ModelReply, SystemClock, TextSink, Toolbox, ToolLimits, parked, tool
from effects.testing import ScriptedModel, SequentialIds, call_tools, say

from ._helpers import Recorder, results, texts

pytestmark = pytest.mark.anyio


def agent_on_the_wall_clock(model: object, tools: list[object], **settings: object) -> Agent:
    config = AgentConfig(max_turn_ms=None)
    return Agent(model, tools=tools, config=config, ids=SequentialIds(), session_id="s1", **settings)  # type: ignore[arg-type]


async def test_a_tool_past_its_timeout_is_stopped_and_the_session_goes_on() -> None:
    @tool(timeout_ms=20, idempotent=True)
    async def slow() -> str:
        """Takes forever."""
        await anyio.sleep_forever()
        return ""

    @tool
    async def quick() -> str:
        """Answers at once."""
        return "here"

    model = ScriptedModel([call_tools(("slow", {}), ("quick", {})), say("slow timed out, quick answered")])
    async with agent_on_the_wall_clock(model, [slow, quick]).running() as session:
        recorder = Recorder(session)
        session.send("try both")
        with anyio.fail_after(10):
            await session.settled()
        state = session.state

    assert results(state) == {
        "call-1": ToolFailure(
            error="tool 'slow' did not finish within its timeout of 20 ms (tool call 'call-1') and was stopped. "
            "It is safe to call again, perhaps with a smaller request",
            code="timeout",
        ),
        "call-2": ToolSuccess(content="here"),
    }
    assert texts(state)[-1] == ("assistant", "slow timed out, quick answered")
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    recorder.assert_replays_to(state)


async def test_a_tool_stopped_by_its_timeout_is_cancelled_inside_after_it_first_waited() -> None:
    """A call gets its deadline once it first waits (before that it cannot outlive one); the deadline's
    cancellation then reaches the tool's own code as it passes, however many times the tool waited before."""
    ended: list[str] = []

    @tool(timeout_ms=20)
    async def slow() -> str:
        """Waits a little, several times, then forever."""
        for _ in range(3):
            await anyio.sleep(0)
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            ended.append("cancelled")  # as the deadline passed (not closed later, when the call was dropped)
            raise
        return ""

    model = ScriptedModel([call_tools(("slow", {})), say("it timed out")])
    async with agent_on_the_wall_clock(model, [slow]).running() as session:
        session.send("go")
        with anyio.fail_after(10):
            await session.settled()
        state = session.state

    assert ended == ["cancelled"]
    failure = results(state)["call-1"]
    assert isinstance(failure, ToolFailure) and failure.code == "timeout"
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"


async def test_a_model_past_its_timeout_fails_retryable_and_the_retry_answers() -> None:
    calls: list[int] = []

    class Hanging:
        async def complete(self, context: LlmContext, on_text: TextSink) -> ModelReply:
            calls.append(len(calls) + 1)
            if len(calls) == 1:
                await anyio.sleep_forever()  # a provider that keeps the connection open and says nothing
            return say("finally")

    agent = agent_on_the_wall_clock(Hanging(), [], model_timeout_ms=20)
    agent.config = AgentConfig(max_turn_ms=None, llm_max_attempts=2, retry_base_ms=1)
    async with agent.running() as session:
        session.send("hello")
        with anyio.fail_after(10):
            state = await session.turn_done()

    assert calls == [1, 2]
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    assert texts(state) == [("user", "hello"), ("assistant", "finally")]


async def test_a_deadline_that_passes_after_its_call_finished_touches_nothing() -> None:
    @tool(timeout_ms=10)
    async def quick() -> str:
        """Answers at once."""
        return "here"

    model = ScriptedModel([call_tools(("quick", {})), say("one"), call_tools(("quick", {})), say("two")])
    # The tool returns without waiting, so its 10 ms cannot run out before it ends, however busy the machine. (A
    # model timeout that short could: the scripted model waits once per streamed chunk.)
    async with agent_on_the_wall_clock(model, [quick]).running() as session:
        session.send("first")
        await session.settled()
        await anyio.sleep(0.05)  # the first turn's tool deadlines pass now, their calls long finished
        with anyio.fail_after(5):
            await anyio.wait_all_tasks_blocked()  # and nothing is left running for them (no timer spinning)
        session.send("second")
        with anyio.fail_after(10):
            await session.settled()
        state = session.state

    assert list(results(state).values()) == [ToolSuccess(content="here")] * 2
    assert [text for role, text in texts(state) if role == "assistant"] == ["one", "two"]
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"


async def test_cancelling_the_turn_cancels_a_running_tool_and_is_not_taken_for_its_timeout() -> None:
    entered = anyio.Event()
    ended: list[str] = []

    @tool(timeout_ms=60_000)
    async def slow() -> str:
        """Takes a minute."""
        entered.set()
        try:
            await anyio.sleep_forever()
        finally:
            ended.append("cancelled")
        return ""

    model = ScriptedModel([call_tools(("slow", {}))])
    async with agent_on_the_wall_clock(model, [slow]).running() as session:
        session.send("go")
        await entered.wait()
        session.cancel("changed my mind")
        with anyio.fail_after(10):
            await session.settled()
        state = session.state

    assert ended == ["cancelled"]
    assert state.last_outcome is not None and state.last_outcome.kind == "cancelled"
    assert not any(isinstance(r, ToolFailure) and "timeout" in r.error for r in results(state).values())


@pytest.mark.parametrize("outer_timeout_ms", [None, 60_000])
async def test_a_tool_bounding_calls_of_its_own_goes_on_after_their_timeouts(outer_timeout_ms: int | None) -> None:
    """Only the agent's own call is its effect's last wait: the tool's own timed calls get scopes of their own."""

    @tool(timeout_ms=10)
    async def stuck() -> str:
        """Never answers."""
        await anyio.sleep_forever()
        return ""

    helpers = Toolbox([stuck])

    @tool
    async def outer() -> str:
        """Asks a stuck helper twice, waiting in between."""
        first = await helpers.run("stuck", "{}", "inner-1", SystemClock())
        await anyio.sleep(0)  # waits after its own call's deadline passed
        second = await helpers.run("stuck", "{}", "inner-2", SystemClock())
        return f"{type(first).__name__}, {type(second).__name__}"

    model = ScriptedModel([call_tools(("outer", {})), say("done")])
    tools = Toolbox([outer], limits=ToolLimits(timeout_ms=outer_timeout_ms))
    async with agent_on_the_wall_clock(model, tools).running() as session:  # type: ignore[arg-type]
        session.send("go")
        with anyio.fail_after(10):
            await session.settled()
        state = session.state

    assert results(state) == {"call-1": ToolSuccess(content="ToolFailure, ToolFailure")}
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"


async def test_a_hanging_turn_ends_at_its_deadline_on_the_wall_clock() -> None:
    # Under asyncio the deadline is a loop timer alone (an alarm); under trio an entry in the alarms' heap. Either way the
    # session counts as settled while the deadline waits, and the turn ends when it passes.
    entered = anyio.Event()

    @tool
    async def hang() -> str:
        """Waits, parked, on something that never answers."""
        entered.set()
        async with parked():
            await anyio.sleep_forever()
        return ""

    tools = Toolbox([hang], limits=ToolLimits(timeout_ms=None))
    model = ScriptedModel([call_tools(("hang", {})), say("unreached")])
    agent = Agent(model, tools=tools, config=AgentConfig(max_turn_ms=50), ids=SequentialIds(), session_id="s1")
    async with agent.running() as session:
        recorder = Recorder(session)
        sent = SystemClock().now_ms()
        session.send("go")
        await entered.wait()
        with anyio.fail_after(10):
            await session.settled()  # the tool and the deadline both wait, parked
            state = await session.turn_done()

    assert state.last_outcome is not None
    assert (state.last_outcome.kind, state.last_outcome.reason) == ("failed", "timeout")
    assert state.last_outcome.at >= sent + 50
    assert "call-tool:call-1" in recorder.canceled()
    recorder.assert_replays_to(state)
