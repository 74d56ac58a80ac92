"""``tool-call-denied``: a person refused a call; the model sees a failure carrying the reason."""

from __future__ import annotations

import agent_core as ac

from ._acting import acting
from ._build import T0, ask, fold, in_turn, llm_keys, rejected, result_of


def denied(call_id: str, at: int, reason: str = "") -> ac.ToolCallDenied:
    return ac.ToolCallDenied(timestamp=at, tool_call_id=call_id, reason=reason)


def test_the_reason_is_in_the_failure_result_the_model_sees() -> None:
    state = fold(in_turn(), ask(at=T0 + 2, t1='refund:{"order":42}'))
    state = fold(state, denied("t1", T0 + 3, "refunds over $100 need a manager"))

    error = "denied by the user: refunds over $100 need a manager"
    assert result_of(state, "t1") == ac.ToolFailure(error=error)
    assert state.tool_calls["t1"].completed_at == T0 + 3
    assert ac.phase(state) is ac.Phase.THINKING
    assert llm_keys(state) == ["call-llm:1:1:0"]
    assert ac.llm_context(state).entries[-1] == ac.ContextToolResult(
        tool_call_id="t1", name="refund", content=error, is_error=True
    )


def test_a_denial_without_a_reason_says_who_denied() -> None:
    state = fold(in_turn(), ask(at=T0 + 2, t1="refund"), denied("t1", T0 + 3))
    assert result_of(state, "t1") == ac.ToolFailure(error="denied by the user")


def test_a_denial_while_other_calls_run_waits_for_them() -> None:
    state = fold(acting(), denied("t3", T0 + 3, "no"))
    assert ac.phase(state) is ac.Phase.ACTING
    assert list(ac.effects_at(state)) == ["call-tool:t1", "call-tool:t2"]


def test_denying_a_call_that_needs_no_approval_is_rejected() -> None:
    rejection = rejected(acting(), denied("t2", T0 + 3))
    assert (rejection.code, rejection.guard) == ("approval-not-required", "requires-approval")
    assert rejection.message == ("tool call 't2' (fetch) does not require approval; expected a call awaiting approval")


def test_a_call_to_an_unknown_tool_needs_no_approval() -> None:
    rejection = rejected(acting(), denied("t4", T0 + 3))
    assert rejection.message == ("tool call 't4' (serch) does not require approval; expected a call awaiting approval")


def test_denying_twice_is_rejected() -> None:
    rejection = rejected(fold(acting(), denied("t3", T0 + 3)), denied("t3", T0 + 4))
    assert (rejection.code, rejection.guard) == ("already-decided", "awaiting-approval")
    assert rejection.message == (
        "tool call 't3' (refund) was already decided and is completed; expected a call awaiting approval"
    )


def test_denying_an_approved_call_is_rejected() -> None:
    state = fold(acting(), ac.ToolCallApproved(timestamp=T0 + 3, tool_call_id="t3"))
    rejection = rejected(state, denied("t3", T0 + 4))
    assert rejection.message == (
        "tool call 't3' (refund) was already decided and is pending; expected a call awaiting approval"
    )


def test_denying_an_unknown_call_is_rejected() -> None:
    rejection = rejected(acting(), denied("t9", T0 + 3))
    assert (rejection.code, rejection.guard) == ("unknown-tool-call", "tool-call-exists")
