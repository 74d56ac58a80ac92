"""``timer-fired``: a ``wait-until`` came due (the turn's deadline, or the end of a retry backoff)."""

from __future__ import annotations

from typing import Any

import agent_core as ac

from ._build import T0, ask, fold, in_turn, rejected, result_of, started


def fired(at: int) -> ac.TimerFired:
    return ac.TimerFired(timestamp=at)


def retrying(**config: Any) -> ac.AgentState:
    """A turn waiting to retry its model call until ``T0 + 1_002``."""
    return fold(in_turn(**config), ac.LlmCallFailed(timestamp=T0 + 2, error="overloaded", retryable=True))


def test_a_turn_with_a_time_budget_derives_its_deadline() -> None:
    state = in_turn(max_turn_ms=5_000)
    assert state.turn is not None
    assert state.turn.deadline == T0 + 1 + 5_000
    assert ac.effects_at(state) == {
        "wait-until:deadline:1:6001": ac.WaitUntil(at=6001, reason="deadline"),
        "call-llm:1:0:0": ac.CallLlm(turn=1, context_rev=0),
    }


def test_the_deadline_at_exactly_its_time_fails_the_turn_and_closes_its_calls() -> None:
    state = fold(in_turn(max_turn_ms=5_000), ask(at=T0 + 2, t1="search", t2="refund"))
    state = fold(state, ac.ToolCallStarted(timestamp=T0 + 3, tool_call_id="t1"), fired(6_001))

    why = "the turn was failed (the turn ran past its deadline of 5000 ms)"
    assert state.last_outcome == ac.TurnOutcome(
        kind="failed", reason="timeout", detail="the turn ran past its deadline of 5000 ms", turn=1, at=6_001
    )
    assert result_of(state, "t1") == ac.ToolFailure(
        error=f"interrupted: {why} while the tool was running; its outcome is unknown"
    )
    assert result_of(state, "t2") == ac.ToolFailure(error=f"not run: {why} before anyone approved the call")
    assert ac.effects_at(state) == {}


def test_the_deadline_key_is_stable_while_the_turn_moves_on() -> None:
    state = fold(in_turn(max_turn_ms=5_000), ask(at=T0 + 2, t1="search"))
    assert "wait-until:deadline:1:6001" in ac.effects_at(state)
    state = fold(state, ac.ToolCallCompleted(timestamp=T0 + 3, tool_call_id="t1", result=ac.ToolSuccess(content="x")))
    assert "wait-until:deadline:1:6001" in ac.effects_at(state)


def test_the_end_of_a_backoff_at_exactly_its_time_asks_the_model_again() -> None:
    state = retrying()
    assert ac.phase(state) is ac.Phase.RETRYING
    state = fold(state, fired(T0 + 1_002))
    assert ac.phase(state) is ac.Phase.THINKING
    assert ac.effects_at(state) == {"call-llm:1:0:1": ac.CallLlm(turn=1, context_rev=0, attempt=1)}


def test_a_due_deadline_wins_over_a_due_retry() -> None:
    state = fold(in_turn(max_turn_ms=900), ac.LlmCallFailed(timestamp=T0 + 2, error="overloaded", retryable=True))
    assert set(ac.effects_at(state)) == {"wait-until:deadline:1:1901", "wait-until:retry:1:2002"}
    state = fold(state, fired(T0 + 1_002))
    assert state.last_outcome is not None
    assert state.last_outcome.reason == "timeout"


def test_a_timer_before_its_time_is_rejected() -> None:
    rejection = rejected(retrying(), fired(T0 + 1_001))
    assert (rejection.code, rejection.guard) == ("timer-not-due", "timer-due")
    assert rejection.message == "no timer is due at 2001; expected a time at or after retry at 2002"


def test_an_early_timer_names_every_pending_timer() -> None:
    rejection = rejected(retrying(max_turn_ms=60_000), fired(T0 + 3))
    assert (
        rejection.message == "no timer is due at 1003; expected a time at or after retry at 2002 or deadline at 61001"
    )


def test_a_timer_without_a_pending_timer_is_rejected() -> None:
    rejection = rejected(in_turn(), fired(T0 + 2))
    assert (rejection.code, rejection.guard) == ("timer-not-due", "timer-due")
    assert rejection.message == "no timer is due at 1002; expected a time at or after a pending timer (none)"


def test_it_is_rejected_between_turns() -> None:
    rejection = rejected(started(), fired(T0 + 1))
    assert (rejection.code, rejection.guard) == ("wrong-phase", "phase")
    assert rejection.message == (
        "timer-fired is not accepted while the session is idle; expected one of: user-message-received"
    )
