"""How tools run inside a session: approval, worker threads, timeouts, the call id as idempotency key."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import anyio
import pytest

from agent_core import AgentInput, AgentState, ContextToolResult, ToolCallApproved, ToolFailure, ToolSuccess, tag_of
from effects import Agent, tool
from effects.testing import ManualClock, ScriptedModel, call_tools, say

from ._helpers import START, Recorder, make_agent, results, texts


@tool
async def lookup() -> str:
    """Look something up."""
    return "found"


@tool(requires_approval=True)
async def transfer(amount: int, tool_call_id: str) -> str:
    """Move money (needs a person's approval)."""
    return f"moved {amount} (key {tool_call_id})"


@pytest.mark.anyio
async def test_an_approval_gated_tool_waits_for_tool_call_approved() -> None:
    agent, _, _ = make_agent([call_tools(("transfer", {"amount": 5})), say("done")], tools=[transfer])
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("move 5")
        await session.settled()
        assert session.phase == "awaiting-approval"
        assert session.state.tool_calls["call-1"].status == "awaiting-approval"
        assert not any(key.startswith("call-tool") for key in recorder.started())
        session.approve("call-1")
        await session.settled()
        state = session.state

    assert results(state) == {"call-1": ToolSuccess(content="moved 5 (key call-1)")}
    assert texts(state)[-1] == ("assistant", "done")
    recorder.assert_replays_to(state)


@pytest.mark.anyio
async def test_a_denied_call_tells_the_model_why() -> None:
    agent, model, _ = make_agent([call_tools(("transfer", {"amount": 500})), say("ok, I will not")], tools=[transfer])
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("move 500")
        await session.settled()
        session.deny("call-1", "too much")
        await session.settled()
        state = session.state

    assert results(state) == {"call-1": ToolFailure(error="denied by the user: too much")}
    seen = [e for e in model.calls[-1].entries if isinstance(e, ContextToolResult)]
    assert [(e.content, e.is_error) for e in seen] == [("denied by the user: too much", True)]
    recorder.assert_replays_to(state)


class Batches:
    """A journal keeping the tags of each batch it is given (each batch is one commit)."""

    def __init__(self) -> None:
        self.tags: list[list[str]] = []

    def append(self, inputs: Sequence[AgentInput], states: Sequence[AgentState], /) -> None:
        self.tags.append([tag_of(inp) for inp in inputs])


@pytest.mark.anyio
async def test_a_call_starts_in_the_commit_that_makes_it_runnable() -> None:
    """The observation asking for calls, or the approval of one, is committed with ``tool-call-started``."""
    journal = Batches()
    script = [call_tools(("transfer", {"amount": 5}), ("lookup", {})), say("done")]
    agent = Agent(ScriptedModel(script), tools=[transfer, lookup], clock=ManualClock(START), journal=journal)
    async with agent.running() as session:
        session.send("move 5")
        await session.settled()
        assert ["re-act-observed", "tool-call-started"] in journal.tags  # lookup starts at once
        session.approve("call-1")
        await session.settled()
    assert ["tool-call-approved", "tool-call-started"] in journal.tags
    assert sum(batch.count("tool-call-started") for batch in journal.tags) == 2


@pytest.mark.anyio
async def test_deciding_on_a_call_that_needs_no_decision_is_rejected_not_lost() -> None:
    @tool
    async def harmless() -> str:
        """Needs no approval."""
        return "ok"

    agent, _, _ = make_agent([call_tools(("harmless", {})), say("hello")], tools=[harmless])
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("hi")
        await session.settled()
        before = session.state
        session.approve("call-1")
        await session.settled()
        assert session.state is before

    [(refused, rejection)] = recorder.rejected
    assert isinstance(refused, ToolCallApproved)
    assert rejection.code == "approval-not-required"
    assert (
        rejection.message
        == "tool call 'call-1' (harmless) does not require approval; expected a call awaiting approval"
    )


@pytest.mark.anyio
async def test_sync_tools_run_in_a_worker_thread() -> None:
    threads: list[int] = []

    @tool
    def where() -> str:
        """Which thread runs me."""
        threads.append(threading.get_ident())
        return "here"

    agent, _, _ = make_agent([call_tools(("where", {}), ("where", {})), say("ok")], tools=[where])
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("where?")
        await session.settled()
        state = session.state

    assert len(threads) == 2 and threading.get_ident() not in threads
    assert results(state) == {"call-1": ToolSuccess(content="here"), "call-2": ToolSuccess(content="here")}
    recorder.assert_replays_to(state)


@pytest.mark.anyio
async def test_a_tool_past_its_timeout_is_stopped_and_the_model_told() -> None:
    entered = anyio.Event()

    @tool(timeout_ms=5000, idempotent=True)
    async def slow() -> str:
        """Takes forever."""
        entered.set()
        await anyio.sleep_forever()
        return ""

    agent, _model, clock = make_agent([call_tools(("slow", {})), say("it timed out")], tools=[slow])
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("try it")
        await entered.wait()
        clock.advance(5000)
        await session.settled()
        state = session.state

    assert results(state) == {
        "call-1": ToolFailure(
            error="tool 'slow' did not finish within its timeout of 5000 ms (tool call 'call-1') and was stopped. "
            "It is safe to call again, perhaps with a smaller request",
            code="timeout",
        )
    }
    assert texts(state)[-1] == ("assistant", "it timed out")
    recorder.assert_replays_to(state)
