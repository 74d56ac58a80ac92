"""Codecs: round trips in JSON and MessagePack, clear errors for bad bytes, upcasting of
origin logs, and the JSON schema of the inputs. The fixture replays are in tests/fixtures/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import msgspec
import pytest

import agent_core as ac

FIXTURES = Path(__file__).parent / "fixtures"

START = b'{"type":"session-started","timestamp":1,"session_id":"s1","schema_version":1}\n'
HELLO = b'{"type":"user-message-received","timestamp":2,"message_id":"m1","content":"hi"}\n'
INPUT_TYPES = ", ".join(ac.INPUT_TAGS)


def golden_bytes() -> bytes:
    return (FIXTURES / "golden-v1.jsonl").read_bytes()


def golden_inputs() -> list[ac.AgentInput]:
    return ac.decode_log(golden_bytes(), source="golden-v1.jsonl")


def states_along(inputs: list[ac.AgentInput]) -> list[ac.AgentState]:
    states = [ac.initial_state()]
    for inp in inputs:
        states.append(ac.transition(states[-1], inp))
    return states


def decode_error(data: bytes, **kwargs: Any) -> ac.DecodeError:
    with pytest.raises(ac.DecodeError) as info:
        ac.decode_log(data, **kwargs)
    return info.value


# --- round trips -------------------------------------------------------------------


# Input kinds added after the golden log was frozen (it is never rewritten).
LATER_KINDS: list[ac.AgentInput] = [
    ac.WorkflowActionTaken(timestamp=9, action="plan-approved"),
    ac.ToolCallInputRequired(timestamp=9, tool_call_id="t1", requests='{"q":{}}', request_state="s"),
    ac.ToolCallInputProvided(timestamp=9, tool_call_id="t1", responses='{"q":{"action":"decline"}}'),
    ac.ToolCallTaskCreated(timestamp=9, tool_call_id="t1", task_id="task-7"),
    ac.AnswerRejected(
        timestamp=9,
        called_llm_at=8,
        reason="invalid-output",
        message_id="note-1",
        problems=(ac.OutputProblem(where="$.population", what="Input should be a valid integer"),),
    ),
    ac.PoolVerdictReceived(timestamp=9, pool="acme:2026-11-27", reservation_id="r1", amount=50_000_000, granted=True),
    ac.ContextCompacted(
        timestamp=10,
        called_llm_at=9,
        summary="the user wants a report",
        messages=2,
        tool_call_ids=("t1",),
        usage=ac.Usage(input_tokens=40, output_tokens=8),
    ),
    ac.ChildSpent(
        timestamp=11, tool_call_id="t1", spent=ac.Spend(model_calls=2, tool_calls=1, tokens=900, cost=4_000_000)
    ),
    ac.HandedOff(timestamp=11, from_agent="triage", to_agent="billing", reason="an invoice", tool_call_id="c9"),
]


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_every_input_kind_round_trips(fmt: Literal["json", "msgpack"]) -> None:
    inputs = golden_inputs() + LATER_KINDS
    assert {ac.tag_of(inp) for inp in inputs} == set(ac.INPUT_TAGS)
    for inp in inputs:
        data = ac.encode_input(inp, format=fmt)
        assert ac.decode_input(data, format=fmt) == inp


def test_an_input_encodes_to_the_wire_format_of_the_design() -> None:
    inp = ac.ToolCallCompleted(timestamp=5, tool_call_id="t1", result=ac.ToolFailure(error="boom"))
    assert json.loads(ac.encode_input(inp)) == {
        "type": "tool-call-completed",
        "timestamp": 5,
        "tool_call_id": "t1",
        "result": {"status": "failure", "error": "boom"},
    }


def test_a_log_round_trips() -> None:
    inputs = golden_inputs()
    assert ac.decode_log(ac.encode_log(inputs)) == inputs


def test_the_current_encoder_writes_the_golden_log_byte_for_byte() -> None:
    assert ac.encode_log(golden_inputs()) == golden_bytes()


def test_blank_lines_in_a_log_are_skipped() -> None:
    assert ac.decode_log(b"\n" + START + b"\n\n" + HELLO + b"\n") == ac.decode_log(START + HELLO)


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_every_state_of_a_session_round_trips_with_its_hash(fmt: Literal["json", "msgpack"]) -> None:
    for state in states_along(golden_inputs()):
        data = ac.encode_state(state, format=fmt)
        decoded = ac.decode_state(data, format=fmt)
        assert decoded == state
        assert ac.state_hash(decoded) == ac.state_hash(state)
        assert ac.encode_state(decoded, format=fmt) == data


def test_a_state_with_a_queued_message_and_a_streaming_one_round_trips() -> None:
    config = ac.AgentConfig(user_message_policy="queue")
    state = ac.replay(
        [
            ac.SessionStarted(timestamp=1, session_id="s1", config=config),
            ac.UserMessageReceived(timestamp=2, message_id="m1", content="hi"),
            ac.LlmMessageStarted(timestamp=3, message_id="m2"),
            ac.UserMessageReceived(timestamp=4, message_id="m3", content="are you there?"),
        ]
    )
    assert state.queued and state.turn is not None and state.turn.streaming_message_id == "m2"
    assert ac.decode_state(ac.encode_state(state)) == state


def test_different_states_have_different_hashes() -> None:
    hashes = {ac.state_hash(state) for state in states_along(golden_inputs())}
    assert len(hashes) == len(golden_inputs()) + 1


# --- bad bytes ---------------------------------------------------------------------


def test_a_truncated_record_names_its_record_number() -> None:
    error = decode_error(START + HELLO[:-20] + b"\n", source="chat.jsonl")
    assert str(error) == "chat.jsonl: record 2: Input data was truncated"
    assert (error.record, error.path, error.source) == (2, "", "chat.jsonl")


def test_a_wrong_field_type_names_the_record_and_the_field_path() -> None:
    bad = b'{"type":"tool-call-completed","timestamp":3,"tool_call_id":"t1","result":{"status":"success","content":5}}'
    error = decode_error(START + HELLO + bad + b"\n", source="chat.jsonl")
    assert str(error) == "chat.jsonl: record 3: Expected `str`, got `int` - at `$.result.content`"
    assert (error.record, error.path) == (3, "$.result.content")


def test_a_nested_field_path_goes_through_the_tool_call_map() -> None:
    bad = (
        b'{"type":"re-act-observed","timestamp":3,"called_llm_at":2,'
        b'"observation":{"type":"continue-re-act","tool_calls":{"t1":{"name":7}}}}'
    )
    error = decode_error(START + bad)
    assert str(error) == "record 2: Expected `str`, got `int` - at `$.observation.tool_calls[...].name`"


def test_an_unknown_type_tag_lists_the_input_types() -> None:
    error = decode_error(START + b'{"type":"user-massage-received","timestamp":2}\n')
    assert str(error) == (
        f"record 2: Invalid value 'user-massage-received' - at `$.type`; expected one of the input types: {INPUT_TYPES}"
    )
    assert error.path == "$.type"


def test_a_record_without_a_type_lists_the_input_types() -> None:
    error = decode_error(START + b'{"timestamp":2}\n')
    assert str(error) == (
        f"record 2: Object missing required field `type`; expected one of the input types: {INPUT_TYPES}"
    )


def test_a_missing_field_is_named() -> None:
    error = decode_error(START + b'{"type":"user-message-received","timestamp":2,"message_id":"m1"}\n')
    assert str(error) == "record 2: Object missing required field `content`"


def test_a_missing_nested_field_is_named_with_its_path() -> None:
    bad = b'{"type":"tool-call-completed","timestamp":3,"tool_call_id":"t1","result":{"status":"success"}}\n'
    error = decode_error(START + HELLO + bad)
    assert str(error) == "record 3: Object missing required field `content` - at `$.result`"
    assert (error.record, error.path) == (3, "$.result")


def test_a_log_must_start_with_session_started() -> None:
    error = decode_error(HELLO + START, source="chat.jsonl")
    assert str(error) == (
        "chat.jsonl: record 1: a log must start with a session-started record, got 'user-message-received'; "
        "is this an agent-core log (JSON lines, one input per line)?"
    )


def test_a_first_record_that_is_not_json_is_named() -> None:
    error = decode_error(b"hello world\n" + START)
    assert str(error) == "record 1: JSON is malformed: invalid character (byte 0)"


def test_an_empty_log_is_an_error() -> None:
    assert str(decode_error(b"\n\n", source="x.jsonl")) == (
        "x.jsonl: the log is empty; expected a session-started record first"
    )


def test_a_newer_schema_version_asks_for_an_upgrade() -> None:
    newer = START.replace(b'"schema_version":1', b'"schema_version":2')
    error = decode_error(newer + HELLO)
    assert str(error) == "record 1: schema version 2 is newer than this release reads (1); upgrade agent-core"


def test_a_schema_version_that_is_not_an_integer_is_named() -> None:
    error = decode_error(START.replace(b'"schema_version":1', b'"schema_version":"1"'))
    assert str(error) == "record 1: expected an integer schema_version, got '1'"


def test_decode_input_names_the_field_path() -> None:
    with pytest.raises(ac.DecodeError) as info:
        ac.decode_input(b'{"type":"timer-fired","timestamp":"soon"}')
    assert str(info.value) == "Expected `int`, got `str` - at `$.timestamp`"
    assert (info.value.record, info.value.path) == (None, "$.timestamp")


def test_malformed_msgpack_is_a_decode_error() -> None:
    with pytest.raises(ac.DecodeError) as info:
        ac.decode_input(b"\xc1", format="msgpack")
    assert str(info.value) == "MessagePack data is malformed: invalid opcode '\\xc1' (byte 0)"


def test_a_state_of_another_format_is_refused() -> None:
    doc = json.loads(ac.encode_state(ac.initial_state()))
    doc["format"] = 3
    with pytest.raises(ac.DecodeError) as info:
        ac.decode_state(json.dumps(doc).encode())
    assert str(info.value) == (
        "expected a state document of format 2, got format 3; rebuild the state by replaying the log"
    )


# A state as the release before state formats wrote it: every field present, no "format".
FORMAT_1_STATE = (
    b'{"schema_version":1,"started":true,"session_id":"s","config":{},"tools":[],"timestamp":5,"step":2,'
    b'"messages":[{"id":"m1","role":"user","content":"hi","streaming":false,"seq":2,"at":5}],"tool_calls":[],'
    b'"turn":null,"turns":1,"last_outcome":null,"queued":[],"called_llm_at":0,"input_tokens":0,"output_tokens":0}'
)


def test_a_state_written_before_formats_were_numbered_is_refused_never_misread() -> None:
    with pytest.raises(ac.DecodeError) as info:
        ac.decode_state(FORMAT_1_STATE)
    assert str(info.value) == (
        "expected a state document of format 2, got one written before formats were numbered (format 1); "
        "rebuild the state by replaying the log"
    )


def test_a_state_with_a_badly_typed_field_is_a_decode_error() -> None:
    with pytest.raises(ac.DecodeError) as info:
        ac.decode_state(b'{"format": 2, "started": "yes"}')
    assert str(info.value) == "Expected `bool`, got `str` - at `$.started`"


def test_decode_errors_are_value_errors_not_msgspec_errors() -> None:
    error = decode_error(START + b"{\n")
    assert isinstance(error, ValueError) and isinstance(error, ac.AgentCoreError)
    assert not isinstance(error, msgspec.MsgspecError)
    assert error.__cause__ is None and error.__suppress_context__


# --- the origin format (schema version 0) --------------------------------------------

V0_START = b'{"type":"session-started","timestamp":1,"sessionId":"s0","schemaVersion":0'


def test_v0_tool_call_ids_keep_their_spelling() -> None:
    inputs = ac.decode_log((FIXTURES / "origin-v0.jsonl").read_bytes())
    observed = inputs[2]
    assert isinstance(observed, ac.ReActObserved) and isinstance(observed.observation, ac.ContinueReAct)
    assert list(observed.observation.tool_calls) == ["call_OsL0", "call_BgN1"]
    assert inputs[0] == ac.SessionStarted(
        timestamp=1_767_261_600_000,
        session_id="origin-v0",
        config=ac.AgentConfig(
            system_prompt="You are a travel assistant.", initial_context_window=2, context_window_step=3
        ),
        tools=(
            ac.ToolDefinition(
                name="get_weather",
                description="Current weather for a city.",
                parameters='{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}',
            ),
        ),
    )
    assert inputs[4] == ac.ToolCallCompleted(
        timestamp=1_767_261_602_900,
        tool_call_id="call_BgN1",
        result=ac.ToolFailure(error="weather service unavailable"),
    )


def test_a_malformed_v0_record_is_a_decode_error_with_a_path() -> None:
    error = decode_error(V0_START + b',"config":5}\n', source="old.jsonl")
    assert str(error) == "old.jsonl: record 1: Expected `object`, got `int` - at `$.config`"
    bad_calls = b'{"type":"re-act-observed","timestamp":2,"calledLlmAt":1,"observation":{"type":"continue-re-act","toolCalls":[1]}}'
    error = decode_error(V0_START + b"}\n" + bad_calls + b"\n")
    assert str(error) == "record 2: Expected `object`, got `array` - at `$.observation.tool_calls`"


def test_a_v0_record_that_is_not_an_object_is_named() -> None:
    error = decode_error(V0_START + b"}\n[1]\n")
    assert str(error) == "record 2: expected an object (an input), got list"


def test_decode_input_upcasts_a_single_old_record() -> None:
    record = b'{"type":"tool-call-completed","timestamp":9,"toolCallId":"cX","result":{"isSuccess":true,"content":"ok","receivedAt":9}}'
    inp = ac.decode_input(record, schema_version=0)
    assert inp == ac.ToolCallCompleted(timestamp=9, tool_call_id="cX", result=ac.ToolSuccess(content="ok"))


def test_the_upcasters_cover_every_version_before_the_current_one() -> None:
    assert sorted(ac.UPCASTERS) == list(range(ac.SCHEMA_VERSION))


# --- the JSON schema ---------------------------------------------------------------


def test_the_schema_lists_every_input_tag() -> None:
    schema = ac.input_json_schema()
    assert list(schema["discriminator"]["mapping"]) == list(ac.INPUT_TAGS)
    assert len(schema["anyOf"]) == len(ac.INPUT_TAGS) == 23
    assert json.dumps(schema)  # plain JSON data, ready to publish


def test_the_schema_is_a_valid_json_schema_that_accepts_real_records() -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed; schema validation not checked")
    schema = ac.input_json_schema()
    validator = jsonschema.Draft202012Validator(schema)
    validator.check_schema(schema)
    for line in golden_bytes().splitlines():
        validator.validate(json.loads(line))
    bad = {"type": "tool-call-completed", "timestamp": 1, "tool_call_id": "t1", "result": {"status": "success"}}
    assert not validator.is_valid(bad)
    assert not validator.is_valid({"type": "user-message-received", "timestamp": "1", "message_id": "m", "content": ""})


def test_a_carriage_return_inside_a_record_is_white_space_not_a_new_record() -> None:
    with_cr = HELLO.replace(b',"timestamp"', b',\r"timestamp"')
    long_number = HELLO.replace(b'"hi"', b'"12345678901234567890"').replace(b'"m1"', b'"m2"')
    assert len(ac.decode_log(START + with_cr + long_number)) == 3
    bad = long_number.replace(b'"12345678901234567890"', b"1")
    error = decode_error(START + with_cr + bad)
    assert (error.record, error.path) == (3, "$.content")


def test_the_schema_describes_provider_items_and_accepts_an_observation_carrying_them() -> None:
    schema = ac.input_json_schema()
    item = schema["$defs"]["ProviderItem"]
    assert list(item["properties"]) == ["kind", "provider", "model", "data", "ref", "chars"]
    assert item["required"] == ["kind", "provider"]
    assert "byte for byte" in item["description"]  # the field meanings travel with the schema
    assert list(schema["$defs"]["Usage"]["properties"])[2:] == [
        "cache_read_tokens",
        "cache_write_tokens",
        "reasoning_tokens",
    ]
    observed = ac.ReActObserved(
        timestamp=5,
        called_llm_at=4,
        observation=ac.CompleteReAct(),
        usage=ac.Usage(input_tokens=10, output_tokens=4, cache_read_tokens=6, reasoning_tokens=2),
        items=(
            ac.ProviderItem(kind="thinking", provider="anthropic", model="m", data='{"type":"thinking"}'),
            ac.ProviderItem(kind="text", provider="anthropic", ref="a1", chars=3),
        ),
    )
    for format in ("json", "msgpack"):
        assert ac.decode_input(ac.encode_input(observed, format=format), format=format) == observed  # type: ignore[arg-type]
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed; schema validation not checked")
    validator = jsonschema.Draft202012Validator(schema)
    validator.validate(json.loads(ac.encode_input(observed)))
    assert not validator.is_valid({**json.loads(ac.encode_input(observed)), "items": [{"kind": "thinking"}]})
