"""Running a test's process that may kill itself (SIGKILL) partway, telling how it ended, and comparing the
sessions it left, resumed, with an uninterrupted run's."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from agent_core import AgentState, state_hash
from effects import EventStore, load_state, open_store, replay_session

from ._team import conversation

HERE = Path(__file__).parent
ROOT = HERE.parents[1]


def run(script: str, *args: str | Path) -> int:
    """Run ``script`` (a file beside this one) with ``args`` (an empty one left out: an optional argument not
    given) to its end or its death by SIGKILL; returns its exit code (negative: that signal). Any other end
    fails the test with the process's own error output."""
    given = [str(arg) for arg in args if arg != ""]
    process = subprocess.run(
        [sys.executable, str(HERE / script), *given], cwd=ROOT, capture_output=True, timeout=60, check=False
    )
    if process.returncode not in (0, -signal.SIGKILL):
        raise AssertionError(
            f"{script} {' '.join(given)} failed ({process.returncode}); expected it to end or be killed:\n"
            f"{process.stderr.decode()}"
        )
    return process.returncode


def crash_and_resume(
    script: str, target: str, runs: Path, plan: str, sessions: Callable[[str], Sequence[str]]
) -> tuple[dict[str, AgentState], list[str]]:
    """Run ``script`` on ``target`` uninterrupted (root ``reference``), then killed where ``plan`` says and run
    again (root ``crashed``). Checks every session of the crashed tree (``sessions(root)``, in the same order for
    both roots): it replays and verifies alone, ends with the reference's conversation, and kept all it had
    committed at the kill. Returns the crashed sessions' states at the kill, and what the tools noted in
    ``runs`` (a line a run) across the killed and the resumed process."""
    assert run(script, target, runs.with_name("reference-runs"), "reference") == 0
    assert run(script, target, runs, "crashed", plan) == -signal.SIGKILL

    store: EventStore = open_store(target, readonly=True)
    before = {session: load_state(store, session) for session in sessions("crashed")}
    assert run(script, target, runs, "crashed") == 0

    store = open_store(target, readonly=True)
    for session, reference in zip(sessions("crashed"), sessions("reference"), strict=True):
        state = replay_session(store, session).state  # each log replays and verifies alone
        assert conversation(state) == conversation(load_state(store, reference)), session
        at_kill = before[session]
        assert state_hash(load_state(store, session, at=at_kill.step)) == state_hash(at_kill)  # nothing lost
    return before, runs.read_text().splitlines()
