"""The store benchmark's live phases: the runner's workload with a timed SQLite journal, and its inputs appended
again grouped as the machine grouped them against one commit per input; with the measuring helpers of every phase."""

from __future__ import annotations

import json
import sqlite3
import statistics
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from runner import ROUNDS_PER_TURN, instant_model, lookup

from agent_core import AgentConfig, AgentInput, AgentState
from effects import Agent, EventStore, SessionJournal, SqliteStore, load_state


def file_bytes(path: Path) -> int:
    """The store's size on disk once its write-ahead log is folded into the file."""
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def best_and_median(run: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Milliseconds: the fastest and the median of ``repeat`` runs."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        run()
        samples.append((time.perf_counter_ns() - start) / 1e6)
    return min(samples), statistics.median(samples)


class TimedJournal:
    """A journal that times each grouped commit and keeps the batches."""

    def __init__(self, journal: SessionJournal) -> None:
        self.journal = journal
        self.batches: list[list[AgentInput]] = []
        self.latencies_ms: list[float] = []

    def append(self, inputs: Sequence[AgentInput], states: Sequence[AgentState], /) -> None:
        start = time.perf_counter_ns()
        self.journal.append(inputs, states)
        self.latencies_ms.append((time.perf_counter_ns() - start) / 1e6)
        self.batches.append(list(inputs))


# --- phase: the runner's workload, live -------------------------------------------------------


async def live_session(opener: Callable[[], EventStore], rounds: int) -> TimedJournal:
    """The runner's workload with a journal on ``opener()``; returns the timed journal (closed: final snapshot saved)."""
    timed = TimedJournal(SessionJournal(opener(), "bench"))
    config = AgentConfig(max_identical_tool_calls=1_000_000, stuck_window=0)
    agent = Agent(instant_model(), tools=[lookup], config=config, journal=timed, session_id="bench")
    async with agent.running() as session:
        for turn in range(rounds // ROUNDS_PER_TURN):
            session.send(f"question {turn}")
            await session.settled()
    timed.journal.close()
    return timed


def live(rounds: int, directory: Path) -> dict[str, Any]:
    """Run the workload under both durability settings; measure disk and resume on the FULL one."""
    out: dict[str, Any] = {"rounds": rounds}
    for synchronous in ("FULL", "NORMAL"):
        path = directory / f"live-{synchronous}.db"
        start = time.perf_counter()
        timed = anyio.run(live_session, partial(SqliteStore, path, synchronous=synchronous), rounds)  # type: ignore[arg-type]
        seconds = time.perf_counter() - start
        inputs = sum(len(batch) for batch in timed.batches)
        latencies = sorted(timed.latencies_ms)
        out[synchronous] = {
            "inputs": inputs,
            "commits": len(timed.batches),
            "inputs_per_commit": inputs / len(timed.batches),
            "seconds": seconds,
            "commit_ms_median": statistics.median(latencies),
            "commit_ms_p99": latencies[int(len(latencies) * 0.99)],
            "bytes": file_bytes(path),
        }
        Path(directory / f"batches-{synchronous}.json").write_text(json.dumps([len(b) for b in timed.batches]))
    path = directory / "live-FULL.db"
    store = SqliteStore(path, readonly=True)
    load_best, load_median = best_and_median(lambda: load_state(store, "bench"), 50)
    open_best, open_median = best_and_median(lambda: load_state(SqliteStore(path, readonly=True), "bench"), 50)
    out["resume"] = {"load_ms": load_best, "load_ms_median": load_median, "open_and_load_ms": open_best,
                     "open_and_load_ms_median": open_median}  # fmt: skip
    return out


# --- phase: append throughput, grouped against one commit per input ------------------------------


def grouped(rounds: int, directory: Path) -> dict[str, Any]:
    """Append the workload's inputs again: as the machine grouped them, and one per commit."""
    timed = anyio.run(live_session, lambda: SqliteStore(directory / "source.db", synchronous="OFF"), rounds)
    batches = timed.batches
    inputs = sum(len(batch) for batch in batches)
    out: dict[str, Any] = {"inputs": inputs, "inputs_per_commit": inputs / len(batches)}
    for synchronous in ("FULL", "NORMAL"):
        for grouping, plan in (("grouped", batches), ("one per commit", [[i] for b in batches for i in b])):
            path = directory / f"append-{synchronous}-{len(plan)}.db"
            journal = SessionJournal(SqliteStore(path, synchronous=synchronous), "bench")
            latencies = []
            start = time.perf_counter_ns()
            for batch in plan:
                begun = time.perf_counter_ns()
                journal.append(batch)
                latencies.append((time.perf_counter_ns() - begun) / 1e3)
            seconds = (time.perf_counter_ns() - start) / 1e9
            out[f"{synchronous} {grouping}"] = {
                "inputs_per_second": inputs / seconds,
                "commit_us_median": statistics.median(latencies),
                "us_per_input": seconds * 1e6 / inputs,
            }
    return out
