"""``agent-core run``: run the offline demo session and print it as it happens.

A scripted model and three example tools (a calculator, a clock, a small
knowledge base) play a three-turn conversation: parallel tool calls, a call
with a bad argument that the model fixes, a tool failure, streamed answers.
Nothing leaves the machine. The session's clock and ids are fixed by default,
so the final state hash is the same on every run: replaying the log
(``--log``) must reproduce it.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio

from agent_core import AgentInput, encode_log, phase, state_hash

from .._agent import Agent, RandomIds, SequentialIds, Session, open_session
from .._clock import Clock, ManualClock, SystemClock
from .._machine import InputReceived, MachineEvent
from .._scripted import ScriptedModel
from .._store import StoreError, open_store
from ..demo import CONFIG, QUESTIONS, demo_script, demo_tools
from ._transcript import Transcript

DEMO_START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z: the fixed clock's start
PAUSE_MS = 15_000  # the fixed clock moves this much between turns, as if the user typed

DESCRIPTION = """\
Run the offline demo session and print it as it happens.

A scripted model and three example tools (a calculator, a clock, a small
knowledge base) play a three-turn conversation: parallel tool calls, a call
with a bad argument that the model fixes, a tool failure, streamed answers.
Nothing leaves the machine. The clock and ids are fixed by default, so the
final state hash is the same on every run, and replaying the log (--log)
reproduces it."""

EPILOG = """\
what to look at:
  user >       a user message (user-message-received)
  assistant >  the model's answer, streamed in chunks; only the whole text is logged
  ->           a tool call the model asked for; calls asked together run in parallel
  <-           a tool's result, or the failure the model reads (and recovers from)
  = turn N     how the turn ended (completed, failed, cancelled)

examples:
  agent-core run                       the demo, deterministic: same hash every time
  agent-core run --log demo.jsonl      also write the log of inputs (JSON lines)
  agent-core run --chunk-size 4        stream the answers in 4-character chunks
  agent-core run --wall-clock          stamp inputs with the real time (the hash changes)
"""


def register(subparsers: Any) -> None:
    """Add the ``run`` subcommand."""
    parser = subparsers.add_parser(
        "run",
        help="run the offline demo session and print it as it happens",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--log", type=Path, metavar="FILE", help="write the session's inputs to FILE (JSON lines)")
    parser.add_argument(
        "--chunk-size", type=int, default=0, metavar="N", help="stream answers in N-character chunks (default: words)"
    )
    parser.add_argument(
        "--wall-clock", action="store_true", help="use the real clock and random ids instead of fixed ones"
    )
    parser.add_argument(
        "--db",
        metavar="PATH",
        help="log every input to this store (a SQLite file or a postgresql:// URL); a stored session resumes",
    )
    parser.add_argument("--dsn", dest="db", metavar="URL", help="the same as --db, for a PostgreSQL store's URL")
    parser.add_argument("--session", metavar="ID", help="the session's id in --db (default: demo)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run the demo session, print its transcript and summary; returns the exit code."""
    stream = out if out is not None else sys.stdout
    if args.chunk_size < 0:
        print(f"agent-core run: --chunk-size must be 0 or more, got {args.chunk_size}", file=sys.stderr)
        return 2
    if args.session and not args.db:
        print("agent-core run: --session needs --db PATH (the store that holds the session)", file=sys.stderr)
        return 2
    try:  # opened before the session runs: an unwritable --log fails now, not after the whole session
        log = args.log.open("wb") if args.log is not None else None
    except OSError as error:
        print(f"agent-core run: cannot write the log {args.log}: {error.strerror}; nothing was run", file=sys.stderr)
        return 2
    inputs: list[AgentInput] = []
    try:
        with log if log is not None else contextlib.nullcontext():
            state = anyio.run(_session, args, stream, inputs)
            if log is not None:
                log.write(encode_log(inputs))
    except StoreError as error:
        print(f"agent-core run: {error}", file=sys.stderr)
        return 2
    stream.write(f"\nphase: {phase(state).value}\n")
    outcome = state.last_outcome
    stream.write(f"last outcome: {outcome.kind if outcome else 'none'}\n")
    stream.write(f"inputs: {state.step} (turns: {state.turns}, tool calls: {len(state.tool_calls)})\n")
    if args.log is not None:
        stream.write(f"log: {args.log}\n")
    stream.write(f"state hash: {state_hash(state)}\n")
    return 0


async def _session(args: argparse.Namespace, out: TextIO, inputs: list[AgentInput]) -> Any:
    clock: Clock = SystemClock() if args.wall_clock else ManualClock(DEMO_START_MS)
    agent = Agent(
        ScriptedModel(demo_script(), chunk_size=args.chunk_size),
        tools=demo_tools(clock),
        config=CONFIG,
        clock=clock,
        ids=RandomIds() if args.wall_clock else SequentialIds(),
        session_id=None if args.wall_clock else "demo",
    )

    def keep(event: MachineEvent) -> None:
        if isinstance(event, InputReceived):
            inputs.append(event.input)

    def write(text: str) -> None:
        out.write(text)
        out.flush()

    tools = ", ".join(agent.toolbox.names())
    write("agent-core run: a scripted model and local tools, offline\n")
    write(f"tools: {tools}\n")
    async with _running(args, agent) as session:
        session.subscribe(keep)
        session.subscribe(Transcript(write))
        await session.settled()  # a resumed session first finishes the turn it was in
        asked = sum(message.role == "user" for message in session.state.messages)
        for question in QUESTIONS[asked:]:  # a resumed session goes on with the questions it was not asked
            session.send(question)
            await session.settled()
            if isinstance(clock, ManualClock):
                clock.advance(PAUSE_MS)
        return session.state


@asynccontextmanager
async def _running(args: argparse.Namespace, agent: Agent) -> AsyncIterator[Session]:
    """The session: in memory, or logged to ``--db`` (new, or resumed from the store)."""
    if not args.db:
        async with agent.running() as session:
            yield session
        return
    store = open_store(args.db)
    tools = [agent.toolbox[name] for name in agent.toolbox.names()]
    try:
        async with open_session(
            store, args.session or agent.session_id or "demo", agent.model, tools=tools, config=agent.config,
            clock=agent.clock, ids=agent.ids,
        ) as session:  # fmt: skip
            yield session
    finally:
        store.close()
