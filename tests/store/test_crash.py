"""Kill a process running a session with SIGKILL at many points; resuming must lose nothing and repeat nothing unsafe.

Each plan starts a child process on the same SQLite file (``_crash_child.py``)
that resumes the session and dies at the planned point: after N inputs,
inside a tool, inside a commit, or at a random moment chosen here. A last
child finishes the session. The final conversation must equal an
uninterrupted run's (except the results of non-idempotent calls that died
with the process: those are "interrupted"), every input committed before a
kill must still be there, and no non-idempotent tool may have run twice.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from agent_core import AgentState, ToolFailure
from effects import INTERRUPTED, SqliteStore, load_state, replay_session

CHILD = Path(__file__).with_name("_crash_child.py")
ROOT = Path(__file__).resolve().parents[2]
SESSION = "crash"

PLANS = [
    "inputs:2",
    "commit:2",  # the first round's results: its calls run again (the search) or are interrupted
    "tool:q0r0c0",  # an idempotent search
    "inputs:25",
    "tool:q1r1c1",  # a charge: not idempotent
    "commit:4",
    "inputs:50",
    "tool:q3r0c2",
    "tool:q4r0c1",
    "inputs:85",
    "commit:2",
    "random",  # random moments last: one of them may let the session finish
    "random",
    "random",
]


def run_child(db: Path, runs: Path, plan: str = "", kill_after: float | None = None) -> int:
    """Run one child to its end or its death; returns its exit code (negative: killed by that signal)."""
    arguments = [sys.executable, str(CHILD), str(db), str(runs), *([plan] if plan else [])]
    child = subprocess.Popen(arguments, cwd=ROOT, stderr=subprocess.PIPE)
    try:
        _, errors = child.communicate(timeout=kill_after if kill_after is not None else 30)
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGKILL)
        _, errors = child.communicate()
    if child.returncode not in (0, -signal.SIGKILL):
        raise AssertionError(f"child with plan {plan!r} failed ({child.returncode}):\n{errors.decode()}")
    return child.returncode


Conversation = tuple[list[tuple[str, str]], dict[str, tuple[str, str, object]]]


def conversation(state: AgentState) -> Conversation:
    """The messages and the tool calls (name, parameters, result) of a session, without times and ids."""
    messages: list[tuple[str, str]] = [
        (state.messages[i].role, state.messages[i].content) for i in range(len(state.messages))
    ]
    calls: dict[str, tuple[str, str, object]] = {
        i: (r.name, r.parameters, r.result) for i, r in state.tool_calls.items()
    }
    return messages, calls


@pytest.mark.slow
def test_sessions_survive_sigkill_anywhere(tmp_path: Path) -> None:
    reference_db, crash_db = tmp_path / "reference.db", tmp_path / "crash.db"
    assert run_child(reference_db, tmp_path / "reference-runs") == 0
    expected_messages, expected_calls = conversation(load_state(SqliteStore(reference_db, readonly=True), SESSION))

    runs, rng, committed = tmp_path / "runs", random.Random(4), []
    for plan in PLANS:
        code = run_child(
            crash_db, runs, "" if plan == "random" else plan, rng.uniform(0.3, 0.9) if plan == "random" else None
        )
        assert code == -signal.SIGKILL or plan == "random", f"plan {plan!r} never reached its kill point"
        if crash_db.exists():
            store = SqliteStore(crash_db, readonly=True)
            committed += [(info.length, info.head) for info in store.sessions()]
            store.close()
    assert run_child(crash_db, runs) == 0

    store = SqliteStore(crash_db, readonly=True)
    report = replay_session(store, SESSION)  # chain, turn digests and state hashes all verify
    final = {record.seq: record.hash for record in store.read(SESSION)}
    assert all(final[length] == head for length, head in committed), "an input committed before a kill was lost"

    messages, calls = conversation(report.state)
    assert messages == expected_messages
    interrupted = {i for i, (_, _, result) in calls.items() if result == ToolFailure(error=INTERRUPTED)}
    assert calls == {
        i: (*expected_calls[i][:2], calls[i][2] if i in interrupted else expected_calls[i][2]) for i in expected_calls
    }
    counts = Counter(runs.read_text().split())
    charges = {i: n for i, n in counts.items() if calls[i][0] == "charge"}
    assert max(charges.values()) == 1, f"a non-idempotent tool ran twice: {charges}"
    # A charge is "interrupted" when it was started (logged) but not completed at a kill: it may
    # not even have begun, but nobody can know, so it is never run again.
    assert {"q1r1c1", "q4r0c1"} <= interrupted <= {i for i, call in calls.items() if call[0] == "charge"}
    assert counts["q0r0c0"] >= 2 and "q0r0c0" not in interrupted  # the search died at least once and ran again
