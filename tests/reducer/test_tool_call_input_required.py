"""``tool-call-input-required``: a running tool asks a person for input; the call waits like an approval."""

from __future__ import annotations

import agent_core as ac

from ._acting import acting
from ._build import T0, ask, fold, in_turn, ok, rejected, result_of

QUESTION = '{"account":{"method":"elicitation/create","params":{"message":"Which account?"}}}'


def running(call_id: str = "t1", at: int = T0 + 3) -> ac.ToolCallStarted:
    return ac.ToolCallStarted(timestamp=at, tool_call_id=call_id)


def asks(call_id: str = "t1", at: int = T0 + 4, state: str = "opaque") -> ac.ToolCallInputRequired:
    return ac.ToolCallInputRequired(timestamp=at, tool_call_id=call_id, requests=QUESTION, request_state=state)


def one_call_running() -> ac.AgentState:
    return fold(in_turn(), ask(at=T0 + 2, t1="fetch"), running())


def test_the_call_waits_for_a_person_holding_the_questions() -> None:
    state = fold(one_call_running(), asks())

    record = state.tool_calls["t1"]
    assert (record.status, record.input_requests, record.request_state, record.input_rounds) == (
        "awaiting-input",
        QUESTION,
        "opaque",
        1,
    )
    assert state.turn is not None and state.turn.awaiting_ids == ("t1",) and state.turn.open_call_ids == ()
    assert ac.phase(state) is ac.Phase.AWAITING_APPROVAL
    assert ac.effects_at(state) == {}  # nothing runs while a person is asked


def test_other_calls_keep_running_while_one_waits() -> None:
    state = fold(acting(), running("t1"), running("t2"), asks("t1"))
    assert ac.phase(state) is ac.Phase.ACTING
    assert list(ac.effects_at(state)) == ["call-tool:t2"]
    state = fold(state, ok("t2", at=T0 + 5))
    assert ac.phase(state) is ac.Phase.AWAITING_APPROVAL


def test_the_turn_deadline_pauses_while_the_call_waits() -> None:
    state = fold(in_turn(max_turn_ms=60_000), ask(at=T0 + 2, t1="fetch"), running(), asks())
    assert state.turn is not None and state.turn.paused_at == T0 + 4
    assert not any(key.startswith("wait-until:deadline") for key in ac.effects_at(state))


def test_a_cancelled_turn_closes_the_waiting_call() -> None:
    state = fold(one_call_running(), asks(), ac.ReActCancelled(timestamp=T0 + 5, reason="stop"))
    assert state.tool_calls["t1"].input_requests == ""
    assert result_of(state, "t1") == ac.ToolFailure(
        error="interrupted: the turn was cancelled (stop) while the tool waited for a person's input; "
        "its outcome is unknown"
    )


def test_a_call_that_asks_too_often_fails_and_the_model_goes_on() -> None:
    state = one_call_running()
    at = T0 + 4
    for _ in range(ac.MAX_INPUT_ROUNDS):
        state = fold(
            state,
            asks(at=at),
            ac.ToolCallInputProvided(timestamp=at, tool_call_id="t1", responses='{"account":{"action":"decline"}}'),
            running(at=at),
        )
    state = fold(state, asks(at=at + 1))
    assert result_of(state, "t1") == ac.ToolFailure(
        error="tool 'fetch' asked for input more than 10 times (tool call 't1'); the call was ended: "
        "call it again with arguments that need no more answers"
    )
    assert ac.phase(state) is ac.Phase.THINKING


def test_only_a_running_call_may_ask() -> None:
    state = fold(in_turn(), ask(at=T0 + 2, t1="fetch"))  # pending: its tool has not started
    rejection = rejected(state, asks(at=T0 + 3))
    assert (rejection.code, rejection.guard) == ("call-pending", "call-is-running")
    assert rejection.message == "tool call 't1' (fetch) is pending; expected a running call"


def test_questions_must_not_be_empty() -> None:
    inp = ac.ToolCallInputRequired(timestamp=T0 + 4, tool_call_id="t1", requests="")
    rejection = rejected(one_call_running(), inp)
    assert (rejection.code, rejection.guard) == ("empty-requests", "requests-present")
    assert rejection.message == "expected the questions (a JSON object) in requests, got an empty string"


def test_an_unknown_call_is_rejected() -> None:
    rejection = rejected(one_call_running(), asks("t9"))
    assert (rejection.code, rejection.guard) == ("unknown-tool-call", "tool-call-exists")
