"""A user's file, as someone who installed the wheel writes it: type-checked with ``mypy --strict`` against the
installed package (``test_installed.py``) and run with its interpreter. Nothing here comes from this clone."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import assert_type

from temporalio.client import Client

from agent_core import AgentConfig, AgentState, Phase, ToolDefinition, UserMessageReceived, phase
from effects import Agent, SqliteStore, Tool, open_session, tool
from effects.temporal import start_session, submit
from effects.testing import ScriptedModel, call_tools, say


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(idempotent=True)
async def shout(text: str) -> str:
    """Shout ``text``."""
    return text.upper()


TOOLS: list[Tool[..., object]] = [add, shout]  # a tool is covariant in its result


async def main(db: str) -> AgentState:
    model = ScriptedModel([call_tools(("add", {"a": 2, "b": 3}), ("shout", {"text": "hi"})), say("5, HI")])
    agent = Agent(model, tools=TOOLS, config=AgentConfig(max_tool_calls=4))
    async with agent.running() as session:
        session.send("2 + 3, and shout hi")
        state = await session.turn_done()
    assert_type(state, AgentState)
    store = SqliteStore(db)
    async with open_session(store, "user-1", ScriptedModel([say("stored")]), tools=TOOLS) as stored:
        stored.send("hello")
        await stored.turn_done()
    store.close()
    return state


async def ask(client: Client) -> int:
    """Send a message to a session run by workers (never called here: it needs a Temporal server)."""
    await start_session(client, "user-2", config=AgentConfig(max_tool_calls=4), rpc_timeout=timedelta(seconds=5))
    seq = await submit(client, "user-2", UserMessageReceived(timestamp=0, message_id="u-1", content="hi"))
    assert_type(seq, int)
    return seq


def misuse() -> None:
    """Never called: the installed types are seen (without them this ignore would be unused, an error)."""
    add("two", 3)  # type: ignore[arg-type]


assert_type(add(2, 3), int)
assert_type(add.definition, ToolDefinition)

if __name__ == "__main__":
    import sys

    final = asyncio.run(main(sys.argv[1]))
    assert phase(final) is Phase.IDLE and final.messages[-1].content == "5, HI"
    print(final.messages[-1].content)
