"""A known session for the observability tests: a retried model call, two parallel tool calls (one fails),
a call that needs approval, and an answer. Built through the runner with the scripted model."""

from __future__ import annotations

import anyio
import anyio.lowlevel

from agent_core import AgentConfig
from effects import EventStore, Session, open_session, tool
from effects.testing import ManualClock, ScriptedModel, SequentialIds, call_tools, fail, say

START = 1_767_225_600_000
SESSION = "demo"


CLOCKS: list[ManualClock] = []  # the clock of the session being recorded: the tools take time on it


@tool
async def lookup(q: str) -> str:
    """Look a word up (takes 400 ms)."""
    await anyio.lowlevel.checkpoint()
    CLOCKS[-1].advance(400)
    return f"{q}: a small example"


@tool
async def flaky() -> str:
    """Always breaks (after 900 ms)."""
    await anyio.lowlevel.checkpoint()
    await anyio.lowlevel.checkpoint()
    CLOCKS[-1].advance(900)
    raise RuntimeError("the backend is down")


@tool(requires_approval=True)
def send_mail(to: str) -> str:
    """Send a mail (a person approves first)."""
    return f"sent to {to}"


TOOLS = [lookup, flaky, send_mail]


def script() -> ScriptedModel:
    return ScriptedModel(
        [
            fail("the model is overloaded"),
            call_tools(("lookup", {"q": "otel"}, "c1"), ("flaky", {}, "c2")),
            call_tools(("send_mail", {"to": "ops"}, "c3")),
            say("Looked it up and mailed ops."),
        ]
    )


async def until_awaiting(session: Session, clock: ManualClock) -> None:
    """Send the question and run until the mail waits for approval (past the retry's backoff)."""
    session.send("Look up otel and mail ops.")
    await session.settled()
    while session.phase.value == "retrying":
        clock.advance(1000)
        await session.settled()


async def record(store: EventStore, session_id: str = SESSION, *, approve: bool = True) -> None:
    """Run the known session into ``store``; with ``approve`` to its end, else until the approval waits."""
    clock = ManualClock(START)
    CLOCKS.append(clock)
    config = AgentConfig(system_prompt="You are terse.")
    async with open_session(
        store, session_id, script(), tools=TOOLS, config=config, clock=clock, ids=SequentialIds()
    ) as session:
        await until_awaiting(session, clock)
        if approve:
            clock.advance(250)
            session.approve("c3")
            await session.settled()


def recorded(store: EventStore, session_id: str = SESSION, *, approve: bool = True) -> None:
    """:func:`record`, from synchronous code."""
    anyio.run(lambda: record(store, session_id, approve=approve))
