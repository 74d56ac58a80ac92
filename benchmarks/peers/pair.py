"""A long conversation in pairs: each contender in a child process of its own, driven in lockstep.

Running both conversations in one process made them measure each other: a
full garbage collection triggered by one traversed the other's heap (LangGraph's
``InMemorySaver`` holds every checkpoint of the conversation: millions of
objects at round 1,000), and with SQLite one's commits waited behind the
other's gigabytes of writes. Here each child owns its heap and its directory;
the parent asks one child for one turn, waits for its times (wall and the
child's CPU time), then the other (the order swapping every turn), so the
children never run at the same time.
Before each timed turn the child collects its garbage and, on SQLite,
flushes the disk (:func:`.child.quiet`).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import statistics
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from types import TracebackType
from typing import Any

from .child import serve
from .measure import BYTES_AT_ROUNDS, progress
from .workload import MODEL_CALLS_PER_TURN, Contender


class ChildFailed(RuntimeError):
    """A contender's child process failed or died; the message names it and carries its traceback or exit code."""


@dataclass
class LongRun:
    """One contender's long conversation: per-turn wall and CPU times, bytes on disk, resume times.

    ``turn_cpu_ns`` is the CPU time of the child process over each turn (all
    its threads): the conversation's own, whatever else the machine ran meanwhile.
    """

    turn_ns: list[int] = field(default_factory=list)
    turn_cpu_ns: list[int] = field(default_factory=list)
    bytes_at: dict[int, int] = field(default_factory=dict)
    resume_ms: list[float] = field(default_factory=list)
    resumed_messages: int = 0

    def per_round_us(self, first_turn: int, turns: int, *, cpu: bool = False) -> float:
        """Median microseconds per round over ``turns`` turns from ``first_turn``: wall time, or CPU time."""
        window = (self.turn_cpu_ns if cpu else self.turn_ns)[first_turn : first_turn + turns]
        return statistics.median(window) / 1000 / MODEL_CALLS_PER_TURN

    def add_turn(self, times: tuple[int, int]) -> None:
        """Record a turn's (wall, CPU) nanoseconds as the child answered them."""
        elapsed, cpu = times
        self.turn_ns.append(elapsed)
        self.turn_cpu_ns.append(cpu)


class Child:
    """The parent's handle on one contender's child process (spawned: a fresh interpreter, nothing inherited)."""

    def __init__(self, contender: Contender) -> None:
        context = multiprocessing.get_context("spawn")
        self.key = contender.key
        self.connection, theirs = context.Pipe()
        self.process = context.Process(target=serve, args=(theirs, self.key), name=f"peers {self.key}", daemon=True)
        self.process.start()
        theirs.close()
        self.reply("start")

    def __enter__(self) -> Child:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self.process.is_alive():
            with contextlib.suppress(OSError):
                self.connection.send(("exit",))
            self.process.join(timeout=10)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.connection.close()

    def ask(self, *command: Any) -> Any:
        """Send ``command`` and wait for the child's answer."""
        with contextlib.suppress(OSError):  # a child that is gone: reply() says how it ended
            self.connection.send(command)
        return self.reply(command[0])

    def reply(self, doing: str) -> Any:
        """The child's answer; :class:`ChildFailed` with its traceback if it failed, its exit code if it died."""
        wait([self.connection, self.process.sentinel])
        if self.connection.poll():
            try:
                status, value = self.connection.recv()
            except (EOFError, OSError):  # it died while answering
                status, value = "died", None
            if status == "ok":
                return value
            if status == "error":
                raise ChildFailed(f"the child running {self.key} failed during {doing!r}:\n{value}")
        self.process.join()
        raise ChildFailed(
            f"the child running {self.key} (pid {self.process.pid}) died during {doing!r} with exit code "
            f"{self.process.exitcode} and no answer; anything it printed is on stderr above"
        )


def long_pair(pair: tuple[Contender, Contender], turns: int, resume_repeat: int) -> tuple[LongRun, LongRun]:
    """Run both contenders' conversations, each in its own child process, in lockstep, a turn each in turn.

    Bytes on disk are read after ``BYTES_AT_ROUNDS`` rounds and at the end
    (SQLite); the work of each is checked; then each store is resumed
    ``resume_repeat`` times (plus one warm-up), interleaved.
    """
    runs = (LongRun(), LongRun())
    with Child(pair[0]) as one, Child(pair[1]) as other:
        children = (one, other)
        for number in range(turns):
            for index in (0, 1) if number % 2 == 0 else (1, 0):
                runs[index].add_turn(children[index].ask("turn", number))
            rounds = (number + 1) * MODEL_CALLS_PER_TURN
            if rounds in (BYTES_AT_ROUNDS, turns * MODEL_CALLS_PER_TURN) and pair[0].persistence == "sqlite":
                for index in (0, 1):
                    runs[index].bytes_at[rounds] = children[index].ask("bytes")
            if (number + 1) % 20 == 0 or number + 1 == turns:
                wall = [run.turn_ns[-1] / 1e6 / MODEL_CALLS_PER_TURN for run in runs]
                cpu = [run.turn_cpu_ns[-1] / 1e6 / MODEL_CALLS_PER_TURN for run in runs]
                progress(
                    f"  round {rounds}: {wall[0]:.3f} ms vs {wall[1]:.3f} ms per round "
                    f"(CPU {cpu[0]:.3f} ms vs {cpu[1]:.3f} ms)"
                )
        for child in children:
            child.ask("close")
        if pair[0].resume is not None and pair[1].resume is not None:
            resume_pair(children, runs, resume_repeat)
    return runs


def resume_pair(children: tuple[Child, Child], runs: tuple[LongRun, LongRun], repeat: int) -> None:
    """Time resuming each stored conversation, interleaved, after one warm-up each."""
    for attempt in range(repeat + 1):
        for child, run in zip(children, runs, strict=True):
            elapsed, run.resumed_messages = child.ask("resume")
            if attempt:
                run.resume_ms.append(elapsed / 1e6)
