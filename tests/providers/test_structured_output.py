"""Structured output through the real SDKs: each adapter asks for the schema natively (OpenAI's
``response_format`` and ``text.format``, Anthropic's forced output tool), the strict fakes refuse what the
real APIs refuse there, and the validated answer reaches the user's type."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

import agent_core as ac
from effects import Agent, Model, ModelError
from effects.providers import AnthropicModel, OpenAIModel, OpenAIResponsesModel
from effects.testing import (
    FakeProviderServer,
    FakeToolCall,
    ManualClock,
    SequentialIds,
    StrictAnthropicServer,
    StrictResponsesServer,
    openai_reply,
)

from ._providers import KEY

pytestmark = pytest.mark.anyio


class City(BaseModel):
    name: str
    population: int


def lookup(city: str) -> str:
    """Look a city up."""
    return f"{city}: 2102650 inhabitants"


async def ask(model: Model, question: str, tools: list[Any] | None = None) -> tuple[City, ac.AgentState]:
    agent = Agent(model, tools=tools or [], clock=ManualClock(), ids=SequentialIds(), output_type=City)
    async with model, agent.running() as session:  # type: ignore[attr-defined]
        session.send(question)
        city = await session.turn_output(City)
        return city, session.state


def schema_of(state: ac.AgentState) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(state.config.output_schema)
    return schema


async def test_anthropic_forces_the_output_tool_and_its_arguments_are_the_answer() -> None:
    answer = FakeToolCall("toolu_1", "final_answer", ['{"name": "Paris",', ' "population": 2102650}'])
    with StrictAnthropicServer([[answer]]) as fake:
        city, state = await ask(AnthropicModel("claude-test", base_url=fake.url, api_key=KEY), "Capital of France?")
    assert fake.refusals == []
    assert city == City(name="Paris", population=2102650)
    body = fake.requests[0].body
    assert body["tool_choice"] == {"type": "tool", "name": "final_answer"}
    assert [(t["name"], t["input_schema"]) for t in body["tools"]] == [("final_answer", schema_of(state))]
    assert state.messages[-1].content == '{"name": "Paris", "population": 2102650}'  # logged as the answer's text


async def test_anthropic_with_other_tools_must_call_one_and_an_invalid_answer_is_asked_again() -> None:
    script = [
        [FakeToolCall("toolu_1", "lookup", ['{"city": "Paris"}'])],
        [FakeToolCall("toolu_2", "final_answer", ['{"name": "Paris"}'])],  # population missing
        [FakeToolCall("toolu_3", "final_answer", ['{"name": "Paris", "population": 2102650}'])],
    ]
    with StrictAnthropicServer(script) as fake:
        city, _ = await ask(AnthropicModel("claude-test", base_url=fake.url, api_key=KEY), "Paris?", [lookup])
    assert fake.refusals == []
    assert city.population == 2102650
    assert [r.body["tool_choice"] for r in fake.requests] == [{"type": "any"}] * 3
    last = fake.requests[2].body["messages"]
    assert last[-2]["role"] == "assistant" and last[-1]["role"] == "user"
    assert "at $.population: Field required" in json.dumps(last[-1])


async def test_anthropic_with_thinking_offers_the_output_tool_without_forcing_it() -> None:
    thinking = {"type": "enabled", "budget_tokens": 1024}
    answer = FakeToolCall("toolu_1", "final_answer", ['{"name": "Paris", "population": 1}'])
    with StrictAnthropicServer([[answer]]) as fake:
        model = AnthropicModel("claude-test", base_url=fake.url, api_key=KEY, thinking=thinking)
        city, _ = await ask(model, "Capital of France?")
    assert fake.refusals == [] and city.name == "Paris"
    assert "tool_choice" not in fake.requests[0].body


async def test_the_strict_anthropic_fake_refuses_a_forced_tool_choice_with_thinking() -> None:
    thinking = {"type": "enabled", "budget_tokens": 1024}
    forced = {"type": "any"}
    with StrictAnthropicServer([["unused"]]) as fake:
        model = AnthropicModel("claude-test", base_url=fake.url, api_key=KEY, thinking=thinking, tool_choice=forced)
        context = ac.LlmContext(
            system_prompt="",
            entries=(ac.ContextMessage(role="user", content="Hi"),),
            tools=(ac.ToolDefinition(name="lookup"),),
            tools_enabled=True,
        )
        with pytest.raises(ModelError) as info:
            async with model:
                await model.complete(context, lambda _: None)
    assert info.value.status == 400
    assert fake.refusals == ["Thinking may not be enabled when tool_choice forces tool use."]


async def test_responses_asks_with_a_json_schema_text_format() -> None:
    with StrictResponsesServer([['{"name": "Paris", "population": 2102650}']]) as fake:
        model = OpenAIResponsesModel("gpt-test", base_url=fake.url + "/v1", api_key=KEY)
        city, state = await ask(model, "Capital of France?")
    assert fake.refusals == [] and city.population == 2102650
    assert fake.requests[0].body["text"]["format"] == {
        "type": "json_schema",
        "name": "final_answer",
        "schema": schema_of(state),
        "strict": False,
    }


async def test_the_strict_responses_fake_refuses_a_text_format_that_is_not_an_object_schema() -> None:
    with StrictResponsesServer([["unused"]]) as fake:
        fmt = {"type": "json_schema", "name": "answer", "schema": {"type": "array"}}
        model = OpenAIResponsesModel("gpt-test", base_url=fake.url + "/v1", api_key=KEY, text={"format": fmt})
        context = ac.LlmContext(
            system_prompt="", entries=(ac.ContextMessage(role="user", content="Hi"),), tools=(), tools_enabled=True
        )
        with pytest.raises(ModelError):
            async with model:
                await model.complete(context, lambda _: None)
    assert fake.refusals == [
        "Invalid schema for response_format 'answer': schema must be a JSON Schema of 'type: \"object\"', "
        "got 'type: \"array\"'."
    ]


async def test_openai_chat_asks_with_a_json_schema_response_format() -> None:
    with FakeProviderServer() as server:
        server.enqueue(openai_reply(['{"name": "Paris", ', '"population": 2102650}']))
        model = OpenAIModel("gpt-test", base_url=server.url + "/v1", api_key=KEY)
        city, state = await ask(model, "Capital of France?")
        body = server.requests[0].body
    assert city.population == 2102650
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "final_answer", "schema": schema_of(state), "strict": False},
    }
