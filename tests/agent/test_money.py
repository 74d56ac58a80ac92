"""Money through a live session: each call priced where its reply enters, cost budgets per turn and per session."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from agent_core import (
    AgentConfig,
    AnswerRejected,
    HandedOff,
    HistoryToolCallsAdded,
    InvalidInput,
    ReActObserved,
    Usage,
    nanos,
)
from effects import COST_ATTRIBUTE, Agent, GenaiPrices, MemoryStore, SessionJournal, session_spans, session_stats, tool
from effects.testing import ScriptedModel, call_tools, say

from ._helpers import Recorder, make_agent


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def cents(model: str, usage: Usage) -> Decimal:
    """A price list: a cent per 1,000 input tokens, of which cached reads a tenth; 4 cents per 1,000 output."""
    fresh = usage.input_tokens - usage.cache_read_tokens
    return (Decimal(fresh) + Decimal(usage.cache_read_tokens) / 10 + 4 * Decimal(usage.output_tokens)) / 100_000


def priced(script: list[Any], **config: Any) -> Agent:
    agent, _, _ = make_agent(script, [lookup], **config)
    agent.pricing = cents
    return agent


USAGE = Usage(input_tokens=1_000, output_tokens=500, cache_read_tokens=600)  # 0.4 + 0.06 + 2 cents


@pytest.mark.anyio
async def test_each_model_call_logs_its_cost_beside_its_usage_and_the_state_sums_them() -> None:
    agent = priced([call_tools(("lookup", {"key": "a"}), usage=USAGE), say("done", usage=USAGE)])
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("hi")
        await session.turn_done()
        state = session.state
    observed = [i for i in recorder.inputs if isinstance(i, ReActObserved)]
    assert [(o.usage, o.cost) for o in observed] == [(USAGE, nanos("0.0246"))] * 2
    assert state.cost == nanos("0.0492")
    recorder.assert_replays_to(state)  # no pricing at replay: the cost is in the log


@pytest.mark.anyio
async def test_a_rejected_answer_is_a_model_call_and_logs_its_cost_too() -> None:
    agent = priced([say("", usage=USAGE), say("done", usage=USAGE)])
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("hi")
        await session.turn_done()
        state = session.state
    rejected = [i for i in recorder.inputs if isinstance(i, AnswerRejected)]
    assert [(r.reason, r.usage, r.cost) for r in rejected] == [("empty-answer", USAGE, nanos("0.0246"))]
    assert state.cost == nanos("0.0492")
    recorder.assert_replays_to(state)


@pytest.mark.anyio
async def test_a_call_answered_inside_the_session_logs_its_tokens_and_cost_too() -> None:
    # A call of an internal tool, and a handoff: neither becomes a re-act-observed, and both were paid for.
    billing = Agent(ScriptedModel([say("paid", usage=USAGE)]), name="billing", pricing=cents)
    script = [
        call_tools(("load_tool_call_results", {"tool_call_ids": []}), usage=USAGE),
        call_tools(("transfer_to_billing", {"reason": "an invoice"}), usage=USAGE),
    ]
    triage = Agent(ScriptedModel(script), name="triage", handoffs=[billing], pricing=cents)
    async with triage.running() as session:
        recorder = Recorder(session)
        session.send("my invoice")
        state = await session.turn_done()
    inside = [i for i in recorder.inputs if isinstance(i, HistoryToolCallsAdded | HandedOff)]
    assert [(type(i), i.usage, i.cost) for i in inside] == [
        (HistoryToolCallsAdded, USAGE, nanos("0.0246")),
        (HandedOff, USAGE, nanos("0.0246")),
    ]
    assert (state.cost, state.input_tokens, state.output_tokens) == (nanos("0.0738"), 3_000, 1_500)
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    recorder.assert_replays_to(state)
    store = MemoryStore()
    SessionJournal(store, "s").append(recorder.inputs)
    chats = [span.attributes for span in session_spans(store, "s") if span.name == "chat"]
    assert [a[COST_ATTRIBUTE] for a in chats] == [nanos("0.0246")] * 3  # the spans of the three calls say so too
    stats = session_stats(store, "s")
    assert (stats.cost, stats.input_tokens) == (state.cost, 3_000)


@pytest.mark.anyio
async def test_a_turn_over_its_cost_budget_fails_after_the_call_that_spent_it() -> None:
    script = [call_tools(("lookup", {"key": str(n)}), usage=USAGE) for n in range(5)]
    agent = priced(script, max_cost=nanos("0.05"))
    async with agent.running() as session:
        session.send("hi")
        outcome = (await session.turn_done()).last_outcome
        state = session.state
    assert outcome is not None and (outcome.kind, outcome.reason) == ("failed", "max-cost")
    assert outcome.detail == "the turn's model calls cost 0.0738 of its budget of 0.05"
    assert state.cost == 3 * nanos("0.0246")  # over by less than one call


@pytest.mark.anyio
async def test_a_session_budget_spans_turns_and_fails_the_next_turn_at_once() -> None:
    agent = priced([say("one", usage=USAGE), say("two", usage=USAGE), say("three")], max_session_cost=nanos("0.04"))
    async with agent.running() as session:
        for text in ("a", "b", "c"):
            session.send(text)
            await session.turn_done()
        state = session.state
    assert state.last_outcome is not None
    assert (state.last_outcome.reason, state.last_outcome.detail) == (
        "max-session-cost",
        "the session's model calls cost 0.0492 of its budget of 0.04",
    )
    assert state.cost == 2 * nanos("0.0246")


@pytest.mark.anyio
async def test_a_call_the_pricing_does_not_know_ends_a_turn_that_has_a_cost_budget() -> None:
    agent, _, _ = make_agent([call_tools(("lookup", {"key": "a"})), say("never")], [lookup], max_cost=nanos("1"))
    agent.pricing = lambda model, usage: None
    async with agent.running() as session:
        session.send("hi")
        outcome = (await session.turn_done()).last_outcome
    assert outcome is not None and (outcome.kind, outcome.reason) == ("failed", "unpriced")


@pytest.mark.anyio
async def test_a_negative_cost_budget_or_one_without_a_pricing_is_refused_at_start() -> None:
    agent = priced([say("hi")], max_cost=-1)
    with pytest.raises(InvalidInput) as negative:
        async with agent.running():
            pass
    assert negative.value.rejection.message == "expected max_cost of 0 or more or None, got -1"
    unpriced = Agent(ScriptedModel([]), config=AgentConfig(max_session_cost=0), pricing=None)
    with pytest.raises(ValueError) as refused:
        async with unpriced.running():
            pass
    assert str(refused.value).startswith("max_session_cost need a pricing to count the cost of model calls; expected")


def test_genai_prices_prices_cached_reasoning_and_output_tokens_apart() -> None:
    prices = GenaiPrices(provider_id="anthropic")
    usage = Usage(input_tokens=1_000, output_tokens=500, cache_read_tokens=200, cache_write_tokens=100)
    # $3 per million fresh input tokens, $0.30 cached reads, $3.75 cache writes, $15 output.
    assert prices("claude-sonnet-4-5", usage) == Decimal("0.010035")
    assert prices("no-such-model", usage) is None


@pytest.mark.anyio
async def test_a_rejected_answers_span_ends_completed_with_its_cost_and_stats_count_it() -> None:
    agent = priced([say("", usage=USAGE), say("done", usage=USAGE)])
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("hi")
        state = await session.turn_done()
    store = MemoryStore()
    SessionJournal(store, "s").append(recorder.inputs)
    chats = [span.attributes for span in session_spans(store, "s") if span.name == "chat"]
    assert [(a["agent_core.effect.outcome"], a.get("agent_core.answer.rejected")) for a in chats] == [
        ("completed", "empty-answer"),
        ("completed", None),
    ]
    assert [a[COST_ATTRIBUTE] for a in chats] == [nanos("0.0246")] * 2
    assert session_stats(store, "s").cost == state.cost
