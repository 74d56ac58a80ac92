"""The in-memory groups of ``benchmarks/peers`` say what their ratio target asks of agent-core's round, beside
the floor under a round measured in the same run (the README argues from it that the target is out of reach)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("langgraph", reason="the peer comparison needs the bench extra: pip install -e '.[bench]'")

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # benchmarks/ is not an installed package
    sys.path.insert(0, str(ROOT))

from benchmarks.peers import tables  # noqa: E402
from benchmarks.peers.catalogue import named  # noqa: E402
from benchmarks.peers.document import document  # noqa: E402
from benchmarks.peers.floor import round_floor  # noqa: E402
from benchmarks.peers.report import Results, Summary  # noqa: E402

FLOOR = {"event_loop_us": 30.0, "pure_core_us": 37.0, "floor_us": 67.0}


def measured(ours_us: float, peer_us: float, floor: dict[str, float]) -> Summary:
    """agent-core without persistence and LangGraph's ``StateGraph`` in memory, as the driver records them."""
    reference, peer = named("agent-core [none]"), named("langgraph StateGraph (async) [none]")
    results = Results([reference, peer], {"long_rounds": 0})
    results.overhead = {reference.key: [ours_us] * 3, peer.key: [peer_us] * 3}
    results.floor = floor
    return Summary(results)


def floor_line(summary: Summary) -> str:
    return next(line for line in tables.by_guarantee(summary).splitlines() if "asks agent-core" in line)


def test_a_target_below_the_floor_is_named_so() -> None:
    # 50x below a peer at 2,800 us asks for 56 us, under a floor of 67 us.
    line = floor_line(measured(300, 2800, FLOOR))

    assert "asks agent-core for <= 56.0 µs a round" in line
    assert "in this run: 67.0 µs (event loop alone 30.0 + pure core alone 37.0, CPU)" in line
    assert line.endswith("below the floor")


def test_a_target_above_the_floor_is_named_so() -> None:
    assert floor_line(measured(300, 28_000, FLOOR)).endswith(": above the floor")


def test_the_document_carries_the_floor_and_a_run_without_it_prints_no_line() -> None:
    assert (
        document(measured(300, 2800, FLOOR), "python -m benchmarks.peers", "quick", 1.0, [])["round_floor_us"] == FLOOR
    )
    assert "asks agent-core" not in tables.by_guarantee(measured(300, 2800, {}))


def test_the_floor_is_measured_by_the_runner_benchmark() -> None:
    floor = round_floor(rounds=20)

    assert floor["event_loop_us"] > 0 and floor["pure_core_us"] > 0
    assert floor["floor_us"] == pytest.approx(floor["event_loop_us"] + floor["pure_core_us"], abs=0.11)
