"""1,000 concurrent sessions in one process: rounds per second once they are open, and the collector's share.

Every session opens and runs one warm-up turn; when all are open, the clock
starts and each runs ``turns`` more turns of the runner's workload, all at
once in one event loop. What is measured is the steady state a server with
that many sessions lives in, not the cost of opening them.

The garbage collector is measured under two settings, each in its own process
(the settings are the process's): CPython's defaults, and the setting the
README recommends for processes holding many sessions
(:data:`MANY_SESSIONS_GC`): with a thousand sessions interleaved, the short-lived
objects of one session's round outlive two young collections while the other
sessions run, so they are promoted and trigger full collections of the whole
heap; a larger first threshold lets them die young.
"""

from __future__ import annotations

import gc
import resource
import time
from typing import Any

import anyio
from _workload import ROUNDS_PER_TURN, new_agent

MANY_SESSIONS_GC = (50_000, 20, 10)
"""``gc.set_threshold(*MANY_SESSIONS_GC)``: what the README recommends for a process running many sessions."""


class GcTimer:
    """A ``gc.callbacks`` hook adding up the time spent collecting, and counting full collections."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.full = 0
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        self.seconds += time.perf_counter() - self._started
        self.full += info["generation"] == 2


async def concurrent_sessions(sessions: int, turns: int, tuned: bool = False) -> dict[str, Any]:
    """Open ``sessions`` sessions (a warm-up turn each), then time ``turns`` more turns each, all at once.

    ``tuned``: run with :data:`MANY_SESSIONS_GC` instead of CPython's thresholds.
    """
    if tuned:
        gc.set_threshold(*MANY_SESSIONS_GC)
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    opened, all_open, go = 0, anyio.Event(), anyio.Event()

    async def one() -> None:
        nonlocal opened
        async with new_agent().running() as session:
            session.send("warm-up")
            await session.settled()
            opened += 1
            if opened == sessions:
                all_open.set()
            await go.wait()
            for turn in range(turns):
                session.send(f"question {turn}")
                await session.settled()

    collector = GcTimer()
    async with anyio.create_task_group() as group:
        for _ in range(sessions):
            group.start_soon(one)
        await all_open.wait()
        gc.collect()  # what opening left behind is not the rounds' garbage
        gc.callbacks.append(collector)
        start, cpu = time.perf_counter(), time.process_time()
        go.set()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    gc.callbacks.remove(collector)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    rounds = sessions * turns * ROUNDS_PER_TURN
    return {
        "sessions": sessions,
        "rounds": rounds,
        "gc_thresholds": list(gc.get_threshold()),
        "seconds": seconds,
        "rounds_per_second": rounds / seconds,
        "cpu_us_per_round": cpu * 1e6 / rounds,
        "gc_seconds": collector.seconds,
        "full_collections": collector.full,
        "peak_rss_mb": peak / 1024,
        "baseline_rss_mb": baseline / 1024,
        "kb_per_session": (peak - baseline) / sessions,
    }


def crowd_rows(crowds: dict[str, dict[str, Any]]) -> list[tuple[object, ...]]:
    """One table row per collector setting."""
    return [
        (
            setting,
            f"{c['rounds_per_second']:,.0f}",
            f"{c['cpu_us_per_round']:.0f}",
            f"{c['gc_seconds']:.2f} ({c['gc_seconds'] / c['seconds']:.0%})",
            c["full_collections"],
            f"{c['peak_rss_mb']:.0f}",
            f"{c['kb_per_session']:.0f}",
        )
        for setting, c in crowds.items()
    ]


CROWD_HEADERS = ("gc thresholds", "rounds/s", "cpu us/round", "in gc", "full gcs", "peak RSS MB", "KB/session")
