"""A tree three levels deep with parallel children, its process killed (SIGKILL) at the deepest level or the
middle one, then started again: reopening the root resumes every unfinished child from its own log, nothing
committed is lost, no non-idempotent tool runs twice, and every session ends as in an uninterrupted run."""

from __future__ import annotations

import signal
from collections import Counter
from pathlib import Path

import pytest

from agent_core import state_hash
from effects import EventStore, load_state, open_store, replay_session

from ._deep_team import lookups, sessions
from ._process import run
from ._team import conversation

CHILD = "_deep_team_child.py"


def crash_and_resume(target: str, runs: Path, plan: str) -> None:
    """Run the tree uninterrupted (root ``reference``), then killed where ``plan`` says and run again (root
    ``crashed``); compare every session of the two trees."""
    assert run(CHILD, target, runs.with_name("reference-runs"), "reference") == 0
    assert run(CHILD, target, runs, "crashed", plan) == -signal.SIGKILL

    store: EventStore = open_store(target, readonly=True)
    before = {session: load_state(store, session) for session in sessions("crashed")}
    assert before["crashed"].turn is not None  # killed mid-turn
    assert run(CHILD, target, runs, "crashed") == 0

    store = open_store(target, readonly=True)
    for session, reference in zip(sessions("crashed"), sessions("reference"), strict=True):
        state = replay_session(store, session).state  # each log replays and verifies alone
        assert conversation(state) == conversation(load_state(store, reference)), session
        at_kill = before[session]
        assert state_hash(load_state(store, session, at=at_kill.step)) == state_hash(at_kill)  # nothing lost
    assert Counter(runs.read_text().splitlines()) == Counter(lookups())  # each lookup ran once


@pytest.mark.slow
@pytest.mark.parametrize("plan", ["finder:1", "researcher:2"])
def test_a_tree_killed_anywhere_resumes_every_child_from_its_log(tmp_path: Path, plan: str) -> None:
    crash_and_resume(str(tmp_path / "tree.db"), tmp_path / "runs", plan)


@pytest.mark.slow
def test_the_same_on_postgresql(tmp_path: Path, postgres_dsn: str) -> None:
    crash_and_resume(postgres_dsn, tmp_path / "runs", "finder:2")
