"""``agent-core chat``: talk to an agent in the terminal.

The answer streams as it arrives, tool calls and their results are shown,
tools that need approval are asked about at the prompt, and Ctrl-C during a
turn cancels the turn (``re-act-cancelled``) while the session goes on; Ctrl-C
or Ctrl-D at the prompt ends the chat. Every input is logged to a SQLite store,
so ``--session ID`` resumes a chat. With no model configured it explains how
to configure one and offers the scripted demo model.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import shlex
import signal
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from agent_core import AgentConfig
from effects import Model, Session, SystemClock, Tool, open_session, open_store
from effects.providers import (
    AnthropicModel,
    McpServer,
    OpenAIModel,
    OpenAIResponsesModel,
    chat_demo_model,
    chat_demo_tools,
)

from .._text import clip
from ._chat_loop import BackgroundSession
from ._chat_terminal import Printer, ask, converse, show_history

DEFAULT_DB = "agent-core.db"
CLOCK = SystemClock()
"""The chat's clock: the session stamps inputs with it and the demo's ``current_time`` reads it."""
NOT_CONFIGURED = """\
No model is configured. Choose one with flags or environment variables:
  --provider openai|openai-responses|anthropic   AGENT_CORE_PROVIDER   (default: openai)
  --model NAME                  AGENT_CORE_MODEL      (e.g. gpt-4o-mini, claude-sonnet-4-5, llama3.2)
  --base-url URL                AGENT_CORE_BASE_URL   (any OpenAI-compatible server, e.g. http://localhost:11434/v1)
API keys are read from OPENAI_API_KEY or ANTHROPIC_API_KEY.
Or try the scripted demo model, offline: agent-core chat --demo"""


DESCRIPTION = """\
Talk to an agent in the terminal. The answer streams as it arrives; tool calls
and their results are shown; tools that need approval are asked about at the
prompt. Ctrl-C during a turn stops the turn (the chat goes on); Ctrl-C or
Ctrl-D at the prompt ends the chat. Every input is logged to a SQLite file, so
a chat can be resumed, replayed and inspected later."""

EPILOG = """\
examples:
  agent-core chat --demo                                     the scripted demo model, offline
  agent-core chat --model gpt-4o-mini                        OpenAI (OPENAI_API_KEY)
  agent-core chat --provider anthropic --model claude-sonnet-4-5   Anthropic (ANTHROPIC_API_KEY)
  agent-core chat --provider openai-responses --model gpt-5-mini   OpenAI's Responses API (OPENAI_API_KEY)
  agent-core chat --base-url http://localhost:11434/v1 --model llama3.2   Ollama, vLLM, llama.cpp...
  agent-core chat --model gpt-4o-mini --tools my_tools.py    offer the @tool functions of a file
  agent-core chat --model gpt-4o-mini --mcp "uvx mcp-server-time"   tools from an MCP server (uvx comes with uv)
  agent-core chat --session chat-1a2b3c4d                    resume a chat
"""


def register(subparsers: Any) -> None:
    """Add the ``chat`` subcommand."""
    env = os.environ.get
    parser = subparsers.add_parser(
        "chat",
        help="talk to an agent in the terminal (a real model, or the demo model)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("--provider", choices=("openai", "openai-responses", "anthropic"), default=env("AGENT_CORE_PROVIDER") or None,
        help="the model's API (env AGENT_CORE_PROVIDER; default openai)")  # fmt: skip
    add("--model", default=env("AGENT_CORE_MODEL") or None, help="the model's name (env AGENT_CORE_MODEL)")
    add("--base-url", default=env("AGENT_CORE_BASE_URL") or None, metavar="URL",
        help="the API's base URL (env AGENT_CORE_BASE_URL; default: the provider's)")  # fmt: skip
    add("--system", default="", metavar="PROMPT", help="the system prompt of a new session")
    add("--tools", action="append", default=[], metavar="FILE.py", help="offer the @tool functions of a Python file")
    add("--mcp", action="append", default=[], metavar="SERVER",
        help="offer the tools of an MCP server: a command (stdio; e.g. 'uvx mcp-server-time', which needs uv) "
             "or an http(s) URL")  # fmt: skip
    add("--db", default=env("AGENT_CORE_DB") or DEFAULT_DB, metavar="FILE",
        help=f"the log: a SQLite file or a postgresql:// URL (env AGENT_CORE_DB; default {DEFAULT_DB})")  # fmt: skip
    add("--dsn", dest="db", metavar="URL", help="the same as --db, for a PostgreSQL store's URL")
    add("--session", metavar="ID", help="resume this session (or start a new one with this id)")
    add("--demo", action="store_true", help="use the scripted demo model (no provider needed)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the chat; the exit code is 0 after a normal end, 2 for a configuration problem."""
    try:
        model, label, tools = configure_model(args)
        tools += [t for path in args.tools for t in load_tools(path)]
    except Exception as error:  # a bad flag, a missing extra or key, a tools file that fails: say it, no traceback
        print(f"agent-core chat: {error}", file=sys.stderr)
        return 2
    if model is None:
        print(NOT_CONFIGURED)
        if not (sys.stdin.isatty() and ask("Try the scripted demo model now? [y/N] ")):
            return 2
        model, label, tools = chat_demo_model(), "the scripted demo model", [*chat_demo_tools(CLOCK), *tools]
    session_id = args.session or f"chat-{uuid.uuid4().hex[:8]}"
    opener = _opener(args, model, tools, session_id)
    # Ctrl-C stops a turn even when this process was started with SIGINT ignored (a job a script put in the
    # background ignores it, and so does every program it starts): without this, Ctrl-C would do nothing.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    background = BackgroundSession(opener)
    try:
        session = background.start()
    except Exception as error:
        print(f"agent-core chat: could not start the session: {error}", file=sys.stderr)
        return 2
    print(f"agent-core chat with {label}; session {session_id}, logged to {args.db}.")
    print("Ctrl-C stops a turn; Ctrl-C or Ctrl-D at the prompt ends the chat.")
    show_history(session.state)
    try:
        converse(background, session)
    finally:
        background.close()
        print(f"\nResume with: {resume_command(args, session_id)}")
    return 0


def resume_command(args: argparse.Namespace, session_id: str) -> str:
    """The command line that resumes this chat with the same model, tools and store."""
    words = ["agent-core", "chat", "--session", session_id]
    if args.demo:  # the demo's model and tools come with --demo
        words.append("--demo")
    else:
        flags = [("--provider", args.provider), ("--model", args.model), ("--base-url", args.base_url)]
        flags += [("--tools", path) for path in args.tools] + [("--mcp", spec) for spec in args.mcp]
        words += [word for flag, value in flags if value for word in (flag, value)]
    if args.db != DEFAULT_DB:
        words += ["--db", args.db]
    return shlex.join(words)


def configure_model(args: argparse.Namespace) -> tuple[Model | None, str, list[Tool[..., Any]]]:
    """The model the flags and environment ask for (``None`` when no model is named)."""
    if args.demo:
        return chat_demo_model(), "the scripted demo model", chat_demo_tools(CLOCK)
    if not args.model:
        return None, "", []
    provider = args.provider or ("anthropic" if _only_anthropic_key() else "openai")
    if provider == "anthropic":
        return AnthropicModel(args.model, base_url=args.base_url), f"{args.model} (Anthropic)", []
    if provider == "openai-responses":
        return OpenAIResponsesModel(args.model, base_url=args.base_url), f"{args.model} (OpenAI Responses)", []
    return OpenAIModel(args.model, base_url=args.base_url), f"{args.model} (OpenAI-compatible)", []


def _only_anthropic_key() -> bool:
    return bool(os.environ.get("ANTHROPIC_API_KEY")) and not os.environ.get("OPENAI_API_KEY")


def load_tools(path: str) -> list[Tool[..., Any]]:
    """The ``@tool`` functions defined at the top level of the Python file ``path``."""
    spec = importlib.util.spec_from_file_location(f"agent_core_chat_tools_{Path(path).stem}", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"--tools {path}: expected a Python file (FILE.py) defining @tool functions")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found = [value for value in vars(module).values() if isinstance(value, Tool)]
    if not found:
        raise ValueError(f"--tools {path}: found no @tool functions; decorate them with effects.tool")
    return found


class _McpLogLine(logging.Handler):
    """What the MCP SDK logs about a server (a line on the server's stdout that is not a protocol message, say) as
    one line on stderr, without its traceback: the server's doing, not a failure of the chat."""

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += f": {clip(str(record.exc_info[1]), 200)}"
        print(f"[MCP server: {text}]", file=sys.stderr)


def mcp_logs_as_lines() -> None:
    logger = logging.getLogger("mcp")
    if not any(isinstance(handler, _McpLogLine) for handler in logger.handlers):
        logger.addHandler(_McpLogLine(logging.WARNING))
        logger.propagate = False


async def mcp_tools(stack: AsyncExitStack, servers: list[str]) -> list[Tool[..., Any]]:
    """The tools of the MCP servers named by ``--mcp`` (a command, or an http(s) URL), each open until ``stack``
    closes; what the SDK logs about them is one line on stderr."""
    if servers:
        mcp_logs_as_lines()
    tools: list[Tool[..., Any]] = []
    for spec in servers:
        where = {"url": spec} if spec.startswith(("http://", "https://")) else {"command": shlex.split(spec)}
        server = await stack.enter_async_context(McpServer(**where))
        tools += server.tools()
    return tools


def _opener(args: argparse.Namespace, model: Model, tools: list[Tool[..., Any]], session_id: str) -> Callable[[], Any]:
    @asynccontextmanager
    async def opened() -> AsyncIterator[Session]:
        async with AsyncExitStack() as stack:
            if hasattr(model, "__aenter__"):
                await stack.enter_async_context(model)  # type: ignore[arg-type]
            all_tools = [*tools, *await mcp_tools(stack, args.mcp)]
            store = open_store(args.db)
            stack.callback(store.close)
            config = AgentConfig(system_prompt=args.system)
            session = await stack.enter_async_context(
                open_session(store, session_id, model, tools=all_tools, config=config, clock=CLOCK)
            )
            session.subscribe(Printer(sys.stdout))
            yield session

    return opened
