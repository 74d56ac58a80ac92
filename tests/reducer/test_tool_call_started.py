"""``tool-call-started``: the runner is about to execute a pending call."""

from __future__ import annotations

import agent_core as ac

from ._acting import ACTING_INPUTS, acting
from ._build import T0, answer, fold, ok, rejected


def started_call(call_id: str, at: int) -> ac.ToolCallStarted:
    return ac.ToolCallStarted(timestamp=at, tool_call_id=call_id)


def test_a_pending_call_becomes_running_and_keeps_its_effect_key() -> None:
    state = acting()
    before = ac.effects_at(state)
    state = fold(state, started_call("t1", T0 + 3))

    assert state.tool_calls["t1"].status == "running"
    assert ac.effects_at(state) == before
    assert list(before) == ["call-tool:t1", "call-tool:t2"]


def test_an_unknown_call_is_rejected() -> None:
    rejection = rejected(acting(), started_call("t9", T0 + 3))
    assert rejection == ac.Rejection(
        code="unknown-tool-call",
        guard="tool-call-exists",
        message="tool call 't9' is unknown; expected the id of a call requested in this session",
        input_type="tool-call-started",
        valid_now=ACTING_INPUTS,
    )


def test_starting_twice_is_rejected() -> None:
    rejection = rejected(fold(acting(), started_call("t1", T0 + 3)), started_call("t1", T0 + 4))
    assert (rejection.code, rejection.guard) == ("call-running", "call-is-pending")
    assert rejection.message == "tool call 't1' (search) is running; expected a pending call"


def test_a_call_awaiting_approval_cannot_start() -> None:
    rejection = rejected(acting(), started_call("t3", T0 + 3))
    assert (rejection.code, rejection.guard) == ("call-awaiting-approval", "call-is-pending")
    assert rejection.message == "tool call 't3' (refund) is awaiting-approval; expected a pending call"


def test_a_completed_call_cannot_start() -> None:
    rejection = rejected(acting(), started_call("t4", T0 + 3))
    assert (rejection.code, rejection.guard) == ("call-completed", "call-is-pending")
    assert rejection.message == "tool call 't4' (serch) is completed; expected a pending call"


def test_a_call_of_a_finished_turn_cannot_start() -> None:
    state = fold(acting(), ac.ReActCancelled(timestamp=T0 + 3))
    rejection = rejected(state, started_call("t1", T0 + 4))
    assert (rejection.code, rejection.valid_now) == ("call-completed", ("user-message-received",))
    state = fold(
        acting(), ok("t1", at=T0 + 3), ok("t2", at=T0 + 4), ac.ToolCallDenied(timestamp=T0 + 5, tool_call_id="t3")
    )
    state = fold(state, answer(at=T0 + 6))
    assert rejected(state, started_call("t2", T0 + 7)).message == (
        "tool call 't2' (fetch) is completed; expected a pending call"
    )
