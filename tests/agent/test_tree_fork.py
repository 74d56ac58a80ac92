"""Forking the root of a tree of agents at record N forks its children as they stood at N: new ids under the
forked root, lineage naming the new tree, and a forked tree that, run on, ends as the original did."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from agent_core import AgentState, Lineage
from effects import (
    EventStore,
    MemoryStore,
    Origin,
    SqliteStore,
    fork_session,
    load_state,
    open_session,
    open_store,
    replay_session,
    tool,
)
from effects.cli import main
from effects.testing import ManualClock, ScriptedModel

from ._deep_team import conversations, lookups, planner, sessions, team

pytestmark = pytest.mark.anyio


async def run_tree(store: EventStore, root: str, clock: ManualClock, ran: list[str]) -> None:
    """Run (or resume) the tree under ``root`` to the end of the planner's turn. Each lookup moves the clock on
    a second, so the records after it have a later timestamp than those before it."""

    @tool(idempotent=True)
    def lookup(aspect: str) -> str:
        """Look an aspect up."""
        ran.append(aspect)
        clock.advance(1000)
        return f"{aspect} facts"

    research = team(lookup, clock=clock)
    async with open_session(store, root, ScriptedModel(planner), tools=[research], clock=clock) as session:
        if len(session.state.messages) == 0:
            session.send("tell me about pets")
        with anyio.fail_after(10):
            await session.turn_done()


async def original(tmp_path: Path, store: EventStore | None = None) -> tuple[EventStore, ManualClock]:
    """The tree under ``top``, run to its end in ``store`` (default: in memory)."""
    store = store if store is not None else MemoryStore()
    clock, ran = ManualClock(), list[str]()
    await run_tree(store, "top", clock, ran)
    assert sorted(ran) == sorted(lookups())
    return store, clock


def first_step(store: EventStore, session_id: str, holds: Callable[[AgentState], bool]) -> int:
    """The first record after which ``holds`` is true of the session."""
    length = store.session(session_id).length
    return next(n for n in range(1, length + 1) if holds(load_state(store, session_id, at=n)))


def both_calls(status: str) -> Callable[[AgentState], bool]:
    return lambda s: all(c in s.tool_calls and s.tool_calls[c].status == status for c in ("ask-cats", "ask-dogs"))


def assert_forked_as_it_stood(store: EventStore, at: int, new: str, source_root: str = "top") -> None:
    """Every forked child is its source's log up to the rule's cut, with its new id and lineage."""
    until = load_state(store, source_root, at=at).timestamp
    for source, forked in zip(sessions(source_root)[1:], sessions(new)[1:], strict=True):
        if not store.sessions() or forked not in {s.session_id for s in store.sessions()}:
            continue
        info = store.session(forked)
        assert info.parent is not None and info.parent.session_id == source
        parent_id, _, call = forked.rpartition(":")
        state = replay_session(store, forked).state  # verifies alone
        assert state.session_id == forked
        source_lineage = load_state(store, source).config.lineage
        assert source_lineage is not None
        depth = source_lineage.depth  # as deep below the forked root as its source below the original
        assert state.config.lineage == Lineage(
            parent_session_id=parent_id, parent_tool_call_id=call, root_session_id=new, depth=depth
        )
        assert state.step == info.parent.seq == info.length
        whole = load_state(store, source)
        if info.length < whole.step:  # cut: exactly the records stamped at or before the fork point
            assert load_state(store, source, at=info.length).timestamp <= until
            assert load_state(store, source, at=info.length + 1).timestamp > until
        cut = load_state(store, source, at=info.length)
        assert (state.messages, state.tool_calls, state.turn) == (cut.messages, cut.tool_calls, cut.turn)


async def test_a_fork_at_the_last_record_copies_every_child_whole(tmp_path: Path) -> None:
    store, _ = await original(tmp_path)
    at = store.session("top").length
    journal = fork_session(store, "top", at, new_id="again")
    assert journal.session_id == "again"
    assert_forked_as_it_stood(store, at, "again")
    for source, forked in zip(sessions("top"), sessions("again"), strict=True):
        assert store.session(forked).parent == Origin(session_id=source, seq=store.session(source).length)
    assert conversations(store, "again") == conversations(store, "top")


async def fork_while_the_children_run(store: EventStore, clock: ManualClock) -> None:
    at = first_step(store, "top", both_calls("running"))
    before = {sid: store.session(sid).length for sid in sessions("top")}
    fork_session(store, "top", at, new_id="again")
    assert_forked_as_it_stood(store, at, "again")
    forked = {s.session_id for s in store.sessions()} & set(sessions("again"))
    until = load_state(store, "top", at=at).timestamp
    for source in ("top:ask-cats", "top:ask-dogs"):  # the two children run in parallel: either may start first
        # A child whose first record is stamped after the fork point had not started there: the rule forks none.
        assert (source.replace("top", "again", 1) in forked) == (load_state(store, source, at=1).timestamp <= until)
    assert "again" in forked
    assert any(store.session(sid).length < before[sid.replace("again", "top", 1)] for sid in forked)  # some cut
    ran: list[str] = []
    await run_tree(store, "again", clock, ran)  # the forked root goes on with its forked children
    assert conversations(store, "again") == conversations(store, "top")
    assert {sid: store.session(sid).length for sid in sessions("top")} == before  # the original is not touched
    assert len(ran) <= len(lookups())


async def test_a_fork_while_the_children_run_cuts_them_where_they_stood_and_runs_on_as_the_original(
    tmp_path: Path,
) -> None:
    await fork_while_the_children_run(*await original(tmp_path))


@pytest.mark.slow
async def test_the_same_on_postgresql(tmp_path: Path, postgres_dsn: str, anyio_backend: str) -> None:
    if anyio_backend != "asyncio":
        pytest.skip("the store is the point here, not the event loop")
    await fork_while_the_children_run(*await original(tmp_path, open_store(postgres_dsn)))


async def test_a_fork_of_a_fork_forks_the_forked_children(tmp_path: Path) -> None:
    store, _ = await original(tmp_path)
    fork_session(store, "top", store.session("top").length, new_id="again")
    fork_session(store, "again", store.session("again").length, new_id="third")
    assert_forked_as_it_stood(store, store.session("again").length, "third", source_root="again")
    assert conversations(store, "third") == conversations(store, "top")


async def test_a_fork_before_the_calls_started_forks_no_child(tmp_path: Path) -> None:
    store, clock = await original(tmp_path)
    at = first_step(store, "top", both_calls("pending"))
    fork_session(store, "top", at, new_id="again")
    assert {s.session_id for s in store.sessions()} & set(sessions("again")) == {"again"}
    ran: list[str] = []
    await run_tree(store, "again", clock, ran)  # the children start afresh, under the forked root
    assert conversations(store, "again") == conversations(store, "top")
    assert sorted(ran) == sorted(lookups())


async def test_a_fork_refuses_a_taken_child_id_and_writes_nothing(tmp_path: Path) -> None:
    store, _ = await original(tmp_path)
    fork_session(store, "top:ask-cats", 1, new_id="again:ask-cats")
    with pytest.raises(Exception, match=r"session 'again:ask-cats' already exists \(1 inputs\); choose another id"):
        fork_session(store, "top", store.session("top").length, new_id="again")
    assert "again" not in {s.session_id for s in store.sessions()}


@pytest.mark.slow
async def test_the_fork_command_forks_the_tree_and_lists_the_children(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], anyio_backend: str
) -> None:
    if anyio_backend != "asyncio":
        pytest.skip("the command is the point here, not the event loop")
    store, _ = await original(tmp_path, SqliteStore(tmp_path / "tree.db"))
    at = store.session("top").length
    assert main(["fork", str(tmp_path / "tree.db"), "top", "--at", str(at), "--as", "again"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"forked again from top at record {at}"
    children = [
        f"forked child {new} from {old} at record {store.session(old).length}"
        for old, new in zip(sessions("top")[1:], sessions("again")[1:], strict=True)
    ]
    assert lines[2:] == children
    assert main(["fork", str(tmp_path / "tree.db"), "top", "--at", str(at), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [c["session_id"] for c in report["children"]] == list(sessions(f"top@{at}")[1:])


async def test_a_forked_child_takes_its_own_children_along_in_the_same_tree(tmp_path: Path) -> None:
    store, _ = await original(tmp_path)
    fork_session(store, "top:ask-cats", store.session("top:ask-cats").length, new_id="cats-again")
    for aspect in ("food", "sound"):
        state = replay_session(store, f"cats-again:find-{aspect}").state
        lineage = Lineage(
            parent_session_id="cats-again", parent_tool_call_id=f"find-{aspect}", root_session_id="top", depth=2
        )
        assert state.config.lineage == lineage  # under the forked child, in the tree it was part of
    assert load_state(store, "cats-again").config.lineage == load_state(store, "top:ask-cats").config.lineage
