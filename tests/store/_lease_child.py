"""A process running one durable session whose tool waits for the test: ``python _lease_child.py STORE SESSION``.

STORE is a SQLite path or a PostgreSQL URL. The session asks a non-idempotent
``charge`` tool once; the tool prints ``charging`` and waits for a line on
stdin. The child then prints ``done`` when the turn completed, or the name and
message of the error that stopped the session (as ``error NAME: MESSAGE``),
and exits 0. Run by ``test_lease.py``, which opens the same session meanwhile,
kills this process, or stops it with SIGSTOP so its lease expires.
"""

from __future__ import annotations

import sys

import anyio

from effects import open_session, open_store, tool
from effects.testing import ScriptedModel, call_tools, say


@tool
async def charge(cents: int) -> str:
    """Charge a card (must never run twice)."""
    print("charging", flush=True)
    await anyio.to_thread.run_sync(sys.stdin.readline)
    return f"charged {cents}"


async def run(target: str, session_id: str) -> None:
    store = open_store(target)
    model = ScriptedModel([call_tools(("charge", {"cents": 500}, "c1")), say("charged")])
    try:
        async with open_session(store, session_id, model, tools=[charge]) as session:
            session.send("charge me")
            await session.turn_done()
        print("done", flush=True)
    except Exception as error:  # what stopped the session, for the test to read
        cause = error
        while cause.__cause__ is not None and not type(cause).__name__.startswith("Session"):
            cause = cause.__cause__
        print(f"error {type(cause).__name__}: {cause}", flush=True)
    finally:
        store.close()


if __name__ == "__main__":
    anyio.run(run, sys.argv[1], sys.argv[2])
