"""Many durable sessions in one process: group commit against one commit per batch, and the durability modes.

Every session runs the runner's workload (four rounds of three parallel calls
and an answer per turn, instant model and tools) with its own
:class:`SessionJournal` on one shared store: a :class:`SqliteStore`
(``synchronous=FULL``), or a :class:`PostgresStore` on a server with fsync on.
Every configuration runs under the interpreter's default collector thresholds
(the figures a user gets without tuning; the runner benchmark measures the
README's tuned thresholds beside them). The same
sessions without a journal (in memory) give the ceiling: group commit cannot
make durable sessions faster than sessions that commit nothing, so in memory
against one commit per batch bounds the ratio group commit can reach.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from runner import ROUNDS_PER_TURN, instant_model, lookup

from agent_core import AgentConfig
from effects import Agent, PostgresStore, SessionJournal, SqliteStore

Store = SqliteStore | PostgresStore
Opener = Callable[[bool, int], Store]
"""``opener(group_commit, n)``: a fresh, empty store for the ``n``-th configuration."""

TARGET_GROUP_SPEEDUP = 10.0
"""Group commit against one commit per batch, same sessions, same run."""

CONFIGURATIONS = (
    ("input, group commit", True, "input"),
    ("input, one commit per batch", False, "input"),
    ("turn, group commit", True, "turn"),
)
IN_MEMORY = "none (in memory: the ceiling)"


async def _sessions(store: Store | None, sessions: int, turns: int, durability: str) -> None:
    config = AgentConfig(max_identical_tool_calls=1_000_000, stuck_window=0)

    async def one(n: int) -> None:
        journal = None if store is None else SessionJournal(store, f"s{n}", durability=durability)  # type: ignore[arg-type]
        agent = Agent(instant_model(), tools=[lookup], config=config, journal=journal, session_id=f"s{n}")
        async with agent.running() as session:
            for turn in range(turns):
                session.send(f"question {turn}")
                await session.settled()
        if journal is not None:
            await anyio.to_thread.run_sync(journal.close)  # the final snapshot, as open_session saves it

    async with anyio.create_task_group() as group:
        for n in range(sessions):
            group.start_soon(one, n)


def concurrent_durable(
    sessions: int, turns: int, directory: Path, opener: Opener | None = None, configurations: int = 3
) -> dict[str, Any]:
    """The first ``configurations`` of :data:`CONFIGURATIONS`, each on a fresh store: rounds/s, commits, batches
    per commit. Without ``opener``, a SQLite file in ``directory`` each."""
    out: dict[str, Any] = {"sessions": sessions, "turns": turns, "gc_thresholds": list(gc.get_threshold())}
    for index, configuration in enumerate(CONFIGURATIONS[:configurations]):
        out[configuration[0]] = _measure(configuration, index, sessions, turns, directory, opener)
    out[IN_MEMORY] = _in_memory(sessions, turns)
    base = out["input, one commit per batch"]["rounds_per_second"]
    out["group_speedup"] = out["input, group commit"]["rounds_per_second"] / base
    out["ceiling"] = out[IN_MEMORY]["rounds_per_second"] / base
    return out


def _in_memory(sessions: int, turns: int) -> dict[str, Any]:
    """The same sessions without a journal: rounds/s and the event loop's CPU per round."""
    start, cpu = time.perf_counter(), time.thread_time()
    anyio.run(_sessions, None, sessions, turns, "input")
    seconds, cpu = time.perf_counter() - start, time.thread_time() - cpu
    rounds = sessions * turns * ROUNDS_PER_TURN
    return {"seconds": seconds, "rounds_per_second": rounds / seconds, "loop_cpu_ms_per_round": cpu * 1e3 / rounds}


def _measure(
    configuration: tuple[str, bool, str], index: int, sessions: int, turns: int, directory: Path, opener: Opener | None
) -> dict[str, Any]:
    """One configuration on a fresh store: rounds/s, commits, inputs per commit, and the CPU per round of the
    event loop's thread and of the others (the store's writer; the threads closing the journals)."""
    _, group_commit, durability = configuration
    store = (
        opener(group_commit, index)
        if opener
        else SqliteStore(directory / f"durable-{index}.db", group_commit=group_commit)
    )
    start, loop_cpu, all_cpu = time.perf_counter(), time.thread_time(), time.process_time()
    anyio.run(_sessions, store, sessions, turns, durability)  # the event loop runs on this thread
    seconds = time.perf_counter() - start
    loop_cpu, all_cpu = time.thread_time() - loop_cpu, time.process_time() - all_cpu
    inputs = sum(info.length for info in store.sessions())
    commits = store.commits
    store.close()
    rounds = sessions * turns * ROUNDS_PER_TURN
    return {
        "seconds": seconds,
        "rounds_per_second": rounds / seconds,
        "loop_cpu_ms_per_round": loop_cpu * 1e3 / rounds,
        "other_cpu_ms_per_round": (all_cpu - loop_cpu) * 1e3 / rounds,
        "commits": commits,
        "inputs_per_commit": inputs / max(commits, 1),
    }


def report_durable(r: dict[str, Any], table: Any, where: str = "one SQLite file (synchronous=FULL)") -> None:
    """The table: rounds/s per configuration and the measured ratio beside its target."""
    if "skipped" in r:
        print(f"\nconcurrent durable sessions on {where}: skipped ({r['skipped']})")
        return
    gc_note = f", collector at {tuple(r['gc_thresholds'])}" if "gc_thresholds" in r else ""
    print(f"\n{r['sessions']:,} concurrent durable sessions on {where}, {r['turns']} turns each{gc_note}")
    rows = [
        (
            name,
            f"{r[name]['rounds_per_second']:,.0f}",
            f"{r[name]['commits']:,}",
            f"{r[name]['inputs_per_commit']:.1f}",
            _cpu(r[name], "loop_cpu_ms_per_round"),
            _cpu(r[name], "other_cpu_ms_per_round"),
        )
        for name, _, _ in CONFIGURATIONS
        if name in r
    ]
    if IN_MEMORY in r:
        memory = r[IN_MEMORY]
        rows.append(
            (IN_MEMORY, f"{memory['rounds_per_second']:,.0f}", "0", "-", _cpu(memory, "loop_cpu_ms_per_round"), "-")
        )
    headers = ("durability, commits", "rounds/s", "commits", "inputs/commit", "loop CPU ms/round", "other threads")
    print(table(headers, rows))
    verdict = "met" if r["group_speedup"] >= TARGET_GROUP_SPEEDUP else "MISSED"
    print(
        f"group commit / one commit per batch: {r['group_speedup']:.1f}x (target >= {TARGET_GROUP_SPEEDUP:.0f}x: {verdict})"
    )
    if "ceiling" in r:
        print(
            f"ceiling: in memory / one commit per batch = {r['ceiling']:.1f}x (no commit at all; group commit cannot "
            "beat it)"
        )


def _cpu(result: dict[str, Any], key: str) -> str:
    """A CPU column; results written before it was measured have none."""
    return f"{result[key]:.3f}" if key in result else "-"
