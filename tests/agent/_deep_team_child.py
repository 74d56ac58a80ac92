"""A process that runs (or resumes) the three-level tree of ``_deep_team.py`` on a store, and may kill itself.

Run by ``test_tree_crash.py``: ``python _deep_team_child.py STORE RUNS_FILE SESSION [PLAN]``: STORE a SQLite file or
a PostgreSQL URL, SESSION the planner's session id. PLAN ``LEVEL:N`` (LEVEL ``finder`` or ``researcher``) dies
with SIGKILL once every agent of that level is inside its Nth model call (so every input before it is durable
in their logs). Without a plan it finishes the planner's turn and exits 0. The finders' ``lookup`` (not
idempotent) writes its aspect to RUNS_FILE each time it runs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent._deep_team import ASPECTS, TOPICS, finder, planner, researcher, team
from agent._team import Dying
from effects import open_session, open_store, tool
from effects.testing import ScriptedModel

AGENTS = {"finder": len(TOPICS) * len(ASPECTS), "researcher": len(TOPICS)}


def main(target: str, runs_file: str, session_id: str, plan: str) -> None:
    runs = os.open(runs_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT)

    @tool
    def lookup(aspect: str) -> str:
        """Look an aspect up (must never run twice)."""
        os.write(runs, f"{aspect}\n".encode())
        return f"{aspect} facts"

    level, _, at = plan.partition(":")
    finders = Dying(finder, AGENTS["finder"], int(at) if level == "finder" else 0)
    researchers = Dying(researcher, AGENTS["researcher"], int(at) if level == "researcher" else 0)

    async def run() -> None:
        store = open_store(target)
        research = team(lookup, finders, researcher_model=researchers)
        async with open_session(store, session_id, ScriptedModel(planner), tools=[research]) as session:
            if len(session.state.messages) == 0:
                session.send("tell me about pets")
            await session.turn_done()

    anyio.run(run)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "")
