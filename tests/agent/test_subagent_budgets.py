"""Budgets across a tree of agents: a child's spend counts toward its caller's budgets as it happens, a caller
gives its children smaller limits, a timed-out call ends its child's turn, children share the caller's pool."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_core import (
    AgentConfig,
    AgentState,
    LlmContext,
    Spend,
    ToolFailure,
    Usage,
    format_nanos,
    nanos,
    spent,
)
from effects import Agent, BudgetPools, ModelReply, SessionJournal, SqliteStore, load_state, replay_session, tool
from effects.testing import ManualClock, ScriptedModel, SequentialIds, call_tools, say

from ._team import TOPICS, planner, question, results

pytestmark = pytest.mark.anyio

CALL = Usage(input_tokens=300, output_tokens=100)
"""A model call's usage: a cent (see :func:`cents`)."""


def cents(model: str, usage: Usage) -> Decimal:
    """A cent per 100 output tokens."""
    return Decimal(usage.output_tokens) / 10_000


def priced_researcher(context: LlmContext) -> ModelReply:
    """Looks the topic up, then answers; every call costs a cent."""
    found = results(context)
    if not found:
        return call_tools(("lookup", {"topic": question(context)}, "lookup-1"), usage=CALL)
    return say(f"{question(context)}: {found[0].content}", usage=CALL)


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"{topic} facts"


def researcher_agent(clock: ManualClock, **config: object) -> Agent:
    model = ScriptedModel(priced_researcher)
    return Agent(model, tools=[lookup], clock=clock, ids=SequentialIds(), config=AgentConfig(**config), pricing=cents)  # type: ignore[arg-type]


@asynccontextmanager
async def open_session(store: SqliteStore, session_id: str, model: ScriptedModel, **agent: Any) -> AsyncIterator[Any]:
    """A new session kept in ``store`` (its children are kept there too), with any ``Agent`` arguments."""
    journal = SessionJournal(store, session_id)
    try:
        async with Agent(model, journal=journal, session_id=session_id, **agent).running() as session:
            yield session
    finally:
        journal.close()


async def test_the_callers_spend_is_the_sum_of_its_childrens_and_replays_from_its_log(tmp_path: Path) -> None:
    clock = ManualClock()
    leaf = researcher_agent(clock)

    def middle(context: LlmContext) -> ModelReply:  # asks the leaf, then passes its answer on
        found = results(context)
        if found:
            return say(f"via leaf: {found[0].content}", usage=CALL)
        return call_tools(("deeper", {"task": question(context)}, "deep-1"), usage=CALL)

    mid = Agent(ScriptedModel(middle), tools=[leaf.as_tool("deeper", "Ask the leaf.")], clock=clock, pricing=cents)
    store = SqliteStore(tmp_path / "tree.db")
    research = mid.as_tool("research", "Research.")
    config = AgentConfig(max_cost=nanos("1"))
    async with open_session(
        store, "top", ScriptedModel(planner), tools=[research], clock=clock, config=config, pricing=cents
    ) as session:
        session.send("pets")
        with anyio.fail_after(10):
            state = await session.turn_done()
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    children = [load_state(store, f"top:ask-{topic}") for topic in TOPICS]
    for child in children:  # each child: 2 calls of its own, its leaf's 2 calls and lookup, 2 cents a level
        grandchild = load_state(store, f"{child.session_id}:deep-1")
        assert spent(grandchild) == Spend(model_calls=2, tool_calls=1, tokens=800, cost=nanos("0.02"))
        assert child.children_spent == spent(grandchild)
        assert spent(child) == Spend(model_calls=4, tool_calls=2, tokens=1600, cost=nanos("0.04"))
    total = Spend(model_calls=8, tool_calls=4, tokens=3200, cost=nanos("0.08"))
    assert state.children_spent == total  # the roll-up is the sum of the children, their children's included
    own = Spend(model_calls=2, tool_calls=2, tokens=state.input_tokens + state.output_tokens, cost=state.cost)
    assert state.last_outcome.spent == spent(state) == Spend(
        model_calls=own.model_calls + total.model_calls,
        tool_calls=own.tool_calls + total.tool_calls,
        tokens=own.tokens + total.tokens,
        cost=own.cost + total.cost,
    )
    assert [state.tool_calls[f"ask-{t}"].child_spent for t in TOPICS] == [spent(c) for c in children]
    assert replay_session(store, "top").state == state  # what entered the caller's state is in its log


def stuck_researcher(entered: anyio.Event) -> tuple[Agent, ManualClock]:
    """A researcher whose second lookup of a topic never ends; every model call costs a cent.

    Counted per topic, not in all: the children run at once in no set order, and
    one child may look twice before the other looks once. Its third question would
    then be the same call a third time, which ends its turn as stuck.
    """
    looked: dict[str, int] = {}

    @tool
    async def lookup(topic: str) -> str:
        """Look a topic up."""
        looked[topic] = looked.get(topic, 0) + 1
        if looked[topic] > 1:
            entered.set()
            await anyio.sleep_forever()
        return f"{topic} facts"

    def again(context: LlmContext) -> ModelReply:
        n = len(results(context))
        return call_tools(("lookup", {"topic": question(context)}, f"lookup-{n}"), usage=CALL)

    clock = ManualClock()
    return Agent(ScriptedModel(again), tools=[lookup], clock=clock, ids=SequentialIds(), pricing=cents), clock


async def test_children_that_spend_the_callers_turn_budget_stop_it_as_they_spend(tmp_path: Path) -> None:
    entered = anyio.Event()
    child, clock = stuck_researcher(entered)
    store = SqliteStore(tmp_path / "team.db")
    research = child.as_tool("research", "Research.")
    config = AgentConfig(max_cost=nanos("0.025"))
    async with open_session(
        store, "plan", ScriptedModel(planner), tools=[research], clock=clock, config=config, pricing=cents
    ) as session:
        session.send("pets")
        with anyio.fail_after(10):  # without the roll-up the children would run on, never answering
            state = await session.turn_done()
    outcome = state.last_outcome
    assert outcome is not None and (outcome.kind, outcome.reason) == ("failed", "max-cost")
    assert state.children_spent is not None and state.children_spent.cost >= nanos("0.025")
    theirs = state.children_spent.cost
    assert outcome.detail == (
        f"the turn's model calls cost {format_nanos(state.cost + theirs)} of its budget of 0.025 "
        f"({format_nanos(theirs)} by its child sessions)"
    )
    for call_id in ("ask-cats", "ask-dogs"):
        result = state.tool_calls[call_id].result
        assert isinstance(result, ToolFailure) and result.error.startswith("interrupted: the turn was failed")
        child_state = load_state(store, f"plan:{call_id}")
        child_outcome = child_state.last_outcome
        assert child_state.turn is None and child_outcome is not None
        assert (child_outcome.kind, child_outcome.detail) == ("cancelled", "the calling turn was cancelled")
        assert all(r.status == "completed" for r in child_state.tool_calls.values())  # dangling calls closed
    assert replay_session(store, "plan").state == state


async def test_a_childs_tool_calls_count_toward_the_callers_tool_call_budget(tmp_path: Path) -> None:
    entered = anyio.Event()
    child, clock = stuck_researcher(entered)
    store = SqliteStore(tmp_path / "team.db")
    config = AgentConfig(max_tool_calls=4)  # the planner's own 2 calls, then the children's lookups
    tools = [child.as_tool("research", "Research.")]
    async with open_session(store, "plan", ScriptedModel(planner), tools=tools, clock=clock, config=config) as session:
        session.send("pets")
        with anyio.fail_after(10):
            state = await session.turn_done()
    outcome = state.last_outcome
    assert outcome is not None and (outcome.kind, outcome.reason) == ("failed", "max-tool-calls")
    assert state.children_spent is not None
    assert outcome.detail == (
        f"the turn's budget of 4 tool calls is spent ({2 + state.children_spent.tool_calls} used, "
        f"{state.children_spent.tool_calls} by its child sessions)"
    )


async def test_a_child_over_the_smaller_limits_its_caller_gave_fails_the_call_with_a_result_the_caller_reads(
    tmp_path: Path,
) -> None:
    clock = ManualClock()
    child = researcher_agent(clock, max_cost=nanos("1"))
    research = child.as_tool("research", "Research.", max_cost=nanos("0.005"), max_tool_calls=10)
    store = SqliteStore(tmp_path / "team.db")
    async with open_session(store, "plan", ScriptedModel(planner), tools=[research], clock=clock) as session:
        session.send("pets")
        with anyio.fail_after(10):
            state = await session.turn_done()
    error = (
        "agent 'research' (child session 'plan:ask-cats') failed: max-cost "
        "(the turn's model calls cost 0.01 of its budget of 0.005)"
    )
    assert state.tool_calls["ask-cats"].result == ToolFailure(error=error, code="agent-failed")
    assert state.messages[len(state.messages) - 1].content.startswith(f"{error} (failed) | ")  # the model read it
    child_config = load_state(store, "plan:ask-cats").config
    assert (child_config.max_cost, child_config.max_tool_calls) == (nanos("0.005"), 10)  # logged in the child


def test_limits_larger_than_the_childs_own_leave_them_and_nonsense_is_refused() -> None:
    child = researcher_agent(ManualClock(), max_model_calls=3)
    research = child.as_tool("research", "Research.", max_model_calls=5)
    assert research is not None and child.config.max_model_calls == 3
    with pytest.raises(ValueError) as refused:
        child.as_tool("research", "Research.", max_tokens=-1)
    assert str(refused.value).startswith("agent tool 'research': its agent's configuration is refused: ")
    assert "max_tokens" in str(refused.value)


async def test_a_call_that_times_out_cancels_its_childs_turn_and_the_turns_below_it(tmp_path: Path) -> None:
    entered = anyio.Event()

    @tool
    async def slow(topic: str) -> str:
        """Look a topic up (never ends)."""
        entered.set()
        await anyio.sleep_forever()
        return topic  # pragma: no cover

    clock = ManualClock()
    leaf = Agent(
        ScriptedModel([call_tools(("slow", {"topic": "cats"}, "slow-1"))]), tools=[slow], clock=clock
    ).as_tool("deeper", "Ask the leaf.")
    mid = Agent(ScriptedModel([call_tools(("deeper", {"task": "cats"}, "deep-1"))]), tools=[leaf], clock=clock)
    script = [call_tools(("research", {"task": "cats"}, "ask-cats")), say("gave up")]
    store = SqliteStore(tmp_path / "tree.db")
    research = mid.as_tool("research", "Research.", timeout_ms=5_000)
    async with open_session(store, "top", ScriptedModel(script), tools=[research], clock=clock) as session:
        session.send("go")
        with anyio.fail_after(10):
            await entered.wait()
            clock.advance(5_000)
            state = await session.turn_done()
    result = state.tool_calls["ask-cats"].result
    assert isinstance(result, ToolFailure) and result.code == "timeout"
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    reasons = {"top:ask-cats": "the calling tool call 'ask-cats' timed out after 5000 ms"}
    reasons["top:ask-cats:deep-1"] = "the calling turn was cancelled"
    for child_id, reason in reasons.items():
        child_state = load_state(store, child_id)
        outcome = child_state.last_outcome
        assert child_state.turn is None and outcome is not None, child_id
        assert (outcome.kind, outcome.detail) == ("cancelled", reason), child_id
        [call] = child_state.tool_calls.values()  # closed by the cancellation, with its reason
        assert call.result == ToolFailure(
            error=f"interrupted: the turn was cancelled ({reason}) while the tool was running; its outcome is unknown"
        ), child_id


async def test_children_without_a_pool_of_their_own_draw_from_the_callers(tmp_path: Path) -> None:
    pools = BudgetPools.sqlite(tmp_path / "pools.db", per_call=nanos("0.05"))
    try:
        pools.set_cap("acme", nanos("1"))
        clock = ManualClock()
        research = researcher_agent(clock).as_tool("research", "Research.")
        script = [call_tools(*(("research", {"task": t}, f"ask-{t}") for t in TOPICS), usage=CALL), say("ok", usage=CALL)]
        store = SqliteStore(tmp_path / "team.db")
        async with open_session(
            store,
            "plan",
            ScriptedModel(script),
            tools=[research],
            clock=clock,
            config=AgentConfig(budget_pool="acme"),
            pricing=cents,
            pools=pools,
        ) as session:
            session.send("pets")
            with anyio.fail_after(10):
                state = await session.turn_done()
        assert state.last_outcome is not None and state.last_outcome.kind == "completed"
        assert load_state(store, "plan:ask-cats").config.budget_pool == "acme"
        totals = pools.totals("acme", clock.now_ms())
        assert state.children_spent is not None
        assert totals.spent == state.cost + state.children_spent.cost == nanos("0.06")  # 2 own calls, 4 children's
    finally:
        pools.close()


def counting_researcher(context: LlmContext) -> ModelReply:
    """Looks up as many times as its task says, then answers; every call costs a cent."""
    found = results(context)
    if len(found) < int(question(context).split()[0]):
        return call_tools(("lookup", {"topic": f"topic {len(found)}"}, f"lookup-{len(found)}"), usage=CALL)
    return say("done", usage=CALL)


async def _tree(lookups: list[int]) -> tuple[AgentState, Spend]:
    clock = ManualClock()
    child = Agent(ScriptedModel(counting_researcher), tools=[lookup], clock=clock, pricing=cents)
    asks = [("research", {"task": f"{n} (child {i})"}, f"ask-{i}") for i, n in enumerate(lookups)]
    parent = Agent(ScriptedModel([call_tools(*asks), say("ok")]), tools=[child.as_tool("research", "R.")], clock=clock)
    async with parent.running() as session:  # no store: the children run in memory, and report all the same
        session.send("go")
        with anyio.fail_after(10):
            state = await session.turn_done()
    calls = sum(n + 1 for n in lookups)
    return state, Spend(model_calls=calls, tool_calls=sum(lookups), tokens=400 * calls, cost=nanos("0.01") * calls)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=4))
def test_the_roll_up_of_random_children_is_their_sum(lookups: list[int]) -> None:
    state, expected = anyio.run(_tree, lookups)
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    assert state.children_spent == expected


def unpriced_children(**config: Any) -> Agent:
    """A priced planner whose researcher children run a model nobody can price (``pricing=None``)."""
    clock = ManualClock()
    child = Agent(ScriptedModel(priced_researcher), tools=[lookup], clock=clock, pricing=None)
    model = ScriptedModel([call_tools(*(("research", {"task": t}, f"ask-{t}") for t in TOPICS), usage=CALL), say("ok")])
    return Agent(
        model, tools=[child.as_tool("research", "R.")], clock=clock, pricing=cents, config=AgentConfig(**config)
    )


async def test_a_child_that_cannot_be_priced_leaves_the_callers_cost_unknown_not_zero() -> None:
    async with unpriced_children().running() as session:
        session.send("pets")
        with anyio.fail_after(10):
            state = await session.turn_done()
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    for topic in TOPICS:  # each call's report says its child's cost is unknown
        assert state.tool_calls[f"ask-{topic}"].child_spent == Spend(
            model_calls=2, tool_calls=1, tokens=800, unpriced=True
        )
    assert state.children_spent == Spend(model_calls=4, tool_calls=2, tokens=1600, unpriced=True)
    assert spent(state).unpriced and spent(state).cost == state.cost  # the planner's own cost, and more unknown


async def test_a_caller_with_a_cost_budget_ends_its_turn_when_a_child_cannot_be_priced() -> None:
    async with unpriced_children(max_cost=nanos("1")).running() as session:
        session.send("pets")
        with anyio.fail_after(10):
            state = await session.turn_done()
    outcome = state.last_outcome
    assert outcome is not None and (outcome.kind, outcome.reason) == ("failed", "unpriced")
    assert outcome.detail == (
        "a model call of a child session could not be priced, so the cost budgets cannot be kept; "
        "give the child's agent a pricing"
    )
