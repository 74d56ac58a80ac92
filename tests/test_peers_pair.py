"""The long pairs of ``benchmarks/peers`` run each contender in a child process of its own, in lockstep.

Each child owns its heap and its directory, so neither contender's garbage
collections or disk writes land in the other's timed turns. A child that
fails or dies fails the run, naming the contender and saying why.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # benchmarks/ is not an installed package
    sys.path.insert(0, str(ROOT))

from benchmarks.peers.catalogue import named  # noqa: E402
from benchmarks.peers.measure import BYTES_AT_ROUNDS  # noqa: E402
from benchmarks.peers.pair import Child, ChildFailed, long_pair  # noqa: E402
from benchmarks.peers.workload import MODEL_CALLS_PER_TURN, Contender  # noqa: E402

pytestmark = pytest.mark.slow  # each test spawns fresh interpreters

TURNS = 2
ROUNDS = TURNS * MODEL_CALLS_PER_TURN


def test_a_sqlite_pair_runs_in_lockstep_and_resumes() -> None:
    ours, theirs = named("agent-core [sqlite]"), named("agent-core durability=turn [sqlite]")

    runs = long_pair((ours, theirs), TURNS, resume_repeat=1)

    for run in runs:
        assert len(run.turn_ns) == len(run.turn_cpu_ns) == TURNS
        assert all(elapsed > 0 for elapsed in run.turn_ns)
        # The child's CPU time over each turn came with it: the conversation's own (it runs nothing else).
        assert all(cpu > 0 for cpu in run.turn_cpu_ns)
        # Bytes on disk are read after BYTES_AT_ROUNDS rounds and at the end: here only the end came.
        assert ROUNDS < BYTES_AT_ROUNDS
        assert list(run.bytes_at) == [ROUNDS]
        assert run.bytes_at[ROUNDS] > 0
        assert len(run.resume_ms) == 1
        # A question, the model's messages and an answer per turn came back from the store.
        assert run.resumed_messages >= 2 * TURNS


def test_a_child_that_fails_fails_the_run_with_its_traceback() -> None:
    unknown = Contender(framework="agent-core", form="nosuch", persistence="none", open=named("agent-core [none]").open)

    with pytest.raises(ChildFailed) as failed:
        long_pair((named("agent-core [none]"), unknown), 2, resume_repeat=1)

    message = str(failed.value)
    assert message.startswith("the child running agent-core nosuch [none] failed during 'start':\nTraceback")
    assert "ValueError: no contender is named 'agent-core nosuch [none]'; agent-core has: agent-core [none]" in message


def test_a_child_refuses_a_turn_out_of_order() -> None:
    with Child(named("agent-core [none]")) as child, pytest.raises(ChildFailed) as failed:
        child.ask("turn", 1)

    assert "ValueError: expected ('turn', 0), ('bytes',) or ('close',), got ('turn', 1)" in str(failed.value)
    assert not child.process.is_alive()


def test_a_child_that_dies_is_named_with_its_exit_code() -> None:
    with Child(named("agent-core [none]")) as child:
        elapsed, cpu = child.ask("turn", 0)
        assert elapsed > 0 and cpu > 0
        assert child.process.pid is not None
        os.kill(child.process.pid, signal.SIGKILL)
        with pytest.raises(ChildFailed) as failed:
            child.ask("turn", 1)

    assert str(failed.value) == (
        f"the child running agent-core [none] (pid {child.process.pid}) died during 'turn' with exit code -9 "
        "and no answer; anything it printed is on stderr above"
    )
