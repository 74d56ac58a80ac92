"""open_session: durable sessions that resume after a crash without running anything twice that must not."""

from __future__ import annotations

import anyio
import pytest

from agent_core import AgentConfig, LlmContext, ToolFailure, ToolSuccess, phase, tag_of
from effects import (
    INTERRUPTED,
    EventStore,
    MachineEvent,
    ModelReply,
    StateUpdated,
    TextSink,
    load_state,
    open_session,
    replay_session,
    tool,
)
from effects.testing import ManualClock, ScriptedModel, SequentialIds, call_tools, say

START = 1_700_000_000_000


def logged(store: EventStore, session_id: str = "s1") -> list[str]:
    """The tags of the stored inputs, in order."""
    return [tag_of(record.decode()) for record in store.read(session_id)]


@pytest.mark.anyio
async def test_a_new_session_is_logged_before_anything_depends_on_it(store: EventStore) -> None:
    seen_by_tool: list[list[str]] = []

    @tool
    def lookup(tool_call_id: str) -> str:
        """Look at the store while running."""
        seen_by_tool.append([t for t in logged(store) if t.startswith("tool-call")])
        return "found"

    model = ScriptedModel([call_tools(("lookup", {}, "t1")), say("done")])
    clock = ManualClock(START)
    async with open_session(store, "s1", model, tools=[lookup], clock=clock, ids=SequentialIds()) as session:
        session.send("look it up")
        await session.settled()
        state = session.state

    assert seen_by_tool == [["tool-call-started"]]
    assert load_state(store, "s1") == state
    assert replay_session(store, "s1").state == state
    snapshot = store.load_snapshot("s1")
    assert snapshot is not None and snapshot.seq == store.session("s1").length


@pytest.mark.anyio
async def test_subscribers_see_only_states_whose_inputs_are_committed(store: EventStore) -> None:
    lagging: list[tuple[int, int]] = []

    def on_event(event: MachineEvent) -> None:
        if isinstance(event, StateUpdated):
            stored = store.session("s1").length
            if stored < event.state.step:
                lagging.append((event.state.step, stored))

    model = ScriptedModel([call_tools(("echo", {"text": "a"}), ("echo", {"text": "b"})), say("done")])

    @tool
    def echo(text: str) -> str:
        """Say it back."""
        return text

    async with open_session(store, "s1", model, tools=[echo], clock=ManualClock(START)) as session:
        session.subscribe(on_event)
        session.send("echo a and b")
        await session.settled()
        steps = session.state.step
    assert steps == store.session("s1").length == 10
    assert lagging == []


@pytest.mark.anyio
async def test_a_tool_that_was_running_at_a_crash_is_completed_as_interrupted_not_rerun(store: EventStore) -> None:
    runs: list[str] = []
    entered = anyio.Event()

    @tool
    async def pay(amount: int, tool_call_id: str) -> str:
        """Pay (not idempotent). The first run never returns: the process dies."""
        runs.append(tool_call_id)
        entered.set()
        await anyio.sleep_forever()
        return "paid"

    clock = ManualClock(START)
    first = ScriptedModel([call_tools(("pay", {"amount": 5}, "p1"))])
    async with open_session(store, "s1", first, tools=[pay], clock=clock) as session:
        session.send("pay 5")
        await entered.wait()

    clock.advance(60_000)
    second = ScriptedModel([say("The payment may or may not have gone through; please check.")])
    async with open_session(store, "s1", second, tools=[pay], clock=clock) as session:
        await session.settled()
        state = session.state

    assert runs == ["p1"]
    assert state.tool_calls["p1"].result == ToolFailure(error=INTERRUPTED)
    assert phase(state) == "idle"
    assert logged(store)[-5:] == [
        "tool-call-started",
        "tool-call-completed",
        "llm-message-started",
        "llm-message-completed",
        "re-act-observed",
    ]
    assert second.calls[0].entries[-1].content == INTERRUPTED  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_an_idempotent_tool_runs_again_with_the_same_id(store: EventStore) -> None:
    runs: list[str] = []
    entered = anyio.Event()

    @tool(idempotent=True)
    async def fetch(url: str, tool_call_id: str) -> str:
        """Fetch a page; safe to repeat. The first run dies with the process."""
        runs.append(tool_call_id)
        if len(runs) == 1:
            entered.set()
            await anyio.sleep_forever()
        return f"page {url}"

    clock = ManualClock(START)
    first = ScriptedModel([call_tools(("fetch", {"url": "a"}, "f1"))])
    async with open_session(store, "s1", first, tools=[fetch], clock=clock) as session:
        session.send("fetch a")
        await entered.wait()

    async with open_session(store, "s1", ScriptedModel([say("it says a")]), tools=[fetch], clock=clock) as session:
        await session.settled()
        state = session.state

    assert runs == ["f1", "f1"]
    assert state.tool_calls["f1"].result == ToolSuccess(content="page a")
    assert logged(store).count("tool-call-started") == 1


@pytest.mark.anyio
async def test_a_resumed_session_keeps_the_configuration_it_started_with(store: EventStore) -> None:
    clock = ManualClock(START)
    config = AgentConfig(system_prompt="be brief")
    async with open_session(store, "s1", ScriptedModel([say("hi")]), config=config, clock=clock) as s:
        s.send("hello")
        await s.settled()
    model = ScriptedModel([say("again")])
    other = AgentConfig(system_prompt="be verbose")
    async with open_session(store, "s1", model, config=other, clock=clock) as session:
        session.send("hello again")
        await session.settled()
        assert session.state.config == config
    assert model.calls[0].system_prompt == "be brief"


class StallingModel:
    """Streams the start of an answer, then never finishes: the process dies mid-stream."""

    async def complete(self, context: LlmContext, on_text: TextSink) -> ModelReply:
        on_text("The answer is")
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


@pytest.mark.anyio
async def test_a_message_left_streaming_is_completed_by_the_resumed_call(store: EventStore) -> None:
    clock, stalling = ManualClock(START), StallingModel()
    opened = anyio.Event()
    async with open_session(store, "s1", stalling, clock=clock) as session:
        # A state is published only after the input that made it is committed.
        def on_event(event: MachineEvent) -> None:
            if isinstance(event, StateUpdated) and len(event.state.messages) > 1:
                opened.set()

        session.subscribe(on_event)
        session.send("what is it?")
        await opened.wait()
    assert logged(store)[-1] == "llm-message-started"

    async with open_session(store, "s1", ScriptedModel([say("The answer is 42.")]), clock=clock) as session:
        await session.settled()
        state = session.state
    assert [(state.messages[i].role, state.messages[i].content) for i in range(len(state.messages))] == [
        ("user", "what is it?"),
        ("assistant", "The answer is 42."),
    ]
    assert logged(store)[-3:] == ["llm-message-started", "llm-message-completed", "re-act-observed"]
