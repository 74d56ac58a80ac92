"""A process that runs (or resumes) a long scripted session on a SQLite file, and may kill itself.

Run by ``test_crash.py``: ``python _crash_child.py DB RUNS_FILE [PLAN]``. PLAN says where
to die with SIGKILL: ``inputs:N`` once the log holds N inputs, ``tool:ID`` inside that tool
call, ``commit:N`` inside this process's Nth commit (after the rows are written, before
COMMIT). Without a plan it finishes the conversation and exits 0. Tools write their call
id to RUNS_FILE as they start, so the test can count how often each one ran.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import anyio

from agent_core import AgentConfig, ContextMessage, ContextToolCalls, LlmContext
from effects import ModelReply, SqliteStore, StateUpdated, open_session, tool
from effects.testing import ScriptedModel, call_tools, say

TURNS, ROUNDS = 6, 2
SESSION = "crash"


def die() -> None:
    """What a power cut or an OOM kill does: no cleanup, no flush."""
    os.kill(os.getpid(), signal.SIGKILL)


def script(context: LlmContext) -> ModelReply:
    """Deterministic in the conversation's shape only, so a resumed run says the same things."""
    entries = context.entries
    last_user = max(i for i, e in enumerate(entries) if isinstance(e, ContextMessage) and e.role == "user")
    question = entries[last_user]
    assert isinstance(question, ContextMessage)
    k = int(question.content.split()[-1])
    rounds = sum(isinstance(e, ContextToolCalls) for e in entries[last_user:])
    if rounds < ROUNDS:
        ids = [f"q{k}r{rounds}c{j}" for j in range(3)]
        return call_tools(
            ("search", {"q": ids[0]}, ids[0]), ("charge", {"cents": k}, ids[1]), ("search", {"q": ids[2]}, ids[2])
        )
    return say(f"answer {k} after {rounds} rounds")


def main(db: str, runs_file: str, plan: str) -> None:
    """Run the session to its end, dying where ``plan`` says."""
    kind, _, value = plan.partition(":")
    runs = os.open(runs_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT)

    def record(tool_call_id: str) -> None:
        os.write(runs, f"{tool_call_id}\n".encode())
        if kind == "tool" and value == tool_call_id:
            die()

    @tool(idempotent=True)
    def search(q: str, tool_call_id: str) -> str:
        """Search (safe to repeat)."""
        record(tool_call_id)
        return f"found {q}"

    @tool
    def charge(cents: int, tool_call_id: str) -> str:
        """Charge a card (must never run twice)."""
        record(tool_call_id)
        return f"charged {cents}"

    store = SqliteStore(db)
    if kind == "commit":
        commits = [0]

        def on_statement(statement: str) -> None:
            if statement == "COMMIT":
                commits[0] += 1
                if commits[0] == int(value):
                    die()

        store._db.set_trace_callback(on_statement)  # test instrumentation: the moment inside a commit

    async def run() -> None:
        config = AgentConfig(initial_context_window=1000)
        model = ScriptedModel(script)
        async with open_session(store, SESSION, model, tools=[search, charge], config=config) as session:
            if kind == "inputs":
                session.subscribe(
                    lambda e: die() if isinstance(e, StateUpdated) and e.state.step >= int(value) else None
                )
            while True:
                await session.settled()
                state = session.state
                asked = sum(1 for i in range(len(state.messages)) if state.messages[i].role == "user")
                if state.turn is None and asked == TURNS:
                    return
                if state.turn is None:
                    session.send(f"question {asked}")

    anyio.run(run)


if __name__ == "__main__":
    arguments: list[Any] = sys.argv[1:]
    main(arguments[0], arguments[1], arguments[2] if len(arguments) > 2 else "")
