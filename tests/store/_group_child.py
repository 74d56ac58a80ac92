"""A process running sessions on one SQLite file that kills itself at a chosen moment of a commit or a tool.

Run by ``test_group_commit.py``: ``python _group_child.py DB MODE`` (DB: a path, or a PostgreSQL URL).

* ``group``: 20 sessions at once; dies inside a group commit that carries
  batches of several sessions (rows written, COMMIT not done), after a few
  such groups went through.
* ``input`` / ``turn``: one session with that durability; dies inside the
  tool call of its second turn.

Every state a subscriber sees is printed as ``SESSION STEP`` (flushed): what
the process acknowledged before it died.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import anyio

from agent_core import ContextToolResult, LlmContext
from effects import ModelReply, PostgresStore, SqliteStore, StateUpdated, open_session, open_store, tool
from effects._store._postgres import _write as _postgres_write
from effects.testing import ScriptedModel, call_tools, say

SESSIONS, TURNS = 20, 200


def die() -> None:
    """What a power cut or an OOM kill does: no cleanup, no flush."""
    os.kill(os.getpid(), signal.SIGKILL)


def script(context: LlmContext) -> ModelReply:
    """One tool call, then an answer, every turn."""
    return say("done") if isinstance(context.entries[-1], ContextToolResult) else call_tools(("look", {}))


def acknowledge(session_id: str, event: object) -> None:
    if isinstance(event, StateUpdated):
        print(session_id, event.state.step, flush=True)


def die_in_a_postgres_group() -> None:
    """Test instrumentation: die after the rows of a group of several sessions are sent, before its COMMIT."""
    insert, groups = _postgres_write._insert, [0]

    def inserting(db: Any, jobs: list[Any], keep: int) -> None:
        insert(db, jobs, keep)
        groups[0] += 1
        if groups[0] > 5 and len({job.session_id for job in jobs}) > 1:
            die()

    _postgres_write._insert = inserting


def main(db: str, mode: str) -> None:
    store = open_store(db)
    if mode == "group" and isinstance(store, PostgresStore):
        die_in_a_postgres_group()
    elif mode == "group" and isinstance(store, SqliteStore):
        shared, sessions = [0], [0]

        def on_statement(statement: str) -> None:
            if statement == "BEGIN IMMEDIATE":
                sessions[0] = 0
            elif statement.startswith("UPDATE sessions SET length"):  # one row of values per session written
                sessions[0] += statement.count("), (") + 1
            elif statement == "COMMIT" and sessions[0] > 1:  # a group of several sessions (not a lease's commit)
                shared[0] += 1
                if shared[0] > 3:  # after a few such groups went through
                    die()

        store._db.set_trace_callback(on_statement)  # test instrumentation: the moment inside a group commit

    turn = [0]

    @tool
    def look() -> str:
        """Look around."""
        if mode != "group" and turn[0] == 2:
            die()
        return "seen"

    async def converse(session_id: str) -> None:
        durability = "turn" if mode == "turn" else "input"
        async with open_session(store, session_id, ScriptedModel(script), tools=[look], durability=durability) as s:
            s.subscribe(lambda event: acknowledge(session_id, event))
            for _ in range(TURNS):
                turn[0] += 1
                s.send(f"question {turn[0]}")
                await s.settled()

    async def run() -> None:
        async with anyio.create_task_group() as tg:
            for n in range(SESSIONS if mode == "group" else 1):
                tg.start_soon(converse, f"s{n}")

    anyio.run(run)


if __name__ == "__main__":
    main(*sys.argv[1:3])
