"""Cancelling a turn while a tool runs, and user messages arriving while tools run."""

from __future__ import annotations

import threading

import anyio
import anyio.to_thread
import pytest

from agent_core import ContextMessage, ToolFailure, ToolSuccess, TurnOutcome, state_hash
from effects import tool
from effects.testing import call_tools, say

from ._helpers import START, Recorder, make_agent, results, texts


class Gate:
    """A tool that waits until released, and records whether it was cancelled."""

    def __init__(self) -> None:
        self.entered = anyio.Event()
        self.release = anyio.Event()
        self.cancelled = False

    async def __call__(self, query: str) -> str:
        """Wait at the gate, then answer."""
        self.entered.set()
        try:
            await self.release.wait()
        except anyio.get_cancelled_exc_class():
            self.cancelled = True
            raise
        return f"found {query}"


@pytest.mark.anyio
async def test_cancelling_a_turn_cancels_the_running_tool_and_closes_its_calls() -> None:
    gate = Gate()
    agent, _, _ = make_agent(
        [call_tools(("wait", {"query": "a"}), ("wait", {"query": "b"})), say("never said")],
        tools=[tool(name="wait")(gate.__call__)],
    )
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("look both up")
        await gate.entered.wait()
        session.cancel("changed my mind")
        await session.settled()
        state = session.state
        gate.release.set()  # too late: the tool task is gone
        await session.settled()
        assert session.state is state

    assert gate.cancelled
    assert sorted(recorder.canceled()) == ["call-tool:call-1", "call-tool:call-2"]
    assert state.last_outcome == TurnOutcome(
        kind="cancelled", reason="cancelled", detail="changed my mind", turn=1, at=START
    )
    why = "the turn was cancelled (changed my mind)"
    assert results(state) == {
        "call-1": ToolFailure(error=f"interrupted: {why} while the tool was running; its outcome is unknown"),
        "call-2": ToolFailure(error=f"interrupted: {why} while the tool was running; its outcome is unknown"),
    }
    assert "tool-call-completed" not in recorder.tags()
    recorder.assert_replays_to(state)


@pytest.mark.anyio
async def test_the_late_result_of_a_cancelled_sync_tool_is_dropped() -> None:
    entered, release, finished = threading.Event(), threading.Event(), threading.Event()

    @tool
    def blocking(n: int) -> int:
        """Block until released."""
        entered.set()
        release.wait()
        finished.set()
        return n

    agent, _, _ = make_agent([call_tools(("blocking", {"n": 1})), say("never said")], tools=[blocking])
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("go")
        await anyio.to_thread.run_sync(entered.wait)
        session.cancel("stop")
        await session.settled()
        before = state_hash(session.state)
        release.set()
        await anyio.to_thread.run_sync(finished.wait)
        await session.settled()
        state = session.state

    assert state_hash(state) == before
    assert "tool-call-completed" not in recorder.tags()
    assert state.tool_calls["call-1"].result == ToolFailure(
        error="interrupted: the turn was cancelled (stop) while the tool was running; its outcome is unknown"
    )
    recorder.assert_replays_to(state)


@pytest.mark.anyio
async def test_a_user_message_while_tools_run_joins_the_turn_without_stopping_them() -> None:
    gate = Gate()
    agent, model, _ = make_agent(
        [call_tools(("wait", {"query": "a"})), say("Found a, and noted that you are in a hurry.")],
        tools=[tool(name="wait")(gate.__call__)],
    )
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("look up a")
        await gate.entered.wait()
        session.send("please hurry")
        await anyio.wait_all_tasks_blocked()
        assert session.phase == "acting"
        gate.release.set()
        await session.settled()
        state = session.state

    assert not gate.cancelled
    assert recorder.canceled() == []
    assert results(state) == {"call-1": ToolSuccess(content="found a")}
    seen = [e.content for e in model.calls[-1].entries if isinstance(e, ContextMessage)]
    assert seen == ["look up a", "please hurry"]
    assert texts(state)[-1] == ("assistant", "Found a, and noted that you are in a hurry.")
    recorder.assert_replays_to(state)


@pytest.mark.anyio
async def test_under_the_queue_policy_a_message_waits_for_the_next_turn() -> None:
    gate = Gate()
    agent, _model, _ = make_agent(
        [call_tools(("wait", {"query": "a"})), say("found a"), say("second turn")],
        tools=[tool(name="wait")(gate.__call__)],
        user_message_policy="queue",
    )
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("look up a")
        await gate.entered.wait()
        session.send("then this")
        gate.release.set()
        await session.settled()
        state = session.state

    assert texts(state) == [
        ("user", "look up a"),
        ("assistant", "found a"),
        ("user", "then this"),
        ("assistant", "second turn"),
    ]
    assert state.turns == 2
    recorder.assert_replays_to(state)


@pytest.mark.anyio
async def test_a_user_message_while_the_model_streams_restarts_the_call_with_the_new_context() -> None:
    agent, model, _ = make_agent([say("a long answer that will be superseded"), say("short answer")])
    async with agent.running() as session:
        recorder = Recorder(session)

        def interrupt_once(event: object) -> None:
            if type(event).__name__ == "TextDelta" and len(recorder.deltas) == 1:
                session.send("actually, be brief")

        session.subscribe(interrupt_once)
        session.send("tell me everything")
        await session.settled()
        state = session.state

    assert recorder.canceled() == ["call-llm:1:0:0"]
    assert [m for m in texts(state) if m[0] == "user"] == [
        ("user", "tell me everything"),
        ("user", "actually, be brief"),
    ]
    assert texts(state)[-1] == ("assistant", "a long answer that will be superseded")
    assert len(model.calls) == 2
    recorder.assert_replays_to(state)
