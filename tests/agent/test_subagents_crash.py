"""A planner process killed (SIGKILL) while its researcher children run, then started again: each child
resumes from its own log, no non-idempotent child tool runs twice, and every session ends as an
uninterrupted run's."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from agent_core import state_hash
from effects import SqliteStore, load_state, replay_session

from ._team import TOPICS, conversation

CHILD = Path(__file__).with_name("_team_child.py")
ROOT = Path(__file__).resolve().parents[2]
SESSIONS = ("plan", *(f"plan:ask-{topic}" for topic in TOPICS))


def run(db: Path, runs: Path, plan: str = "") -> int:
    """Run the planner's process to its end or its death; returns its exit code (negative: that signal)."""
    process = subprocess.run(
        [sys.executable, str(CHILD), str(db), str(runs), *([plan] if plan else [])],
        cwd=ROOT,
        capture_output=True,
        timeout=60,
        check=False,
    )
    if process.returncode not in (0, -signal.SIGKILL):
        raise AssertionError(f"plan {plan!r} failed ({process.returncode}):\n{process.stderr.decode()}")
    return process.returncode


@pytest.mark.slow
@pytest.mark.parametrize("plan", ["model:1", "model:2"])
def test_a_parent_killed_while_its_children_run_resumes_each_from_its_log(tmp_path: Path, plan: str) -> None:
    reference, crashed = tmp_path / "reference.db", tmp_path / "crashed.db"
    assert run(reference, tmp_path / "reference-runs") == 0
    assert run(crashed, tmp_path / "runs", plan) == -signal.SIGKILL

    store = SqliteStore(crashed, readonly=True)
    before = {session: load_state(store, session) for session in SESSIONS}
    assert all(before[s].turn is not None for s in SESSIONS)  # killed mid-turn, children included
    assert run(crashed, tmp_path / "runs") == 0

    store, expected = SqliteStore(crashed, readonly=True), SqliteStore(reference, readonly=True)
    for session in SESSIONS:
        state = replay_session(store, session).state  # each log replays and verifies alone
        assert conversation(state) == conversation(load_state(expected, session)), session
        at_kill = before[session]
        assert state_hash(load_state(store, session, at=at_kill.step)) == state_hash(at_kill)  # nothing lost
    assert Counter((tmp_path / "runs").read_text().split()) == Counter(TOPICS)  # each lookup ran once
