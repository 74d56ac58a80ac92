"""``agent-core worker``: run sessions as Temporal workflows, on as many machines as you start it on."""

from __future__ import annotations

import argparse
import importlib
import signal
from typing import Any

import anyio

from .._agent import Agent
from .._clock import SystemClock
from .._scripted import ScriptedModel
from .._store import open_store
from ..demo import CONFIG, demo_script, demo_tools
from ._logs import CommandError, command
from ._temporal import add_temporal, connect, server_error, temporal_module

DESCRIPTION = """\
Run a worker: it takes sessions' next steps (folding inputs, model calls, tool
calls, timers) from the Temporal server and logs every input to the PostgreSQL
store. Start one on each machine; Temporal gives each session to one worker at
a time and moves it to another if that one dies. Without --agent the worker
runs the offline demo's scripted model and tools."""

EPILOG = """\
examples:
  agent-core worker --temporal localhost:7233 --dsn postgresql://localhost/agents
  agent-core worker --dsn postgresql://localhost/agents --agent myapp.agents:support
"""


def register(subparsers: Any) -> None:
    """Add the ``worker`` subcommand."""
    parser = subparsers.add_parser(
        "worker",
        help="run sessions as Temporal workflows (start one on each machine)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_temporal(parser)
    parser.add_argument("--dsn", metavar="URL", required=True, help="the PostgreSQL store every worker shares")
    parser.add_argument(
        "--agent",
        metavar="MODULE:NAME",
        help="an effects.Agent whose model, tools, config and secrets the worker runs",
    )
    parser.set_defaults(func=command("worker", run))


def load_agent(spec: str | None) -> Agent:
    """The ``--agent MODULE:NAME`` object (an :class:`~effects.Agent`), or the demo's agent."""
    if spec is None:
        return Agent(ScriptedModel(demo_script()), tools=demo_tools(SystemClock()), config=CONFIG)
    module_name, _, name = spec.partition(":")
    try:
        found = getattr(importlib.import_module(module_name), name or "agent")
    except (ImportError, AttributeError) as error:
        raise CommandError(
            f"--agent {spec}: expected MODULE:NAME naming an effects.Agent, could not load it ({error})"
        ) from None
    if not isinstance(found, Agent):
        raise CommandError(f"--agent {spec}: expected an effects.Agent, got {type(found).__name__}")
    return found


def run(args: argparse.Namespace) -> int:
    """Run the worker until SIGINT (Ctrl-C) or SIGTERM, then shut it down through the SDK; returns the exit code."""
    temporal = temporal_module()
    agent = load_agent(args.agent)
    store = open_store(args.dsn)

    async def serve() -> None:
        client = await connect(args)
        tools = [agent.toolbox[name] for name in agent.toolbox.names()]
        worker = temporal.session_worker(
            client,
            store,
            agent.model,
            tools=tools,
            task_queue=args.task_queue,
            config=agent.config,
            secrets=agent.secrets,
        )
        try:
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                # Leaving the block awaits the worker's shutdown: its polls and activities end through the SDK.
                async with worker:
                    print(
                        f"agent-core worker: task queue {args.task_queue} on {args.temporal}, store {store!r}",
                        flush=True,
                    )
                    async for _ in signals:
                        break
        except RuntimeError as error:
            if str(error).startswith("Worker validation failed"):  # the server refused it (no such namespace...)
                raise server_error(args, error) from None
            raise

    try:
        anyio.run(serve)
    finally:
        store.close()
    return 0
