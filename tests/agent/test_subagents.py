"""An agent as a tool: each call runs a child session, kept in the caller's store with its lineage."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager as AsyncContextManager
from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel

from agent_core import AgentConfig, Lineage, LlmContext, ReActCancelled, ToolFailure, ToolSuccess
from effects import (
    Agent,
    ModelReply,
    Session,
    SessionInfo,
    SessionJournal,
    SqliteStore,
    Toolbox,
    conversation,
    load_state,
    open_session,
    replay_session,
    tool,
)
from effects.testing import ManualClock, ScriptedModel, SequentialIds, call_tools, fail, say

from ._team import TOPICS, parallel_lookup, planner, question, researcher, results

pytestmark = pytest.mark.anyio


def team(lookup: object, model: ScriptedModel | None = None) -> tuple[Agent, ManualClock]:
    """A researcher agent on a manual clock; ``model`` replaces its scripted model."""
    clock = ManualClock()
    child = Agent(model or ScriptedModel(researcher), tools=[lookup], clock=clock, ids=SequentialIds())  # type: ignore[list-item]
    return child, clock


async def test_a_planner_asks_two_researchers_in_parallel_each_in_its_own_log(tmp_path: Path) -> None:
    lookup = parallel_lookup()  # only children running in parallel get past it
    child, clock = team(lookup)
    store = SqliteStore(tmp_path / "team.db")
    research = child.as_tool("research", "Research a topic and report.")
    async with open_session(store, "plan", ScriptedModel(planner), tools=[research], clock=clock) as session:
        session.send("tell me about pets")
        with anyio.fail_after(10):
            state = await session.turn_done()
    assert state.messages[len(state.messages) - 1].content == "cats: cats facts | dogs: dogs facts"
    for topic in TOPICS:
        child_id = f"plan:ask-{topic}"
        child_state = load_state(store, child_id)
        lineage = Lineage(parent_session_id="plan", parent_tool_call_id=f"ask-{topic}", root_session_id="plan")
        assert child_state.config.lineage == lineage
        assert [child_state.messages[i].content for i in range(2)] == [topic, f"{topic}: {topic} facts"]
        report = replay_session(store, child_id)  # a normal session: its log replays and verifies alone
        assert report.state == child_state
        first = conversation(store, child_id)[0]  # what `agent-core show` prints first
        assert first.text.endswith(f"child of session plan (tool call ask-{topic}), root plan")
    assert load_state(store, "plan").config.lineage is None


async def test_a_grandchild_names_the_root_of_its_tree(tmp_path: Path) -> None:
    @tool
    def lookup(topic: str) -> str:
        """Look a topic up."""
        return f"{topic} facts"

    leaf, clock = team(lookup)

    def middle(context: LlmContext) -> ModelReply:
        found = results(context)
        return say(f"via leaf: {found[0].content}") if found else call_tools(("deeper", {"task": "cats"}, "deep-1"))

    mid = Agent(ScriptedModel(middle), tools=[leaf.as_tool("deeper", "Ask the leaf.")], clock=clock)
    store = SqliteStore(tmp_path / "tree.db")
    research = mid.as_tool("research", "Research a topic.")
    async with open_session(store, "top", ScriptedModel(planner), tools=[research], clock=clock) as session:
        session.send("go")
        with anyio.fail_after(10):
            state = await session.turn_done()
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    grandchild = load_state(store, "top:ask-cats:deep-1")
    expected = Lineage(parent_session_id="top:ask-cats", parent_tool_call_id="deep-1", root_session_id="top", depth=2)
    assert grandchild.config.lineage == expected
    assert grandchild.messages[1].content == "cats: cats facts"


async def test_a_child_that_fails_gives_the_parent_a_failure_result_it_reads() -> None:
    @tool
    def lookup(topic: str) -> str:
        """Look a topic up."""
        return f"{topic} facts"

    def flaky(context: LlmContext) -> ModelReply | Exception:
        return fail("the model refused", retryable=False) if "dogs" in str(context.entries[-1]) else researcher(context)

    child, clock = team(lookup, ScriptedModel(flaky))
    parent = Agent(ScriptedModel(planner), tools=[child.as_tool("research", "Research.")], clock=clock)
    async with parent.running() as session:  # no store: the children run in memory
        session.send("pets")
        with anyio.fail_after(10):
            state = await session.turn_done()
    result = state.tool_calls["ask-dogs"].result
    assert isinstance(result, ToolFailure)
    assert (
        result.error
        == "agent 'research' (child session '"
        + state.session_id
        + ":ask-dogs') failed: llm-error (model call not retryable: the model refused)"
    )
    assert result.code == "agent-failed"
    assert state.messages[len(state.messages) - 1].content == f"cats: cats facts | {result.error} (failed)"


async def test_a_child_answers_with_its_structured_output() -> None:
    child = Agent(
        ScriptedModel(lambda c: say('{"topic": "cats", "count": 3}')), output_type=Finding, clock=ManualClock()
    )
    parent = Agent(
        ScriptedModel(planner),
        tools=[child.as_tool("research", "Research.")],
        clock=ManualClock(),
        config=AgentConfig(),
    )
    async with parent.running() as session:
        session.send("pets")
        with anyio.fail_after(10):
            state = await session.turn_done()
    assert state.tool_calls["ask-cats"].result.content == '{"topic":"cats","count":3}'  # type: ignore[union-attr]


class Finding(BaseModel):
    topic: str
    count: int


class Request(BaseModel):
    """What to look up."""

    topic: str
    depth: int = 1


async def test_a_child_with_an_input_type_gets_the_object_as_json() -> None:
    def echo(context: LlmContext) -> ModelReply:
        return say(f"asked {question(context)}")

    child = Agent(ScriptedModel(echo), clock=ManualClock())
    research = child.as_tool("research", "Research.", input_type=Request)
    assert json.loads(research.definition.parameters)["required"] == ["topic"]
    script = [
        call_tools(("research", {"topic": "cats", "depth": 2}, "r1"), ("research", {"depth": 2}, "r2")),
        say("done"),
    ]
    parent = Agent(ScriptedModel(script), tools=[research], clock=ManualClock())
    async with parent.running() as session:
        session.send("pets")
        with anyio.fail_after(10):
            state = await session.turn_done()
    assert state.tool_calls["r1"].result == ToolSuccess(content='asked {"topic":"cats","depth":2}')
    refused = state.tool_calls["r2"].result
    assert isinstance(refused, ToolFailure) and refused.code == "invalid-arguments"
    assert refused.error == (  # the message every tool gives
        "invalid arguments for tool 'research' (tool call 'r2'): argument 'topic' is required but missing. "
        "Call research again with a JSON object of arguments: topic: string (required), depth: integer"
    )


def test_a_child_tool_name_clashing_with_a_parent_tool_is_refused_naming_both() -> None:
    @tool
    def research(task: str) -> str:
        """Search the web."""
        return task

    child = Agent(ScriptedModel([say("x")]))
    with pytest.raises(ValueError) as refused:
        Agent(ScriptedModel([say("x")]), tools=[research, child.as_tool("research", "Ask the researcher.")])
    assert str(refused.value) == (
        "two tools are named 'research' (<Tool 'research'> and <agent tool 'research'>); expected unique names "
        "(pass name=... to @tool, or another name to Agent.as_tool)"
    )


def test_an_agent_whose_sessions_would_refuse_its_config_is_refused_as_a_tool() -> None:
    agent = Agent(ScriptedModel([say("x")]), config=AgentConfig(llm_max_attempts=0))
    with pytest.raises(ValueError) as refused:
        agent.as_tool("researcher", "Researches.")
    assert str(refused.value) == (
        "agent tool 'researcher': its agent's configuration is refused: expected llm_max_attempts of 1 or more, got 0"
    )


def three_levels(tmp_path: Path) -> tuple[SqliteStore, Callable[[], AsyncContextManager[Session]], anyio.Event]:
    """A store, a way to open the session ``top`` whose ``research`` runs a child whose ``deeper`` runs a grandchild,
    and the event set once the grandchild's ``lookup`` runs (and waits forever)."""
    entered = anyio.Event()

    @tool
    async def lookup(topic: str) -> str:
        """Look a topic up (slowly)."""
        entered.set()
        await anyio.sleep_forever()
        return topic  # pragma: no cover

    leaf, clock = team(lookup)

    def middle(context: LlmContext) -> ModelReply:
        return call_tools(("deeper", {"task": question(context)}, "deep-1"))

    mid = Agent(ScriptedModel(middle), tools=[leaf.as_tool("deeper", "Ask the leaf.")], clock=clock)
    store = SqliteStore(tmp_path / "tree.db")
    script = [call_tools(("research", {"task": "cats"}, "ask-cats"))]
    research = mid.as_tool("research", "R.")
    return store, lambda: open_session(store, "top", ScriptedModel(script), tools=[research], clock=clock), entered


def cancelled_by_the_caller(store: SqliteStore) -> None:
    """Both children of ``top`` ended their turns because the calling turn was cancelled, each dangling call closed."""
    for child in ("top:ask-cats", "top:ask-cats:deep-1"):
        child_state = load_state(store, child)
        outcome = child_state.last_outcome
        assert child_state.turn is None and outcome is not None, child
        assert (outcome.kind, outcome.detail) == ("cancelled", "the calling turn was cancelled"), child
        [call] = child_state.tool_calls.values()  # each level's dangling call is closed, in its own log
        assert call.result == ToolFailure(
            error="interrupted: the turn was cancelled (the calling turn was cancelled) while the tool was running; "
            "its outcome is unknown"
        ), child


async def test_cancelling_the_calling_turn_cancels_the_child_turns_below_it(tmp_path: Path) -> None:
    store, opened, entered = three_levels(tmp_path)
    async with opened() as s:
        s.send("go")
        with anyio.fail_after(10):
            await entered.wait()  # the grandchild's tool runs
            s.cancel("enough")
            state = await s.turn_done()
    assert state.last_outcome is not None and state.last_outcome.kind == "cancelled"
    cancelled_by_the_caller(store)
    top_call = state.tool_calls["ask-cats"]
    assert top_call.status == "completed" and isinstance(top_call.result, ToolFailure)


async def test_a_caller_cancelled_in_its_log_alone_ends_its_running_childrens_turns_when_it_reopens(
    tmp_path: Path,
) -> None:
    # As if the process died right after the caller's cancellation was committed, while the calls below it ran.
    store, opened, entered = three_levels(tmp_path)
    async with opened() as s:
        s.send("go")
        with anyio.fail_after(10):
            await entered.wait()  # the grandchild's tool runs; leaving the block leaves every turn open to resume
    journal = SessionJournal.open(store, "top")
    try:
        journal.append([ReActCancelled(timestamp=journal.state.timestamp, reason="enough")])
    finally:
        journal.close()
    assert load_state(store, "top:ask-cats:deep-1").turn is not None
    async with opened():
        pass  # reopened and closed: what the cancelled turn left running below it is ended as the session runs
    cancelled_by_the_caller(store)


async def test_a_reopened_caller_asks_the_store_for_its_children_off_the_event_loop(tmp_path: Path) -> None:
    store, opened, entered = three_levels(tmp_path)
    async with opened() as s:
        s.send("go")
        with anyio.fail_after(10):
            await entered.wait()
    journal = SessionJournal.open(store, "top")
    try:
        journal.append([ReActCancelled(timestamp=journal.state.timestamp, reason="enough")])
    finally:
        journal.close()
    on_the_loop: list[str] = []
    read = store.session

    def session(session_id: str) -> SessionInfo:  # the real store's read, noting the thread it ran on
        if threading.current_thread() is threading.main_thread():
            on_the_loop.append(session_id)
        return read(session_id)

    store.session = session  # type: ignore[method-assign]
    async with opened():
        pass
    del store.session
    assert on_the_loop == []  # opening the caller's log, and its children's, and looking for grandchildren
    cancelled_by_the_caller(store)


async def test_a_session_that_stops_leaves_its_children_open_to_resume(tmp_path: Path) -> None:
    entered = anyio.Event()

    @tool
    async def lookup(topic: str) -> str:
        """Look a topic up (slowly)."""
        entered.set()
        await anyio.sleep_forever()
        return topic  # pragma: no cover

    child, clock = team(lookup)
    store = SqliteStore(tmp_path / "team.db")
    research = child.as_tool("research", "Research.")
    async with open_session(store, "plan", ScriptedModel(planner), tools=[research], clock=clock) as session:
        session.send("pets")
        with anyio.fail_after(10):
            await entered.wait()
    assert load_state(store, "plan:ask-cats").turn is not None  # the block ended; the child's turn waits to resume


def recursive(context: LlmContext) -> ModelReply:
    """Asks itself once, then answers with what came back (an answer, or the failure it read)."""
    found = results(context)
    if not found:
        return call_tools(("ask_self", {"task": "deeper"}, "c1"))
    return say(f"[{'failed: ' if found[0].is_error else ''}{found[0].content}]")


async def test_agents_calling_each_other_without_a_depth_limit_are_refused_naming_the_tools() -> None:
    alone = Agent(ScriptedModel(recursive))
    alone.toolbox = Toolbox([alone.as_tool("ask_self", "Ask yourself.")])
    with pytest.raises(ValueError) as refused:
        async with alone.running():
            pass
    assert str(refused.value) == (
        "agents call each other as tools without a depth limit: agent tool 'ask_self' -> 'ask_self' again; "
        "expected as_tool(..., max_depth=N) on one of these tools"
    )
    first, second = Agent(ScriptedModel(recursive)), Agent(ScriptedModel(recursive))
    first.toolbox = Toolbox([second.as_tool("ask_second", "Ask the second.")])
    second.toolbox = Toolbox([first.as_tool("ask_first", "Ask the first.")])
    with pytest.raises(ValueError, match="agent tool 'ask_second' -> agent tool 'ask_first' -> 'ask_second' again"):
        async with first.running():
            pass


async def test_a_call_beyond_the_depth_limit_gives_the_calling_model_a_failure(tmp_path: Path) -> None:
    agent = Agent(ScriptedModel(recursive), clock=ManualClock(), ids=SequentialIds())
    agent.toolbox = Toolbox([agent.as_tool("ask_self", "Ask yourself.", max_depth=2)])
    store = SqliteStore(tmp_path / "deep.db")
    async with open_session(store, "top", agent.model, tools=agent.toolbox, clock=agent.clock) as session:
        session.send("go")
        with anyio.fail_after(10):
            state = await session.turn_done()
    refusal = (
        "agent tool 'ask_self' (tool call 'c1') would start a child session at depth 3 below session 'top', "
        "deeper than its max_depth 2; answer without it"
    )
    assert state.messages[len(state.messages) - 1].content == f"[[[failed: {refusal}]]]"
    grandchild = load_state(store, "top:c1:c1")
    assert grandchild.config.lineage == Lineage(
        parent_session_id="top:c1", parent_tool_call_id="c1", root_session_id="top", depth=2
    )
    assert grandchild.tool_calls["c1"].result == ToolFailure(error=refusal, code="max-depth")
    assert load_state(store, "top:c1").config.lineage.depth == 1  # type: ignore[union-attr]
