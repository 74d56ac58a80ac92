"""A tool that suspends its call: a question for a person (answered, the call runs again), a remote task
(its id logged before the call follows it; after a crash the call follows it again, never calls again)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio
import pytest

from agent_core import AgentInput, AgentState, Phase, ToolFailure, ToolSuccess, tag_of
from effects import (
    Agent,
    InputRequired,
    MemoryStore,
    Resumption,
    TaskCreated,
    Tool,
    ToolOutcome,
    load_state,
    open_session,
    session_spans,
    timeline,
)
from effects.testing import ManualClock, ScriptedModel, SequentialIds, call_tools, say

from ._helpers import START, Recorder, results

QUESTION = '{"seat":{"method":"elicitation/create","params":{"message":"Window or aisle?"}}}'


async def book(flight: str) -> str:
    """Book a seat on a flight."""
    raise AssertionError("attempt() is overridden")


class Booking(Tool[..., Any]):
    """Asks which seat, then books it with the answer; records every attempt's resumption."""

    def __init__(self) -> None:
        super().__init__(book)
        self.attempts: list[Resumption | None] = []

    async def attempt(
        self, arguments: str, tool_call_id: str, resumption: Resumption | None = None, *, threads: Any = None
    ) -> ToolOutcome:
        self.attempts.append(resumption)
        if resumption is None:
            return InputRequired(requests=QUESTION, request_state="flight=LH1")
        return ToolSuccess(content=f"booked {resumption.request_state} with {resumption.input_responses}")


class Remote(Tool[..., Any]):
    """Hands the work to a remote task; following it waits for ``done`` (set by the test)."""

    def __init__(self) -> None:
        super().__init__(book, name="remote")
        self.attempts: list[Resumption | None] = []
        self.following = anyio.Event()
        self.done = anyio.Event()

    async def attempt(
        self, arguments: str, tool_call_id: str, resumption: Resumption | None = None, *, threads: Any = None
    ) -> ToolOutcome:
        self.attempts.append(resumption)
        if resumption is None:
            return TaskCreated(task_id="task-42")
        self.following.set()
        await self.done.wait()
        return ToolSuccess(content=f"task {resumption.task_id} finished")


def agent(tools: Sequence[Tool[..., Any]], script: list[Any], journal: Any = None, initial: Any = None) -> Agent:
    return Agent(
        ScriptedModel(script),
        tools=tools,
        clock=ManualClock(START),
        ids=SequentialIds(),
        session_id="s1",
        journal=journal,
        initial=initial,
    )


class ListJournal:
    def __init__(self) -> None:
        self.inputs: list[AgentInput] = []

    def append(self, inputs: Sequence[AgentInput], states: Sequence[AgentState], /) -> None:
        self.inputs.extend(inputs)


@pytest.mark.anyio
async def test_a_question_waits_for_a_person_and_the_call_runs_again_with_the_answers() -> None:
    booking = Booking()
    script = [call_tools(("book", {"flight": "LH1"})), say("Booked.")]
    async with agent([booking], script).running() as session:
        recorder = Recorder(session)
        session.send("book me on LH1")
        state = await session.turn_done()
        assert session.phase is Phase.AWAITING_APPROVAL
        record = state.tool_calls["call-1"]
        assert (record.status, record.input_requests, record.request_state) == (
            "awaiting-input",
            QUESTION,
            "flight=LH1",
        )

        session.answer("call-1", {"seat": {"action": "accept", "content": {"seat": "window"}}})
        state = await session.turn_done()

    answers = '{"seat":{"action":"accept","content":{"seat":"window"}}}'
    assert booking.attempts == [None, Resumption(input_responses=answers, request_state="flight=LH1")]
    assert results(state) == {"call-1": ToolSuccess(content=f"booked flight=LH1 with {answers}")}
    assert recorder.tags()[3:] == [
        "tool-call-started",
        "tool-call-input-required",
        "tool-call-input-provided",
        "tool-call-started",
        "tool-call-completed",
        "llm-message-started",
        "llm-message-completed",
        "re-act-observed",
    ]


@pytest.mark.anyio
async def test_answers_that_are_not_json_are_refused_and_nothing_is_sent() -> None:
    async with agent([Booking()], [call_tools(("book", {"flight": "LH1"}))]).running() as session:
        session.send("book")
        await session.turn_done()
        with pytest.raises(ValueError, match="expected answers that are JSON values"):
            session.answer("call-1", {"seat": object()})
        assert session.state.tool_calls["call-1"].status == "awaiting-input"


@pytest.mark.anyio
async def test_a_remote_task_is_logged_before_the_call_follows_it() -> None:
    remote = Remote()
    journal = ListJournal()
    async with agent([remote], [call_tools(("remote", {"flight": "x"})), say("done")], journal).running() as session:
        session.send("go")
        await remote.following.wait()
        assert [tag_of(i) for i in journal.inputs][-1] == "tool-call-task-created"  # durable before following
        remote.done.set()
        state = await session.turn_done()
    assert remote.attempts == [None, Resumption(task_id="task-42")]
    assert state.tool_calls["call-1"].task_id == "task-42"
    assert results(state) == {"call-1": ToolSuccess(content="task task-42 finished")}


@pytest.mark.anyio
async def test_after_a_crash_a_call_follows_its_task_and_is_never_sent_again() -> None:
    store = MemoryStore()
    first = Remote()
    clock = ManualClock(START)
    script = ScriptedModel([call_tools(("remote", {"flight": "x"}))])
    async with open_session(store, "s1", script, tools=[first], clock=clock, ids=SequentialIds()) as session:
        session.send("go")
        await first.following.wait()
    # The "crash": the block ended while the call followed its task. Only the store survives.
    folded = load_state(store, "s1")
    assert (folded.tool_calls["call-1"].status, folded.tool_calls["call-1"].task_id) == ("running", "task-42")

    second = Remote()
    second.done.set()
    script = ScriptedModel([say("the task finished")])
    async with open_session(store, "s1", script, tools=[second], clock=clock, ids=SequentialIds()) as session:
        state = await session.turn_done()
    assert second.attempts == [Resumption(task_id="task-42")]  # followed, not called, not given up as interrupted
    assert results(state) == {"call-1": ToolSuccess(content="task task-42 finished")}


@pytest.mark.anyio
async def test_a_plain_tool_asked_to_resume_fails_saying_so() -> None:
    @Tool
    async def plain() -> str:
        """Plain."""
        return "ran"

    outcome = await plain.attempt("{}", "c1", Resumption(task_id="t"))
    assert outcome == ToolFailure(
        error="tool 'plain' cannot resume a call (tool call 'c1'): it asks no questions and follows no remote task; "
        "call it again"
    )


@pytest.mark.anyio
async def test_each_attempt_is_an_effect_of_its_own_in_the_timeline_and_the_spans() -> None:
    store = MemoryStore()
    script = ScriptedModel([call_tools(("book", {"flight": "LH1"})), say("Booked.")])
    clock = ManualClock(START)
    async with open_session(store, "s1", script, tools=[Booking()], clock=clock, ids=SequentialIds()) as session:
        session.send("book me on LH1")
        await session.turn_done()
        session.answer("call-1", {"seat": {"action": "accept", "content": {"seat": "window"}}})
        await session.turn_done()

    entries = {entry.type: entry for entry in timeline(store, "s1")}
    # The question ends the first attempt (its outcome, not a cancellation); the answer starts another.
    asked = entries["tool-call-input-required"]
    assert asked.completed == ("call-tool:call-1",) and not any(k.startswith("call-tool:") for k in asked.cancelled)
    assert "call-tool:call-1#1" in entries["tool-call-input-provided"].started
    assert entries["tool-call-completed"].completed == ("call-tool:call-1#1",)
    tools = [span for span in session_spans(store, "s1") if span.name.startswith("execute_tool")]
    assert [span.attributes["gen_ai.tool.call.id"] for span in tools] == ["call-1", "call-1"]
