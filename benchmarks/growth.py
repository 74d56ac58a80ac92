"""Cold growth: what a transition costs as a session grows, with the interpreter's collector as it comes.

Run ``python benchmarks/growth.py --help`` for what each measurement means and
its target. Prints tables and writes ``benchmarks/results/growth.json``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c
from _session import INPUTS_PER_TURN, MESSAGES_PER_TURN, bases, fold, fresh_batch, session
from immutables import Map

from agent_core import AgentState, Message, Vector, initial_state, replay

HELP = """\
The collector is CPython's, at its default thresholds, never frozen nor disabled (the script refuses
to run otherwise); every timing includes the collections the work causes.

1. stream   Sessions of 100, 1,000, 10,000 and 100,000 messages (one generated log folded once)
            take runs of 10 turns never folded before (a user message, 4 model calls with 3 parallel
            tool calls each, the tool results, an answer: 40 inputs, 6 messages a turn), each run
            folded onto the state the last one left, as a live session or a replay does, until the
            session doubles (at least 100 turns more; the largest size reached is shown), then again
            from the start with the same inputs. Blocks of 10 runs, the sizes in turn (300 runs a
            size, 40 with --quick), a full collection before each block, untimed, so that a block's
            collections walk only its own session's young objects. Per transition: the CPU time over
            all runs (every collection included: a run's median would hide the rare costly ones),
            the median and the minimum wall time of a run, the collector's share of the CPU time
            (gc.callbacks) and the collections per generation.
            Target: the CPU time per transition at 100,000 messages <= 1.5x the time at 100.
2. replay   replay() of a session's whole log (inputs decoded in memory) of 10,000 and 100,000
            messages (10,000 with --quick): ns per input and the collector's share of the CPU time.
3. memory   Bytes per message: the whole session (traced memory retained by a folded session
            over its message count), and the vector alone (a Vector of n existing items, over n).
4. maps     Writes into an immutables.Map and into an agent_core.Table of 1,000 to 200,000
            entries, as the reducer writes tool calls (a new key, then two rewrites of it), the
            mapping carried from write to write: CPU ns per write and the collector's part of it.
"""

SIZES = (100, 1_000, 10_000, 100_000)
SECTIONS = ("stream", "replay", "memory", "maps")
GOAL = 1.5
DEFAULT_THRESHOLDS = (700, 10, 10)


class CollectorTime:
    """A ``gc.callbacks`` hook adding up the CPU time of this thread spent collecting, in nanoseconds.

    CPU time, as the timings it is set beside: on a busy machine, wall time would count the time
    slices other processes took in the middle of a collection.
    """

    def __init__(self) -> None:
        self.ns = 0
        self._started = 0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.thread_time_ns()
        else:
            self.ns += time.thread_time_ns() - self._started


def collections() -> list[int]:
    """Collections so far, per generation."""
    return [generation["collections"] for generation in gc.get_stats()]


def stream(turns_per_run: int, rounds: int, block: int = 10) -> dict[int, dict[str, Any]]:
    """Stream never-seen turns into sessions of each size in :data:`SIZES`, ``block`` runs a size in turn.

    A full collection, untimed, before each block: the collections in a block walk only that
    session's young objects (a young vector of another size's session would otherwise be walked on
    this one's time).
    """
    sessions = bases(SIZES)
    streams = {size: Stream(base, turns_per_run) for size, base in sessions.items()}
    for _ in range(rounds):
        for size in SIZES:
            gc.collect()
            streams[size].run(block)
    return {size: streams[size].summary() for size in SIZES}


class Stream:
    """One session taking runs of new turns, the state carried from run to run; its timings.

    The session grows to twice its size (at least 100 turns more), then starts again from its base
    with the same inputs: a 100-message session stays between 100 and 700 messages.
    """

    def __init__(self, base: AgentState, turns: int) -> None:
        self.base, self.state, self.turns, self.runs = base, base, turns, 0
        grows_by = max(len(base.messages), 100 * MESSAGES_PER_TURN)
        self.cycle = -(-grows_by // (turns * MESSAGES_PER_TURN))
        self.cpu_ns = 0
        self.walls: list[int] = []
        self.collector = CollectorTime()
        self.collections = [0, 0, 0]
        self.largest = 0

    def run(self, runs: int) -> None:
        """Fold ``runs`` runs of ``turns`` new turns, generated before the clock starts."""
        batches = [fresh_batch(self.base, self.turns, (self.runs + k) % self.cycle) for k in range(runs)]
        state, before = self.state, collections()
        gc.callbacks.append(self.collector)
        cpu = time.thread_time_ns()
        for batch in batches:
            if self.runs % self.cycle == 0:
                state = self.base
            start = time.perf_counter_ns()
            state = fold(state, batch)
            self.walls.append(time.perf_counter_ns() - start)
            self.runs += 1
        self.cpu_ns += time.thread_time_ns() - cpu
        gc.callbacks.remove(self.collector)
        self.state, self.largest = state, max(self.largest, len(state.messages))
        self.collections = [n + b - a for n, b, a in zip(self.collections, collections(), before, strict=True)]

    def summary(self) -> dict[str, Any]:
        """Per transition: CPU time over all runs, a run's median and minimum wall time, the collector's share."""
        inputs = self.turns * INPUTS_PER_TURN
        total = len(self.walls) * inputs
        return {
            "messages": len(self.base.messages),
            "largest": self.largest,
            "transitions": total,
            "cpu_ns": self.cpu_ns / total,
            "median_ns": statistics.median(self.walls) / inputs,
            "min_ns": min(self.walls) / inputs,
            "gc_share": self.collector.ns / self.cpu_ns,
            "gc_ns": self.collector.ns / total,
            "collections": self.collections,
        }


def replay_cost(sizes: tuple[int, ...], repeat: int) -> dict[int, dict[str, Any]]:
    """replay() of whole logs of ``sizes`` messages: ns per input and the collector's share."""
    out = {}
    for size in sizes:
        inputs = list(session(-(-size // MESSAGES_PER_TURN)))
        gc.collect()
        timer = CollectorTime()
        walls, cpus = [], []
        gc.callbacks.append(timer)
        try:
            for _ in range(repeat):
                start, cpu = time.perf_counter_ns(), time.thread_time_ns()
                replay(inputs)
                cpus.append(time.thread_time_ns() - cpu)
                walls.append(time.perf_counter_ns() - start)
        finally:
            gc.callbacks.remove(timer)
        out[size] = {
            "inputs": len(inputs),
            "median_ns": statistics.median(walls) / len(inputs),
            "min_ns": min(walls) / len(inputs),
            "cpu_ns": statistics.median(cpus) / len(inputs),
            "gc_share": timer.ns / sum(cpus),
        }
        del inputs
    return out


def maps(sizes: tuple[int, ...], new_keys: int, repeat: int) -> dict[str, dict[int, dict[str, Any]]]:
    """A stream of writes into an ``immutables.Map`` and into a :class:`Table` of ``sizes`` entries, in turn.

    As the reducer writes its tool calls: each new key is written, then written twice more (started,
    completed). The mapping is carried from write to write; each run starts again from the same one.
    """
    from agent_core import Table  # here, so that the other sections run against releases without it

    values = [Message(id=f"m{n}", role="user", content=f"content {n}") for n in range(max(sizes))]
    out: dict[str, dict[int, dict[str, Any]]] = {}
    for size in sizes:
        start: dict[str, Map[str, Message] | Table[str, Message]] = {
            "immutables.Map": Map((f"k{n}", values[n]) for n in range(size)),
            "Table": Table((f"k{n}", values[n]) for n in range(size)),
        }
        gc.collect()
        timers = {kind: CollectorTime() for kind in start}
        cpus: dict[str, list[int]] = {kind: [] for kind in start}
        for k in range(repeat):
            keys = [f"r{k}.{n}" for n in range(new_keys)]
            for kind, mapping in start.items():
                gc.callbacks.append(timers[kind])
                cpu = time.thread_time_ns()
                for key, value in zip(keys, values, strict=False):
                    mapping = mapping.set(key, value).set(key, value).set(key, value)
                cpus[kind].append(time.thread_time_ns() - cpu)
                gc.callbacks.remove(timers[kind])
                del mapping
        for kind in start:
            writes = 3 * new_keys * repeat
            out.setdefault(kind, {})[size] = {
                "cpu_ns": sum(cpus[kind]) / writes,
                "gc_ns": timers[kind].ns / writes,
            }
    return out


def memory(messages: int) -> dict[str, Any]:
    """Traced bytes per message of a folded session, and of a Vector alone."""
    gc.collect()
    tracemalloc.start()
    state = fold(initial_state(), session(-(-messages // MESSAGES_PER_TURN)))  # only the state stays
    gc.collect()
    session_bytes, _ = tracemalloc.get_traced_memory()
    items = list(state.messages)
    tracemalloc.reset_peak()
    before, _ = tracemalloc.get_traced_memory()
    vector = Vector(items)
    after, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    count = len(state.messages)
    return {
        "messages": count,
        "tool_calls": len(state.tool_calls),
        "session_bytes_per_message": session_bytes / count,
        "vector_bytes_per_item": (after - before) / len(vector),
    }


def targets(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The cold-growth target, read from the CPU time per transition (and, beside it, the wall-time medians)."""
    if "stream" not in data:
        return []
    rows = data["stream"]
    small, large = rows[min(rows)], rows[max(rows)]
    cpu, median = large["cpu_ns"] / small["cpu_ns"], large["median_ns"] / small["median_ns"]
    return [
        {
            "target": f"stream of new turns, {max(rows):,} vs {min(rows):,} messages",
            "goal": GOAL,
            "cpu": cpu,
            "median": median,
            "met": cpu <= GOAL,
        }
    ]


def report(data: dict[str, Any]) -> None:
    """Print the tables of the run."""
    for section, show in (
        ("stream", _stream_table),
        ("replay", _replay_table),
        ("memory", _memory_line),
        ("maps", _maps_table),
    ):
        if section in data:
            show(data)
    if data["targets"]:
        body = [
            (t["target"], t["goal"], f"{t['cpu']:.2f}x", f"{t['median']:.2f}x", "met" if t["met"] else "NOT MET")
            for t in data["targets"]
        ]
        print("\ntargets\n" + c.table(("target", "goal", "cpu", "wall median", ""), body))


def _stream_table(data: dict[str, Any]) -> None:
    headers = ("messages (largest)", "cpu ns/transition", "wall median (min)", "in gc", "gc ns/transition", "gcs 0/1/2")
    body = [
        (
            f"{size:,} ({row['largest']:,})",
            f"{row['cpu_ns']:,.0f}",
            f"{row['median_ns']:,.0f} ({row['min_ns']:,.0f})",
            f"{row['gc_share']:.1%}",
            f"{row['gc_ns']:,.0f}",
            "/".join(str(n) for n in row["collections"]),
        )
        for size, row in data["stream"].items()
    ]
    print(f"\nstream of never-seen turns, collector at {data['gc_thresholds']}\n{c.table(headers, body)}")


def _replay_table(data: dict[str, Any]) -> None:
    headers = ("messages", "inputs", "ns/input median (min)", "cpu ns/input", "in gc")
    body = [
        (
            f"{size:,}",
            f"{r['inputs']:,}",
            f"{r['median_ns']:,.0f} ({r['min_ns']:,.0f})",
            f"{r['cpu_ns']:,.0f}",
            f"{r['gc_share']:.1%}",
        )
        for size, r in data["replay"].items()
    ]
    print(f"\nreplay of a whole log\n{c.table(headers, body)}")


def _memory_line(data: dict[str, Any]) -> None:
    m = data["memory"]
    print(
        f"\nmemory: {m['messages']:,} messages, {m['tool_calls']:,} tool calls:"
        f" {m['session_bytes_per_message']:,.0f} bytes per message for the whole session,"
        f" {m['vector_bytes_per_item']:.1f} bytes per item for a Vector alone"
    )


def _maps_table(data: dict[str, Any]) -> None:
    kinds = list(data["maps"])
    headers = ("entries", *(f"{kind} cpu ns/write (gc)" for kind in kinds))
    body = [
        (
            f"{size:,}",
            *(f"{data['maps'][k][size]['cpu_ns']:,.0f} ({data['maps'][k][size]['gc_ns']:,.0f})" for k in kinds),
        )
        for size in data["maps"][kinds[0]]
    ]
    print(f"\nwrites into a map of n entries (a new key, then 2 rewrites), collector on\n{c.table(headers, body)}")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the tables and write ``benchmarks/results/growth.json``."""
    parser = argparse.ArgumentParser(
        description=__doc__, epilog=HELP, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer runs, replay up to 10,000 messages")
    parser.add_argument("--only", choices=SECTIONS, action="append", help="run only this section (repeatable)")
    args = parser.parse_args(argv)
    if not gc.isenabled() or gc.get_threshold() != DEFAULT_THRESHOLDS or gc.get_freeze_count():
        parser.error(f"the collector must run as it comes: enabled, thresholds {DEFAULT_THRESHOLDS}, nothing frozen")
    sections = tuple(args.only or SECTIONS)
    started = time.perf_counter()
    data: dict[str, Any] = {"mode": "quick" if args.quick else "full", "gc_thresholds": list(gc.get_threshold())}
    if "stream" in sections:
        data["stream"] = stream(10, 4 if args.quick else 30)
    if "replay" in sections:
        data["replay"] = replay_cost((10_000,) if args.quick else (10_000, 100_000), 3 if args.quick else 5)
    if "memory" in sections:
        data["memory"] = memory(10_000 if args.quick else 100_000)
    if "maps" in sections:
        data["maps"] = maps((1_000, 10_000, 100_000, 200_000), 1_000, 5 if args.quick else 20)
    data["targets"] = targets(data)
    data["seconds"] = time.perf_counter() - started
    report(data)
    path = c.write_results("growth", data)
    print(f"\n{data['mode']} run in {data['seconds']:.0f} s; results written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
