"""Quick start: an agent with one tool, run offline by the scripted model.

Swap ScriptedModel for a real model adapter and nothing else changes.
Output includes: assistant: 2 + 3 = 5 and 10 + 20 = 30.
"""

import asyncio

from agent_core import AgentConfig, phase, state_hash
from effects import Agent, TextDelta, tool
from effects.testing import ScriptedModel, call_tools, say


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


model = ScriptedModel([
    call_tools(("add", {"a": 2, "b": 3}), ("add", {"a": 10, "b": 20})),  # two calls, run in parallel
    say("2 + 3 = 5 and 10 + 20 = 30."),  # the answer, streamed in chunks
])


async def main() -> None:
    agent = Agent(model, tools=[add], config=AgentConfig(max_tool_calls=5))
    async with agent.running() as session:
        session.subscribe(lambda event: print(event.text, end="|") if isinstance(event, TextDelta) else None)
        session.send("What are 2 + 3 and 10 + 20?")
        state = await session.turn_done()  # the model answered (retries and slow tools waited out)
    for message in state.messages:
        print(f"\n{message.role}: {message.content}", end="")
    print(f"\nphase: {phase(state)}, state hash: {state_hash(state)[:16]}...")


asyncio.run(main())
