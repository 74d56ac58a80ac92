"""Whole sessions through ``Agent``: parallel tool calls over several turns, a failure recovered from,
a model that asks for more context, streaming text, provider ids made unique."""

from __future__ import annotations

import anyio
import pytest

from agent_core import (
    ContextMessage,
    ContextToolCalls,
    ContextToolResult,
    LlmContext,
    ToolFailure,
    ToolSuccess,
    TurnOutcome,
)
from effects import ModelReply, tool
from effects.testing import call_tools, load_older_messages, load_tool_call_results, say

from ._helpers import START, Recorder, make_agent, results, texts


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def divide(a: float, b: float) -> float:
    """Divide a by b."""
    return a / b


def last_results(context: LlmContext) -> list[str]:
    return [e.content for e in context.entries if isinstance(e, ContextToolResult)]


@pytest.mark.anyio
async def test_a_multi_turn_session_with_parallel_tool_calls() -> None:
    agent, model, clock = make_agent(
        [
            call_tools(("add", {"a": 1, "b": 2}), ("add", {"a": 30, "b": 4})),
            lambda context: say(f"The sums are {' and '.join(last_results(context))}."),
            call_tools(("add", {"a": 5, "b": 5})),
            lambda context: say(f"That makes {last_results(context)[-1]}."),
        ],
        tools=[add],
    )
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("Add 1+2 and 30+4.")
        await session.settled()
        assert session.phase == "idle"
        clock.advance(60_000)
        session.send("And 5+5?")
        await session.settled()
        state = session.state

    assert texts(state) == [
        ("user", "Add 1+2 and 30+4."),
        ("assistant", "The sums are 3 and 34."),
        ("user", "And 5+5?"),
        ("assistant", "That makes 10."),
    ]
    assert results(state) == {
        "call-1": ToolSuccess(content="3"),
        "call-2": ToolSuccess(content="34"),
        "call-3": ToolSuccess(content="10"),
    }
    assert state.last_outcome == TurnOutcome(kind="completed", turn=2, at=START + 60_000)
    # Both calls were requested together and ran in parallel: one assistant message, then both results.
    second_call = model.calls[1].entries
    assert isinstance(second_call[1], ContextToolCalls) and len(second_call[1].calls) == 2
    assert recorder.started()[:3] == ["call-llm:1:0:0", "call-tool:call-1", "call-tool:call-2"]
    assert recorder.tags()[:3] == ["session-started", "user-message-received", "re-act-observed"]
    # Each call is logged as started before it completes.
    order = [(type(i).__name__, getattr(i, "tool_call_id", "")) for i in recorder.inputs]
    for call_id in ("call-1", "call-2", "call-3"):
        assert order.index(("ToolCallStarted", call_id)) < order.index(("ToolCallCompleted", call_id))
    recorder.assert_replays_to(state)


@pytest.mark.anyio
async def test_a_tool_failure_is_fed_back_and_the_model_recovers() -> None:
    agent, model, _ = make_agent(
        [
            call_tools(("divide", {"a": 1, "b": 0})),
            call_tools(("divide", {"a": 1, "b": "two"})),
            call_tools(("divide", {"a": 1, "b": 2})),
            lambda context: say(f"1/2 = {last_results(context)[-1]}"),
        ],
        tools=[divide],
    )
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("What is 1 divided by 0, or else by 2?")
        await session.settled()
        state = session.state

    failures = [r for r in results(state).values() if isinstance(r, ToolFailure)]
    assert [f.error.split(":")[0] for f in failures] == [
        "tool 'divide' failed (tool call 'call-1')",
        "invalid arguments for tool 'divide' (tool call 'call-2')",
    ]
    # The model saw each failure as an error result in its next context.
    errors = [e for e in model.calls[1].entries if isinstance(e, ContextToolResult)]
    assert errors[0].is_error and "ZeroDivisionError" in errors[0].content
    assert texts(state)[-1] == ("assistant", "1/2 = 0.5")
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    recorder.assert_replays_to(state)


@pytest.mark.anyio
async def test_a_model_that_asks_for_older_messages_and_past_tool_results() -> None:
    def answer_with_what_it_sees(context: LlmContext) -> ModelReply:
        seen = [e.content for e in context.entries if isinstance(e, ContextMessage) and e.role == "user"]
        return say(f"I see {len(seen)} user messages and {len(last_results(context))} results.")

    agent, model, _ = make_agent(
        [
            call_tools(("add", {"a": 1, "b": 1})),
            say("2"),
            say("noted"),
            load_older_messages(),
            load_tool_call_results("call-1", "no-such-call"),
            answer_with_what_it_sees,
        ],
        tools=[add],
        initial_context_window=2,
        context_window_step=10,
    )
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("1+1?")
        await session.settled()
        session.send("remember this")
        await session.settled()
        session.send("what did I ask first?")
        await session.settled()
        state = session.state

    assert recorder.tags()[-6:] == [
        "user-message-received",
        "context-window-expanded",
        "history-tool-calls-added",
        "llm-message-started",
        "llm-message-completed",
        "re-act-observed",
    ]
    history = recorder.inputs[-4]
    assert getattr(history, "tool_call_ids", None) == ("call-1",)  # the unknown id was left out
    before = model.calls[3]  # the window showed the last two messages
    assert [e.content for e in before.entries if isinstance(e, ContextMessage)] == ["noted", "what did I ask first?"]
    assert before.older_messages == 3
    assert texts(state)[-1] == ("assistant", "I see 3 user messages and 1 results.")
    # Internal tools never become tool-call records.
    assert list(results(state)) == ["call-1"]
    recorder.assert_replays_to(state)


@pytest.mark.anyio
async def test_streamed_text_reaches_subscribers_in_chunks_and_the_log_only_whole() -> None:
    agent, _, _ = make_agent([say("Streaming works in chunks.")])
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("hi")
        await session.settled()
        state = session.state

    assert [d.text for d in recorder.deltas] == ["Streaming ", "works ", "in ", "chunks."]
    assert {d.message_id for d in recorder.deltas} == {"assistant-1"}
    completed = [i for i in recorder.inputs if type(i).__name__ == "LlmMessageCompleted"]
    assert [getattr(i, "content", None) for i in completed] == ["Streaming works in chunks."]
    recorder.assert_replays_to(state)


@pytest.mark.anyio
async def test_provider_ids_already_used_in_the_session_are_made_unique() -> None:
    agent, _, _ = make_agent(
        [
            call_tools(("add", {"a": 1, "b": 1}, "same")),
            say("2"),
            call_tools(("add", {"a": 2, "b": 2}, "same"), ("add", {"a": 3, "b": 3}, "same")),
            say("4 and 6"),
        ],
        tools=[add],
    )
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("first")
        await session.settled()
        session.send("second")
        await session.settled()
        state = session.state

    assert results(state) == {
        "same": ToolSuccess(content="2"),
        "same-2": ToolSuccess(content="4"),
        "same-3": ToolSuccess(content="6"),
    }
    recorder.assert_replays_to(state)


@pytest.mark.anyio
async def test_a_model_that_raises_a_non_model_error_fails_the_turn() -> None:
    def broken(context: LlmContext) -> ModelReply:
        raise KeyError("oops")

    agent, _, _ = make_agent([broken])
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("hi")
        await session.settled()
        state = session.state

    assert state.last_outcome == TurnOutcome(
        kind="failed",
        reason="llm-error",
        detail="model call not retryable: KeyError: 'oops'",
        turn=1,
        at=START,
    )
    recorder.assert_replays_to(state)


@pytest.mark.anyio
async def test_an_agent_runs_a_new_session_each_time_unless_resumed() -> None:
    agent, _, _ = make_agent([say("one"), say("two")])
    for expected in ("one", "two"):
        async with agent.running() as session:
            session.send("hi")
            with anyio.fail_after(5):
                await session.settled()
            assert texts(session.state) == [("user", "hi"), ("assistant", expected)]
