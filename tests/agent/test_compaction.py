"""Compaction through the runner with the scripted model: summaries, cleared results, failures; each log replays
to the state the session ended in, and the contexts the model saw stay within the declared window."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import msgspec
import pytest

from agent_core import (
    SUMMARY_HEADER,
    AgentConfig,
    CompactionPolicy,
    ContextCompacted,
    ContextToolResult,
    InvalidInput,
    LlmCallFailed,
    LlmContext,
    PoolVerdictReceived,
    ReActCancelled,
    ReActObserved,
    ToolSuccess,
    Usage,
    UserMessageReceived,
    context_tokens,
    effects_at,
    nanos,
    replay,
    state_hash,
    tag_of,
    transition,
)
from effects import (
    COST_ATTRIBUTE,
    Agent,
    BudgetPools,
    MemoryStore,
    ModelError,
    ModelReply,
    SessionJournal,
    open_session,
    session_spans,
    session_stats,
    tool,
)
from effects.testing import ManualClock, ScriptedModel, SequentialIds, call_tools, fail, load_tool_call_results, say

from ._helpers import START, Recorder, make_agent

pytestmark = pytest.mark.anyio


@tool
def fetch(page: int) -> str:
    """Fetch a page of the report (long)."""
    return f"page {page}: " + "lorem ipsum dolor sit amet " * 24


def results_in(context: LlmContext) -> int:
    return sum(1 for entry in context.entries if isinstance(entry, ContextToolResult))


def researcher(pages: int, summary: str = "The user wants the report's pages; pages read so far hold lorem ipsum."):
    """A model that fetches ``pages`` pages one by one (counting the calls it made), then answers; it
    answers summarization requests with ``summary``."""
    asked = [0]

    def step(context: LlmContext) -> ModelReply:
        if context.task == "summarize":
            return say(summary)
        if asked[0] < pages:
            asked[0] += 1
            return call_tools(("fetch", {"page": asked[0]}))
        return say(f"I read {pages} pages.")

    return step


POLICY = CompactionPolicy(context_window_tokens=600, trigger_percent=60, keep_recent_percent=30, summary_max_tokens=60)


async def test_a_long_turn_is_summarized_and_the_summary_stands_for_what_it_covers() -> None:
    model = ScriptedModel(researcher(8))
    agent, _, _ = make_agent(model, [fetch], compaction=POLICY)
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("Read the report, page by page.")
        state = await session.turn_done()
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    compacted = [inp for inp in recorder.inputs if isinstance(inp, ContextCompacted)]
    assert len(compacted) >= 2
    summaries = [c for c in model.calls if c.task == "summarize"]
    assert len(summaries) == len(compacted)
    assert summaries[0].system_prompt == POLICY.summary_prompt and summaries[0].tools == ()
    answers = [c for c in model.calls if c.task == "answer"]
    after = answers[-1]
    assert isinstance(after.entries[0].content, str) and after.entries[0].content.startswith(SUMMARY_HEADER)  # type: ignore[union-attr]
    # The full history stays in the state: every page's result, and the first message.
    assert state.messages[0].content == "Read the report, page by page."
    assert sum(isinstance(r.result, ToolSuccess) for r in state.tool_calls.values()) == 8
    assert state.compaction is not None and state.compaction.summaries == len(compacted)
    assert state.compaction.summary_input_tokens == sum(c.usage.input_tokens for c in compacted) > 0
    # What the model saw never passed the declared window.
    assert max(context_tokens(c) for c in answers) <= POLICY.context_window_tokens
    # The log replays to the same state, with no model.
    assert state_hash(replay(recorder.inputs)) == state_hash(state)


async def test_a_cleared_result_shows_a_placeholder_and_comes_back_when_asked_for() -> None:
    policy = CompactionPolicy(context_window_tokens=600, strategy="clear-tool-results", keep_recent_percent=30)
    seen: list[LlmContext] = []

    def step(context: LlmContext) -> ModelReply:
        seen.append(context)
        done = results_in(context)
        if context.cleared_tool_calls and len(seen) < 10:
            return load_tool_call_results(context.cleared_tool_calls[0])
        if done < 4:
            return call_tools(("fetch", {"page": done + 1}))
        return say("done")

    agent, _, _ = make_agent(step, [fetch], compaction=policy)
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("Read four pages.")
        state = await session.turn_done()
    cleared = next(c for c in seen if c.cleared_tool_calls)
    first = cleared.cleared_tool_calls[0]
    placeholder = next(e for e in cleared.entries if getattr(e, "tool_call_id", "") == first)
    assert placeholder.content == (  # type: ignore[union-attr]
        f"[result cleared to save context: tool call {first} (fetch); "
        f'call load_tool_call_results with {{"tool_call_ids": ["{first}"]}} to see it again]'
    )
    loaded = seen[seen.index(cleared) + 1]
    assert first not in loaded.cleared_tool_calls  # the model asked for it: it shows again
    assert state_hash(replay(recorder.inputs)) == state_hash(state)


async def test_a_summarization_that_keeps_failing_is_retried_then_the_turn_goes_on_uncompacted() -> None:
    calls = [0]

    def step(context: LlmContext) -> ModelReply:
        if context.task == "summarize":
            raise fail("overloaded", retryable=True)
        calls[0] += 1
        return call_tools(("fetch", {"page": calls[0]})) if calls[0] < 3 else say("done")

    policy = CompactionPolicy(
        context_window_tokens=900, trigger_percent=30, keep_recent_percent=10, summary_max_tokens=50
    )
    agent, _, _ = make_agent(step, [fetch], compaction=policy, retry_base_ms=0, llm_max_attempts=2)
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("Read.")
        state = await session.turn_done()
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    failures = [inp for inp in recorder.inputs if type(inp).__name__ == "LlmCallFailed"]
    assert len(failures) == 2  # two attempts, then given up for the turn
    assert state.compaction is not None and state.compaction.gave_up_turn == 1 and state.compaction.summaries == 0


async def test_a_context_that_cannot_fit_fails_the_turn_with_the_numbers() -> None:
    def step(context: LlmContext) -> ModelReply:
        if context.task == "summarize":
            return say("summary")
        return call_tools(("fetch", {"page": 1}))

    policy = CompactionPolicy(
        context_window_tokens=200, trigger_percent=50, keep_recent_percent=10, summary_max_tokens=20
    )
    agent, _, _ = make_agent(step, [fetch], compaction=policy)
    async with agent.running() as session:
        session.send("Read.")
        state = await session.turn_done()
    outcome = state.last_outcome
    assert outcome is not None and (outcome.kind, outcome.reason) == ("failed", "context-too-long")
    assert outcome.detail.startswith("the context holds about ")
    assert "more than the declared window of 200 (nothing older is left to summarize)" in outcome.detail


async def test_a_provider_context_length_error_compacts_once_then_fails() -> None:
    refusals = [0]

    def step(context: LlmContext) -> ModelReply:
        if context.task == "summarize":
            return say("the user asked to read; one page was read")
        if results_in(context) < 1 and not context.summarized_messages:
            return call_tools(("fetch", {"page": 1}))
        refusals[0] += 1
        raise ModelError("prompt is too long: 250000 tokens > 200000 maximum", retryable=False, context_too_long=True)

    policy = CompactionPolicy(context_window_tokens=100_000)
    agent, _, _ = make_agent(step, [fetch], compaction=policy)
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("Read.")
        state = await session.turn_done()
    assert refusals[0] == 2, state.last_outcome  # refused, compacted, refused again: the turn fails
    assert [type(i).__name__ for i in recorder.inputs].count("ContextCompacted") == 1
    outcome = state.last_outcome
    assert outcome is not None and (outcome.kind, outcome.reason) == ("failed", "context-too-long")
    assert "the provider refused the context as too long" in outcome.detail
    assert "prompt is too long" in outcome.detail


async def test_chat_spans_say_what_a_summarization_covers_and_what_the_answer_sends_in_its_place() -> None:
    store = MemoryStore()
    config = AgentConfig(max_turn_ms=None, compaction=POLICY)
    async with open_session(store, "s", ScriptedModel(researcher(8)), tools=[fetch], config=config) as session:
        session.send("Read the report, page by page.")
        state = await session.turn_done()
    assert state.compaction is not None and state.compaction.summaries >= 2
    chats = [span for span in session_spans(store, "s") if span.name == "chat"]
    summaries = [s.attributes for s in chats if s.attributes.get("agent_core.compaction.task") == "summarize"]
    answers = [s.attributes for s in chats if "agent_core.compaction.task" not in s.attributes]
    assert len(summaries) == state.compaction.summaries
    first, last = summaries[0], summaries[-1]
    assert first["agent_core.compaction.covers.messages_from"] == 0
    assert last["agent_core.compaction.covers.messages_to"] == state.compaction.summarized_messages
    assert last["agent_core.context.entries"] == 1  # the summarization's request: one user message
    covered = {call_id for s in summaries for call_id in s["agent_core.compaction.covers.tool_call_ids"]}
    assert covered and covered <= set(state.tool_calls)
    assert answers[0]["agent_core.compaction.summarized_messages"] == 0
    assert answers[-1]["agent_core.compaction.summarized_messages"] == state.compaction.summarized_messages
    assert all(a["agent_core.compaction.cleared_tool_call_ids"] == [] for a in answers)


async def test_chat_spans_list_the_cleared_tool_results() -> None:
    policy = CompactionPolicy(context_window_tokens=600, strategy="clear-tool-results", keep_recent_percent=30)
    store = MemoryStore()
    config = AgentConfig(max_turn_ms=None, compaction=policy)
    async with open_session(store, "s", ScriptedModel(researcher(4)), tools=[fetch], config=config) as session:
        session.send("Read four pages.")
        state = await session.turn_done()
    assert state.compaction is not None and state.compaction.cleared
    chats = [span.attributes for span in session_spans(store, "s") if span.name == "chat"]
    cleared = [tuple(a["agent_core.compaction.cleared_tool_call_ids"]) for a in chats]
    assert cleared[0] == () and cleared[-1] == state.compaction.cleared


async def test_a_rejected_answer_counts_as_a_model_call_for_the_trigger() -> None:
    # An empty reply is rejected (answer-rejected); the tokens it reported are over the trigger, so the retry
    # is preceded by a summarization, and the note asking again stays in the context.
    tasks: list[str] = []

    def step(context: LlmContext) -> ModelReply:
        tasks.append(context.task)
        if context.task == "summarize":
            return say("The user asked for a short answer.")
        if len(tasks) == 1:
            return say("", usage=Usage(input_tokens=POLICY.context_window_tokens, output_tokens=0))
        return say("Here it is.")

    agent, _, _ = make_agent(step, [fetch], compaction=POLICY)
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("Answer briefly. " + "Some background you may need. " * 22)
        state = await session.turn_done()
    kinds = [tag_of(inp) for inp in recorder.inputs]
    assert kinds.index("answer-rejected") < kinds.index("context-compacted") < kinds.index("re-act-observed")
    assert tasks == ["answer", "summarize", "answer"]
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    assert state_hash(replay(recorder.inputs)) == state_hash(state)


def cents(model: str, usage: Usage) -> Decimal:
    """A price list: a cent per 1,000 input tokens, 4 cents per 1,000 output tokens."""
    return (Decimal(usage.input_tokens) + 4 * Decimal(usage.output_tokens)) / 100_000


SUMMARY_USAGE = Usage(input_tokens=400, output_tokens=50_000)  # 0.004 + 2 = 2.004


def priced_researcher(pages: int) -> ScriptedModel:
    """``researcher``, with a summarization that reports ``SUMMARY_USAGE`` (the answers report estimates)."""
    inner = researcher(pages)

    def step(context: LlmContext) -> ModelReply:
        if context.task == "summarize":
            return say("The user wants the report's pages; they hold lorem ipsum.", usage=SUMMARY_USAGE)
        return inner(context)

    return ScriptedModel(step)


async def test_a_summarization_is_priced_and_its_cost_is_the_session_spend() -> None:
    agent, _, _ = make_agent(priced_researcher(8), [fetch], compaction=POLICY, max_session_cost=nanos("100"))
    agent.pricing = cents
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("Read the report, page by page.")
        state = await session.turn_done()
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    compacted = [inp for inp in recorder.inputs if isinstance(inp, ContextCompacted)]
    assert compacted and all(c.cost == nanos("2.004") for c in compacted)
    answers = [inp.cost or 0 for inp in recorder.inputs if isinstance(inp, ReActObserved)]
    assert state.cost == sum(answers) + len(compacted) * nanos("2.004")
    assert state_hash(replay(recorder.inputs)) == state_hash(state)  # no pricing at replay: the cost is logged


async def test_a_summarization_that_spends_the_turn_budget_stops_the_turn() -> None:
    agent, model, _ = make_agent(priced_researcher(8), [fetch], compaction=POLICY, max_cost=nanos("1"))
    agent.pricing = cents
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("Read the report, page by page.")
        state = await session.turn_done()
    outcome = state.last_outcome
    assert outcome is not None and (outcome.kind, outcome.reason) == ("failed", "max-cost")
    compacted = [inp for inp in recorder.inputs if isinstance(inp, ContextCompacted)]
    assert len(compacted) == 1 and recorder.inputs[-1] is compacted[0]  # no model call after the summary
    assert outcome.detail.startswith("the turn's model calls cost 2.00")
    assert model.calls[-1].task == "summarize"
    assert state_hash(replay(recorder.inputs)) == state_hash(state)


def pooled(pools: BudgetPools) -> Agent:
    return Agent(
        priced_researcher(8),
        tools=[fetch],
        config=AgentConfig(compaction=POLICY, budget_pool=POOL, max_turn_ms=None),
        clock=ManualClock(START),
        ids=SequentialIds(),
        session_id="s1",
        pricing=cents,
        pools=pools,
    )


POOL = "team"


async def test_a_summarization_reserves_from_the_budget_pool_and_settles_its_cost(tmp_path: Path) -> None:
    pools = BudgetPools.sqlite(tmp_path / "pools.db", per_call=nanos("0.01"))
    pools.set_cap(POOL, nanos("100"))
    async with pooled(pools).running() as session:
        recorder = Recorder(session)
        session.send("Read the report, page by page.")
        state = await session.turn_done()
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    verdicts = [i for i in recorder.inputs if isinstance(i, PoolVerdictReceived)]
    calls = [i for i in recorder.inputs if isinstance(i, (ReActObserved, ContextCompacted))]
    assert len(verdicts) == len(calls) and any(isinstance(c, ContextCompacted) for c in calls)
    totals = pools.totals(POOL, START)
    assert (totals.spent, totals.held) == (state.cost, 0)  # the pool counted the summaries' cost too
    assert state_hash(replay(recorder.inputs)) == state_hash(state)


async def test_a_pool_that_refuses_the_summarization_ends_the_turn_and_gives_it_up(tmp_path: Path) -> None:
    pools = BudgetPools.sqlite(tmp_path / "pools.db", per_call=nanos("0.01"))
    pools.set_cap(POOL, nanos("0.012"))  # enough for the two answers before the first summarization, not for it
    async with pooled(pools).running() as session:
        recorder = Recorder(session)
        session.send("Read the report, page by page.")
        state = await session.turn_done()
    outcome = state.last_outcome
    assert outcome is not None and (outcome.kind, outcome.reason) == ("failed", "budget-pool")
    refused = recorder.inputs[-1]
    assert isinstance(refused, PoolVerdictReceived) and not refused.granted
    asked = replay(recorder.inputs[:-1]).compaction
    assert asked is not None and asked.request is not None  # the refused reservation was the summarization's
    assert state.compaction is not None and state.compaction.request is None
    assert state_hash(replay(recorder.inputs)) == state_hash(state)


async def test_a_summary_longer_than_the_policy_allows_is_refused_retried_then_given_up() -> None:
    policy = CompactionPolicy(
        context_window_tokens=900, trigger_percent=30, keep_recent_percent=10, summary_max_tokens=50
    )
    too_long = "word " * 41  # 204 characters once stripped: about 51 tokens by the estimate, over the 50 allowed
    calls = [0]

    def step(context: LlmContext) -> ModelReply:
        if context.task == "summarize":
            return say(too_long)
        calls[0] += 1
        return call_tools(("fetch", {"page": calls[0]})) if calls[0] < 3 else say("done")

    agent, model, _ = make_agent(step, [fetch], compaction=policy, retry_base_ms=0, llm_max_attempts=2)
    agent.pricing = cents
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("Read.")
        state = await session.turn_done()
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"  # uncompacted: it still fits
    failures = [inp for inp in recorder.inputs if isinstance(inp, LlmCallFailed)]
    assert [f.error for f in failures] == [
        "the summarization call's answer cannot stand for the context: the summary is about 51 tokens "
        "(204 characters); expected at most the policy's summary_max_tokens (50)"
    ] * 2
    assert not any(isinstance(inp, ContextCompacted) for inp in recorder.inputs)
    paid = [f.cost or 0 for f in failures]  # the refused summaries were paid for: the spend counts them
    answers = [inp.cost or 0 for inp in recorder.inputs if isinstance(inp, ReActObserved)]
    assert min(paid) > 0 and state.cost == sum(paid) + sum(answers)
    assert sum(c.task == "summarize" for c in model.calls) == 2
    assert state.compaction is not None and state.compaction.gave_up_turn == 1 and state.compaction.summaries == 0
    assert state_hash(replay(recorder.inputs)) == state_hash(state)


async def test_the_reducer_refuses_a_logged_summary_longer_than_the_policy_allows() -> None:
    model = ScriptedModel(researcher(8))
    agent, _, _ = make_agent(model, [fetch], compaction=POLICY)
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("Read the report, page by page.")
        await session.turn_done()
    at = next(n for n, inp in enumerate(recorder.inputs) if isinstance(inp, ContextCompacted))
    compacted = recorder.inputs[at]
    assert isinstance(compacted, ContextCompacted)
    before = replay(recorder.inputs[:at])
    longest = "x" * (POLICY.summary_max_tokens * 4)
    transition(before, msgspec.structs.replace(compacted, summary=longest))  # at the bound: accepted
    with pytest.raises(InvalidInput) as refused:
        transition(before, msgspec.structs.replace(compacted, summary=longest + "x"))
    assert refused.value.rejection.code == "summary-too-long"
    assert "the summary is about 61 tokens (241 characters)" in str(refused.value)


async def test_a_summarization_span_carries_its_usage_and_cost_and_stats_count_them() -> None:
    agent, _, _ = make_agent(priced_researcher(8), [fetch], compaction=POLICY, max_session_cost=nanos("100"))
    agent.pricing = cents
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("Read the report, page by page.")
        state = await session.turn_done()
    store = MemoryStore()
    SessionJournal(store, "s").append(recorder.inputs)
    chats = [span.attributes for span in session_spans(store, "s") if span.name == "chat"]
    summaries = [a for a in chats if a.get("agent_core.compaction.task") == "summarize"]
    assert summaries and all(a[COST_ATTRIBUTE] == nanos("2.004") for a in summaries)
    assert all(a["gen_ai.usage.output_tokens"] == SUMMARY_USAGE.output_tokens for a in summaries)
    assert session_stats(store, "s").cost == state.cost  # the summaries' cost is in the stats


async def test_a_turn_that_ends_while_a_summarization_is_under_way_gives_it_up() -> None:
    agent, _, _ = make_agent(researcher(8), [fetch], compaction=POLICY)
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("Read the report, page by page.")
        await session.turn_done()
    at = next(n for n, inp in enumerate(recorder.inputs) if isinstance(inp, ContextCompacted))
    asked = replay(recorder.inputs[:at])
    assert asked.compaction is not None and asked.compaction.request is not None
    stamp = recorder.inputs[at].timestamp
    cancelled = transition(asked, ReActCancelled(timestamp=stamp, reason="stop"))
    assert cancelled.compaction is not None and cancelled.compaction.request is None
    # The next turn decides afresh: its first model call is an answer, not the old turn's summarization.
    after = transition(cancelled, UserMessageReceived(timestamp=stamp, message_id="m-next", content="Hello"))
    assert [key for key in effects_at(after) if "summary" in key] == []


async def test_a_refused_summary_that_spends_the_budget_is_not_asked_again() -> None:
    policy = CompactionPolicy(
        context_window_tokens=900, trigger_percent=30, keep_recent_percent=10, summary_max_tokens=50
    )
    calls = [0]

    def step(context: LlmContext) -> ModelReply:
        if context.task == "summarize":
            return say("word " * 41)  # too long: refused, but paid for
        calls[0] += 1
        return call_tools(("fetch", {"page": calls[0]})) if calls[0] < 3 else say("done")

    agent, model, _ = make_agent(
        step, [fetch], compaction=policy, retry_base_ms=0, llm_max_attempts=3, max_cost=nanos("0.004")
    )
    agent.pricing = cents
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("Read.")
        state = await session.turn_done()
    outcome = state.last_outcome
    assert outcome is not None and (outcome.kind, outcome.reason) == ("failed", "max-cost")
    assert sum(isinstance(inp, LlmCallFailed) for inp in recorder.inputs) == 1
    assert sum(c.task == "summarize" for c in model.calls) == 1
    assert state.compaction is not None and state.compaction.request is None
    assert state_hash(replay(recorder.inputs)) == state_hash(state)
