"""Driver: ``python -m benchmarks.peers`` (or ``python benchmarks/peers/run.py``); ``--help`` explains.

It picks the contenders the command line (``options``) asks for, measures them and prints the tables.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


from benchmarks.peers import catalogue, tables
from benchmarks.peers.document import document, write
from benchmarks.peers.floor import round_floor
from benchmarks.peers.guarantees import guarantee, is_reference
from benchmarks.peers.measure import fsync_ms, overhead, peak_memory, progress
from benchmarks.peers.options import choices, parse, settings
from benchmarks.peers.pair import long_pair
from benchmarks.peers.report import Results, Summary
from benchmarks.peers.workload import MODEL_CALLS_PER_TURN, Contender


def contenders(args: argparse.Namespace) -> list[Contender]:
    """agent-core in every configuration, and the peers kept by ``--only`` and ``--stores``, with the agent-core
    references they are compared with."""
    modes = choices(args.modes, "--modes", ("async", "sync"))
    durabilities = choices(args.durability, "--durability", ("async", "sync", "exit"))
    stores = choices(args.stores, "--stores", ("none", "memory", "sqlite"))
    every = catalogue.every(modes, durabilities)
    kept = [c for c in every if not is_reference(c) and c.persistence in stores]
    if args.only:
        kept = [c for c in kept if any(text in c.key for text in args.only)]
    if not kept:
        raise SystemExit(f"--only {args.only} with --stores {args.stores}: no contender left to compare")
    needed = {guarantee(c).reference for c in kept}
    return [c for c in every if c.key in needed or c in kept]


async def measure(found: list[Contender], chosen: dict[str, int]) -> Results:
    """Every measurement, in order: overhead, long conversations in pairs, memory."""
    results = Results(found, chosen)
    results.overhead = await overhead(found, chosen["turns"], chosen["repeat"], chosen["warmup"])
    if any(c.persistence in ("none", "memory") for c in found):
        progress("the floor under agent-core's round (benchmarks/runner.py's event loop and pure core alone)")
        results.floor = round_floor()
    turns = chosen["long_rounds"] // MODEL_CALLS_PER_TURN
    for peer in (c for c in found if not is_reference(c)):
        ours = results.reference(peer)
        progress(f"long conversation: {peer.key} against {ours.key}, {chosen['long_rounds']} rounds")
        results.long_runs[peer.key] = long_pair((ours, peer), turns, chosen["resume_repeat"])
        results.partners[peer.key] = ours.key
    if chosen["memory_rounds"]:
        for contender in found:
            progress(f"memory: {contender.key}, {chosen['memory_rounds']} rounds under tracemalloc")
            results.memory[contender.key] = await peak_memory(
                contender, chosen["memory_rounds"] // MODEL_CALLS_PER_TURN
            )
    return results


def main(argv: list[str] | None = None) -> None:
    """Run the comparison, print the tables, write the JSON."""
    args = parse(argv)
    chosen = settings(args)
    found = contenders(args)
    started = time.monotonic()
    chosen["fsync_us"] = round(fsync_ms() * 1000)
    progress(f"{len(found)} contenders; an fsync of 4 kB takes {chosen['fsync_us'] / 1000:.2f} ms here")
    results = asyncio.run(measure(found, chosen))
    summary = Summary(results)
    print("By guarantee: µs per round of fresh 20-round conversations; x = contender / agent-core's reference\n")
    print(tables.by_guarantee(summary))
    print(f"\nGrowth: µs per round in a {chosen['long_rounds']}-round conversation; x = peer / agent-core, same pair\n")
    print(tables.per_round(summary))
    long_session = tables.long_session(summary)
    if long_session:
        print(
            f"\nLong session: LangGraph's prebuilt agent at round {chosen['long_rounds']} (targets at round 1000); "
            "judged on CPU time in memory (both sides CPU-bound), on wall time with SQLite (fsync waits count)\n"
        )
        print(long_session)
    print(
        f"\nSQLite: bytes on disk and resume of the {chosen['long_rounds']}-round conversation "
        f"(an fsync takes {chosen['fsync_us'] / 1000:.2f} ms here)\n"
    )
    print(tables.storage(summary))
    if results.memory:
        print(f"\nMemory (tracemalloc), {chosen['memory_rounds']}-round conversation\n")
        print(tables.memory(summary))
    wins = tables.peer_wins(summary)
    print("\nWhere a peer does better: " + ("nowhere in this run" if not wins else ""))
    for line in wins:
        print(f"  {line}")
    command = " ".join(["python -m benchmarks.peers", *(sys.argv[1:] if argv is None else argv)])
    path = write(document(summary, command, args.preset, time.monotonic() - started, wins), args.out)
    print(f"\nwritten to {path}")


if __name__ == "__main__":
    main()
