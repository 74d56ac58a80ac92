"""Shared helpers for the benchmark scripts: timing, a realistic session generator, reporting.

Timings use ``time.perf_counter_ns``: one warm-up run, then ``repeat`` timed
runs of a callable that performs ``ops`` operations; the median and the
minimum per operation are reported (the median is the number to read, the
minimum shows the noise floor). Results go to ``benchmarks/results/<name>.json``.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import msgspec

from agent_core import (
    AgentConfig,
    AgentInput,
    AgentState,
    CompleteReAct,
    ContinueReAct,
    LlmMessageCompleted,
    LlmMessageStarted,
    ReActObserved,
    SessionStarted,
    ToolCallCompleted,
    ToolCallRequest,
    ToolCallStarted,
    ToolDefinition,
    ToolSuccess,
    Usage,
    UserMessageReceived,
    initial_state,
    transition,
)

RESULTS = Path(__file__).resolve().parent / "results"


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


# --- a realistic session --------------------------------------------------------------

START_MS = 1_767_225_600_000
_TEXT = (
    "The quarterly report shows revenue up eleven percent while costs stayed flat; the team asks "
    "whether the new pricing page caused it, which regions grew fastest, and what to watch next. "
) * 20

TOOLS = (
    ToolDefinition(name="search", description="Search the web.", parameters='{"type":"object"}'),
    ToolDefinition(name="fetch", description="Fetch a URL.", parameters='{"type":"object"}', idempotent=True),
    ToolDefinition(name="delete_file", description="Delete a file.", requires_approval=True),
)
"""The session's tools; ``delete_file`` requires approval."""

# Sizes (characters) of the generated content, meant to look like a real agent's session.
USER_CHARS, STEP_CHARS, ANSWER_CHARS, RESULT_CHARS = 160, 120, 600, 400
ROUNDS, CALLS = 4, 3
INPUTS_PER_TURN = 1 + ROUNDS * (3 + 2 * CALLS) + 3
MESSAGES_PER_TURN = 1 + ROUNDS + 1


def text(seed: int, size: int) -> str:
    """``size`` characters of prose, different for each ``seed``."""
    offset = seed % 97
    return f"{seed}: " + _TEXT[offset : offset + size]


def session_started(timestamp: int = START_MS, session_id: str = "bench") -> SessionStarted:
    """The first input of a benchmark session (default configuration, the tools above)."""
    return SessionStarted(timestamp=timestamp, session_id=session_id, config=AgentConfig(), tools=TOOLS)


def turn(number: int, timestamp: int) -> list[AgentInput]:
    """One turn: a user message, ``ROUNDS`` rounds of (message, ``CALLS`` parallel tool calls), an answer."""
    out: list[AgentInput] = []
    t = timestamp

    def add(inp: AgentInput) -> None:
        nonlocal t
        out.append(inp)
        t += 1

    add(UserMessageReceived(timestamp=t, message_id=f"u{number}", content=text(number, USER_CHARS)))
    for r in range(ROUNDS + 1):
        message_id = f"a{number}.{r}"
        called = t
        add(LlmMessageStarted(timestamp=t, message_id=message_id))
        size = ANSWER_CHARS if r == ROUNDS else STEP_CHARS
        add(LlmMessageCompleted(timestamp=t, message_id=message_id, content=text(number + r, size)))
        usage = Usage(input_tokens=1200, output_tokens=80)
        if r == ROUNDS:
            add(ReActObserved(timestamp=t, called_llm_at=called, observation=CompleteReAct(), usage=usage))
            break
        ids = [f"c{number}.{r}.{k}" for k in range(CALLS)]
        requests = {
            i: ToolCallRequest(name="search" if k % 2 == 0 else "fetch", parameters=f'{{"q":"{number}.{r}.{k}"}}')
            for k, i in enumerate(ids)
        }
        add(
            ReActObserved(
                timestamp=t, called_llm_at=called, observation=ContinueReAct(tool_calls=requests), usage=usage
            )
        )
        for i in ids:
            add(ToolCallStarted(timestamp=t, tool_call_id=i))
        for k, i in enumerate(ids):
            add(
                ToolCallCompleted(
                    timestamp=t, tool_call_id=i, result=ToolSuccess(content=text(k + number, RESULT_CHARS))
                )
            )
    return out


def session(turns: int, *, first_turn: int = 0, timestamp: int = START_MS, start: bool = True) -> Iterator[AgentInput]:
    """A whole session of ``turns`` turns (``INPUTS_PER_TURN`` inputs and ``MESSAGES_PER_TURN`` messages each)."""
    if start:
        yield session_started(timestamp)
    for number in range(first_turn, first_turn + turns):
        yield from turn(number, timestamp + 1 + number * INPUTS_PER_TURN)


def turns_for_messages(messages: int) -> int:
    """How many generated turns give a session of at least ``messages`` messages."""
    return -(-messages // MESSAGES_PER_TURN)


def fold(state: AgentState, inputs: Iterable[AgentInput]) -> AgentState:
    """Apply ``inputs`` to ``state`` one by one."""
    for inp in inputs:
        state = transition(state, inp)
    return state


def bases(sizes: tuple[int, ...]) -> dict[int, AgentState]:
    """Idle sessions of (at least) each size in messages, from one generated log folded once."""
    out: dict[int, AgentState] = {}
    state, done = fold(initial_state(), [session_started()]), 0
    for size in sorted(sizes):
        turns = turns_for_messages(size)
        state = fold(state, session(turns - done, first_turn=done, start=False))
        out[size], done = state, turns
    return out


def fresh_batches(base: AgentState, turns: int, batches: int) -> list[list[AgentInput]]:
    """``batches`` lists of ``turns`` generated turns, each list able to follow ``base``, no two alike."""
    first = base.turns
    origin = base.timestamp - first * INPUTS_PER_TURN  # turn ``first`` starts just after ``base``
    return [list(session(turns, first_turn=first + k * turns, timestamp=origin, start=False)) for k in range(batches)]


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
    }


def write_results(name: str, data: dict[str, Any]) -> Path:
    """Write ``data`` (plus the environment) to ``benchmarks/results/<name>.json``; return the path."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    payload = {"benchmark": name, "environment": environment(), **data}
    path.write_text(json.dumps(payload, indent=2, default=msgspec.to_builtins) + "\n")
    return path
