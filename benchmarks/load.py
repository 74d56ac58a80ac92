"""Many sessions in one process: 10,000 idle sessions held open while 1,000 active ones run.

An idle session is an agent whose session started and waits for a message (its
machine running, no effects); an active one runs turns of the runner's workload
(``runner.py``: an instant scripted model, four rounds of three parallel tool
calls, then an answer). Reported: the memory the idle sessions hold (peak RSS
before and after opening them), the active sessions' rounds per second while
the idle ones stay open, and the process's peak memory.

Run ``python benchmarks/load.py`` (``--quick``: 1,000 idle and 100 active).
Prints a table and writes ``benchmarks/results/load.json``.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import table, write_results
from runner import ROUNDS_PER_TURN, new_agent


def peak_mb() -> float:
    """The process's peak resident memory so far, in MB (``ru_maxrss`` is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def load(idle: int, active: int, turns: int) -> dict[str, Any]:
    """Open ``idle`` sessions, then run ``active`` sessions of ``turns`` turns each while they stay open."""
    baseline = peak_mb()
    opened = 0
    all_open = anyio.Event()
    stop = anyio.Event()

    async def hold() -> None:
        nonlocal opened
        async with new_agent().running() as session:
            await session.settled()
            opened += 1
            if opened == idle:
                all_open.set()
            await stop.wait()

    async def work() -> None:
        async with new_agent().running() as session:
            for turn in range(turns):
                session.send(f"question {turn}")
                await session.settled()

    async with anyio.create_task_group() as group:
        start = time.perf_counter()
        for _ in range(idle):
            group.start_soon(hold)
        await all_open.wait()
        open_seconds = time.perf_counter() - start
        with_idle = peak_mb()
        start = time.perf_counter()
        async with anyio.create_task_group() as workers:
            for _ in range(active):
                workers.start_soon(work)
        seconds = time.perf_counter() - start
        stop.set()
    rounds = active * turns * ROUNDS_PER_TURN
    return {
        "idle_sessions": idle,
        "active_sessions": active,
        "rounds": rounds,
        "open_seconds": open_seconds,
        "seconds": seconds,
        "rounds_per_second": rounds / seconds,
        "baseline_mb": baseline,
        "idle_mb": with_idle - baseline,
        "kb_per_idle_session": (with_idle - baseline) * 1024 / idle,
        "peak_mb": peak_mb(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1,000 idle and 100 active sessions (a smoke run)")
    parser.add_argument("--turns", type=int, default=5, help="turns per active session (default 5)")
    args = parser.parse_args()
    idle, active = (1_000, 100) if args.quick else (10_000, 1_000)
    result = anyio.run(load, idle, active, args.turns)
    headers = ("idle", "active", "rounds", "open s", "run s", "rounds/s", "KB/idle session", "peak RSS MB")
    row = (
        f"{idle:,}",
        f"{active:,}",
        f"{result['rounds']:,}",
        f"{result['open_seconds']:.1f}",
        f"{result['seconds']:.1f}",
        f"{result['rounds_per_second']:,.0f}",
        f"{result['kb_per_idle_session']:.1f}",
        f"{result['peak_mb']:.0f}",
    )
    print(table(headers, [row]))
    print("idle: sessions started and waiting for a message; active: the runner's workload, run meanwhile")
    print(f"\nwrote {write_results('load', result)}")


if __name__ == "__main__":
    main()
