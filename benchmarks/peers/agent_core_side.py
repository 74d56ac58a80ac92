"""agent-core running the workload: a :class:`~effects.Model` of its own, ``@tool`` functions, three stores.

* ``none``: an :class:`~effects.Agent` without a journal; the session lives in memory.
* ``memory``: :func:`~effects.open_session` on a :class:`~effects.MemoryStore`
  (every input committed to the store before anything depends on it).
* ``sqlite``: :func:`~effects.open_session` on a :class:`~effects.SqliteStore`
  (one file, WAL, ``synchronous=FULL``: the defaults).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

from agent_core import AgentState, ContextMessage, ContextToolResult, LlmContext, Usage
from effects import (
    Agent,
    MemoryStore,
    ModelReply,
    ModelToolCall,
    Session,
    SqliteStore,
    TextSink,
    Tool,
    load_state,
    open_session,
    tool,
)

from .workload import SESSION_ID, TOOL_DESCRIPTIONS, TOOL_NAMES, Contender, Conversation, Opener, Persistence, Tally
from .workload import next_step as decide
from .workload import tool_result as result_of

USAGE = Usage(input_tokens=100, output_tokens=20)
DATABASE = "agent-core.sqlite"
Synchronous = Literal["FULL", "NORMAL"]
Durability = Literal["input", "turn"]


class FakeModel:
    """The workload's model through agent-core's one-method model protocol (no streaming: one text delta)."""

    def __init__(self, tally: Tally) -> None:
        self.tally = tally

    async def complete(self, context: LlmContext, on_text: TextSink) -> ModelReply:
        """Answer from the turn's question and the tool results the context shows since it."""
        self.tally.model_calls += 1
        results: list[str] = []
        asked = ""
        for entry in reversed(context.entries):
            if isinstance(entry, ContextToolResult):
                results.append(entry.content)
            elif isinstance(entry, ContextMessage) and entry.role == "user":
                asked = entry.content
                break
        step = decide(asked, results)
        if isinstance(step, str):
            on_text(step)
            return ModelReply(text=step, usage=USAGE, finish_reason="stop")
        calls = tuple(ModelToolCall(id=c.id, name=c.name, arguments=f'{{"query":"{c.query}"}}') for c in step)
        return ModelReply(tool_calls=calls, usage=USAGE, finish_reason="tool_calls")


def make_tools(tally: Tally) -> list[Tool[..., Any]]:
    """The three tools as async ``@tool`` functions that count their calls."""

    def make(name: str) -> Tool[..., Any]:
        async def run(query: str) -> str:
            tally.tool_calls += 1
            return result_of(name, query)

        return tool(name=name, description=TOOL_DESCRIPTIONS[name])(run)

    return [make(name) for name in TOOL_NAMES]


class AgentCoreConversation:
    """A running agent-core session: a turn is ``send`` then ``settled``."""

    def __init__(self, session: Session, tally: Tally) -> None:
        self.session = session
        self.tally = tally

    async def turn(self, text: str) -> str:
        """Send ``text``, wait until the session settles, return the last message."""
        self.session.send(text)
        await self.session.settled()
        return last_message(self.session.state)


def last_message(state: AgentState) -> str:
    """The content of the newest message."""
    messages = state.messages
    return str(messages[len(messages) - 1].content)


def opener(persistence: Persistence, synchronous: Synchronous = "FULL", durability: Durability = "input") -> Opener:
    """The function that opens a new conversation with ``persistence`` (SQLite with ``synchronous``), committing
    every batch (``durability="input"``) or once per turn (``"turn"``)."""

    @asynccontextmanager
    async def open_conversation(directory: Path) -> AsyncIterator[Conversation]:
        tally = Tally()
        model, tools = FakeModel(tally), make_tools(tally)
        if persistence == "none":
            async with Agent(model, tools=tools, session_id=SESSION_ID).running() as session:
                yield AgentCoreConversation(session, tally)
            return
        store = MemoryStore() if persistence == "memory" else SqliteStore(directory / DATABASE, synchronous=synchronous)
        try:
            async with open_session(store, SESSION_ID, model, tools=tools, durability=durability) as session:
                yield AgentCoreConversation(session, tally)
        finally:
            store.close()

    return open_conversation


async def resume_sqlite(directory: Path) -> int:
    """Open the SQLite store and load the session (newest snapshot, then the tail): ready for the next turn."""
    store = SqliteStore(directory / DATABASE)
    try:
        state = load_state(store, SESSION_ID)
        Agent(FakeModel(Tally()), tools=make_tools(Tally()), initial=state)
        return len(state.messages)
    finally:
        store.close()


def contenders() -> list[Contender]:
    """agent-core in each persistence configuration (the baselines), SQLite with ``synchronous=NORMAL``, and SQLite
    committing once per turn (``durability="turn"``, the guarantee of pydantic-ai's pattern and LangGraph's ``exit``).

    ``NORMAL`` is the store's documented faster setting: a commit survives a
    crash of the process but not a power cut. It is compared with the default
    (``FULL``, as LangGraph's savers run), not used as the baseline.
    """
    notes = {
        "none": "Agent without a journal",
        "memory": "open_session(MemoryStore())",
        "sqlite": "open_session(SqliteStore(path)), WAL, synchronous=FULL",
    }
    return [
        Contender(
            framework="agent-core",
            form="",
            persistence=p,
            open=opener(p),
            resume=resume_sqlite if p == "sqlite" else None,
            note=notes[p],
            guarantee="input" if p == "sqlite" else p,
        )
        for p in ("none", "memory", "sqlite")
    ] + [
        Contender(
            framework="agent-core",
            form="synchronous=NORMAL",
            persistence="sqlite",
            open=opener("sqlite", "NORMAL"),
            resume=resume_sqlite,
            note="open_session(SqliteStore(path, synchronous='NORMAL'))",
            guarantee="process",
        ),
        Contender(
            framework="agent-core",
            form="durability=turn",
            persistence="sqlite",
            open=opener("sqlite", durability="turn"),
            resume=resume_sqlite,
            note="open_session(SqliteStore(path), durability='turn'): one commit per turn, as pydantic-ai",
            guarantee="turn",
        ),
    ]
