"""The runner's overhead per ReAct round, over one long session and across 1,000 concurrent sessions.

The workload: an instant scripted model and instant async tools; each turn is
four rounds of three parallel tool calls, then an answer. A round is one model
call and what it asked for, so its time is the framework's own cost: the
machine (reconcile, tasks, events), the agent runtime (contexts, stamps, tool
validation) and the reducer.

* one long session of 1,000 rounds, under asyncio and trio: microseconds per
  round overall, and its first tenth of rounds against its last (flat means the cost
  does not grow with the session); without subscribers (rounds are marked by
  the model, so the machine builds no events) and with one that ignores them;
* 1,000 concurrent sessions in one process, once open (``_crowd.py``): total
  rounds per second, CPU per round, the time spent in the garbage collector
  and its full collections, and the process's peak memory (each in a fresh
  subprocess), under CPython's collector thresholds and under the ones the
  README recommends for many sessions;
* the floors under a round (``_floor.py``): the event loop alone running its
  four tasks, the pure core alone folding its inputs and building its context,
  and the generic machine alone, beside the whole round.

Run ``python benchmarks/runner.py`` (``--quick`` for a smoke run). Prints a
table and writes ``benchmarks/results/runner.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import table, write_results
from _crowd import CROWD_HEADERS, concurrent_sessions, crowd_rows
from _floor import FLOOR_HEADERS, core_floor, floor_rows, loop_floor, machine_floor
from _workload import ROUNDS_PER_TURN, instant_model, lookup, new_agent

from effects import MachineEvent

__all__ = ["ROUNDS_PER_TURN", "instant_model", "lookup", "new_agent"]  # the workload, as the other scripts import it

TARGET_US = 40.0  # asyncio; trio within TRIO_OVER_ASYNCIO of it; late/early within LATE_OVER_EARLY
TRIO_OVER_ASYNCIO = 1.3
LATE_OVER_EARLY = 1.1
TARGET_ROUNDS_PER_SECOND = 20_000  # 1,000 concurrent sessions


def ignore(event: MachineEvent) -> None:
    """A subscriber that does nothing: what the machine pays to build and publish its events."""


async def long_session(rounds: int, subscribers: int = 0, timeouts: bool = True) -> dict[str, Any]:
    """One session of ``rounds`` rounds, with the CPU time at which each model call began.

    Per-round times are CPU time, so a busy machine descheduling the process
    does not show up as framework cost; the overall wall time is reported too.
    Rounds are marked by the model, not by a subscriber: with ``subscribers=0``
    the machine has nobody to publish events to and builds none. ``timeouts=False``:
    no call runs against a deadline.
    """
    marks: list[int] = []
    async with new_agent(lambda: marks.append(time.process_time_ns()), timeouts=timeouts).running() as session:
        for _ in range(subscribers):
            session.subscribe(ignore)
        start = time.perf_counter_ns()
        for turn in range(rounds // ROUNDS_PER_TURN):
            session.send(f"question {turn}")
            await session.settled()
        marks.append(time.process_time_ns())  # the end of the last round
        wall = time.perf_counter_ns() - start
    per_round = [(b - a) / 1000 for a, b in itertools.pairwise(marks)]
    window = max(20, len(per_round) // 10)  # whole turns (5 rounds each), wide enough for a stable median
    early, late = statistics.median(per_round[:window]), statistics.median(per_round[-window:])
    return {
        "rounds": len(per_round),
        "us_per_round": wall / 1000 / len(per_round),
        "cpu_us_per_round": (marks[-1] - marks[0]) / 1000 / len(per_round),
        "early_us": early,
        "late_us": late,
        "late_over_early": late / early,
    }


def in_subprocess(phase: str, *arguments: str) -> dict[str, Any]:
    """Run one phase in a fresh interpreter, so its timings and peak memory are its own."""
    done = subprocess.run(
        [sys.executable, __file__, "--phase", phase, *arguments], capture_output=True, text=True, check=True
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> None:
    """Run every phase, print the table, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer rounds and sessions (a smoke run)")
    parser.add_argument("--phase", choices=("long", "concurrent", "floor"), help=argparse.SUPPRESS)
    parser.add_argument("--backend", default="asyncio", help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=1000, help=argparse.SUPPRESS)
    parser.add_argument("--sessions", type=int, default=1000, help=argparse.SUPPRESS)
    parser.add_argument("--subscribers", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--turns", type=int, default=4, help=argparse.SUPPRESS)
    parser.add_argument("--tuned", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--no-timeouts", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase == "long":
        timeouts = not args.no_timeouts
        anyio.run(long_session, 100, args.subscribers, timeouts, backend=args.backend)  # warm-up: imports, caches
        print(json.dumps(anyio.run(long_session, args.rounds, args.subscribers, timeouts, backend=args.backend)))
        return
    if args.phase == "floor":
        anyio.run(machine_floor, 100, backend=args.backend)  # warm-up
        anyio.run(loop_floor, 100, backend=args.backend)
        floor = {
            "machine": anyio.run(machine_floor, args.rounds, backend=args.backend),
            "loop": anyio.run(loop_floor, args.rounds, backend=args.backend),
            "core": core_floor(args.rounds),
        }
        print(json.dumps(floor))
        return
    if args.phase == "concurrent":
        print(json.dumps(anyio.run(concurrent_sessions, args.sessions, args.turns, args.tuned, backend=args.backend)))
        return
    rounds, sessions = (200, 100) if args.quick else (1000, 1000)
    long_runs = {b: in_subprocess("long", "--backend", b, "--rounds", str(rounds)) for b in ("asyncio", "trio")}
    subscribed = {
        b: in_subprocess("long", "--backend", b, "--rounds", str(rounds), "--subscribers", "1")
        for b in ("asyncio", "trio")
    }
    floors = {b: in_subprocess("floor", "--backend", b, "--rounds", str(rounds)) for b in ("asyncio", "trio")}
    for b in ("asyncio", "trio"):
        floors[b]["no_timeouts"] = in_subprocess("long", "--backend", b, "--rounds", str(rounds), "--no-timeouts")
    crowd = {
        "default": in_subprocess("concurrent", "--sessions", str(sessions)),
        "tuned": in_subprocess("concurrent", "--sessions", str(sessions), "--tuned"),
    }
    report(long_runs, subscribed, floors, crowd)
    path = write_results(
        "runner",
        {
            "mode": "quick" if args.quick else "full",
            "target_us_per_round": TARGET_US,
            "target_trio_over_asyncio": TRIO_OVER_ASYNCIO,
            "target_late_over_early": LATE_OVER_EARLY,
            "target_rounds_per_second": TARGET_ROUNDS_PER_SECOND,
            "long_session": long_runs,
            "long_session_one_subscriber": subscribed,
            "floors": floors,
            "concurrent": crowd,
        },
    )
    print(f"\nwrote {path}")


def report(
    long_runs: dict[str, dict[str, Any]],
    subscribed: dict[str, dict[str, Any]],
    floors: dict[str, dict[str, Any]],
    crowd: dict[str, dict[str, Any]],
) -> None:
    """Print the tables."""
    runs = [(backend, "none", r) for backend, r in long_runs.items()]
    runs += [(backend, "one", r) for backend, r in subscribed.items()]
    rows = [
        (
            backend,
            subscribers,
            r["rounds"],
            f"{r['us_per_round']:.1f}",
            f"{r['cpu_us_per_round']:.1f}",
            f"{r['early_us']:.1f}",
            f"{r['late_us']:.1f}",
            f"{r['late_over_early']:.2f}x",
            f"{floors[backend]['machine']['cpu_us_per_round']:.1f}",
        )
        for backend, subscribers, r in runs
    ]
    print(
        f"One long session (target: <= {TARGET_US:.0f} us per round under asyncio, trio within "
        f"{TRIO_OVER_ASYNCIO}x of asyncio, late within {LATE_OVER_EARLY}x of early)\n"
    )
    headers = (
        "backend",
        "subscriber",
        "rounds",
        "wall us/round",
        "cpu us/round",
        "first tenth",
        "last tenth",
        "late/early",
        "machine alone",
    )
    print(table(headers, rows))
    print("first, last tenth: median cpu us per round. subscriber: none, or one that ignores every event")
    print("(the machine builds events only for subscribers). machine alone: cpu us per round of the generic")
    print("machine running the same tasks and inputs (4 effects, 7 inputs per round) with no agent")
    asyncio_us, trio_us = long_runs["asyncio"]["cpu_us_per_round"], long_runs["trio"]["cpu_us_per_round"]
    print(f"trio / asyncio (cpu, no subscriber): {trio_us / asyncio_us:.2f}x (target <= {TRIO_OVER_ASYNCIO}x)")
    print(f"\nWhat a round costs in parts (cpu us per round, against the {TARGET_US:.0f} us target)\n")
    print(table(FLOOR_HEADERS, floor_rows(long_runs, floors)))
    print("event loop alone: the round's 4 tasks in a native task group, waking the waiting task; pure core:")
    print("the round's inputs folded and its model call's context built (a lower bound: effects_at left out).")
    print("A runner starting a task per effect pays both: their sum is a floor under the whole round.")
    print("no timeouts: the whole round, no call under a deadline (model_timeout_ms=None, ToolLimits(timeout_ms=None))")
    first = crowd["default"]
    print(
        f"\n{first['sessions']:,} concurrent sessions once open (asyncio, {first['rounds']:,} rounds; target at 1,000 "
        f"sessions: >= {TARGET_ROUNDS_PER_SECOND:,} rounds/s, the collector's share small)\n"
    )
    named = {f"{'default' if k == 'default' else 'README'} {tuple(c['gc_thresholds'])}": c for k, c in crowd.items()}
    print(table(CROWD_HEADERS, crowd_rows(named)))


if __name__ == "__main__":
    main()
