"""Fixtures for the event-log tests: each store backend, and scripted sessions of any length."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agent_core import (
    AgentInput,
    CompleteReAct,
    ContinueReAct,
    LlmMessageCompleted,
    LlmMessageStarted,
    ReActObserved,
    SessionStarted,
    ToolCallCompleted,
    ToolCallRequest,
    ToolCallStarted,
    ToolDefinition,
    ToolSuccess,
    Usage,
    UserMessageReceived,
)
from effects import EventStore, MemoryStore, PostgresStore, SqliteStore

START = 1_767_225_600_000
TOOLS = (ToolDefinition(name="search", idempotent=True), ToolDefinition(name="fetch"))
INPUTS_PER_TURN = 1 + 4 * 7 + 3


def turn(number: int, timestamp: int, *, rounds: int = 4, calls: int = 3) -> list[AgentInput]:
    """One turn: a user message, ``rounds`` rounds of ``calls`` parallel tool calls, a streamed answer."""
    out: list[AgentInput] = [
        UserMessageReceived(timestamp=timestamp, message_id=f"u{number}", content=f"question {number}")
    ]
    for r in range(rounds):
        ids = [f"c{number}.{r}.{k}" for k in range(calls)]
        requests = {i: ToolCallRequest(name=TOOLS[k % 2].name, parameters=f'{{"q":"{i}"}}') for k, i in enumerate(ids)}
        observed = ContinueReAct(tool_calls=requests)
        out.append(
            ReActObserved(
                timestamp=timestamp,
                called_llm_at=timestamp,
                observation=observed,
                usage=Usage(input_tokens=100, output_tokens=10),
            )
        )
        out += [ToolCallStarted(timestamp=timestamp, tool_call_id=i) for i in ids]
        out += [
            ToolCallCompleted(timestamp=timestamp, tool_call_id=i, result=ToolSuccess(content=f"result {i}"))
            for i in ids
        ]
    out += [
        LlmMessageStarted(timestamp=timestamp, message_id=f"a{number}"),
        LlmMessageCompleted(timestamp=timestamp, message_id=f"a{number}", content=f"answer {number}"),
        ReActObserved(
            timestamp=timestamp,
            called_llm_at=timestamp,
            observation=CompleteReAct(),
            usage=Usage(input_tokens=120, output_tokens=5),
        ),
    ]
    return out


def session(turns: int, *, session_id: str = "s1") -> list[AgentInput]:
    """A session of ``turns`` turns (``1 + INPUTS_PER_TURN * turns`` inputs), one millisecond per turn."""
    inputs: list[AgentInput] = [SessionStarted(timestamp=START, session_id=session_id, tools=TOOLS)]
    for number in range(turns):
        inputs += turn(number, START + 1 + number)
    return inputs


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EventStore]:
    """Each backend in turn; the rules of the ``EventStore`` protocol hold for all three."""
    opened: EventStore
    if request.param == "memory":
        opened = MemoryStore()
    elif request.param == "sqlite":
        opened = SqliteStore(tmp_path / "log.db")
    else:
        opened = PostgresStore(request.getfixturevalue("postgres_dsn"))
    yield opened
    opened.close()


Tamper = Callable[..., None]
"""``tamper(statement, *params)`` runs SQL on a store's database behind its back, as a bad disk, a bad copy or a
hand edit would. The statement names the tables ``{inputs}``, ``{snapshots}`` and ``{leases}``, and its parameters
``?``."""


@pytest.fixture(params=["sqlite", "postgres"])
def sql_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[EventStore, Tamper]]:
    """Each SQL backend with a way to damage its rows (the in-memory store has no bytes to damage)."""
    store: EventStore
    if request.param == "sqlite":
        path = tmp_path / "log.db"
        store = SqliteStore(path)

        def tamper(statement: str, *params: object) -> None:
            with sqlite3.connect(path) as db:
                db.execute(statement.format(inputs="inputs", snapshots="snapshots", leases="leases"), params)

    else:
        dsn = request.getfixturevalue("postgres_dsn")
        store = PostgresStore(dsn)
        psycopg = pytest.importorskip("psycopg")

        def tamper(statement: str, *params: object) -> None:
            with psycopg.connect(dsn, autocommit=True) as db:
                names = {
                    "inputs": "agent_core_inputs",
                    "snapshots": "agent_core_snapshots",
                    "leases": "agent_core_leases",
                }
                db.execute(statement.format(**names).replace("?", "%s"), params)

    yield store, tamper
    store.close()


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Every ``@pytest.mark.anyio`` test in this folder runs once per backend."""
    return str(request.param)
