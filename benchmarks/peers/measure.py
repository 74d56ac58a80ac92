"""The measurements: overhead per round, a long conversation in pairs, bytes on disk, resume, peak memory.

Every timing is ``time.perf_counter_ns`` around the turns only (building an
agent or a graph is outside it, except in resume, which times what a new
process does: open the store, build the agent, load the conversation). A full
garbage collection runs, untimed, before each sample, so nobody pays for the
garbage of the one before. Frameworks are interleaved (A B A B...) so that
whatever else the machine does lands on all of them alike.
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
from dataclasses import dataclass, field
from pathlib import Path

from .workload import (
    MODEL_CALLS_PER_TURN,
    TOOL_CALLS_PER_TURN,
    Contender,
    Conversation,
    disk_bytes,
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


async def timed_turns(conversation: Conversation, first: int, count: int) -> list[int]:
    """Run ``count`` turns from turn ``first``; nanoseconds of each turn."""
    times = []
    for number in range(first, first + count):
        start = time.perf_counter_ns()
        answer = await conversation.turn(question(number))
        times.append(time.perf_counter_ns() - start)
        conversation.tally.answers.append(answer)
    return times


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
class LongRun:
    """One contender's long conversation: per-turn times, bytes on disk, resume times."""

    turn_ns: list[int] = field(default_factory=list)
    bytes_at: dict[int, int] = field(default_factory=dict)
    resume_ms: list[float] = field(default_factory=list)
    resumed_messages: int = 0

    def per_round_us(self, first_turn: int, turns: int) -> float:
        """Median microseconds per round over ``turns`` turns from ``first_turn``."""
        window = self.turn_ns[first_turn : first_turn + turns]
        return statistics.median(window) / 1000 / MODEL_CALLS_PER_TURN


async def long_pair(pair: tuple[Contender, Contender], turns: int, resume_repeat: int) -> tuple[LongRun, LongRun]:
    """Run both contenders' conversations in lockstep, a turn each in turn (the order swapping every turn).

    Bytes on disk are read after ``BYTES_AT_ROUNDS`` rounds and at the end;
    then each store is resumed ``resume_repeat`` times (plus one warm-up), interleaved.
    """
    runs = (LongRun(), LongRun())
    with tempfile.TemporaryDirectory(prefix="peers-") as first, tempfile.TemporaryDirectory(prefix="peers-") as second:
        directories = (Path(first), Path(second))
        async with pair[0].open(directories[0]) as one, pair[1].open(directories[1]) as other:
            conversations = (one, other)
            for number in range(turns):
                for index in (0, 1) if number % 2 == 0 else (1, 0):
                    gc.collect()
                    runs[index].turn_ns.extend(await timed_turns(conversations[index], number, 1))
                rounds = (number + 1) * MODEL_CALLS_PER_TURN
                if rounds in (BYTES_AT_ROUNDS, turns * MODEL_CALLS_PER_TURN) and pair[0].persistence == "sqlite":
                    for index in (0, 1):
                        runs[index].bytes_at[rounds] = disk_bytes(directories[index])
                if (number + 1) % 20 == 0 or number + 1 == turns:
                    latest = [run.turn_ns[-1] / 1e6 / MODEL_CALLS_PER_TURN for run in runs]
                    progress(f"  round {rounds}: {latest[0]:.3f} ms vs {latest[1]:.3f} ms per round")
        for index in (0, 1):
            check_work(pair[index], conversations[index], turns)
        await resume_pair(pair, directories, runs, resume_repeat)
    return runs


async def resume_pair(
    pair: tuple[Contender, Contender], directories: tuple[Path, Path], runs: tuple[LongRun, LongRun], repeat: int
) -> None:
    """Time resuming each stored conversation, interleaved, after one warm-up each."""
    if pair[0].resume is None or pair[1].resume is None:
        return
    for attempt in range(repeat + 1):
        for index in (0, 1):
            resume = pair[index].resume
            assert resume is not None
            gc.collect()
            start = time.perf_counter_ns()
            runs[index].resumed_messages = await resume(directories[index])
            if attempt:
                runs[index].resume_ms.append((time.perf_counter_ns() - start) / 1e6)


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
