"""A journal sees every input before anything depends on it; a session resumes from its folded log."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import anyio
import pytest

from agent_core import AgentInput, AgentState, ToolCallStarted, ToolSuccess, replay, tag_of
from effects import Agent, RandomIds, tool
from effects.testing import ManualClock, ScriptedModel, SequentialIds, call_tools, say

from ._helpers import START, Recorder, results, texts


class ListJournal:
    """Keeps the accepted inputs in memory, and checks that the states it gets are their fold."""

    def __init__(self) -> None:
        self.inputs: list[AgentInput] = []

    def append(self, inputs: Sequence[AgentInput], states: Sequence[AgentState], /) -> None:
        self.inputs.extend(inputs)
        assert len(states) == len(inputs) and states[-1] == replay(self.inputs)


@pytest.mark.anyio
async def test_a_tool_runs_only_once_its_start_is_in_the_journal() -> None:
    journal = ListJournal()
    seen_at_run: list[list[str]] = []

    @tool
    async def probe(tool_call_id: str) -> str:
        """Look at the journal."""
        seen_at_run.append([tag_of(i) for i in journal.inputs if getattr(i, "tool_call_id", "") == tool_call_id])
        return "ok"

    agent = Agent(
        ScriptedModel([call_tools(("probe", {})), say("done")]),
        tools=[probe],
        clock=ManualClock(START),
        ids=SequentialIds(),
        journal=journal,
    )
    async with agent.running() as session:
        session.send("probe")
        await session.settled()
        state = session.state

    assert seen_at_run == [["tool-call-started"]]
    assert replay(journal.inputs) == state


@pytest.mark.anyio
async def test_a_session_resumes_from_its_log_and_completes_a_call_that_was_running() -> None:
    journal = ListJournal()
    entered = anyio.Event()
    runs: list[str] = []

    @tool(idempotent=True)
    async def fetch(url: str, tool_call_id: str) -> str:
        """Fetch a page (the first run never finishes: the process dies)."""
        runs.append(tool_call_id)
        if len(runs) == 1:
            entered.set()
            await anyio.sleep_forever()
        return f"contents of {url}"

    clock = ManualClock(START)
    first = Agent(ScriptedModel([call_tools(("fetch", {"url": "a"}))]), tools=[fetch], clock=clock, journal=journal)
    async with first.running() as session:
        session.send("fetch a")
        await entered.wait()
    # The "crash": the block ended while the tool ran. Only the journal survives.
    folded = replay(journal.inputs)
    assert folded.tool_calls["call-1"].status == "running"

    clock.advance(10_000)
    resumed = Agent(
        ScriptedModel([say("page a says hello")]), tools=[fetch], clock=clock, journal=journal, initial=folded
    )
    async with resumed.running() as session:
        recorder = Recorder(session)
        await session.settled()
        state = session.state

    assert runs == ["call-1", "call-1"]  # the same id: the tool can use it as an idempotency key
    assert not recorder.rejected  # tool-call-started was not sent again
    assert [i for i in recorder.inputs if isinstance(i, ToolCallStarted)] == []
    assert results(state) == {"call-1": ToolSuccess(content="contents of a")}
    assert texts(state)[-1] == ("assistant", "page a says hello")
    assert replay(journal.inputs) == state


@pytest.mark.anyio
async def test_a_resumed_call_still_pending_starts_once_whatever_batch_comes_before_its_effect_runs() -> None:
    """The effect of a call pending at resume starts it itself; a batch applied before the effect's first step
    (a message sent at once; trio runs the ready tasks in random order) must not start it in its place."""
    runs: list[str] = []

    @tool
    async def look(tool_call_id: str) -> str:
        """Look."""
        runs.append(tool_call_id)
        return "seen"

    journal = ListJournal()
    first = Agent(ScriptedModel([call_tools(("look", {})), say("done")]), tools=[look], journal=journal)
    async with first.running() as session:
        session.send("look")
        await session.settled()
    observed = next(n for n, i in enumerate(journal.inputs) if tag_of(i) == "re-act-observed")
    pending = replay(journal.inputs[: observed + 1])  # the process died before the call's start was committed
    assert pending.tool_calls["call-1"].status == "pending"
    for _ in range(12):
        runs.clear()
        model = ScriptedModel([say("done"), say("and that too")])
        async with Agent(model, tools=[look], initial=pending).running() as session:
            recorder = Recorder(session)
            session.send("and look again")
            with anyio.fail_after(10):
                await session.settled()
            state = session.state
        assert runs == ["call-1"]
        assert not recorder.rejected
        assert results(state) == {"call-1": ToolSuccess(content="seen")}


@pytest.mark.anyio
async def test_a_resumed_session_never_reuses_a_message_id() -> None:
    clock = ManualClock(START)
    first = Agent(ScriptedModel([say("one")]), clock=clock, ids=SequentialIds(), session_id="s1")
    async with first.running() as session:
        session.send("first")
        await session.settled()
        folded = session.state

    # A fresh id source starts counting again: the ids the log already holds are skipped.
    resumed = Agent(ScriptedModel([say("two")]), clock=clock, ids=SequentialIds(), initial=folded)
    async with resumed.running() as session:
        second = session.send("second")
        await session.settled()
        state = session.state

    assert second == "user-2"
    assert [state.messages[i].id for i in range(len(state.messages))] == [
        "user-1",
        "assistant-1",
        "user-2",
        "assistant-2",
    ]


def test_id_sources() -> None:
    sequential = SequentialIds()
    assert [sequential.new_id(k) for k in ("user", "user", "assistant")] == ["user-1", "user-2", "assistant-1"]
    randoms = RandomIds()
    made = {randoms.new_id("user") for _ in range(100)}
    assert len(made) == 100
    assert all(i.startswith("user-") and len(i) == len("user-") + 32 for i in made)
    # Each is the hex of a version 4 UUID (RFC 4122's variant), as uuid.uuid4().hex would give.
    parsed = [uuid.UUID(i.removeprefix("user-")) for i in made]
    assert all(u.version == 4 and u.variant == uuid.RFC_4122 for u in parsed)
    assert {u.hex for u in parsed} == {i.removeprefix("user-") for i in made}
