"""Tools within limits: nothing runs forever, one agent's hanging tools never starve another's, huge
results are cut with a visible marker, and a cancellation inside a tool is the tool's failure."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import anyio
import anyio.from_thread
import pytest

from agent_core import AgentConfig, ToolCallCompleted, ToolFailure, ToolSuccess
from effects import Agent, Tool, Toolbox, ToolLimits, tool
from effects.testing import ManualClock, ScriptedModel, SequentialIds, call_tools, say

from ._helpers import START, Recorder, make_agent, results, texts

pytestmark = pytest.mark.anyio


def _agent(script: list[Any], tools: Toolbox, clock: ManualClock | None = None, **config: Any) -> Agent:
    clock = clock or ManualClock(START)
    return Agent(
        ScriptedModel(script),
        tools=tools,
        clock=clock,
        ids=SequentialIds(),
        session_id="s",
        config=AgentConfig(**config),
    )


def _forever(entered: anyio.Event, timeout_ms: int | None = None, name: str = "forever") -> Tool[[], Any]:
    """A tool that never returns (it sets ``entered`` when it starts)."""

    async def forever() -> str:
        """Never returns."""
        entered.set()
        await anyio.sleep_forever()
        return ""

    return tool(timeout_ms=timeout_ms, name=name)(forever)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_future_cancelled_by_something_else_fails_the_call_instead_of_leaving_it_running() -> None:
    pending: list[asyncio.Future[str]] = []
    entered = anyio.Event()

    @tool
    async def wait_for_reply() -> str:
        """Waits for a reply that something else may cancel."""
        future = asyncio.get_running_loop().create_future()
        pending.append(future)
        entered.set()
        return await future

    agent, _, _ = make_agent([call_tools(("wait_for_reply", {})), say("it was cancelled")], tools=[wait_for_reply])
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("wait")
        await entered.wait()
        pending[0].cancel()
        await session.settled()
        state = session.state

    assert results(state) == {
        "call-1": ToolFailure(
            error="tool 'wait_for_reply' failed (tool call 'call-1'): an operation it awaited was cancelled by "
            "something other than this session. Try again, or answer without this tool",
            code="cancelled",
        )
    }
    assert texts(state)[-1] == ("assistant", "it was cancelled")
    recorder.assert_replays_to(state)


async def test_a_tool_without_a_timeout_gets_the_default_one() -> None:
    entered = anyio.Event()
    forever = _forever(entered)

    agent, _, clock = make_agent([call_tools(("forever", {})), say("gave up")], tools=[forever])
    async with agent.running() as session:
        session.send("go")
        await entered.wait()
        clock.advance(ToolLimits().timeout_ms or 0)
        with anyio.fail_after(10):  # before: the call ran on forever
            await session.settled()
        state = session.state

    assert ToolLimits().timeout_ms == 120_000
    [failure] = results(state).values()
    assert isinstance(failure, ToolFailure)
    assert failure.error.startswith("tool 'forever' did not finish within its timeout of 120000 ms")


async def test_limits_without_a_default_timeout_let_a_tool_run_on() -> None:
    entered = anyio.Event()
    forever = _forever(entered)

    clock = ManualClock(START)
    toolbox = Toolbox([forever], limits=ToolLimits(timeout_ms=None))
    agent = _agent([call_tools(("forever", {}))], toolbox, clock, max_turn_ms=None)  # nor a turn deadline
    async with agent.running() as session:
        session.send("go")
        await entered.wait()
        clock.advance(10 * 24 * 3600 * 1000)
        await anyio.wait_all_tasks_blocked()
        assert session.state.tool_calls["call-1"].status == "running"
        assert clock.sleepers() == []


async def test_a_huge_result_is_cut_with_a_marker_giving_its_full_length() -> None:
    @tool
    def dump(size: int) -> str:
        """Returns ``size`` characters."""
        return "x" * size

    @tool
    def crash() -> str:
        """Fails with a long message."""
        raise RuntimeError("y" * 50)

    toolbox = Toolbox([dump, crash], limits=ToolLimits(max_result_chars=20))
    script = [call_tools(("dump", {"size": 20}), ("dump", {"size": 20_000_000}), ("crash", {})), say("done")]
    async with _agent(script, toolbox).running() as session:
        session.send("dump it")
        await session.settled()
        state = session.state

    found = results(state)
    assert found["call-1"] == ToolSuccess(content="x" * 20)
    assert found["call-2"] == ToolSuccess(
        content="x" * 20 + "\n\n[tool result truncated: showing the first 20 of 20000000 characters]"
    )
    failure = found["call-3"]
    assert isinstance(failure, ToolFailure)
    assert failure.error.endswith("characters]") and len(failure.error) < 120
    assert ToolLimits().max_result_chars == 100_000


async def test_hanging_sync_tools_of_one_agent_leave_threads_for_another_agents_tools() -> None:
    release = threading.Event()
    running = 0
    most = 0
    lock = threading.Lock()
    busy = anyio.Event()

    @tool
    def hang(n: int) -> str:
        """Blocks its thread until released."""
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        if running == ToolLimits().max_threads:
            anyio.from_thread.run_sync(busy.set)
        release.wait(30)
        return str(n)

    @tool
    def ping() -> str:
        """Answers at once."""
        return "pong"

    hanging = _agent([call_tools(*[("hang", {"n": n}) for n in range(40)])], Toolbox([hang]))
    other = _agent([call_tools(("ping", {})), say("got pong")], Toolbox([ping]))
    try:
        async with hanging.running() as stuck, other.running() as session:
            stuck.send("hang forty times")
            await busy.wait()
            session.send("ping")
            with anyio.fail_after(10):  # before: the shared pool of 40 threads is taken, ping never runs
                await session.settled()
            assert results(session.state) == {"call-1": ToolSuccess(content="pong")}
            assert texts(session.state)[-1] == ("assistant", "got pong")
            assert most == ToolLimits().max_threads == 8
    finally:
        release.set()


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match=r"ToolLimits: expected a positive int or None for timeout_ms, got 0"):
        ToolLimits(timeout_ms=0)
    with pytest.raises(ValueError, match=r"ToolLimits: expected a positive int for max_threads, got -1"):
        ToolLimits(max_threads=-1)


def test_a_toolbox_built_from_a_toolbox_keeps_its_limits() -> None:
    limits = ToolLimits(max_result_chars=5)
    assert Toolbox(Toolbox([], limits=limits)).limits is limits
    assert Toolbox([]).limits == ToolLimits()


async def test_on_the_wall_clock_a_timeout_cancels_the_call_without_a_second_task() -> None:
    forever = _forever(anyio.Event(), timeout_ms=50)

    agent = Agent(ScriptedModel([call_tools(("forever", {})), say("gave up")]), tools=[forever], ids=SequentialIds())
    async with agent.running() as session:
        session.send("go")
        with anyio.fail_after(10):
            await session.settled()  # the running tool is not parked: settled waits for its timeout
        state = session.state
    [failure] = results(state).values()
    assert isinstance(failure, ToolFailure)
    assert failure.error.startswith("tool 'forever' did not finish within its timeout of 50 ms")


class _PlainClock:
    """A clock with only what the ``Clock`` protocol asks for (no deadline scopes)."""

    def __init__(self, inner: ManualClock) -> None:
        self.inner = inner

    def now_ms(self) -> int:
        return self.inner.now_ms()

    async def sleep_until(self, ms: int) -> None:
        await self.inner.sleep_until(ms)


async def test_a_clock_with_only_sleep_until_still_times_tools_out() -> None:
    entered = anyio.Event()
    forever = _forever(entered, timeout_ms=5000)

    manual = ManualClock(START)
    model = ScriptedModel([call_tools(("forever", {})), say("gave up")])
    agent = Agent(model, tools=[forever], clock=_PlainClock(manual), ids=SequentialIds())
    async with agent.running() as session:
        session.send("go")
        await entered.wait()
        await anyio.wait_all_tasks_blocked()
        manual.advance(5000)
        with anyio.fail_after(10):
            await session.settled()
        state = session.state
    [failure] = results(state).values()
    assert isinstance(failure, ToolFailure)
    assert failure.error.startswith("tool 'forever' did not finish within its timeout of 5000 ms")


async def test_on_the_wall_clock_deadlines_of_parallel_calls_fire_each_at_its_own_time() -> None:
    """Calls started together: each fails at its own deadline, not before, whatever the order their deadlines
    were set in, and the instant call, whose deadline is the earliest, succeeds without disturbing them."""
    slow, fast = _forever(anyio.Event(), 400, name="slow"), _forever(anyio.Event(), 20, name="fast")

    @tool(timeout_ms=10)
    async def instant() -> str:
        """Answers at once."""
        return "now"

    calls = call_tools(("instant", {}), ("slow", {}), ("fast", {}))
    agent = Agent(ScriptedModel([calls, say("done")]), tools=[slow, fast, instant], ids=SequentialIds())
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("go")
        with anyio.fail_after(10):
            await session.settled()
        state = session.state
    completed = [i.tool_call_id for i in recorder.inputs if isinstance(i, ToolCallCompleted)]
    assert completed == ["call-1", "call-3", "call-2"]
    outcome = results(state)
    assert outcome["call-1"] == ToolSuccess(content="now")
    for call_id, name, timeout in (("call-2", "slow", 400), ("call-3", "fast", 20)):
        failure = outcome[call_id]
        assert isinstance(failure, ToolFailure)
        assert failure.error.startswith(f"tool '{name}' did not finish within its timeout of {timeout} ms")


async def test_on_the_wall_clock_cancelling_the_turn_cancels_a_call_waiting_for_its_deadline() -> None:
    entered = anyio.Event()
    forever = _forever(entered, timeout_ms=60_000)

    agent = Agent(ScriptedModel([call_tools(("forever", {})), say("never")]), tools=[forever], ids=SequentialIds())
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("go")
        await entered.wait()
        session.cancel("enough")
        with anyio.fail_after(10):
            await session.settled()
        state = session.state
    assert "tool-call-completed" not in recorder.tags()  # cancelled, not timed out
    why = "the turn was cancelled (enough)"
    assert results(state) == {
        "call-1": ToolFailure(error=f"interrupted: {why} while the tool was running; its outcome is unknown")
    }
