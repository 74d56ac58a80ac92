"""``tool-call-completed``: an external tool finished with a success or a failure the model will see."""

from __future__ import annotations

import agent_core as ac

from ._acting import ACTING_INPUTS, acting
from ._build import T0, failed, fold, llm_keys, ok, rejected, result_of


def test_the_result_is_attached_to_a_running_call() -> None:
    state = fold(acting(), ac.ToolCallStarted(timestamp=T0 + 3, tool_call_id="t1"))
    state = fold(state, ok("t1", "Order 42 left the warehouse.", at=T0 + 4))

    record = state.tool_calls["t1"]
    assert (record.status, record.result, record.completed_at) == (
        "completed",
        ac.ToolSuccess(content="Order 42 left the warehouse."),
        T0 + 4,
    )
    assert list(ac.effects_at(state)) == ["call-tool:t2"]


def test_a_pending_call_may_complete_without_a_start() -> None:
    state = fold(acting(), failed("t2", "connection reset", at=T0 + 3))
    assert result_of(state, "t2") == ac.ToolFailure(error="connection reset")
    assert ac.phase(state) is ac.Phase.ACTING


def test_completing_one_call_leaves_the_others_keys_untouched() -> None:
    state = acting()
    others = {k: v for k, v in ac.effects_at(state).items() if k != "call-tool:t1"}
    state = fold(state, ok("t1", at=T0 + 3))
    assert ac.effects_at(state) == others


def test_the_last_result_derives_the_next_model_call() -> None:
    state = fold(acting(), ok("t1", at=T0 + 3), ok("t2", at=T0 + 4))
    assert ac.phase(state) is ac.Phase.AWAITING_APPROVAL  # t3 still waits for a person
    state = fold(
        state, ac.ToolCallApproved(timestamp=T0 + 5, tool_call_id="t3"), failed("t3", "card expired", at=T0 + 6)
    )

    assert ac.phase(state) is ac.Phase.THINKING
    assert llm_keys(state) == ["call-llm:1:1:0"]
    assert all(state.tool_calls[i].result is not None for i in ("t1", "t2", "t3", "t4"))


def test_an_unknown_call_is_rejected() -> None:
    rejection = rejected(acting(), ok("t9", at=T0 + 3))
    assert rejection == ac.Rejection(
        code="unknown-tool-call",
        guard="tool-call-exists",
        message="tool call 't9' is unknown; expected the id of a call requested in this session",
        input_type="tool-call-completed",
        valid_now=ACTING_INPUTS,
    )


def test_completing_twice_is_rejected() -> None:
    rejection = rejected(fold(acting(), ok("t1", at=T0 + 3)), ok("t1", at=T0 + 4))
    assert (rejection.code, rejection.guard) == ("call-completed", "call-is-open")
    assert rejection.message == "tool call 't1' (search) is completed; expected a pending or running call"


def test_a_call_awaiting_approval_cannot_complete() -> None:
    rejection = rejected(acting(), ok("t3", at=T0 + 3))
    assert (rejection.code, rejection.guard) == ("call-awaiting-approval", "call-is-open")
    assert rejection.message == "tool call 't3' (refund) is awaiting-approval; expected a pending or running call"


def test_a_call_failed_at_request_time_cannot_complete() -> None:
    rejection = rejected(acting(), ok("t4", at=T0 + 3))
    assert rejection.message == "tool call 't4' (serch) is completed; expected a pending or running call"


def test_a_late_result_after_a_cancel_is_rejected() -> None:
    state = fold(acting(), ac.ToolCallStarted(timestamp=T0 + 3, tool_call_id="t1"), ac.ReActCancelled(timestamp=T0 + 4))
    rejection = rejected(state, ok("t1", at=T0 + 5))
    assert (rejection.code, rejection.valid_now) == ("call-completed", ("user-message-received",))
