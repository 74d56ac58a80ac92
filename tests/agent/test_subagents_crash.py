"""A planner process killed (SIGKILL) while its researcher children run, then started again: each child
resumes from its own log, no non-idempotent child tool runs twice, and every session ends as an
uninterrupted run's."""

from __future__ import annotations

import signal
from collections import Counter
from pathlib import Path

import pytest

from agent_core import state_hash
from effects import EventStore, load_state, open_store, replay_session

from ._process import run
from ._team import TOPICS, conversation

CHILD = "_team_child.py"


def sessions(planner: str) -> tuple[str, ...]:
    """The planner's session and its children's."""
    return (planner, *(f"{planner}:ask-{topic}" for topic in TOPICS))


def crash_and_resume(target: str, runs: Path, plan: str) -> None:
    """Run the planner uninterrupted (session ``reference``), then killed where ``plan`` says and run again
    (session ``crashed``); compare every session of the two trees."""
    assert run(CHILD, target, runs.with_name("reference-runs"), "reference") == 0
    assert run(CHILD, target, runs, "crashed", plan) == -signal.SIGKILL

    store: EventStore = open_store(target, readonly=True)
    before = {session: load_state(store, session) for session in sessions("crashed")}
    assert all(state.turn is not None for state in before.values())  # killed mid-turn, children included
    assert run(CHILD, target, runs, "crashed") == 0

    store = open_store(target, readonly=True)
    for session, reference in zip(sessions("crashed"), sessions("reference"), strict=True):
        state = replay_session(store, session).state  # each log replays and verifies alone
        assert conversation(state) == conversation(load_state(store, reference)), session
        at_kill = before[session]
        assert state_hash(load_state(store, session, at=at_kill.step)) == state_hash(at_kill)  # nothing lost
    assert Counter(runs.read_text().split()) == Counter(TOPICS)  # each lookup ran once


@pytest.mark.slow
@pytest.mark.parametrize("plan", ["model:1", "model:2"])
def test_a_parent_killed_while_its_children_run_resumes_each_from_its_log(tmp_path: Path, plan: str) -> None:
    crash_and_resume(str(tmp_path / "team.db"), tmp_path / "runs", plan)


@pytest.mark.slow
def test_the_same_on_postgresql(tmp_path: Path, postgres_dsn: str) -> None:
    crash_and_resume(postgres_dsn, tmp_path / "runs", "model:2")
