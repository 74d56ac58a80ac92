"""Group commit: the sessions of a store share each commit, nothing acknowledged is lost when the process
dies with a group in flight, and each durability mode loses exactly what it says."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from agent_core import ContextToolResult, LlmContext
from effects import ModelReply, PostgresStore, SqliteStore, load_state, open_session, open_store, replay_session, tool
from effects.testing import ScriptedModel, call_tools, say

CHILD = Path(__file__).with_name("_group_child.py")
ROOT = Path(__file__).resolve().parents[2]


def script(context: LlmContext) -> ModelReply:
    return say("done") if isinstance(context.entries[-1], ContextToolResult) else call_tools(("look", {}))


@tool
def look() -> str:
    """Look around."""
    return "seen"


def run_child(db: str | Path, mode: str) -> dict[str, int]:
    """Run the child until it kills itself; returns the last step each session acknowledged."""
    child = subprocess.run(
        [sys.executable, str(CHILD), str(db), mode], cwd=ROOT, capture_output=True, timeout=60, check=False
    )
    assert child.returncode == -signal.SIGKILL, f"the child did not die as planned:\n{child.stderr.decode()}"
    acknowledged: dict[str, int] = {}
    for line in child.stdout.decode().splitlines(keepends=True):
        if not line.endswith("\n"):
            break  # written in part when the process died: not an acknowledgement
        session_id, step = line.split()
        acknowledged[session_id] = max(acknowledged.get(session_id, 0), int(step))
    return acknowledged


@pytest.fixture(params=["sqlite", "postgres"])
def grouped_store(request: pytest.FixtureRequest, tmp_path: Path) -> SqliteStore | PostgresStore:
    """Each store with a group writer."""
    if request.param == "sqlite":
        return SqliteStore(tmp_path / "group.db")
    return PostgresStore(request.getfixturevalue("postgres_dsn"))


@pytest.mark.anyio
async def test_concurrent_sessions_share_commits(grouped_store: SqliteStore | PostgresStore) -> None:
    store = grouped_store

    async def converse(session_id: str) -> None:
        async with open_session(store, session_id, ScriptedModel(script), tools=[look]) as session:
            for n in range(3):
                session.send(f"question {n}")
                await session.settled()

    async with anyio.create_task_group() as tg:
        for n in range(20):
            tg.start_soon(converse, f"s{n}")
    batches = sum(info.length for info in store.sessions())
    assert store.commits < batches / 2  # 20 sessions x 3 turns, each turn several batches
    for n in range(20):
        report = replay_session(store, f"s{n}", verify=True)
        assert report.state.turns == 3 and report.state.turn is None
    store.close()


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_kill_during_a_group_commit_loses_nothing_acknowledged(
    request: pytest.FixtureRequest, tmp_path: Path, backend: str
) -> None:
    db = str(tmp_path / "group.db") if backend == "sqlite" else request.getfixturevalue("postgres_dsn")
    acknowledged = run_child(db, "group")
    assert len(acknowledged) > 1
    store = open_store(db, readonly=True)
    lengths = {info.session_id: info.length for info in store.sessions()}
    for session_id, step in acknowledged.items():
        assert lengths[session_id] >= step, (
            f"{session_id}: acknowledged step {step}, the log holds {lengths[session_id]}"
        )
        replay_session(store, session_id)  # every record's chain and digest verify


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["input", "turn"])
def test_what_a_crash_loses_in_each_durability_mode(tmp_path: Path, mode: str) -> None:
    db = tmp_path / f"{mode}.db"
    acknowledged = run_child(db, mode)  # dies inside the tool of the second turn
    state = load_state(SqliteStore(db, readonly=True), "s0")
    if mode == "input":
        # Every acknowledged input is there: the second turn up to its tool call's start.
        assert state.step == acknowledged["s0"] and state.turns == 2 and state.turn is not None
        assert [record.status for record in state.tool_calls.values()].count("running") == 1
    else:
        # The turn in progress is lost, all of it; the first turn is whole.
        assert state.turns == 1 and state.turn is None
        assert state.step < acknowledged["s0"]


def rounds_script(context: LlmContext) -> ModelReply:
    """No tool for a question ending in 0, else one tool round (said with a word for a question ending in 2), then
    an answer."""
    asked = getattr([e for e in context.entries if getattr(e, "role", "") == "user"][-1], "content", "")
    if isinstance(context.entries[-1], ContextToolResult) or asked.endswith("0"):
        return say("done")  # the same answer each time, so the commits that differ are the rounds'
    return call_tools(("look", {}), text="looking" if asked.endswith("2") else "")


@pytest.mark.anyio
async def test_a_round_costs_two_commits(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "rounds.db")
    commits = []
    async with open_session(store, "s", ScriptedModel(rounds_script), tools=[look]) as session:
        for question in ("question 0", "question 1", "question 10", "question 11", "question 12"):
            before = store.commits
            session.send(question)
            await session.settled()
            commits.append(store.commits - before)
    # A round adds two commits: the observation with its calls' starts, then the result; a streamed message
    # adds the commit of its start (it reaches subscribers as it streams).
    # The answer's text streams too (a blank answer would be an empty one, asked again): its start may share a
    # commit with the input before it or take one of its own, so a round adds two commits, give or take that one.
    assert commits[2] + 1 <= commits[1] <= commits[2] + 3 and commits[2] + 1 <= commits[3] <= commits[2] + 3, commits
    # A round said with a word adds that message's start; each start may share a commit with the input before it
    # or take one of its own (the answer's start too, in the turn without a round), so only the bounds hold.
    assert commits[2] + 1 <= commits[4] <= commits[2] + 4, commits
    store.close()
