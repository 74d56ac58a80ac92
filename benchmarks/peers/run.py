"""Driver: ``python -m benchmarks.peers`` (or ``python benchmarks/peers/run.py``); ``--help`` explains."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.peers import agent_core_side, langgraph_side, pydantic_ai_side, tables
from benchmarks.peers.document import document, write
from benchmarks.peers.measure import fsync_ms, long_pair, overhead, peak_memory, progress
from benchmarks.peers.report import Results, Summary
from benchmarks.peers.workload import MODEL_CALLS_PER_TURN, Contender

HELP = """\
The same scripted ReAct workload through agent-core, LangGraph and pydantic-ai.

Workload: one long conversation; each user turn is answered by a fake model
(written for each framework through its public model interface) with 4 rounds
of 3 parallel tool calls, then a text answer quoting the 12 results. A round is
one model call with its tool calls: 5 rounds per turn. Tools are instant functions
returning short strings (coroutines, except in LangGraph's invoke mode). Every run
checks that each framework made the same model calls and tool calls and gave the
same answers.

Contenders, per persistence (none / memory / sqlite):
  agent-core   Agent without a journal; open_session on MemoryStore; on SqliteStore
               (synchronous=FULL, the baseline; and NORMAL, its faster setting).
  langgraph    create_react_agent, create_agent (if langchain is installed), a
               hand-built StateGraph (ToolNode + tools_condition), the same with
               the beta DeltaChannel, and that with durability="exit" (checkpoint
               once per turn); each driven with ainvoke + async tools and with
               invoke + sync tools. No checkpointer: the history is passed back
               each turn; InMemorySaver; SqliteSaver (invoke) / AsyncSqliteSaver
               (ainvoke).
  pydantic-ai  FunctionModel; history carried with message_history; for SQLite,
               the chat-app pattern of its docs (it ships no store or checkpointer),
               which commits once per turn: a crash loses the turn.

With SQLite every store waits for fsync on commit (WAL, synchronous=FULL): agent-core
commits each batch of inputs before the effects that depend on it (about 3 commits a
round), LangGraph checkpoints in the background of the next step (durability "async"),
pydantic-ai once per turn. The fsync latency measured here is printed with the results.

Measurements (medians; ratio x = peer / agent-core, above 1 means agent-core is ahead):
  µs/round     fresh conversations of 4 turns (20 rounds), interleaved A B A B, after warm-ups.
  early/late   one long conversation per contender, run in lockstep with an agent-core
               conversation of the same persistence, a turn each; median µs per round over
               rounds 1-20 and over the last 20 rounds. late/early shows growth.
  bytes        database files (with -wal, -shm) after 100 rounds and at the end (sqlite).
  resume       open the store, build the agent, load the conversation (sqlite), interleaved.
  memory       tracemalloc peak of a conversation run alone, and what it held at its end.

--quick (default) takes four to seven minutes on 2 cores: 3 samples of overhead, a long
conversation of 100 rounds, memory traced over 50 rounds. --full takes 9 samples, 1,000
rounds and 200 traced rounds; LangGraph's per-round cost grows with the conversation, so
it takes more than an hour (narrow it with --only and --modes). With --rounds 1000 and
--only, a single peer's 1,000-round numbers take minutes. Progress goes to stderr, the
tables to stdout, the numbers to benchmarks/results/peers.json (or --out).
"""

PRESETS = {
    "quick": {"turns": 4, "repeat": 3, "warmup": 1, "long_rounds": 100, "memory_rounds": 50, "resume_repeat": 3},
    "full": {"turns": 4, "repeat": 9, "warmup": 2, "long_rounds": 1000, "memory_rounds": 200, "resume_repeat": 9},
}


def parse(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.peers", description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", dest="preset", action="store_const", const="quick", help="a few minutes (default)")
    size.add_argument("--full", dest="preset", action="store_const", const="full", help="1,000 rounds; over an hour")
    parser.add_argument("--rounds", type=int, help="rounds of the long conversation (a multiple of 5, at least 100)")
    parser.add_argument("--memory-rounds", type=int, help="rounds of the conversation traced for memory (0: skip)")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="TEXT",
        help="keep peers whose 'framework form [store]' contains TEXT (repeatable); agent-core stays",
    )
    parser.add_argument("--modes", default="async,sync", help="LangGraph drive modes: async, sync or both (default)")
    parser.add_argument("--out", type=Path, help="JSON file (default benchmarks/results/peers.json)")
    parser.set_defaults(preset="quick")
    return parser.parse_args(argv)


def settings(args: argparse.Namespace) -> dict[str, int]:
    """The preset, with the sizes given on the command line."""
    chosen = dict(PRESETS[args.preset])
    if args.rounds is not None:
        if args.rounds < 100 or args.rounds % MODEL_CALLS_PER_TURN:
            raise SystemExit(
                f"--rounds: expected a multiple of {MODEL_CALLS_PER_TURN} of at least 100, got {args.rounds}"
            )
        chosen["long_rounds"] = args.rounds
    if args.memory_rounds is not None:
        chosen["memory_rounds"] = args.memory_rounds - args.memory_rounds % MODEL_CALLS_PER_TURN
    return chosen


def contenders(args: argparse.Namespace) -> list[Contender]:
    """agent-core in every configuration, and the peers kept by ``--only``."""
    modes = tuple(m.strip() for m in args.modes.split(",") if m.strip())
    if not modes or any(m not in ("async", "sync") for m in modes):
        raise SystemExit(f"--modes: expected async, sync or async,sync; got {args.modes!r}")
    peers = langgraph_side.contenders(modes) + pydantic_ai_side.contenders()
    ours = agent_core_side.contenders()
    if args.only:
        peers = [p for p in ours + peers if not p.baseline and any(text in p.key for text in args.only)]
        return [c for c in ours if c.baseline] + peers
    return ours + peers


async def measure(found: list[Contender], chosen: dict[str, int]) -> Results:
    """Every measurement, in order: overhead, long conversations in pairs, memory."""
    results = Results(found, chosen)
    results.overhead = await overhead(found, chosen["turns"], chosen["repeat"], chosen["warmup"])
    turns = chosen["long_rounds"] // MODEL_CALLS_PER_TURN
    for peer in (c for c in found if not c.baseline):
        progress(f"long conversation: {peer.key} against agent-core, {chosen['long_rounds']} rounds")
        ours = results.ours(peer.persistence)
        results.long_runs[peer.key] = await long_pair((ours, peer), turns, chosen["resume_repeat"])
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
    print(f"Per round (µs), {chosen['long_rounds']}-round conversations; x = peer / agent-core\n")
    print(tables.per_round(summary))
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
