"""The measurements: overhead per round, peak memory, fsync latency (long conversations in pairs: :mod:`.pair`).

Every timing is ``time.perf_counter_ns`` around the turns only (building an
agent or a graph is outside it, except in resume, which times what a new
process does: open the store, build the agent, load the conversation). A full
garbage collection runs, untimed, before each sample, so nobody pays for the
garbage of the one before. Frameworks are interleaved (A B A B...) so that
whatever else the machine does lands on all of them alike. The turns of a
long pair run in child processes (:mod:`.child`) through :func:`timed_turn`,
which also reads the process's CPU time (``time.process_time_ns``) around each.
"""

from __future__ import annotations

import gc
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .workload import (
    MODEL_CALLS_PER_TURN,
    TOOL_CALLS_PER_TURN,
    Contender,
    Conversation,
    expected_answer,
    question,
)

BYTES_AT_ROUNDS = 100
"""The first point where bytes on disk are read (the second is the end of the long run)."""
WINDOW_ROUNDS = 20
"""Rounds in the early (1-20) and late (last 20) windows of the long run."""


def progress(message: str) -> None:
    """One line of progress on stderr."""
    print(message, file=sys.stderr, flush=True)


def check_work(contender: Contender, conversation: Conversation, turns: int) -> None:
    """Refuse a run that did not do the workload's work (model calls, tool calls, answers)."""
    tally = conversation.tally
    expected = (turns * MODEL_CALLS_PER_TURN, turns * TOOL_CALLS_PER_TURN)
    if (tally.model_calls, tally.tool_calls) != expected:
        raise RuntimeError(
            f"{contender.label} [{contender.persistence}] made {tally.model_calls} model calls and "
            f"{tally.tool_calls} tool calls in {turns} turns; expected {expected[0]} and {expected[1]}: "
            "its workload module no longer does the same work as the others"
        )
    wrong = [n for n, answer in enumerate(tally.answers) if answer != expected_answer(n)]
    if wrong:
        raise RuntimeError(f"{contender.label} [{contender.persistence}] answered turn {wrong[0]} wrongly")


async def timed_turn(conversation: Conversation, number: int) -> tuple[int, int]:
    """Run turn ``number``; nanoseconds of wall time and of the process's CPU time (all its threads) it took.

    The CPU time is the conversation's only where nothing else runs in the
    process: in the child of a long pair (:mod:`.child`).
    """
    cpu = time.process_time_ns()
    start = time.perf_counter_ns()
    answer = await conversation.turn(question(number))
    elapsed = time.perf_counter_ns() - start
    cpu = time.process_time_ns() - cpu
    conversation.tally.answers.append(answer)
    return elapsed, cpu


async def timed_turns(conversation: Conversation, first: int, count: int) -> list[int]:
    """Run ``count`` turns from turn ``first``; nanoseconds (wall time) of each turn."""
    return [(await timed_turn(conversation, number))[0] for number in range(first, first + count)]


async def overhead(contenders: Sequence[Contender], turns: int, repeat: int, warmup: int) -> dict[str, list[float]]:
    """Microseconds per round of fresh ``turns``-turn conversations, ``repeat`` samples each, interleaved."""
    samples: dict[str, list[float]] = {c.key: [] for c in contenders}
    for run in range(warmup + repeat):
        progress(f"overhead: {'warm-up' if run < warmup else 'sample'} {run + 1}/{warmup + repeat}")
        for contender in contenders:
            with tempfile.TemporaryDirectory(prefix="peers-") as directory:
                gc.collect()
                async with contender.open(Path(directory)) as conversation:
                    elapsed = sum(await timed_turns(conversation, 0, turns))
                check_work(contender, conversation, turns)
            if run >= warmup:
                samples[contender.key].append(elapsed / 1000 / (turns * MODEL_CALLS_PER_TURN))
    return samples


@dataclass
class Memory:
    """Traced memory of one conversation: the peak while it ran, and what it still held at its end."""

    peak_bytes: int
    held_bytes: int


async def peak_memory(contender: Contender, turns: int) -> Memory:
    """Run one ``turns``-turn conversation under ``tracemalloc`` (alone: tracing slows everything down)."""
    with tempfile.TemporaryDirectory(prefix="peers-") as directory:
        gc.collect()
        tracemalloc.start()
        try:
            async with contender.open(Path(directory)) as conversation:
                await timed_turns(conversation, 0, turns)
                gc.collect()
                held, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        check_work(contender, conversation, turns)
    return Memory(peak_bytes=peak, held_bytes=held)


def fsync_ms(samples: int = 21) -> float:
    """Median milliseconds of writing 4 kB and ``os.fsync`` in the temporary directory: what a durable commit waits for."""
    times = []
    with tempfile.TemporaryDirectory(prefix="peers-") as directory:
        descriptor = os.open(Path(directory) / "probe", os.O_WRONLY | os.O_CREAT)
        try:
            for _ in range(samples):
                start = time.perf_counter_ns()
                os.write(descriptor, b"\0" * 4096)
                os.fsync(descriptor)
                times.append((time.perf_counter_ns() - start) / 1e6)
        finally:
            os.close(descriptor)
    return statistics.median(times)
