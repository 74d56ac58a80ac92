"""pydantic-ai running the workload: a ``FunctionModel``, async tools, history carried between runs.

pydantic-ai keeps no conversation itself: each turn is one ``agent.run`` given
the previous ``result.all_messages()`` as ``message_history``, which is its
documented way to continue a conversation (``none``). It has no checkpointer,
no in-memory store (``memory`` does not apply) and no SQLite store. Its docs
show persisting history with ``ModelMessagesTypeAdapter``; ``sqlite`` follows
its chat-app example: one row per run holding ``result.new_messages_json()``
(WAL, committed after each run), and resuming reads every row back with
``ModelMessagesTypeAdapter.validate_json``. The store code is ours, written as
its example writes it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from pydantic_ai import Agent, Tool
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionDef, FunctionModel
from pydantic_ai.usage import RequestUsage

from .workload import SESSION_ID, TOOL_DESCRIPTIONS, TOOL_NAMES, Contender, Conversation, Opener, Persistence, Tally
from .workload import next_step as decide
from .workload import tool_result as result_of

DATABASE = "pydantic-ai.sqlite"
SCHEMA = "CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY, conversation TEXT NOT NULL, message_list BLOB NOT NULL)"


def fake_model(tally: Tally) -> FunctionDef:
    """The workload's model as a ``FunctionModel`` function (async: a sync one would run in a worker thread)."""

    async def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tally.model_calls += 1
        results: list[str] = []
        asked = ""
        for message in reversed(messages):
            if not isinstance(message, ModelRequest):
                continue
            for part in message.parts:
                if isinstance(part, ToolReturnPart):
                    results.append(part.model_response_str())
                elif isinstance(part, UserPromptPart):
                    asked = str(part.content)
            if asked:
                break
        step = decide(asked, results)
        usage = RequestUsage(input_tokens=100, output_tokens=20)
        if isinstance(step, str):
            return ModelResponse(parts=[TextPart(step)], usage=usage)
        calls = [ToolCallPart(c.name, {"query": c.query}, tool_call_id=c.id) for c in step]
        return ModelResponse(parts=list(calls), usage=usage)

    return answer


def make_agent(tally: Tally) -> Agent[None, str]:
    """An agent over the fake model with the three tools as async plain tools that count their calls."""

    def make(name: str) -> Tool[None]:
        async def run(query: str) -> str:
            tally.tool_calls += 1
            return result_of(name, query)

        return Tool(run, takes_ctx=False, name=name, description=TOOL_DESCRIPTIONS[name])

    return Agent(FunctionModel(fake_model(tally)), tools=[make(name) for name in TOOL_NAMES])


class PydanticAiConversation:
    """A conversation: each turn is ``agent.run(text, message_history=...)``; SQLite rows when a database is given."""

    def __init__(self, tally: Tally, database: sqlite3.Connection | None) -> None:
        self.tally = tally
        self.agent = make_agent(tally)
        self.history: list[ModelMessage] = []
        self.database = database

    async def turn(self, text: str) -> str:
        """Run the agent on ``text`` after the history; store the run's new messages as one row."""
        result = await self.agent.run(text, message_history=self.history)
        self.history = result.all_messages()
        if self.database is not None:
            with self.database:
                self.database.execute(
                    "INSERT INTO messages (conversation, message_list) VALUES (?, ?)",
                    (SESSION_ID, result.new_messages_json()),
                )
        return result.output


def connect(path: Path) -> sqlite3.Connection:
    """A connection with the same journal settings as the other stores (WAL, synchronous FULL)."""
    database = sqlite3.connect(path)
    database.execute("PRAGMA journal_mode=WAL")
    database.execute("PRAGMA synchronous=FULL")
    database.execute(SCHEMA)
    return database


def opener(persistence: Persistence) -> Opener:
    """Opens a new conversation (``none`` or ``sqlite``)."""

    @asynccontextmanager
    async def open_conversation(directory: Path) -> AsyncIterator[Conversation]:
        database = connect(directory / DATABASE) if persistence == "sqlite" else None
        try:
            yield PydanticAiConversation(Tally(), database)
        finally:
            if database is not None:
                database.close()

    return open_conversation


async def resume_sqlite(directory: Path) -> int:
    """Read every stored run back into one message history, as the chat-app example does per request."""
    database = connect(directory / DATABASE)
    try:
        history: list[ModelMessage] = []
        rows = database.execute("SELECT message_list FROM messages WHERE conversation = ? ORDER BY id", (SESSION_ID,))
        for (data,) in rows:
            history.extend(ModelMessagesTypeAdapter.validate_json(data))
        make_agent(Tally())
        return len(history)
    finally:
        database.close()


def contenders() -> list[Contender]:
    """pydantic-ai without persistence and with the SQLite pattern of its docs (no in-memory store exists)."""
    return [
        Contender(
            "pydantic-ai", "", "none", opener("none"), note="message_history=result.all_messages()", guarantee="none"
        ),
        Contender(
            "pydantic-ai",
            "",
            "sqlite",
            opener("sqlite"),
            resume=resume_sqlite,
            note="chat-app pattern: a row of new_messages_json() per run (our code; it ships no store)",
            guarantee="turn",
        ),
    ]
