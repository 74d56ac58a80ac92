"""What happens when something fails, per effect kind: visible in the turn's outcome, or raised to the
caller. Never a session that looks settled while it is stuck. asyncio and trio."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import pytest

from agent_core import AgentConfig, AgentState, LlmContext, TurnOutcome
from effects import Agent, MachineEvent, ModelReply, StateUpdated, TextDelta, TextSink, tool
from effects.testing import ManualClock, SequentialIds, call_tools, fail, say

from ._helpers import START, Recorder, make_agent

pytestmark = pytest.mark.anyio


async def collect(wait: Callable[[], Awaitable[AgentState]], into: list[AgentState]) -> None:
    """Await ``wait()`` in a task of its own and keep what it returns."""
    into.append(await wait())


class BrokenClock(ManualClock):
    """A clock whose timers raise: a bug in the infrastructure, not something the model should see."""

    async def sleep_until(self, ms: int) -> None:
        raise RuntimeError("the clock's timer is broken")


async def test_a_clock_that_raises_stops_the_session_with_its_error() -> None:
    agent = Agent(
        make_agent([fail("rate limited", retryable=True), say("never")])[1],
        clock=BrokenClock(START),
        ids=SequentialIds(),
        config=AgentConfig(max_turn_ms=None),  # the retry's timer is the first to break
    )
    states: list[str] = []
    with pytest.raises(RuntimeError, match="the clock's timer is broken") as caught:
        async with agent.running() as session:
            session.subscribe(lambda e: states.append(session.phase) if isinstance(e, StateUpdated) else None)
            session.send("hello")
            await session.settled()
            raise AssertionError("not reached: settled() must not return while the session is stuck")
    assert caught.value.__notes__[0].startswith("raised by effect 'wait-until:retry:")
    assert states[-1] == "retrying"  # where it was when the timer broke


async def test_a_model_adapter_bug_ends_the_turn_with_the_error_as_its_reason() -> None:
    class Broken:
        async def complete(self, context: LlmContext, on_text: TextSink) -> ModelReply:
            raise TypeError("unsupported operand type(s) for +: 'int' and 'NoneType'")

    agent, _, _ = make_agent([])
    agent.model = Broken()
    async with agent.running() as session:
        session.send("hello")
        state = await session.turn_done()
    assert state.last_outcome == TurnOutcome(
        kind="failed",
        reason="llm-error",
        detail="model call not retryable: TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'",
        turn=1,
        at=START,
    )


async def test_a_subscriber_raising_on_streamed_text_is_not_blamed_on_the_model() -> None:
    agent, _, _ = make_agent([say("some streamed words")])

    def fussy(event: MachineEvent) -> None:
        if isinstance(event, TextDelta):
            raise LookupError("the display broke")

    with pytest.raises(LookupError, match="the display broke"):
        async with agent.running() as session:
            session.subscribe(fussy)
            session.send("hello")
            await session.turn_done()


async def test_an_assertion_in_a_test_subscriber_fails_the_test() -> None:
    """The recorder of the scenario tests checks invariants in a subscriber: a failing check must surface."""

    @tool
    async def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    agent, _, _ = make_agent([call_tools(("add", {"a": 1, "b": 2})), say("3")], tools=[add])
    with pytest.raises(AssertionError, match="invariant broken on purpose"):
        async with agent.running() as session:
            recorder = Recorder(session)
            recorder.check = lambda state: _fail_on_tool_call(state)
            session.send("1+2?")
            await session.turn_done()


def _fail_on_tool_call(state: object) -> None:
    if getattr(state, "tool_calls", None):
        raise AssertionError("invariant broken on purpose")


async def test_turn_done_waits_out_a_retry_backoff_and_returns_the_finished_turn() -> None:
    agent, _, clock = make_agent([fail("overloaded", retryable=True), say("hi")])
    async with agent.running() as session, anyio.create_task_group() as tg:
        done: list[AgentState] = []
        session.send("hello")
        tg.start_soon(collect, session.turn_done, done)
        await session.settled()  # only the backoff timer is left: settled, but the turn is not done
        assert session.phase == "retrying" and done == []
        clock.advance(60_000)
    (state,) = done
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"


async def test_turn_done_returns_when_the_turn_waits_for_a_person() -> None:
    @tool(requires_approval=True)
    async def wipe() -> str:
        """Wipe everything."""
        return "wiped"

    agent, _, _ = make_agent([call_tools(("wipe", {})), say("done")], tools=[wipe])
    async with agent.running() as session:
        session.send("wipe it")
        state = await session.turn_done()
        assert session.phase == "awaiting-approval"
        assert state.turn is not None and state.turn.awaiting_ids
        session.approve(state.turn.awaiting_ids[0])
        state = await session.turn_done()
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"


async def test_a_model_call_that_never_answers_fails_retryable_after_the_model_timeout() -> None:
    calls: list[int] = []
    started = anyio.Event()

    class Hanging:
        async def complete(self, context: LlmContext, on_text: TextSink) -> ModelReply:
            calls.append(len(calls) + 1)
            if len(calls) == 1:
                started.set()
                await anyio.sleep_forever()  # a provider that keeps the connection open and says nothing
            return say("finally")

    agent, _, clock = make_agent([], llm_max_attempts=2, retry_base_ms=1000)
    agent.model = Hanging()
    agent.model_timeout_ms = 30_000
    async with agent.running() as session, anyio.create_task_group() as tg:
        done: list[AgentState] = []
        session.send("hello")
        tg.start_soon(collect, session.turn_done, done)
        await started.wait()
        clock.advance(30_000)  # the deadline: the call is cancelled, the failure retryable
        with anyio.fail_after(10):  # without the timeout the call would hang here
            await session.settled()
        assert session.phase == "retrying"
        clock.advance(60_000)
    (state,) = done
    assert calls == [1, 2]
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    assert [m.content for m in state.messages] == ["hello", "finally"]


async def test_a_message_longer_than_the_limit_is_refused_before_anything_is_sent() -> None:
    agent, _, _ = make_agent([say("hi")])
    async with agent.running() as session:
        with pytest.raises(ValueError) as caught:
            session.send("x" * 1_000_001)
        await session.settled()
        assert session.state.messages == ()
    assert str(caught.value) == (
        "a user message may have at most 1,000,000 characters, got 1,000,001; "
        "send a shorter message, or give the model a tool that reads the document"
    )
