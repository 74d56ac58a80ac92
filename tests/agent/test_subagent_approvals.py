"""Approvals across a tree of sessions: a child's call that needs approval waits in every session above it, a
decision taken at the root reaches the child, and all of it survives the process dying."""

from __future__ import annotations

import signal
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent_core import AgentState, PendingApproval, Phase, ReActCancelled, ToolFailure, ToolSuccess
from effects import (
    Agent,
    ChildEvent,
    EventStore,
    InputRejected,
    MachineEvent,
    Session,
    SessionClosed,
    SessionJournal,
    SqliteStore,
    Tool,
    create_app,
    load_state,
    open_session,
    open_store,
    replay_session,
)
from effects.cli import main
from effects.testing import ScriptedModel

from ._gated import TOPICS, editor, planner, writers
from ._process import run

pytestmark = pytest.mark.anyio


def gated_team(depth: int, ran: Callable[[str], None]) -> Tool[..., Any]:
    """The planner's ``ask``: a writer (``depth`` 1), or an editor that asks a writer (``depth`` 2)."""
    ask = writers(ran).as_tool("ask" if depth == 1 else "deeper", "Ask a writer.")
    if depth == 1:
        return ask
    return Agent(ScriptedModel(editor), tools=[ask]).as_tool("ask", "Ask an editor.")


@asynccontextmanager
async def all_waiting(
    ask: Tool[..., Any], store: EventStore | None = None, heard: Callable[[MachineEvent], None] | None = None
) -> AsyncIterator[Session]:
    """The planner's session ``plan`` (kept in ``store``; in memory without one) with ``ask`` as its tool, once it
    has asked about every topic and a ``write`` waits at it for each; ``heard`` subscribes before anything runs."""
    model = ScriptedModel(planner)
    opened = (
        open_session(store, "plan", model, tools=[ask])
        if store is not None
        else Agent(model, tools=[ask], session_id="plan").running()
    )
    async with opened as session:
        if heard is not None:
            session.subscribe(heard)
        session.send("write about pets")
        with anyio.fail_after(10):
            await session.machine.until(lambda _: len(session.pending_approvals) == len(TOPICS))
        yield session


def waiting(topic: str) -> PendingApproval:
    """What the root ``plan`` shows for the writer of ``topic`` waiting on its ``write``."""
    return PendingApproval(
        address=f"plan:ask-{topic}/write-1",
        path=("plan", f"plan:ask-{topic}"),
        tool_call_id="write-1",
        tool="write",
        arguments=f'{{"topic":"{topic}"}}',
        via=f"ask-{topic}",
    )


async def test_two_children_wait_at_once_and_the_root_decides_each(tmp_path: Path) -> None:
    ran: list[str] = []
    store = SqliteStore(tmp_path / "team.db")
    ask = writers(ran.append).as_tool("ask", "Ask a writer.")
    async with all_waiting(ask, store) as session:
        assert session.phase is Phase.AWAITING_APPROVAL
        assert sorted(session.pending_approvals, key=lambda p: p.address) == [waiting(t) for t in TOPICS]
        assert ran == []  # nothing runs before a person decides
        session.approve("plan:ask-cats/write-1")
        session.deny("plan:ask-dogs/write-1", "not dogs")
        with anyio.fail_after(10):
            state = await session.machine.until(lambda s: s.turn is None)
    assert state.messages[len(state.messages) - 1].content == ("cats: wrote cats | dogs: denied by the user: not dogs")
    assert ran == ["cats"]
    for topic in TOPICS:  # each decision is in the child's own log, which replays alone
        child = replay_session(store, f"plan:ask-{topic}").state
        assert child.tool_calls["write-1"].status == "completed"
    # The root's log holds what waited below it: each call asked once, with the requests of its child.
    root = replay_session(store, "plan").state
    assert [root.tool_calls[f"ask-{t}"].input_rounds for t in TOPICS] == [1, 1]


async def test_a_grandchild_waits_in_all_three_sessions_and_the_root_approves_it(tmp_path: Path) -> None:
    ran: list[str] = []
    store = SqliteStore(tmp_path / "tree.db")
    middle = Agent(ScriptedModel(editor), tools=[writers(ran.append).as_tool("deeper", "Ask a writer.")])
    ask = middle.as_tool("ask", "Ask an editor.")
    async with all_waiting(ask, store) as session:
        cats = next(p for p in session.pending_approvals if p.via == "ask-cats")
        assert cats.path == ("plan", "plan:ask-cats", "plan:ask-cats:deep-1")
        assert cats.address == "plan:ask-cats:deep-1/write-1"
        assert load_state(store, "plan:ask-cats").turn is not None  # the editor in between waits too
        session.decide({"plan:ask-cats:deep-1/write-1": True, "plan:ask-dogs:deep-1/write-1": "no dogs"})
        with anyio.fail_after(10):
            state = await session.machine.until(lambda s: s.turn is None)
    assert state.messages[len(state.messages) - 1].content == (
        "edited cats: wrote cats | edited dogs: denied by the user: no dogs"
    )
    assert ran == ["cats"]
    leaf = load_state(store, "plan:ask-dogs:deep-1").tool_calls["write-1"]
    assert leaf.result == ToolFailure(error="denied by the user: no dogs")


async def test_children_in_memory_wait_for_the_root_too() -> None:
    ran: list[str] = []
    ask = writers(ran.append).as_tool("ask", "Ask a writer.")
    async with all_waiting(ask) as session:
        session.decide({"plan:ask-cats/write-1": True, "plan:ask-dogs/write-1": True})
        with anyio.fail_after(10):
            state = await session.machine.until(lambda s: s.turn is None)
    assert state.messages[len(state.messages) - 1].content == "cats: wrote cats | dogs: wrote dogs"
    assert sorted(ran) == list(TOPICS)


async def test_a_decision_on_a_call_no_longer_waiting_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "team.db")
    ask = writers(lambda _: None).as_tool("ask", "Ask a writer.")
    rejected: list[MachineEvent] = []
    async with all_waiting(
        ask, store, lambda e: rejected.append(e) if isinstance(e, InputRejected) else None
    ) as session:
        session.approve("plan:ask-cows/write-1")
        await session.settled()
    assert len(rejected) == 1
    assert load_state(store, "plan").tool_calls["ask-cats"].status == "awaiting-input"


async def decide_after_the_crash(target: str, runs: Path, *, by_cli: bool) -> None:
    """The planner's process dies while both writers wait; reopened, the root shows both, a person decides
    (through the root's session, or with `agent-core approve` on the store), and each child goes on from its log."""
    assert run("_gated_child.py", target, runs) == -signal.SIGKILL  # killed once both writers wait
    ran: list[str] = []
    ask = writers(ran.append).as_tool("ask", "Ask a writer.")
    if by_cli:  # written into the root's log while no process runs it
        assert main(["approve", target, "plan"]) == 0
        assert main(["approve", target, "plan", "plan:ask-cats/write-1"]) == 0
    store = open_store(target)
    async with open_session(store, "plan", ScriptedModel(planner), tools=[ask]) as session:
        with anyio.fail_after(20):
            await session.turn_done()
            if not by_cli:
                assert sorted(p.address for p in session.pending_approvals) == [f"plan:ask-{t}/write-1" for t in TOPICS]
                session.approve("plan:ask-cats/write-1")
            session.approve("plan:ask-dogs/write-1")
            state = await session.machine.until(lambda s: s.turn is None)
    assert state.messages[len(state.messages) - 1].content == "cats: wrote cats | dogs: wrote dogs"
    assert sorted(ran) == list(TOPICS)  # each ran once, after the restart
    assert runs.exists() is False or runs.read_text() == ""  # nothing ran in the process that died
    for session_id in ("plan", *(f"plan:ask-{t}" for t in TOPICS)):
        replay_session(store, session_id)  # every log replays and verifies alone
    calls = load_state(store, "plan").tool_calls
    assert {c: calls[c].result for c in ("ask-cats", "ask-dogs")} == {
        f"ask-{t}": ToolSuccess(content=f"{t}: wrote {t}") for t in TOPICS
    }
    assert Counter(ran) == Counter(TOPICS)


@pytest.mark.slow
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # a process per run: one event loop is enough
async def test_approvals_survive_the_process_dying_while_they_wait(tmp_path: Path) -> None:
    await decide_after_the_crash(str(tmp_path / "team.db"), tmp_path / "runs", by_cli=False)


@pytest.mark.slow
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # a process per run: one event loop is enough
async def test_the_same_on_postgresql(tmp_path: Path, postgres_dsn: str) -> None:
    await decide_after_the_crash(postgres_dsn, tmp_path / "runs", by_cli=False)


@pytest.mark.slow
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # a process per run: one event loop is enough
async def test_agent_core_approve_decides_a_childs_call_through_the_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    await decide_after_the_crash(str(tmp_path / "team.db"), tmp_path / "runs", by_cli=True)
    out = capsys.readouterr().out
    assert 'plan:ask-cats/write-1  plan → plan:ask-cats  write {"topic":"cats"}' in out
    assert "session plan: plan:ask-cats/write-1 approved (record " in out


async def test_the_viewer_lists_a_childs_call_on_the_root_and_its_approve_reaches_the_child(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    ran: list[str] = []
    store = SqliteStore(tmp_path / "team.db")
    ask = writers(ran.append).as_tool("ask", "Ask a writer.")
    async with all_waiting(ask, store):
        pass  # the planner stops while both writers wait
    with TestClient(create_app(store), base_url="http://127.0.0.1:8765") as client:
        shown = client.get("/api/sessions/plan").json()["approvals"]
        assert sorted(shown, key=lambda a: a["tool_call_id"]) == [
            {
                "tool_call_id": f"plan:ask-{t}/write-1",
                "name": "write",
                "parameters": f'{{"topic":"{t}"}}',
                "path": ["plan", f"plan:ask-{t}"],
            }
            for t in TOPICS
        ]
        for t in TOPICS:
            decided = client.post(
                "/api/sessions/plan/decisions", json={"tool_call_id": f"plan:ask-{t}/write-1", "approve": True}
            )
            assert decided.status_code == 200, decided.text
    async with open_session(store, "plan", ScriptedModel(planner), tools=[ask]) as session:
        with anyio.fail_after(10):
            state = await session.machine.until(lambda s: s.turn is None)
    assert state.messages[len(state.messages) - 1].content == "cats: wrote cats | dogs: wrote dogs"
    assert sorted(ran) == list(TOPICS)


def ended_by_the_caller(child: AgentState, session_id: str) -> None:
    """``child`` (the state of ``session_id``) ended its turn because its caller's was cancelled, its calls closed."""
    outcome = child.last_outcome
    assert child.turn is None and outcome is not None, session_id
    assert (outcome.kind, outcome.detail) == ("cancelled", "the calling turn was cancelled"), session_id
    for call in child.tool_calls.values():
        assert call.status == "completed" and isinstance(call.result, ToolFailure), (session_id, call)


@pytest.mark.parametrize("depth", [1, 2])
async def test_cancelling_the_root_while_children_wait_ends_every_childs_turn_in_its_log(
    tmp_path: Path, depth: int
) -> None:
    ran: list[str] = []
    store = SqliteStore(tmp_path / "team.db")
    ask = gated_team(depth, ran.append)
    async with all_waiting(ask, store) as session:
        session.cancel("enough")
        with anyio.fail_after(10):
            state = await session.turn_done()
    assert state.last_outcome is not None and state.last_outcome.kind == "cancelled"
    assert session.pending_approvals == ()
    children = [f"plan:ask-{t}" + (":deep-1" if level == 2 else "") for t in TOPICS for level in range(1, depth + 1)]
    for child_id in children:  # each child's log ends its turn, and replays alone to it
        ended_by_the_caller(replay_session(store, child_id).state, child_id)
    assert ran == []


@pytest.mark.parametrize("depth", [1, 2])
async def test_cancelling_the_root_ends_the_turns_of_children_in_memory_that_wait(depth: int) -> None:
    closed: dict[tuple[str, ...], AgentState] = {}

    def heard(event: object) -> None:
        if isinstance(event, ChildEvent) and isinstance(event.event, SessionClosed):
            closed[event.path] = event.event.state

    ask = gated_team(depth, lambda _: None)
    async with all_waiting(ask, heard=heard) as session:
        session.cancel("enough")
        with anyio.fail_after(10):
            await session.turn_done()
    assert len(closed) == len(TOPICS) * depth
    for path, child in closed.items():  # the last time each child closed, its turn had ended
        ended_by_the_caller(child, path[-1])


async def test_a_root_cancelled_in_its_log_alone_ends_its_waiting_childrens_turns_when_it_reopens(
    tmp_path: Path,
) -> None:
    # As if the process died right after the root's cancellation was committed, before its children heard of it.
    store = SqliteStore(tmp_path / "team.db")
    ask = gated_team(2, lambda _: None)
    async with all_waiting(ask, store):
        pass
    journal = SessionJournal.open(store, "plan")
    try:
        journal.append([ReActCancelled(timestamp=journal.state.timestamp, reason="enough")])
    finally:
        journal.close()
    async with open_session(store, "plan", ScriptedModel(planner), tools=[ask]):
        pass  # reopened and closed: what the last turn left waiting is ended as the session runs
    for topic in TOPICS:
        for child_id in (f"plan:ask-{topic}", f"plan:ask-{topic}:deep-1"):
            ended_by_the_caller(replay_session(store, child_id).state, child_id)
