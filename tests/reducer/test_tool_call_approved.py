"""``tool-call-approved``: a person allowed a call that requires approval."""

from __future__ import annotations

import agent_core as ac

from ._acting import ACTING_INPUTS, acting
from ._build import T0, ask, fold, in_turn, rejected


def approved(call_id: str, at: int) -> ac.ToolCallApproved:
    return ac.ToolCallApproved(timestamp=at, tool_call_id=call_id)


def test_an_approved_call_becomes_pending_and_its_effect_starts() -> None:
    state = fold(in_turn(), ask(at=T0 + 2, t1='refund:{"order":42}'))
    assert ac.phase(state) is ac.Phase.AWAITING_APPROVAL
    assert ac.effects_at(state) == {}

    state = fold(state, approved("t1", T0 + 3))

    assert state.tool_calls["t1"].status == "pending"
    assert ac.phase(state) is ac.Phase.ACTING
    assert ac.effects_at(state) == {
        "call-tool:t1": ac.CallTool(tool_call_id="t1", name="refund", parameters='{"order":42}')
    }


def test_approval_joins_the_calls_already_running() -> None:
    state = fold(acting(), approved("t3", T0 + 3))
    assert list(ac.effects_at(state)) == ["call-tool:t1", "call-tool:t2", "call-tool:t3"]


def test_approving_a_call_that_needs_no_approval_is_rejected() -> None:
    rejection = rejected(acting(), approved("t1", T0 + 3))
    assert rejection == ac.Rejection(
        code="approval-not-required",
        guard="requires-approval",
        message="tool call 't1' (search) does not require approval; expected a call awaiting approval",
        input_type="tool-call-approved",
        valid_now=ACTING_INPUTS,
    )


def test_approving_twice_is_rejected() -> None:
    rejection = rejected(fold(acting(), approved("t3", T0 + 3)), approved("t3", T0 + 4))
    assert (rejection.code, rejection.guard) == ("already-decided", "awaiting-approval")
    assert rejection.message == (
        "tool call 't3' (refund) was already decided and is pending; expected a call awaiting approval"
    )


def test_approving_a_denied_call_is_rejected() -> None:
    state = fold(acting(), ac.ToolCallDenied(timestamp=T0 + 3, tool_call_id="t3", reason="no"))
    rejection = rejected(state, approved("t3", T0 + 4))
    assert (rejection.code, rejection.guard) == ("already-decided", "awaiting-approval")
    assert rejection.message == (
        "tool call 't3' (refund) was already decided and is completed; expected a call awaiting approval"
    )


def test_approving_an_unknown_call_is_rejected() -> None:
    rejection = rejected(acting(), approved("t9", T0 + 3))
    assert (rejection.code, rejection.guard) == ("unknown-tool-call", "tool-call-exists")
    assert rejection.message == "tool call 't9' is unknown; expected the id of a call requested in this session"
