"""``session-started``: accepted once, first; fixes the session's id, configuration and tools."""

from __future__ import annotations

import pytest

import agent_core as ac

from ._build import FETCH, SEARCH, T0, TOOLS, rejected, started, user


def test_first_input_starts_the_session_idle() -> None:
    config = ac.AgentConfig(system_prompt="You help customers.", max_tool_calls=5)
    state = ac.transition(
        ac.initial_state(), ac.SessionStarted(timestamp=T0, session_id="s1", config=config, tools=TOOLS)
    )

    assert ac.phase(state) is ac.Phase.IDLE
    assert state.started
    assert (state.session_id, state.config, state.timestamp, state.step) == ("s1", config, T0, 1)
    assert list(state.tools) == ["search", "fetch", "refund"]
    assert state.tools["refund"].requires_approval
    assert ac.effects_at(state) == {}
    assert ac.valid_inputs(state) == ("user-message-received",)


def test_the_initial_state_accepts_only_session_started() -> None:
    state = ac.initial_state()
    assert ac.phase(state) is ac.Phase.NOT_STARTED
    assert ac.valid_inputs(state) == ("session-started",)
    assert ac.effects_at(state) == {}


def test_an_input_before_session_started_is_rejected() -> None:
    rejection = rejected(ac.initial_state(), user("u1", at=T0))
    assert rejection == ac.Rejection(
        code="wrong-phase",
        guard="phase",
        message="user-message-received is not accepted while the session is not-started; "
        "expected one of: session-started",
        input_type="user-message-received",
        valid_now=("session-started",),
    )


def test_a_second_session_started_is_rejected() -> None:
    rejection = rejected(started(), ac.SessionStarted(timestamp=T0 + 1, session_id="s2"))
    assert (rejection.code, rejection.guard) == ("already-started", "first-input")
    assert rejection.message == (
        "session 's1' has already started; session-started is accepted only as the first input"
    )
    assert rejection.valid_now == ("user-message-received",)


def test_an_empty_session_id_is_rejected() -> None:
    rejection = rejected(ac.initial_state(), ac.SessionStarted(timestamp=T0, session_id=""))
    assert (rejection.code, rejection.guard) == ("empty-id", "session-id-present")
    assert rejection.message == "expected a non-empty session_id, got an empty string"


def test_another_schema_version_is_rejected_with_a_pointer_to_decode_log() -> None:
    rejection = rejected(ac.initial_state(), ac.SessionStarted(timestamp=T0, session_id="s1", schema_version=0))
    assert (rejection.code, rejection.guard) == ("schema-version", "current-schema")
    assert rejection.message == (
        "expected schema_version 1, got 0; decode older logs with agent_core.decode_log, which upcasts them"
    )


def test_repeated_tool_names_are_rejected_and_listed() -> None:
    inp = ac.SessionStarted(timestamp=T0, session_id="s1", tools=(SEARCH, FETCH, SEARCH, FETCH, SEARCH))
    rejection = rejected(ac.initial_state(), inp)
    assert (rejection.code, rejection.guard) == ("duplicate-tool", "tool-names-unique")
    assert rejection.message == "tool names must be unique; repeated: fetch, search"


def test_the_error_text_of_invalid_input_names_the_valid_inputs() -> None:
    with pytest.raises(ac.InvalidInput) as info:
        ac.transition(started(), ac.SessionStarted(timestamp=T0, session_id="s2"))
    assert str(info.value) == (
        "session 's1' has already started; session-started is accepted only as the first input "
        "[already-started; valid now: user-message-received]"
    )


def test_a_child_session_keeps_its_lineage_and_encodes_it_only_when_set() -> None:
    lineage = ac.Lineage(parent_session_id="plan", parent_tool_call_id="t1", root_session_id="plan")
    child = ac.SessionStarted(timestamp=T0, session_id="plan:t1", config=ac.AgentConfig(lineage=lineage))
    state = ac.transition(ac.initial_state(), child)
    assert state.config.lineage == lineage
    assert ac.decode_input(ac.encode_input(child)) == child
    assert b"lineage" not in ac.encode_input(ac.SessionStarted(timestamp=T0, session_id="plan"))
    assert b"lineage" not in ac.encode_state(
        ac.transition(ac.initial_state(), ac.SessionStarted(timestamp=T0, session_id="plan"))
    )


@pytest.mark.parametrize(
    ("lineage", "message"),
    [
        (
            ac.Lineage(parent_session_id="", parent_tool_call_id="t1", root_session_id="plan"),
            "a child session's lineage names its parent session, the parent's tool call and the root session; "
            "got empty parent_session_id",
        ),
        (
            ac.Lineage(parent_session_id="s1", parent_tool_call_id="t1", root_session_id="plan"),
            "a child session cannot be its own parent or root; got session 's1' with parent 's1' and root 'plan'",
        ),
    ],
)
def test_a_lineage_that_names_no_parent_or_itself_is_rejected(lineage: ac.Lineage, message: str) -> None:
    inp = ac.SessionStarted(timestamp=T0, session_id="s1", config=ac.AgentConfig(lineage=lineage))
    rejection = rejected(ac.initial_state(), inp)
    assert (rejection.code, rejection.guard, rejection.message) == ("bad-lineage", "lineage-complete", message)
