"""Shared helpers for the benchmark scripts: timing and reporting (the generated sessions are in ``_session``).

Timings use ``time.perf_counter_ns``: one warm-up run, then ``repeat`` timed
runs of a callable that performs ``ops`` operations; the median and the
minimum per operation are reported (the median is the number to read, the
minimum shows the noise floor). Results go to ``benchmarks/results/<name>.json``, with the
report the script printed, which ``benchmarks/render.py`` turns into the documentation's benchmarks page.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

RESULTS = Path(__file__).resolve().parent / "results"


class _Printed:
    """Standard output that also keeps what was printed, for the report in the results."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.kept: list[str] = []

    def write(self, text: str) -> int:
        self.kept.append(text)
        return int(self.stream.write(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


_PRINTED = _Printed(sys.stdout)
sys.stdout = _PRINTED


class Timing(msgspec.Struct, frozen=True):
    """Nanoseconds per operation over ``runs`` timed runs of ``ops`` operations each.

    ``median_ns`` and ``min_ns`` are wall time (``perf_counter_ns``);
    ``cpu_median_ns`` is the median of the thread's CPU time over the same runs,
    which time slices given to other processes do not inflate.
    """

    median_ns: float
    min_ns: float
    runs: int
    ops: int
    cpu_median_ns: float = 0.0

    @property
    def per_second(self) -> float:
        """Operations per second at the median."""
        return 1e9 / self.median_ns if self.median_ns else float("inf")


def measure(run: Callable[[], object], ops: int = 1, *, repeat: int = 5, warmup: int = 1) -> Timing:
    """Time ``run`` (which performs ``ops`` operations) ``repeat`` times after ``warmup`` untimed runs.

    A full garbage collection runs once before the warm-up, so a measurement
    does not pay for the garbage of the previous one; collections caused by
    ``run`` itself are part of its cost, as they would be in a real program.
    """
    return measure_each({"run": run}, ops, repeat=repeat, warmup=warmup)["run"]


def measure_each(
    runs: dict[str, Callable[[], object]], ops: int = 1, *, repeat: int = 5, warmup: int = 1
) -> dict[str, Timing]:
    """Like :func:`measure` for several callables, timed in turn (a, b, a, b...).

    Interleaving gives each callable the same share of whatever else the
    machine is doing, so their ratio holds even on a busy machine.
    """
    gc.collect()
    for _ in range(warmup):
        for run in runs.values():
            run()
    wall: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            start, start_cpu = time.perf_counter_ns(), time.thread_time_ns()
            run()
            cpu[name].append((time.thread_time_ns() - start_cpu) / ops)
            wall[name].append((time.perf_counter_ns() - start) / ops)
    return {
        name: Timing(
            median_ns=statistics.median(wall[name]),
            min_ns=min(wall[name]),
            runs=repeat,
            ops=ops,
            cpu_median_ns=statistics.median(cpu[name]),
        )
        for name in runs
    }


def calls_per_run(call: Callable[[], object], budget_ns: int) -> int:
    """How many calls of ``call()`` fit in about ``budget_ns`` (at least 10).

    Short runs fit in one time slice of the scheduler, so on a busy machine
    most of them run unpreempted and their median stays meaningful.
    """
    start = time.perf_counter_ns()
    for _ in range(20):
        call()
    per_call = max(1.0, (time.perf_counter_ns() - start) / 20)
    return max(10, int(budget_ns / per_call))


def loop(function: Callable[[Any, Any], object], first: Any, second: Any, times: int) -> Callable[[], None]:
    """A callable that calls ``function(first, second)`` ``times`` times (for per-call timings)."""

    def run() -> None:
        for _ in range(times):
            function(first, second)

    return run


# --- reporting --------------------------------------------------------------------------


def table(headers: tuple[str, ...], rows: Sequence[Sequence[object]]) -> str:
    """A plain-text table with right-aligned columns."""
    cells = [headers, *[tuple(str(cell) for cell in row) for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
        for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def environment() -> dict[str, str]:
    """Where the numbers were measured."""
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "processor": platform.processor() or platform.machine(),
        "msgspec": msgspec.__version__,
        "cores": str(os.cpu_count()),
        "load_average_1min": f"{os.getloadavg()[0]:.2f}",
        "date": datetime.now(UTC).date().isoformat(),
    }


def write_results(name: str, data: dict[str, Any]) -> Path:
    """Write ``data`` (plus the environment and what the script printed) to ``benchmarks/results/<name>.json``;
    return the path."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    report = "".join(_PRINTED.kept).strip("\n")
    command = " ".join(["python", f"benchmarks/{Path(sys.argv[0]).name}", *sys.argv[1:]])
    payload = {"benchmark": name, "environment": environment(), "command": command, "report": report, **data}
    path.write_text(json.dumps(payload, indent=2, default=msgspec.to_builtins) + "\n")
    return path
