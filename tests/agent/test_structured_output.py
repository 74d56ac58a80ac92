"""Structured output and empty answers through the runner with the scripted model: an answer that fails the
schema is shown to the model and asked again; an empty reply is asked again once; the logs replay alone."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

import agent_core as ac
from effects import Agent, NoOutput
from effects.testing import ManualClock, ScriptedModel, SequentialIds, call_tools, say

from ._helpers import START, Recorder


class City(BaseModel):
    name: str
    population: int


CITY_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["name", "population"],
}


def agent_for(script: list[object], output_type: object, **config: object) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel(script)  # type: ignore[arg-type]
    agent = Agent(
        model,
        config=ac.AgentConfig(max_turn_ms=None, **config),  # type: ignore[arg-type]
        clock=ManualClock(START),
        ids=SequentialIds(),
        session_id="s1",
        output_type=output_type,  # type: ignore[arg-type]
    )
    return agent, model


def last_result(context: ac.LlmContext) -> str:
    return [e.content for e in context.entries if isinstance(e, ac.ContextToolResult)][-1]


def notes(state: ac.AgentState) -> list[str]:
    return [m.content for m in state.messages if m.role == "user"][1:]


@pytest.mark.anyio
async def test_a_schema_failing_twice_then_passing_retries_and_returns_the_users_type() -> None:
    agent, model = agent_for(
        [
            say("Paris has about two million people."),  # not JSON
            say('{"name": "Paris", "population": "many"}'),  # not an integer
            say('```json\n{"name": "Paris", "population": 2102650}\n```'),
        ],
        City,
        max_output_retries=2,
    )
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("What is the capital of France?")
        city = await session.turn_output(City)
        state = session.state
    assert city == City(name="Paris", population=2102650)
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    assert json.loads(state.last_outcome.output) == {"name": "Paris", "population": 2102650}
    rejected = [i for i in recorder.inputs if isinstance(i, ac.AnswerRejected)]
    assert [(r.reason, [(p.where, p.what) for p in r.problems]) for r in rejected] == [
        ("invalid-output", [("$", "Invalid JSON: expected value at line 1 column 1")]),
        ("invalid-output", [("$.population", "Input should be a valid integer, unable to parse string as an integer")]),
    ]
    # The model read what was wrong, where, before each new attempt.
    assert len(model.calls) == 3
    last_seen = model.calls[2].entries
    assert [e.role for e in last_seen if isinstance(e, ac.ContextMessage)] == ["user"] + ["assistant", "user"] * 2
    assert "at $.population: Input should be a valid integer" in notes(state)[1]
    assert model.calls[0].output_schema == state.config.output_schema
    assert ac.state_hash(ac.replay(recorder.inputs)) == ac.state_hash(state)  # no model, no types, no validator


@pytest.mark.anyio
async def test_the_turn_fails_invalid_output_with_the_last_errors_when_the_retries_are_spent() -> None:
    agent, model = agent_for([say('{"name": "Paris"}')] * 2, City, max_output_retries=1)
    async with agent.running() as session:
        session.send("Capital of France?")
        state = await session.turn_done()
        with pytest.raises(NoOutput, match=r"the last turn failed \(invalid-output: "):
            session.output(City)
    outcome = state.last_outcome
    assert outcome is not None and (outcome.kind, outcome.reason) == ("failed", "invalid-output")
    assert outcome.detail == (
        "the answer did not match the output schema (2 rejected answers): at $.population: Field required"
    )
    assert len(model.calls) == 2 and len(notes(state)) == 1  # the last rejection ends the turn: no note


@pytest.mark.anyio
async def test_a_json_schema_output_is_validated_by_jsonschema() -> None:
    pytest.importorskip("jsonschema")
    agent, _ = agent_for(
        [say('{"name": "Lyon", "population": -1.5}'), say('{"name": "Lyon", "population": 522250}')], CITY_SCHEMA
    )
    async with agent.running() as session:
        session.send("Second city of France?")
        city = await session.turn_output(City)
        state = session.state
    assert city.population == 522250
    assert "at $.population: -1.5 is not of type 'integer'" in notes(state)[0]
    assert json.loads(state.config.output_schema) == CITY_SCHEMA


@pytest.mark.anyio
async def test_tools_still_run_before_the_structured_answer() -> None:
    def census(city: str) -> int:
        """The population of a city."""
        return 2102650

    model = ScriptedModel(
        [
            call_tools(("census", {"city": "Paris"})),
            lambda context: say(json.dumps({"name": "Paris", "population": int(last_result(context))})),
        ]
    )
    agent = Agent(model, tools=[census], clock=ManualClock(START), ids=SequentialIds(), output_type=City)
    async with agent.running() as session:
        session.send("How many people live in Paris?")
        assert await session.turn_output(City) == City(name="Paris", population=2102650)


@pytest.mark.anyio
async def test_an_empty_reply_is_asked_again_once_then_fails_the_turn_empty_answer() -> None:
    agent, model = agent_for([say(""), say("Hello!"), say(""), say("  ")], None)
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("Hi")
        first = await session.turn_done()
        session.send("Again")
        second = await session.turn_done()
        with pytest.raises(NoOutput, match="empty-answer"):
            session.output(City)
    assert first.last_outcome is not None and first.last_outcome.kind == "completed"
    assert notes(first) == [
        "Your reply was empty: it had no text and no tool call. Answer the request, or call a tool."
    ]
    outcome = second.last_outcome
    assert outcome is not None and (outcome.kind, outcome.reason) == ("failed", "empty-answer")
    assert outcome.detail == "the model's reply had no text and no tool call (2 rejected answers)"
    assert len(model.calls) == 4
    assert ac.state_hash(ac.replay(recorder.inputs)) == ac.state_hash(second)


@pytest.mark.anyio
async def test_a_free_text_session_has_no_output() -> None:
    agent, _ = agent_for([say("Hello!")], None)
    async with agent.running() as session:
        session.send("Hi")
        await session.turn_done()
        with pytest.raises(NoOutput, match="the session asks for none"):
            session.output(City)


class Cities(BaseModel):
    names: list[str]


def test_an_output_type_that_is_not_an_object_is_refused_when_the_agent_is_made() -> None:
    with pytest.raises(ValueError, match=r"expected output_schema to describe an object \('type': 'object'\), got "):
        Agent(ScriptedModel([]), output_type=list[str])
    with pytest.raises(ValueError, match="differs from the output_type's schema"):
        Agent(ScriptedModel([]), output_type=City, config=ac.AgentConfig(output_schema=json.dumps(CITY_SCHEMA)))
    Agent(ScriptedModel([]), output_type=Cities)  # an object wrapping the list is fine


def test_a_session_started_with_a_schema_that_is_not_an_object_is_refused() -> None:
    start = ac.SessionStarted(
        timestamp=START, session_id="s", config=ac.AgentConfig(output_schema='{"type":"array"}', max_output_retries=-1)
    )
    with pytest.raises(ac.InvalidInput) as info:
        ac.transition(ac.initial_state(), start)
    assert info.value.rejection.message == (
        "expected max_output_retries of 0 or more, got -1; expected output_schema to describe an object "
        "('type': 'object'), got 'type': \"array\"; wrap a list or a single value in a model with one field"
    )
