"""A turn's cost beside a hand-written asyncio loop doing the same turn, measured in the same run.

A turn: a user message, a model call asking for two tool calls in parallel,
the two calls, a model call answering (streamed, one chunk). The model is an
instant scripted one and the tool an instant async function, so what is
measured is each runner's own cost. Every contender runs in this process,
interleaved (each repetition runs them all, in turn), and the medians of CPU
time per turn are compared:

* ``hand-written loop``: plain asyncio, a task per effect (the model call,
  each tool call), the conversation in a list: the floor a runner that starts
  a task per effect stands on;
* ``the reducer alone``: ``transition`` and ``effects_at`` over the inputs of
  the same turns (recorded from a session beforehand), with no runner: the
  floor the pure core sets under any runner of this reducer;
* ``agent-core``: ``Agent`` in memory, default timeouts and turn deadline;
* ``agent-core, MemoryStore``: the same session journaled to a ``MemoryStore``;
* ``agent-core, SQLite``: ``open_session`` on ``SqliteStore`` (``synchronous=FULL``,
  ``durability="input"``, the defaults), beside a hand-written loop making the
  same number of commits per turn to SQLite with the same settings.

Then, each in a fresh process: 1,000 concurrent in-memory sessions (model
calls per second, the collector's share at the interpreter's default
thresholds, the memory an idle session holds) and 1,000 concurrent durable
sessions on SQLite against the same sessions with no journal (rounds per
second, in the same run).

Run ``python benchmarks/turn.py`` (``--quick`` for a smoke run). Prints each
figure beside its target and writes ``benchmarks/results/turn.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import table, write_results
from _crowd import GcTimer

from agent_core import AgentConfig, Usage, effects_at, transition
from effects import Agent, MemoryStore, SqliteStore, open_session, tool
from effects.testing import ScriptedModel, call_tools, say

IN_MEMORY_OVER_HAND = 3.0  # agent-core's turn within 3x the hand-written loop's
SQLITE_OVER_HAND = 2.5  # with SQLite at the default durability, within 2.5x a loop making the same commits
MODEL_CALLS_PER_SECOND = 15_000  # 1,000 concurrent in-memory sessions, in total
COLLECTOR_SHARE = 0.10
DURABLE_OVER_MEMORY = 0.80  # 1,000 durable sessions reach 80% of the rounds/s of the same with no journal
CONFIG = AgentConfig(max_identical_tool_calls=1_000_000, stuck_window=0)


@tool
async def lookup(i: int) -> int:
    """An instant tool."""
    return i


def turn_model() -> ScriptedModel:
    """Two parallel calls to ``lookup``, then an answer; alternating forever."""
    usage = Usage(input_tokens=100, output_tokens=20)
    calls, answer = call_tools(("lookup", {"i": 1}), ("lookup", {"i": 2}), usage=usage), say("done", usage=usage)
    count = [0]

    def script(_: object) -> Any:
        count[0] += 1
        return answer if count[0] % 2 == 0 else calls

    return ScriptedModel(script, estimate_usage=False, keep_calls=False)


# -- the hand-written loop -------------------------------------------------------------------------


async def _hand_model(messages: list[tuple[str, Any]]) -> tuple[str, Any]:
    return ("say", "done") if messages[-1][0] == "tool" else ("calls", (1, 2))


async def _hand_tool(i: int) -> int:
    return i


async def hand_turns(turns: int, commit: Any = None) -> float:
    """CPU µs per turn of a plain asyncio loop: a task per effect; ``commit()`` called where agent-core commits."""
    messages: list[tuple[str, Any]] = []
    cpu = time.process_time()
    for n in range(turns):
        messages.append(("user", f"question {n}"))
        if commit is not None:
            commit(messages[-1:])
        while True:
            kind, body = await asyncio.create_task(_hand_model(messages))
            if kind == "say":
                if commit is not None:  # where agent-core logs the streamed message's start
                    commit([("assistant-started", "")])
                messages.append(("assistant", body))
                if commit is not None:
                    commit(messages[-1:])
                break
            messages.append(("calls", body))
            if commit is not None:
                commit(messages[-1:])
            tasks = [asyncio.create_task(_hand_tool(i)) for i in body]
            for task in tasks:
                messages.append(("tool", await task))
            if commit is not None:
                commit(messages[-2:])
    return (time.process_time() - cpu) * 1e6 / turns


class HandCommits:
    """What the hand-written loop commits to SQLite: one row per commit, ``synchronous=FULL``, WAL."""

    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("CREATE TABLE IF NOT EXISTS log (seq INTEGER PRIMARY KEY, data BLOB)")
        self.commits = 0

    def __call__(self, entries: list[tuple[str, Any]]) -> None:
        self.db.execute("BEGIN")
        self.db.execute("INSERT INTO log (data) VALUES (?)", (json.dumps(entries).encode(),))
        self.db.execute("COMMIT")
        self.commits += 1


# -- agent-core ------------------------------------------------------------------------------------


async def agent_turns(turns: int, store: Any = None) -> tuple[float, float]:
    """CPU µs per turn of agent-core in memory (``store`` None), on a ``MemoryStore`` or on a ``SqliteStore``;
    and commits per turn."""
    if store is None:
        running = Agent(turn_model(), tools=[lookup], config=CONFIG).running()
    else:
        running = open_session(store, f"s{time.monotonic_ns()}", turn_model(), tools=[lookup], config=CONFIG)
    async with running as session:
        session.send("warm-up")
        await session.turn_done()
        commits = getattr(store, "commits", 0)
        cpu = time.process_time()
        for n in range(turns):
            session.send(f"question {n}")
            await session.turn_done()
        spent = time.process_time() - cpu
        commits = getattr(store, "commits", 0) - commits
    return spent * 1e6 / turns, commits / turns


async def core_turns(turns: int) -> float:
    """CPU µs per turn of the pure core alone: ``transition`` then ``effects_at`` for each input of ``turns``
    turns recorded from a session in memory (the recording is not timed)."""
    inputs: list[Any] = []
    async with Agent(turn_model(), tools=[lookup], config=CONFIG).running() as session:
        session.send("warm-up")
        await session.turn_done()
        start = session.state
        session.subscribe(lambda event: inputs.append(event.input) if event.type == "input-received" else None)
        for n in range(turns):
            session.send(f"question {n}")
            await session.turn_done()
    state, cpu = start, time.process_time()
    for inp in inputs:
        state = transition(state, inp)
        effects_at(state)
    return (time.process_time() - cpu) * 1e6 / turns


def one_turn_table(turns: int, repeats: int) -> dict[str, Any]:
    """Every contender, interleaved ``repeats`` times; medians of CPU µs per turn."""
    folder = tempfile.mkdtemp(prefix="agent-core-turn-")
    kinds = ("hand", "core", "hand-sqlite", "agent", "agent-memory", "agent-sqlite")
    runs: dict[str, list[float]] = {k: [] for k in kinds}
    per_turn_commits = hand_commits = 0.0
    for repeat in range(repeats):
        runs["hand"].append(asyncio.run(hand_turns(turns)))
        runs["core"].append(asyncio.run(core_turns(turns)))
        runs["agent"].append(asyncio.run(agent_turns(turns))[0])
        runs["agent-memory"].append(asyncio.run(agent_turns(turns, MemoryStore()))[0])
        store = SqliteStore(os.path.join(folder, f"agent-{repeat}.db"))
        us, per_turn_commits = asyncio.run(agent_turns(max(turns // 10, 20), store))
        store.close()
        runs["agent-sqlite"].append(us)
        hand = HandCommits(os.path.join(folder, f"hand-{repeat}.db"))
        hand_turn_count = max(turns // 10, 20)
        runs["hand-sqlite"].append(asyncio.run(hand_turns(hand_turn_count, _commits(hand, round(per_turn_commits)))))
        hand_commits = hand.commits / hand_turn_count
    medians = {k: statistics.median(v) for k, v in runs.items()}
    return {
        "turns": turns,
        "repeats": repeats,
        "runs": runs,
        "median_us": medians,
        "commits_per_turn": per_turn_commits,
        "hand_commits_per_turn": hand_commits,
    }


def _commits(hand: HandCommits, per_turn: int) -> Any:
    """A ``commit`` for :func:`hand_turns` making the first ``per_turn`` of the five commits it asks for a turn."""
    calls = [0]

    def commit(entries: list[tuple[str, Any]]) -> None:
        calls[0] += 1
        if (calls[0] - 1) % 5 < per_turn:
            hand(entries)

    return commit


# -- many sessions ---------------------------------------------------------------------------------


async def crowd(sessions: int, turns: int, store_path: str | None) -> dict[str, Any]:
    """``sessions`` sessions at once (a warm-up turn each, then ``turns`` timed turns each), at the collector's
    default thresholds; in memory, or durable on one SQLite file."""
    store = SqliteStore(store_path) if store_path else None
    baseline = _rss_kb()
    opened, all_open, go, idle = 0, asyncio.Event(), asyncio.Event(), [0.0]

    async def one(n: int) -> None:
        nonlocal opened
        if store is None:
            running = Agent(turn_model(), tools=[lookup], config=CONFIG).running()
        else:
            running = open_session(store, f"s{n}", turn_model(), tools=[lookup], config=CONFIG)
        async with running as session:
            session.send("warm-up")
            await session.turn_done()
            opened += 1
            if opened == sessions:
                all_open.set()
            await go.wait()
            for turn in range(turns):
                session.send(f"question {turn}")
                await session.turn_done()

    collector = GcTimer()
    async with asyncio.TaskGroup() as group:
        for n in range(sessions):
            group.create_task(one(n))
        await all_open.wait()
        gc.collect()
        idle[0] = (_rss_kb() - baseline) / sessions
        gc.callbacks.append(collector)
        start, cpu = time.perf_counter(), time.process_time()
        go.set()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    gc.callbacks.remove(collector)
    if store is not None:
        store.close()
    model_calls = sessions * turns * 2
    return {
        "sessions": sessions,
        "turns": turns,
        "gc_thresholds": list(gc.get_threshold()),
        "seconds": seconds,
        "model_calls_per_second": model_calls / seconds,
        "turns_per_second": sessions * turns / seconds,
        "cpu_us_per_turn": cpu * 1e6 / (sessions * turns),
        "gc_share": collector.seconds / seconds,
        "full_collections": collector.full,
        "idle_kb_per_session": idle[0],
    }


def _rss_kb() -> float:
    """The process's resident memory now (KiB), from /proc, else its peak."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1024
    except OSError:
        return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def in_subprocess(*arguments: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, *arguments], capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer turns and sessions (a smoke run)")
    parser.add_argument("--phase", choices=("crowd", "durable"), help=argparse.SUPPRESS)
    parser.add_argument("--sessions", type=int, default=1000, help=argparse.SUPPRESS)
    parser.add_argument("--turns", type=int, default=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase == "crowd":
        print(json.dumps(asyncio.run(crowd(args.sessions, args.turns, None))))
        return
    if args.phase == "durable":
        path = os.path.join(tempfile.mkdtemp(prefix="agent-core-durable-"), "crowd.db")
        print(json.dumps(asyncio.run(crowd(args.sessions, args.turns, path))))
        return
    turns, repeats, sessions = (300, 3, 200) if args.quick else (2000, 5, 1000)
    single = one_turn_table(turns, repeats)
    memory = in_subprocess("--phase", "crowd", "--sessions", str(sessions))
    durable = in_subprocess("--phase", "durable", "--sessions", str(sessions))
    memory_again = in_subprocess("--phase", "crowd", "--sessions", str(sessions))
    report(single, memory, durable, memory_again)
    path = write_results(
        "turn",
        {
            "mode": "quick" if args.quick else "full",
            "one_turn": single,
            "crowd": memory,
            "durable_crowd": durable,
            "crowd_again": memory_again,
        },
    )
    print(f"\nwrote {path}")


def report(single: dict[str, Any], memory: dict[str, Any], durable: dict[str, Any], again: dict[str, Any]) -> None:
    m = single["median_us"]
    rows = [
        ("hand-written loop (a task per effect)", f"{m['hand']:.1f}", "", "", ""),
        ("the reducer alone (no runner)", f"{m['core']:.1f}", f"{m['core'] / m['hand']:.2f}x", "", ""),
        (
            "agent-core in memory",
            f"{m['agent']:.1f}",
            f"{m['agent'] / m['hand']:.2f}x",
            f"<= {IN_MEMORY_OVER_HAND}x",
            _met(m["agent"] / m["hand"] <= IN_MEMORY_OVER_HAND),
        ),
        ("agent-core, MemoryStore", f"{m['agent-memory']:.1f}", f"{m['agent-memory'] / m['hand']:.2f}x", "", ""),
        (
            f"hand-written loop, {single['hand_commits_per_turn']:.0f} SQLite commits",
            f"{m['hand-sqlite']:.1f}",
            "",
            "",
            "",
        ),
        (
            "agent-core, SQLite (default durability)",
            f"{m['agent-sqlite']:.1f}",
            f"{m['agent-sqlite'] / m['hand-sqlite']:.2f}x",
            f"<= {SQLITE_OVER_HAND}x",
            _met(m["agent-sqlite"] / m["hand-sqlite"] <= SQLITE_OVER_HAND),
        ),
    ]
    print(f"One turn, CPU per turn, medians of {single['repeats']} interleaved runs of {single['turns']} turns\n")
    print(table(("contender", "cpu us/turn", "x hand loop", "target", "result"), rows))
    calls = memory["model_calls_per_second"]
    durable_ratio = durable["turns_per_second"] / statistics.mean(
        [memory["turns_per_second"], again["turns_per_second"]]
    )
    print(
        f"\n{memory['sessions']:,} concurrent sessions, {memory['turns']} turns each, collector at {tuple(memory['gc_thresholds'])}\n"
    )
    crowd_rows = [
        (
            "in memory: model calls/s",
            f"{calls:,.0f}",
            f">= {MODEL_CALLS_PER_SECOND:,}",
            _met(calls >= MODEL_CALLS_PER_SECOND),
        ),
        (
            "in memory: the collector's share",
            f"{memory['gc_share']:.1%}",
            f"<= {COLLECTOR_SHARE:.0%}",
            _met(memory["gc_share"] <= COLLECTOR_SHARE),
        ),
        ("in memory: idle memory per session", f"{memory['idle_kb_per_session']:.1f} KB", "", ""),
        (
            "durable (SQLite) / no journal, turns/s",
            f"{durable_ratio:.2f} ({durable['turns_per_second']:,.0f} / "
            f"{memory['turns_per_second']:,.0f} and {again['turns_per_second']:,.0f})",
            f">= {DURABLE_OVER_MEMORY}",
            _met(durable_ratio >= DURABLE_OVER_MEMORY),
        ),
    ]
    print(table(("what", "measured", "target", "result"), crowd_rows))


def _met(ok: bool) -> str:
    return "met" if ok else "NOT MET"


if __name__ == "__main__":
    main()
