"""``re-act-cancelled``: the user stopped the current turn."""

from __future__ import annotations

import agent_core as ac

from ._acting import acting
from ._build import T0, fold, in_turn, rejected, result_of, started, user


def cancelled(at: int, reason: str = "") -> ac.ReActCancelled:
    return ac.ReActCancelled(timestamp=at, reason=reason)


def test_cancel_closes_every_dangling_call_with_a_synthetic_failure() -> None:
    state = fold(acting(), ac.ToolCallStarted(timestamp=T0 + 3, tool_call_id="t1"))
    state = fold(state, cancelled(T0 + 4, "the customer hung up"))

    why = "the turn was cancelled (the customer hung up)"
    assert result_of(state, "t1") == ac.ToolFailure(
        error=f"interrupted: {why} while the tool was running; its outcome is unknown"
    )
    assert result_of(state, "t2") == ac.ToolFailure(error=f"not run: {why} before the call started")
    assert result_of(state, "t3") == ac.ToolFailure(error=f"not run: {why} before anyone approved the call")
    assert all(state.tool_calls[i].completed_at == T0 + 4 for i in ("t1", "t2", "t3"))
    assert state.last_outcome == ac.TurnOutcome(
        kind="cancelled", reason="cancelled", detail="the customer hung up", turn=1, at=T0 + 4
    )
    assert ac.phase(state) is ac.Phase.IDLE
    assert ac.effects_at(state) == {}


def test_cancel_without_a_reason() -> None:
    state = fold(in_turn(), cancelled(T0 + 2))
    assert state.last_outcome == ac.TurnOutcome(
        kind="cancelled", reason="cancelled", detail="cancelled by the user", turn=1, at=T0 + 2
    )


def test_cancel_ends_a_streaming_message() -> None:
    state = fold(in_turn(), ac.LlmMessageStarted(timestamp=T0 + 2, message_id="a1"), cancelled(T0 + 3))
    assert state.messages[1].streaming is False


def test_cancel_while_retrying_drops_the_timer() -> None:
    state = fold(in_turn(max_turn_ms=10_000), ac.LlmCallFailed(timestamp=T0 + 2, error="busy", retryable=True))
    assert len(ac.effects_at(state)) == 2
    assert ac.effects_at(fold(state, cancelled(T0 + 3))) == {}


def test_the_closed_calls_are_visible_to_the_next_turn_as_past_calls() -> None:
    state = fold(acting(), cancelled(T0 + 3), user("u2", "Start over", at=T0 + 4))
    assert [c.id for c in ac.llm_context(state).past_tool_calls] == ["t4", "t3", "t2", "t1"]


def test_a_queued_message_opens_the_next_turn() -> None:
    state = fold(in_turn(user_message_policy="queue"), user("u2", "Are you there?", at=T0 + 2), cancelled(T0 + 3))
    assert state.turn is not None
    assert (state.turn.number, state.turns, state.queued) == (2, 2, ())
    assert ac.effects_at(state) == {"call-llm:2:0:0": ac.CallLlm(turn=2, context_rev=0)}


def test_it_is_rejected_between_turns() -> None:
    rejection = rejected(started(), cancelled(T0 + 1))
    assert rejection == ac.Rejection(
        code="wrong-phase",
        guard="phase",
        message="re-act-cancelled is not accepted while the session is idle; expected one of: user-message-received",
        input_type="re-act-cancelled",
        valid_now=("user-message-received",),
    )
