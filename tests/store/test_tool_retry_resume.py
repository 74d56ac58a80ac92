"""A durable session stopped while a tool call backs off resumes the backoff, and its log projects to spans."""

from __future__ import annotations

import pytest

from agent_core import ToolSuccess, tag_of
from effects import EventStore, load_state, open_session, replay_session, retry, session_spans, session_stats, tool
from effects.testing import ManualClock, ScriptedModel, SequentialIds, call_tools, say

START = 1_700_000_000_000


@pytest.mark.anyio
async def test_a_session_stopped_during_a_backoff_resumes_it_and_the_call_runs_again(store: EventStore) -> None:
    attempts: list[str] = []

    @tool(idempotent=True, retry=retry(3, on=(ConnectionError,), base_ms=1000))
    def lookup(tool_call_id: str) -> str:
        """Look it up."""
        attempts.append(tool_call_id)
        if len(attempts) == 1:
            raise ConnectionError("backend unreachable")
        return "found"

    model = ScriptedModel([call_tools(("lookup", {}, "t1")), say("done")])
    clock = ManualClock(START)
    async with open_session(store, "s1", model, tools=[lookup], clock=clock, ids=SequentialIds()) as session:
        session.send("look it up")
        await session.settled()  # parked on the retry timer
        assert START + 1000 in clock.sleepers()  # beside the turn's deadline
    backing_off = load_state(store, "s1").tool_calls["t1"]
    assert (backing_off.status, backing_off.retry_at) == ("pending", START + 1000)

    clock.advance(5000)  # the process was down past the backoff's end
    async with open_session(store, "s1", model, tools=[lookup], clock=clock, ids=SequentialIds()) as session:
        state = await session.turn_done()

    assert attempts == ["t1", "t1"]
    assert state.tool_calls["t1"].result == ToolSuccess(content="found")
    tags = [tag_of(record.decode()) for record in store.read("s1")]
    assert tags[tags.index("tool-call-started") :].count("tool-call-started") == 2
    assert replay_session(store, "s1").state == state

    spans = [span.name for span in session_spans(store, "s1")]
    assert spans.count("execute_tool lookup") == 2 and "wait retry" in spans
    assert session_stats(store, "s1").turns[0].tool_calls == 2
    ids = [span.span_id for span in session_spans(store, "s1")]
    assert len(ids) == len(set(ids)), "each attempt has a span of its own"
