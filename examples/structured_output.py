"""Structured output: the agent answers with a pydantic model, validated where the answer enters.

The scripted model answers badly twice (not JSON, then a population that is not
a number); each time it reads what was wrong, where, and answers again. Swap
ScriptedModel for a real adapter: OpenAI and Anthropic are asked for the schema natively.
Output includes: City(name='Paris', country='France', population=2102650)
"""

import asyncio

from pydantic import BaseModel

from agent_core import AgentConfig, AnswerRejected, replay, state_hash
from effects import Agent, InputReceived
from effects.testing import ScriptedModel, say


class City(BaseModel):
    name: str
    country: str
    population: int


model = ScriptedModel([
    say("Paris, the capital of France, has about two million inhabitants."),  # not JSON
    say('{"name": "Paris", "country": "France", "population": "about two million"}'),  # not an integer
    say('{"name": "Paris", "country": "France", "population": 2102650}'),
])


async def main() -> None:
    agent = Agent(model, output_type=City, config=AgentConfig(max_output_retries=2))
    logged = []
    async with agent.running() as session:
        session.subscribe(lambda event: logged.append(event.input) if isinstance(event, InputReceived) else None)
        session.send("Which city is the capital of France, and how many people live there?")
        city = await session.turn_output(City)  # a City, or NoOutput saying why the turn has none
        state = session.state
    for rejected in (inp for inp in logged if isinstance(inp, AnswerRejected)):
        print("rejected:", "; ".join(f"{p.where}: {p.what}" for p in rejected.problems))
    print(repr(city))
    print("logged output:", state.last_outcome.output)
    print("replays without the model or the type:", state_hash(replay(logged)) == state_hash(state))


asyncio.run(main())
