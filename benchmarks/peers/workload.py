"""The workload every framework runs, written once and framework-neutral.

A long conversation of user turns. The fake model answers each turn with
``ROUNDS`` rounds of ``CALLS`` parallel tool calls, then a text answer that
quotes every tool result of the turn: ``MODEL_CALLS_PER_TURN`` model calls
(*rounds*) and ``TOOL_CALLS_PER_TURN`` tool calls per turn. Its decision is a
pure function of what the framework shows it (the turn's question and the tool
results since it), so a framework that loses or duplicates a result gives a
different answer. Tools are instant and return short strings.

Each framework module wraps :func:`next_step` in its own public model
interface and :func:`tool_result` in its own tool interface, and exposes a
:class:`Conversation`.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple, Protocol

ROUNDS = 4
"""Tool rounds per turn (each one model call asking for ``CALLS`` tools)."""
CALLS = 3
"""Parallel tool calls per tool round."""
MODEL_CALLS_PER_TURN = ROUNDS + 1
"""Model calls per turn: the tool rounds and the answer. One model call is one *round*."""
TOOL_CALLS_PER_TURN = ROUNDS * CALLS
"""Tool calls per turn."""
TOOL_NAMES = ("search", "fetch", "lookup")
"""The three tools; each takes one string parameter ``query``."""
TOOL_DESCRIPTIONS = {
    "search": "Search the notes for a query.",
    "fetch": "Fetch the document a query names.",
    "lookup": "Look a query up in the glossary.",
}
"""One-line descriptions, the same in every framework."""
SESSION_ID = "peers"
"""The conversation's id (thread id, session id) in every store."""

Persistence = Literal["none", "memory", "sqlite"]


class Call(NamedTuple):
    """One tool call the fake model asks for."""

    id: str
    name: str
    query: str


def question(turn: int) -> str:
    """The user message of turn ``turn`` (0-based)."""
    return f"question {turn}"


def tool_result(name: str, query: str) -> str:
    """What every tool returns: a short string naming the call."""
    return f"{name}({query}) ok"


def next_step(question_text: str, results: list[str]) -> tuple[Call, ...] | str:
    """The fake model: the next round's parallel calls, or the final answer once ``ROUNDS`` rounds ran.

    ``results`` are the tool results the framework showed since the turn's
    question. Call ids and queries are derived from the question and the
    round, so every framework sees the same calls.
    """
    if len(results) < TOOL_CALLS_PER_TURN:
        number = question_text.rsplit(" ", 1)[-1]
        step = len(results) // CALLS
        return tuple(
            Call(id=f"call_{number}_{step}_{k}", name=TOOL_NAMES[k], query=f"{number}.{step}.{k}") for k in range(CALLS)
        )
    return final_answer(question_text, results)


def final_answer(question_text: str, results: list[str]) -> str:
    """The turn's answer: the question and its tool results, sorted (frameworks order parallel results differently)."""
    return f"{question_text}: " + "; ".join(sorted(results))


def expected_answer(turn: int) -> str:
    """The answer a correct run gives to turn ``turn``."""
    number = str(turn)
    results = [tool_result(TOOL_NAMES[k], f"{number}.{step}.{k}") for step in range(ROUNDS) for k in range(CALLS)]
    return final_answer(question(turn), results)


@dataclass
class Tally:
    """The work a conversation did: model calls and tool calls, counted where they happen."""

    model_calls: int = 0
    tool_calls: int = 0
    answers: list[str] = field(default_factory=list)


class Conversation(Protocol):
    """One open conversation of one framework in one persistence configuration."""

    tally: Tally

    async def turn(self, text: str) -> str:
        """Send the user message ``text`` and run the turn to its final answer; return the answer."""
        ...


Opener = Callable[[Path], AbstractAsyncContextManager[Conversation]]
"""Opens a new conversation whose files (if any) live in the given empty directory."""
Resumer = Callable[[Path], Awaitable[int]]
"""Reopens the stored conversation in the directory and loads it, as a new process would; returns its message count."""


@dataclass(frozen=True)
class Contender:
    """One framework in one form (graph shape, drive mode) and one persistence configuration."""

    framework: str
    form: str
    persistence: Persistence
    open: Opener
    resume: Resumer | None = None
    note: str = ""
    guarantee: str = ""
    """What a crash may lose: a name in :data:`.guarantees.GUARANTEES` (the group it is compared in)."""

    @property
    def label(self) -> str:
        """``framework form`` as printed in tables."""
        return f"{self.framework} {self.form}".strip()

    @property
    def baseline(self) -> bool:
        """True for agent-core's own default form: what every ratio divides by."""
        return self.framework == "agent-core" and not self.form

    @property
    def key(self) -> str:
        """``label [persistence]``: unique among contenders, the key of every result."""
        return f"{self.label} [{self.persistence}]"


def disk_bytes(directory: Path) -> int:
    """Bytes of every file in ``directory`` after checkpointing each SQLite write-ahead log into its database.

    A WAL file keeps its size after SQLite copies it back (it is reused), so
    without the checkpoint the count would show how many pages the last
    commits rewrote rather than what the database holds.
    """
    for entry in os.scandir(directory):
        if entry.name.endswith(".sqlite"):
            database = sqlite3.connect(entry.path)
            try:
                database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                database.close()
    return sum(entry.stat().st_size for entry in os.scandir(directory) if entry.is_file())
