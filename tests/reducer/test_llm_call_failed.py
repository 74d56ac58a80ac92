"""``llm-call-failed``: retry with deterministic exponential backoff, or fail the turn."""

from __future__ import annotations

import agent_core as ac

from ._build import T0, ask, fold, in_turn, llm_keys, ok, rejected, started


def failure(at: int, *, retryable: bool = True, retry_after_ms: int | None = None) -> ac.LlmCallFailed:
    return ac.LlmCallFailed(timestamp=at, error="429 rate limited", retryable=retryable, retry_after_ms=retry_after_ms)


def fired(at: int) -> ac.TimerFired:
    return ac.TimerFired(timestamp=at)


def test_a_retryable_failure_waits_then_asks_again_with_a_new_key() -> None:
    state = fold(in_turn(), failure(T0 + 2))

    assert ac.phase(state) is ac.Phase.RETRYING
    assert ac.effects_at(state) == {"wait-until:retry:1:2002": ac.WaitUntil(at=2002, reason="retry")}
    state = fold(state, fired(2002))  # a timer at exactly its time is due
    assert ac.phase(state) is ac.Phase.THINKING
    assert llm_keys(state) == ["call-llm:1:0:1"]


def test_backoff_doubles_from_the_base_up_to_the_maximum() -> None:
    state = in_turn(llm_max_attempts=6, retry_base_ms=1_000, retry_max_ms=5_000)
    delays = []
    now = T0 + 2
    for _ in range(5):
        state = fold(state, failure(now))
        assert state.turn is not None and state.turn.retry_at is not None
        delays.append(state.turn.retry_at - now)
        now = state.turn.retry_at
        state = fold(state, fired(now))
    assert delays == [1_000, 2_000, 4_000, 5_000, 5_000]


def test_a_longer_retry_after_from_the_server_wins() -> None:
    state = fold(in_turn(), failure(T0 + 2, retry_after_ms=7_500))
    assert state.turn is not None
    assert state.turn.retry_at == T0 + 2 + 7_500


def test_a_shorter_retry_after_does_not_shorten_the_backoff() -> None:
    state = fold(in_turn(), failure(T0 + 2, retry_after_ms=10))
    assert state.turn is not None
    assert state.turn.retry_at == T0 + 2 + 1_000


def test_the_last_attempt_fails_the_turn() -> None:
    state = fold(in_turn(llm_max_attempts=3), failure(T0 + 2), fired(T0 + 1_002), failure(T0 + 1_003))
    state = fold(state, fired(T0 + 3_003), failure(T0 + 3_004))
    assert state.last_outcome == ac.TurnOutcome(
        kind="failed",
        reason="llm-error",
        detail="model call failed 3 of 3 attempts: 429 rate limited",
        turn=1,
        at=T0 + 3_004,
    )
    assert ac.effects_at(state) == {}


def test_attempts_count_per_model_call_and_reset_after_a_success() -> None:
    state = fold(in_turn(llm_max_attempts=2), failure(T0 + 2), fired(T0 + 1_002))
    state = fold(state, ask(at=T0 + 1_003, t1="search"), ok("t1", at=T0 + 1_004))
    assert state.turn is not None
    assert state.turn.attempt == 0
    assert llm_keys(state) == ["call-llm:1:1:0"]

    state = fold(state, failure(T0 + 1_005))  # the next call's first failure: retried, with the first delay
    assert state.turn is not None
    assert state.turn.retry_at == T0 + 1_005 + 1_000


def test_a_failure_that_is_not_retryable_fails_the_turn_at_once() -> None:
    state = fold(in_turn(), ac.LlmCallFailed(timestamp=T0 + 2, error="401 invalid api key"))
    assert state.last_outcome == ac.TurnOutcome(
        kind="failed", reason="llm-error", detail="model call not retryable: 401 invalid api key", turn=1, at=T0 + 2
    )


def test_a_failure_ends_the_message_that_was_streaming() -> None:
    state = fold(in_turn(), ac.LlmMessageStarted(timestamp=T0 + 2, message_id="a1"), failure(T0 + 3))
    assert state.messages[1] == ac.Message(id="a1", role="assistant", content="", seq=3, at=T0 + 2)
    assert state.turn is not None
    assert state.turn.streaming_message_id == ""
    # The retry streams a fresh message.
    state = fold(state, fired(T0 + 1_003), ac.LlmMessageStarted(timestamp=T0 + 1_004, message_id="a2"))
    assert state.turn is not None
    assert state.turn.streaming_message_id == "a2"


def test_it_is_rejected_while_waiting_to_retry() -> None:
    rejection = rejected(fold(in_turn(), failure(T0 + 2)), failure(T0 + 3))
    assert rejection == ac.Rejection(
        code="wrong-phase",
        guard="phase",
        message="llm-call-failed is not accepted while the session is retrying; "
        "expected one of: re-act-cancelled, timer-fired, user-message-received",
        input_type="llm-call-failed",
        valid_now=("re-act-cancelled", "timer-fired", "user-message-received"),
    )


def test_it_is_rejected_while_tools_run_and_between_turns() -> None:
    acting = rejected(fold(in_turn(), ask(at=T0 + 2, t1="search")), failure(T0 + 3))
    assert (acting.code, acting.guard) == ("wrong-phase", "phase")
    idle = rejected(started(), failure(T0 + 1))
    assert idle.message == (
        "llm-call-failed is not accepted while the session is idle; expected one of: user-message-received"
    )
