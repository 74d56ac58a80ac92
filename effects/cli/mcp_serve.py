"""``agent-core mcp-serve``: an agent's sessions as MCP tools, for an IDE or another agent."""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import AsyncExitStack
from typing import Any

import anyio

from agent_core import AgentConfig
from effects import open_store

from ..protocols import DEFAULT_WAIT_SECONDS, SessionHost, loopback_host, mcp_app, mcp_server
from ._logs import CommandError, command
from .chat import CLOCK, DEFAULT_DB, NOT_CONFIGURED, configure_model, load_tools, mcp_tools

DESCRIPTION = """\
Offer an agent as MCP tools: start_session, send_message, read_answer,
approve, answer_questions, cancel_turn. Over stdio by default (an IDE starts
the command); with --http over streamable HTTP on a loopback address, at /mcp.
Every session is logged to the store, so the viewer, replay and fork work on
them as on any other."""

EPILOG = """\
examples:
  agent-core mcp-serve --demo                             the scripted demo model, over stdio
  agent-core mcp-serve --model gpt-4o-mini --tools my_tools.py
  agent-core mcp-serve --demo --http --port 8766          streamable HTTP on http://127.0.0.1:8766/mcp
"""


def register(subparsers: Any) -> None:
    """Add the ``mcp-serve`` subcommand."""
    env = os.environ.get
    parser = subparsers.add_parser(
        "mcp-serve",
        help="offer an agent's sessions as MCP tools (stdio, or streamable HTTP on loopback)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("--provider", choices=("openai", "anthropic"), default=env("AGENT_CORE_PROVIDER") or None,
        help="the model's API (env AGENT_CORE_PROVIDER; default openai)")  # fmt: skip
    add("--model", default=env("AGENT_CORE_MODEL") or None, help="the model's name (env AGENT_CORE_MODEL)")
    add("--base-url", default=env("AGENT_CORE_BASE_URL") or None, metavar="URL", help="the API's base URL")
    add("--system", default="", metavar="PROMPT", help="the system prompt of new sessions")
    add("--tools", action="append", default=[], metavar="FILE.py", help="offer the @tool functions of a Python file")
    add("--mcp", action="append", default=[], metavar="SERVER", help="offer the tools of an MCP server")
    add("--demo", action="store_true", help="use the scripted demo model (no provider needed)")
    add("--db", default=env("AGENT_CORE_DB") or DEFAULT_DB, metavar="FILE",
        help=f"the log: a SQLite file or a postgresql:// URL (default {DEFAULT_DB})")  # fmt: skip
    add("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    add("--host", default="127.0.0.1", help="with --http: a loopback address (default 127.0.0.1)")
    add("--port", type=int, default=8766, help="with --http: the port (default 8766; 0 picks a free one)")
    add("--wait", type=float, default=DEFAULT_WAIT_SECONDS, metavar="SECONDS",
        help=f"how long a tool call waits for a turn (default {DEFAULT_WAIT_SECONDS:g})")  # fmt: skip
    parser.set_defaults(func=command("mcp-serve", run))


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted (or until the client closes stdio)."""
    try:
        loopback_host(args.host)
    except ValueError as error:
        raise CommandError(str(error)) from None
    model, _, tools = configure_model(args)
    if model is None:
        raise CommandError(NOT_CONFIGURED)
    tools += [t for path in args.tools for t in load_tools(path)]
    anyio.run(_serve, args, model, tools)
    return 0


async def _serve(args: argparse.Namespace, model: Any, tools: list[Any]) -> None:
    async with AsyncExitStack() as stack:
        if hasattr(model, "__aenter__"):
            await stack.enter_async_context(model)
        tools = [*tools, *await mcp_tools(stack, args.mcp)]
        store = open_store(args.db)
        stack.callback(store.close)
        config = AgentConfig(system_prompt=args.system)
        host = await stack.enter_async_context(SessionHost(store, model, tools=tools, config=config, clock=CLOCK))
        if not args.http:
            print(f"agent-core mcp-serve: serving {args.db} over stdio", file=sys.stderr)
            await mcp_server(host, wait_seconds=args.wait).run_stdio_async()
            return
        await _serve_http(args, host)


async def _serve_http(args: argparse.Namespace, host: SessionHost) -> None:
    import socket

    import uvicorn

    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family)
    sock.bind((args.host, args.port))
    sock.listen()
    port = sock.getsockname()[1]
    shown = f"[{args.host}]" if family == socket.AF_INET6 else args.host
    print(
        f"agent-core mcp-serve: serving {args.db} on http://{shown}:{port}/mcp (Ctrl-C stops)",
        file=sys.stderr,
        flush=True,
    )
    app = mcp_app(host, wait_seconds=args.wait)
    await uvicorn.Server(uvicorn.Config(app, log_level="warning")).serve(sockets=[sock])
