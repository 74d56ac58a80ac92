"""Whatever ``transition`` accepts, every codec can write: hostile values are refused with ``InvalidInput`` only.

Random valid sessions are interleaved with damaged copies of their own inputs:
a lone surrogate in a string, an integer beyond 64 bits, a timestamp past the
year 9999, a negative or absurd limit in ``session-started``. Each damaged input
must be refused with ``InvalidInput`` (never another exception) or accepted;
and the state every accepted sequence reaches round-trips through
``encode_log``/``decode_log``, ``encode_state``/``decode_state`` in both formats,
and ``state_hash``.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_core import (
    MAX_TIMESTAMP_MS,
    AgentConfig,
    AgentInput,
    CompleteReAct,
    InvalidInput,
    LlmCallFailed,
    LlmMessageCompleted,
    ReActObserved,
    SessionStarted,
    TimerFired,
    ToolDefinition,
    Usage,
    UserMessageReceived,
    decode_log,
    decode_state,
    encode_log,
    encode_state,
    initial_state,
    replace_surrogates,
    replay,
    state_hash,
    transition,
)
from agent_core.testing import sessions

_HOSTILE_STRINGS = ("\udcff", "report-\udcff.txt", "\ud83d", "a\udc80b\udfff")
_HOSTILE_INTS = (2**63, 2**64, 2**64 + 1, -(2**63) - 1, 10**30, -1, MAX_TIMESTAMP_MS + 1, 2**62)


@st.composite
def damaged(draw: st.DrawFn, inp: AgentInput) -> AgentInput:
    """``inp`` with one string or integer leaf replaced by a hostile value (when it has any)."""
    raw = msgspec.to_builtins(inp)
    leaves = list(_leaves(raw, ()))
    if not leaves:
        return inp
    path, value = draw(st.sampled_from(leaves))
    if isinstance(value, str):
        hostile: Any = draw(st.sampled_from(_HOSTILE_STRINGS)) + value
    else:
        hostile = draw(st.sampled_from(_HOSTILE_INTS))
    try:
        return msgspec.convert(_set(raw, path, hostile), type(inp))
    except (UnicodeEncodeError, msgspec.ValidationError):  # a tag or literal field: msgspec will not build it
        return inp


def _leaves(value: Any, path: tuple[Any, ...]) -> Any:
    if isinstance(value, dict):
        for key, item in value.items():
            if key != "type" and not (key == "status" and isinstance(item, str)):  # tags stay: they pick the class
                yield from _leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))
    elif isinstance(value, str | int) and not isinstance(value, bool):
        yield path, value


def _set(value: Any, path: tuple[Any, ...], leaf: Any) -> Any:
    if not path:
        return leaf
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _set(value[head], rest, leaf)}
    return [*value[:head], _set(value[head], rest, leaf), *value[head + 1 :]]


def _round_trips(accepted: list[AgentInput]) -> None:
    state = replay(accepted)
    digest = state_hash(state)
    assert state_hash(replay(decode_log(encode_log(accepted)))) == digest
    for form in ("json", "msgpack"):
        assert state_hash(decode_state(encode_state(state, format=form), format=form)) == digest


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(sessions(max_steps=25), st.data())
def test_every_accepted_state_round_trips_and_hostile_values_are_refused(inputs: list[AgentInput], data: Any) -> None:
    state = initial_state()
    accepted: list[AgentInput] = []
    for inp in inputs:
        if data.draw(st.booleans()):
            try:
                candidate = data.draw(damaged(inp))
                state = transition(state, candidate)
            except InvalidInput:
                pass
            else:
                accepted.append(candidate)
                _round_trips(accepted)
                continue
        try:
            state = transition(state, inp)
        except InvalidInput:
            continue  # a damaged input accepted in its place changed what comes next
        accepted.append(inp)
    _round_trips(accepted)


_STARTED = SessionStarted(timestamp=1, session_id="s")


def _refusal(state: Any, inp: AgentInput) -> str:
    with pytest.raises(InvalidInput) as refused:
        transition(state, inp)
    return str(refused.value)


def test_a_lone_surrogate_is_refused_naming_where_it_is() -> None:
    state = transition(initial_state(), _STARTED)
    message = _refusal(state, UserMessageReceived(timestamp=2, message_id="m", content="see report-\udcff.txt"))
    assert message == (
        "the input holds a lone surrogate U+DCFF at $.content[11], which no codec can write; expected text without "
        "lone surrogates (replace them: agent_core.replace_surrogates) and integers within 64 bits "
        "[not-encodable; valid now: user-message-received]"
    )


def test_an_integer_beyond_64_bits_is_refused_without_printing_its_digits() -> None:
    state = transition(initial_state(), _STARTED)
    state = transition(state, UserMessageReceived(timestamp=2, message_id="m", content="hi"))
    huge = ReActObserved(timestamp=3, called_llm_at=2, observation=CompleteReAct(), usage=Usage(input_tokens=10**5000))
    assert "an integer beyond 64 bits at $.usage.input_tokens (an integer of 16610 bits)" in _refusal(state, huge)


def test_token_counts_that_would_overflow_the_session_are_refused() -> None:
    state = transition(initial_state(), _STARTED)
    state = transition(state, UserMessageReceived(timestamp=2, message_id="m", content="hi"))
    observed = msgspec.convert(
        {
            "type": "re-act-observed",
            "timestamp": 3,
            "called_llm_at": 2,
            "observation": {"type": "complete-re-act"},
            "usage": {"input_tokens": 2**63 - 1},
        },
        AgentInput,
    )
    state = transition(state, observed)
    state = transition(state, UserMessageReceived(timestamp=4, message_id="m2", content="again"))
    again = msgspec.structs.replace(observed, timestamp=5, called_llm_at=4)
    assert "would take the session's token counts past 9223372036854775807" in _refusal(state, again)
    assert state_hash(state)


def test_a_timestamp_after_the_year_9999_is_refused() -> None:
    state = transition(initial_state(), _STARTED)
    assert _refusal(state, UserMessageReceived(timestamp=MAX_TIMESTAMP_MS + 1, message_id="m", content="x")) == (
        "timestamp 253402300800000 is after the year 9999; expected milliseconds since the epoch, at most "
        "253402300799999 [timestamp-range; valid now: user-message-received]"
    )
    transition(state, UserMessageReceived(timestamp=MAX_TIMESTAMP_MS, message_id="m", content="x"))


@pytest.mark.parametrize(
    ("config", "tools", "expected"),
    [
        (AgentConfig(llm_max_attempts=-1), (), "expected llm_max_attempts of 1 or more, got -1"),
        (AgentConfig(llm_max_attempts=0), (), "expected llm_max_attempts of 1 or more, got 0"),
        (AgentConfig(max_turn_ms=-1), (), "expected max_turn_ms from 0 to 253402300799999 or None, got -1"),
        (
            AgentConfig(retry_base_ms=-5, retry_max_ms=-1),
            (),
            "expected retry_base_ms from 0 to 253402300799999, got -5; "
            "expected retry_max_ms from 0 to 253402300799999, got -1",
        ),
        (AgentConfig(initial_context_window=-3), (), "expected initial_context_window of 0 or more, got -3"),
        (AgentConfig(max_tool_calls=-2), (), "expected max_tool_calls of 0 or more or None, got -2"),
        (AgentConfig(max_identical_tool_calls=0), (), "expected max_identical_tool_calls of 1 or more, got 0"),
        (
            AgentConfig(),
            (ToolDefinition(name="t", timeout_ms=-1),),
            "expected the timeout_ms of tool 't' from 1 to 253402300799999 or None, got -1",
        ),
    ],
)
def test_nonsense_limits_are_refused_at_session_start(
    config: AgentConfig, tools: tuple[ToolDefinition, ...], expected: str
) -> None:
    inp = SessionStarted(timestamp=1, session_id="s", config=config, tools=tools)
    assert _refusal(initial_state(), inp) == f"{expected} [bad-config; valid now: session-started]"


def test_a_completion_with_an_empty_id_while_nothing_streams_is_refused() -> None:
    state = transition(initial_state(), _STARTED)
    state = transition(state, UserMessageReceived(timestamp=2, message_id="m", content="hi"))
    assert _refusal(state, LlmMessageCompleted(timestamp=3, message_id="", content="a")).startswith(
        "expected no completion (no message is streaming), got a completion of ''"
    )


def test_a_server_retry_after_beyond_any_time_is_refused() -> None:
    state = transition(initial_state(), _STARTED)
    state = transition(state, UserMessageReceived(timestamp=2, message_id="m", content="hi"))
    failed = LlmCallFailed(timestamp=3, error="busy", retryable=True, retry_after_ms=2**63 - 1)
    assert _refusal(state, failed).startswith("expected retry_after_ms from 0 to 253402300799999 or None")


def test_many_failures_back_off_to_the_cap_without_computing_a_huge_power() -> None:
    config = AgentConfig(llm_max_attempts=10**6, retry_base_ms=1, retry_max_ms=50)
    state = transition(initial_state(), SessionStarted(timestamp=1, session_id="s", config=config))
    state = transition(state, UserMessageReceived(timestamp=2, message_id="m", content="hi"))
    at = 2
    for _ in range(200):
        at += 1
        state = transition(state, LlmCallFailed(timestamp=at, error="busy", retryable=True))
        assert state.turn is not None and state.turn.retry_at is not None
        at = state.turn.retry_at
        state = transition(state, TimerFired(timestamp=at))
    assert state.turn is not None and state.turn.attempt == 200
    assert state_hash(state)


def test_replace_surrogates_keeps_text_and_replaces_only_lone_surrogates() -> None:
    text = "ascii"
    assert replace_surrogates(text) is text
    assert replace_surrogates("é\udcff😀\ud800") == "é\ufffd😀\ufffd"
