"""A process that runs (or resumes) the planner of ``_gated.py`` and dies with SIGKILL once both writers wait.

Run by ``test_subagent_approvals.py``: ``python _gated_child.py STORE RUNS_FILE`` (STORE a SQLite file or a
PostgreSQL URL). The planner's session ``plan`` asks two writer children at once; once its own log shows both
children's ``write`` calls waiting for approval, the process kills itself: no cleanup, no flush. ``write``
appends its topic to RUNS_FILE each time it runs.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _gated import TOPICS, planner, writers

from effects import open_session, open_store
from effects.testing import ScriptedModel


def main(target: str, runs_file: str) -> None:
    runs = os.open(runs_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    ask = writers(lambda topic: os.write(runs, f"{topic}\n".encode())).as_tool("ask", "Ask a writer.")

    async def run() -> None:
        async with open_session(open_store(target), "plan", ScriptedModel(planner), tools=[ask]) as session:
            session.send("write about pets")
            await session.machine.until(lambda _: len(session.pending_approvals) == len(TOPICS))
            os.kill(os.getpid(), signal.SIGKILL)

    anyio.run(run)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
