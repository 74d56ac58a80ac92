"""A process that runs (or resumes) a triage agent that hands an invoice question to a billing agent, on a SQLite
file, and may kill itself.

Run by ``test_handoffs.py``: ``python _handoff_child.py STORE SESSION [kill]``. With ``kill`` the billing agent's
model kills the process (SIGKILL) when it is first asked, so the handoff is durable in the log and nothing after
it is; without, the turn runs to its end and the process exits 0.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _team import question, results

from agent_core import LlmContext
from effects import Agent, ModelReply, SqliteStore, TextSink, open_session, tool
from effects.testing import ScriptedModel, call_tools, say


@tool
def invoice(number: str) -> str:
    """Look an invoice up."""
    return f"invoice {number}: paid"


def triage(context: LlmContext) -> ModelReply:
    return call_tools(("transfer_to_billing", {"reason": f"about {question(context)}"}, "h1"))


def billing(context: LlmContext) -> ModelReply:
    found = results(context)
    return say(f"billing: {found[0].content}") if found else call_tools(("invoice", {"number": "42"}, "i1"))


class Dying:
    """The billing agent's model: with ``kill``, the process dies when it is first asked."""

    def __init__(self, kill: bool) -> None:
        self._kill, self._inner = kill, ScriptedModel(billing)

    async def complete(self, context: LlmContext, on_text: TextSink) -> ModelReply:
        if self._kill:
            os.kill(os.getpid(), signal.SIGKILL)  # what a power cut does: no cleanup, no flush
        return await self._inner.complete(context, on_text)


def main(target: str, session_id: str, plan: str) -> None:
    desk = Agent(Dying(plan == "kill"), name="billing", tools=[invoice], handoffs=["triage"])

    async def run() -> None:
        store = SqliteStore(target)
        async with open_session(store, session_id, ScriptedModel(triage), name="triage", handoffs=[desk]) as session:
            if len(session.state.messages) == 0:
                session.send("invoice 42")
            await session.turn_done()

    anyio.run(run)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "")
