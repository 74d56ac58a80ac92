"""The floors ``benchmarks/runner.py`` prints under a round measure the work they say they do.

The README argues from them that a target is below what any runner starting
a task per effect can reach, so each must do a round's work: the pure core one
model call per round, the event loop a round's seven inputs from its four tasks,
under both backends.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
if str(BENCHMARKS) not in sys.path:  # benchmarks/ is not an installed package
    sys.path.insert(0, str(BENCHMARKS))

import _floor  # noqa: E402


def test_the_pure_core_floor_builds_one_context_per_round() -> None:
    floor = _floor.core_floor(10)
    assert floor["rounds"] == 10
    assert floor["model_calls"] == 10
    assert floor["cpu_us_per_round"] > 0


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_event_loop_floor_receives_a_rounds_seven_inputs(backend: str) -> None:
    floor = anyio.run(_floor.loop_floor, 5, backend=backend)
    assert floor["rounds"] == 5
    assert floor["inputs"] == 7 * 5


@pytest.mark.parametrize("timeouts", [True, False])
def test_the_untimed_workload_runs_the_same_rounds_with_no_deadline(timeouts: bool) -> None:
    """The "no timeouts" column is the same workload, only without deadlines on its calls."""
    import _workload

    agent = _workload.new_agent(timeouts=timeouts)
    assert (agent.model_timeout_ms is None, agent.toolbox.limits.timeout_ms is None) == (not timeouts, not timeouts)

    async def one_turn() -> tuple[str, int]:
        async with agent.running() as session:
            session.send("question")
            await session.settled()
            return str(session.phase), len(session.state.tool_calls)

    assert anyio.run(one_turn) == ("idle", 3 * (_workload.ROUNDS_PER_TURN - 1))
