"""The command line of ``python -m benchmarks.peers``: its help text, the quick and full presets, and the checks
of its values."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.peers.workload import MODEL_CALLS_PER_TURN

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
               (synchronous=FULL) committing every input before what depends on it
               (durability="input", the default) or once per turn (durability="turn");
               and the default with synchronous=NORMAL (survives a process crash only).
  langgraph    create_react_agent, create_agent (if langchain is installed), a
               hand-built StateGraph (ToolNode + tools_condition) and the same with
               the beta DeltaChannel; each driven with ainvoke + async tools and with
               invoke + sync tools. No checkpointer: the history is passed back each
               turn; InMemorySaver with durability "async" (its default) and "exit";
               SqliteSaver (invoke) / AsyncSqliteSaver (ainvoke) with "async", "sync"
               (each step's checkpoint written before the next step starts) and "exit"
               (one checkpoint when the run ends).
  pydantic-ai  FunctionModel; history carried with message_history; for SQLite,
               the chat-app pattern of its docs (it ships no store or checkpointer),
               which commits once per turn: a crash loses the turn.

Contenders are compared only with agent-core at the same guarantee (what a crash
may lose), each group with its target on µs per round (x = contender / agent-core):
  input        every input durable before what depends on it: agent-core's default
               vs LangGraph durability="sync"; agent-core must beat each (> 1x).
  turn         a crash loses at most the turn in progress: agent-core durability="turn"
               vs pydantic-ai and LangGraph durability="exit"; >= 2x each.
  memory/none  in memory, with / without in-memory persistence: >= 50x each. Beside them,
               what 50x asks of agent-core's round and the floor under a round measured
               in this run (benchmarks/runner.py: event loop alone + pure core alone).
  background   LangGraph's default durability="async" (a crash loses the steps in
               flight): no agent-core equal; shown against agent-core's default.
  process      agent-core synchronous=NORMAL: shown against its default.
With SQLite every store waits for fsync on commit (WAL, synchronous=FULL); the fsync
latency measured here is printed with the results.

Measurements (medians; ratio x = peer / agent-core, above 1 means agent-core is ahead):
  µs/round     fresh conversations of 4 turns (20 rounds), interleaved A B A B, after warm-ups.
  early/late   one long conversation per contender, run in lockstep with a conversation of
               agent-core at the same guarantee, a turn each; median µs per round over
               rounds 1-20 and over the last 20 rounds. late/early shows growth. Each
               conversation of a pair runs in a child process of its own (its own heap and
               temporary directory); the parent asks one child for a turn, then the other,
               so they never run at once. Before each timed turn and resume the child runs
               a full garbage collection and, with SQLite, os.sync(): every turn starts on
               a quiet disk, and neither contender's commits wait behind the other's writes.
  long session the prebuilt agent's last 20 rounds against agent-core's, beside the
               round-1000 targets (>= 1000x with InMemorySaver, >= 50x with SQLite), in
               wall time and in CPU time (the child's process_time around each turn: it
               runs nothing else, so that is the conversation's CPU, threads included).
               In memory the target is judged on CPU time on both sides: both are
               CPU-bound there, CPU time is what benchmarks/runner.py measures too,
               and the wall time of agent-core's turns of a few milliseconds counts
               the time slices other processes of a loaded machine take from them. With SQLite it is judged on wall time: waiting for a commit's
               fsync is part of the cost of durability, and CPU time would hide it.
  bytes        database files (with -wal, -shm) after 100 rounds and at the end (sqlite).
  resume       open the store, build the agent, load the conversation (sqlite), interleaved.
  memory       tracemalloc peak of a conversation run alone, and what it held at its end.

--quick (default): 3 samples of overhead, a long conversation of 100 rounds, memory
traced over 50 rounds. --full takes 9 samples, 1,000 rounds and 200 traced rounds;
LangGraph's per-round cost grows with the conversation, so it takes hours. Narrow a run
with --only, --modes, --stores and --durability; the round-1000 comparison of the
prebuilt agent is
  python -m benchmarks.peers --rounds 1000 --only create_react_agent --modes async \\
      --stores memory,sqlite --durability async --memory-rounds 0
Progress goes to stderr, the tables to stdout, the numbers to
benchmarks/results/peers.json (or --out).
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
        help="keep peers whose 'framework form [store]' contains TEXT (repeatable), with agent-core at their guarantee",
    )
    parser.add_argument("--modes", default="async,sync", help="LangGraph drive modes: async, sync or both (default)")
    parser.add_argument(
        "--durability",
        default="async,sync,exit",
        help="LangGraph durability modes with a checkpointer: any of async (its default), sync, exit (default: all)",
    )
    parser.add_argument(
        "--stores", default="none,memory,sqlite", help="keep peers with these persistences (default: all three)"
    )
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


def choices(given: str, flag: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
    """A comma-separated list of ``allowed`` values from the command line."""
    chosen = tuple(v.strip() for v in given.split(",") if v.strip())
    if not chosen or any(v not in allowed for v in chosen):
        raise SystemExit(f"{flag}: expected a comma-separated list of {', '.join(allowed)}; got {given!r}")
    return chosen
