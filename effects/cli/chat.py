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
import functools
import importlib.util
import os
import shlex
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from agent_core import AgentConfig, AgentState
from effects import Model, Session, SqliteStore, SystemClock, Tool, open_session
from effects.providers import AnthropicModel, McpServer, MissingExtra, OpenAIModel, chat_demo_model, chat_demo_tools

from ._chat_session import BackgroundSession, Printer, shorten, until_turn_waits

DEFAULT_DB = "agent-core.db"
CLOCK = SystemClock()
"""The chat's clock: the session stamps inputs with it and the demo's ``current_time`` reads it."""
NOT_CONFIGURED = """\
No model is configured. Choose one with flags or environment variables:
  --provider openai|anthropic   AGENT_CORE_PROVIDER   (default: openai)
  --model NAME                  AGENT_CORE_MODEL      (e.g. gpt-4o-mini, claude-sonnet-4-5, llama3.2)
  --base-url URL                AGENT_CORE_BASE_URL   (any OpenAI-compatible server, e.g. http://localhost:11434/v1)
API keys are read from OPENAI_API_KEY or ANTHROPIC_API_KEY.
Or try the scripted demo model, offline: agent-core chat --demo"""


def register(subparsers: Any) -> None:
    """Add the ``chat`` subcommand."""
    env = os.environ.get
    parser = subparsers.add_parser(
        "chat", help="talk to an agent in the terminal", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument("--provider", choices=("openai", "anthropic"), default=env("AGENT_CORE_PROVIDER") or None)
    parser.add_argument("--model", default=env("AGENT_CORE_MODEL") or None, help="the model's name")
    parser.add_argument("--base-url", default=env("AGENT_CORE_BASE_URL") or None, help="the provider's base URL")
    parser.add_argument("--system", default="", help="the system prompt of a new session")
    parser.add_argument("--tools", action="append", default=[], metavar="FILE.py", help="@tool functions to offer")
    parser.add_argument("--mcp", action="append", default=[], metavar="COMMAND", help="an MCP server to start (stdio)")
    parser.add_argument(
        "--db", default=env("AGENT_CORE_DB") or DEFAULT_DB, help=f"the SQLite log (default {DEFAULT_DB})"
    )
    parser.add_argument("--session", help="resume this session (or start one with this id)")
    parser.add_argument("--demo", action="store_true", help="use the scripted demo model (no provider needed)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the chat; the exit code is 0 after a normal end, 2 for a configuration problem."""
    try:
        model, label, tools = _configure(args)
        tools += [t for path in args.tools for t in load_tools(path)]
    except (ValueError, MissingExtra, OSError) as error:
        print(f"agent-core chat: {error}", file=sys.stderr)
        return 2
    if model is None:
        print(NOT_CONFIGURED)
        if not (sys.stdin.isatty() and _ask("Try the scripted demo model now? [y/N] ")):
            return 2
        model, label, tools = chat_demo_model(), "the scripted demo model", [*chat_demo_tools(CLOCK), *tools]
    session_id = args.session or f"chat-{uuid.uuid4().hex[:8]}"
    opener = _opener(args, model, tools, session_id)
    background = BackgroundSession(opener)
    try:
        session = background.start()
    except Exception as error:
        print(f"agent-core chat: could not start the session: {error}", file=sys.stderr)
        return 2
    print(f"agent-core chat with {label}; session {session_id}, logged to {args.db}.")
    print("Ctrl-C stops a turn; Ctrl-C or Ctrl-D at the prompt ends the chat.")
    _show_history(session.state)
    try:
        _converse(background, session)
    finally:
        background.close()
        resume = f"agent-core chat --session {session_id}" + (f" --db {args.db}" if args.db != DEFAULT_DB else "")
        print(f"\nResume with: {resume}")
    return 0


def _configure(args: argparse.Namespace) -> tuple[Model | None, str, list[Tool[..., Any]]]:
    """The model the flags and environment ask for (``None`` when no model is named)."""
    if args.demo:
        return chat_demo_model(), "the scripted demo model", chat_demo_tools(CLOCK)
    if not args.model:
        return None, "", []
    provider = args.provider or ("anthropic" if _only_anthropic_key() else "openai")
    if provider == "anthropic":
        return AnthropicModel(args.model, base_url=args.base_url), f"{args.model} (Anthropic)", []
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


def _opener(args: argparse.Namespace, model: Model, tools: list[Tool[..., Any]], session_id: str) -> Callable[[], Any]:
    @asynccontextmanager
    async def opened() -> AsyncIterator[Session]:
        async with AsyncExitStack() as stack:
            if hasattr(model, "__aenter__"):
                await stack.enter_async_context(model)  # type: ignore[arg-type]
            all_tools = list(tools)
            for command in args.mcp:
                server = await stack.enter_async_context(McpServer(shlex.split(command)))
                all_tools += server.tools()
            store = SqliteStore(args.db)
            stack.callback(store.close)
            config = AgentConfig(system_prompt=args.system)
            session = await stack.enter_async_context(
                open_session(store, session_id, model, tools=all_tools, config=config, clock=CLOCK)
            )
            session.subscribe(Printer(sys.stdout))
            yield session

    return opened


def _show_history(state: AgentState, last: int = 10) -> None:
    messages = list(state.messages.values())[-last:]
    if messages:
        print("Earlier in this session:")
    for message in messages:
        print(f"  {'you' if message.role == 'user' else 'agent'}: {shorten(message.content, 500)}")


def _converse(background: BackgroundSession, session: Session) -> None:
    """Prompt, run the turn, repeat; Ctrl-C or Ctrl-D at the prompt ends it."""
    while True:
        try:
            text = input("you> ")
        except (EOFError, KeyboardInterrupt):
            return
        if text.strip():
            _turn(background, session, text)


def _turn(background: BackgroundSession, session: Session, text: str) -> None:
    """Send ``text`` and wait for the turn to end, asking about approvals; Ctrl-C cancels the turn."""
    sent = False
    while True:
        try:
            if not sent:
                background.call(lambda: session.send(text))
                sent = True
            state = background.run(lambda: until_turn_waits(session)).result()
            if state.turn is None or not state.turn.awaiting_ids:
                break
            _decide(background, session, state)
        except KeyboardInterrupt:
            background.call(lambda: session.cancel("the user pressed Ctrl-C"))
    outcome = state.last_outcome
    if outcome is not None and outcome.kind == "failed":
        print(f"[turn failed: {outcome.reason}{': ' + outcome.detail if outcome.detail else ''}]")


def _decide(background: BackgroundSession, session: Session, state: AgentState) -> None:
    """Ask the user about each call awaiting approval (Ctrl-C here cancels the turn)."""
    assert state.turn is not None
    for call_id in state.turn.awaiting_ids:
        record = state.tool_calls[call_id]
        if _ask(f"Allow {record.name}({shorten(record.parameters)})? [y/N] "):
            background.call(functools.partial(session.approve, call_id))
        else:
            background.call(functools.partial(session.deny, call_id, "declined at the prompt"))


def _ask(question: str) -> bool:
    try:
        return input(question).strip().lower() in ("y", "yes")
    except EOFError:
        return False
