"""``tool-call-input-provided``: a person answers; the call runs again with the answers."""

from __future__ import annotations

import agent_core as ac

from ._acting import acting
from ._build import T0, fold, rejected
from .test_tool_call_input_required import QUESTION, asks, one_call_running, running

ANSWER = '{"account":{"action":"accept","content":{"account":"main"}}}'


def answered(call_id: str = "t1", at: int = T0 + 5, responses: str = ANSWER) -> ac.ToolCallInputProvided:
    return ac.ToolCallInputProvided(timestamp=at, tool_call_id=call_id, responses=responses)


def test_the_answered_call_is_pending_with_the_answers_and_runs_again() -> None:
    state = fold(one_call_running(), asks(), answered())

    record = state.tool_calls["t1"]
    assert (record.status, record.input_responses, record.input_requests, record.request_state) == (
        "pending",
        ANSWER,
        "",
        "opaque",
    )
    assert ac.phase(state) is ac.Phase.ACTING
    # A new attempt, so a new key (a key once gone never returns); the call's id is in it.
    assert list(ac.effects_at(state)) == ["call-tool:t1#1"]
    assert ac.call_tool_key("t1", 1) == "call-tool:t1#1" and ac.tool_call_id_of("call-tool:t1#1") == "t1"
    assert ac.tool_call_id_of("call-tool:a#b") == "a#b"  # an id of its own with the separator in it
    state = fold(state, running(at=T0 + 6))
    assert state.tool_calls["t1"].status == "running"


def test_answering_a_call_that_asked_nothing_is_rejected() -> None:
    rejection = rejected(one_call_running(), answered())
    assert (rejection.code, rejection.guard) == ("call-running", "call-awaits-input")
    assert rejection.message == "tool call 't1' (fetch) is running; expected a call awaiting input"


def test_answering_a_call_awaiting_approval_says_how_to_decide_it() -> None:
    rejection = rejected(acting(), answered("t3"))
    assert rejection.message == (
        "tool call 't3' (refund) is awaiting-approval (decide it with tool-call-approved or tool-call-denied); "
        "expected a call awaiting input"
    )


def test_approving_a_call_that_awaits_input_says_what_it_waits_for() -> None:
    state = fold(one_call_running(), asks())
    rejection = rejected(state, ac.ToolCallApproved(timestamp=T0 + 5, tool_call_id="t1"))
    assert (rejection.code, rejection.guard) == ("awaiting-input", "awaiting-approval")
    assert rejection.message == (
        "tool call 't1' (fetch) waits for input its tool asked for, not for an approval; "
        "expected tool-call-input-provided with the answers"
    )


def test_empty_answers_are_rejected() -> None:
    rejection = rejected(fold(one_call_running(), asks()), answered(responses=""))
    assert (rejection.code, rejection.guard) == ("empty-responses", "responses-present")


def test_a_question_asked_again_replaces_the_last_answers() -> None:
    state = fold(one_call_running(), asks(), answered(), running(at=T0 + 6), asks(at=T0 + 7, state="second"))
    record = state.tool_calls["t1"]
    assert (record.input_requests, record.input_responses, record.request_state, record.input_rounds) == (
        QUESTION,
        "",
        "second",
        2,
    )
