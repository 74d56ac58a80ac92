"""A process that runs (or resumes) the planner of ``_team.py`` on a SQLite file, and may kill itself.

Run by ``test_subagents_crash.py``: ``python _team_child.py STORE RUNS_FILE SESSION [PLAN]``: STORE a SQLite
file or a PostgreSQL URL, SESSION the planner's session id. PLAN ``model:N`` dies with SIGKILL once both
researcher children are inside their Nth model call (so every input before it is durable in their logs).
Without a plan it finishes the planner's turn and exits 0.
The researchers' ``lookup`` (not idempotent) writes its topic to RUNS_FILE each time it runs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _team import TOPICS, Dying, planner, researcher

from effects import Agent, open_session, open_store, tool
from effects.testing import ScriptedModel


def main(target: str, runs_file: str, session_id: str, plan: str) -> None:
    runs = os.open(runs_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT)

    @tool
    def lookup(topic: str) -> str:
        """Look a topic up (must never run twice)."""
        os.write(runs, f"{topic}\n".encode())
        return f"{topic} facts"

    at = int(plan.partition(":")[2] or 0)
    child = Agent(Dying(researcher, len(TOPICS), at), tools=[lookup])

    async def run() -> None:
        store = open_store(target)
        research = child.as_tool("research", "Research a topic.")
        async with open_session(store, session_id, ScriptedModel(planner), tools=[research]) as session:
            if len(session.state.messages) == 0:
                session.send("tell me about pets")
            await session.turn_done()

    anyio.run(run)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "")
