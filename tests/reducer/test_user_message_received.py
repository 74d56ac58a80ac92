"""``user-message-received``: opens a turn, or joins the open one per ``user_message_policy``."""

from __future__ import annotations

import agent_core as ac

from ._build import T0, answer, ask, fold, in_turn, llm_keys, rejected, result_of, started, user

THINKING_INPUTS = (
    "answer-rejected",
    "context-window-expanded",
    "history-tool-calls-added",
    "llm-call-failed",
    "llm-message-completed",
    "llm-message-started",
    "pool-verdict-received",
    "re-act-cancelled",
    "re-act-observed",
    "timer-fired",
    "user-message-received",
)


def test_a_message_between_turns_opens_a_turn_with_the_initial_window() -> None:
    state = fold(started(initial_context_window=2), user("u1", "Hi", at=T0 + 1), answer(at=T0 + 2))
    state = fold(state, user("u2", "Where is my order?", at=T0 + 3), answer(at=T0 + 4))
    state = fold(state, user("u3", "Thanks", at=T0 + 5))

    assert state.turn is not None
    assert (state.turn.number, state.turn.started_at, state.turn.context_window_size) == (3, T0 + 5, 2)
    assert state.messages[2] == ac.Message(id="u3", role="user", content="Thanks", seq=state.step, at=T0 + 5)
    assert ac.phase(state) is ac.Phase.THINKING
    assert llm_keys(state) == ["call-llm:3:0:0"]
    assert [e.content for e in ac.llm_context(state).entries if isinstance(e, ac.ContextMessage)] == [
        "Where is my order?",
        "Thanks",
    ]


def test_the_first_window_never_exceeds_the_message_count() -> None:
    state = fold(started(initial_context_window=10), user("u1", at=T0 + 1))
    assert state.turn is not None
    assert state.turn.context_window_size == 1


def test_merge_widens_the_open_turn_by_one_and_restarts_the_model_call() -> None:
    state = in_turn()
    before = llm_keys(state)
    state = fold(state, user("u2", "It is order 42.", at=T0 + 2))

    assert state.turn is not None
    assert (state.turn.number, state.turn.context_window_size) == (1, 2)
    assert state.turns == 1
    assert llm_keys(state) == ["call-llm:1:1:0"] != before
    assert [m.id for m in state.messages] == ["u1", "u2"]


def test_merge_ends_a_streaming_message_whose_call_is_superseded() -> None:
    state = fold(in_turn(), ac.LlmMessageStarted(timestamp=T0 + 2, message_id="a1"))
    state = fold(state, user("u2", "Also, can I change the address?", at=T0 + 3))

    assert state.turn is not None
    assert state.turn.streaming_message_id == ""
    assert state.messages[1] == ac.Message(id="a1", role="assistant", content="", seq=3, at=T0 + 2)
    # The abandoned empty message is not sent to the model.
    assert [e.content for e in ac.llm_context(state).entries if isinstance(e, ac.ContextMessage)] == [
        "Where is my order?",
        "Also, can I change the address?",
    ]


def test_queue_keeps_the_message_and_opens_the_next_turn_with_it() -> None:
    state = fold(in_turn(user_message_policy="queue"), ask(at=T0 + 2, t1="search"))
    state = fold(state, user("u2", "And my invoice?", at=T0 + 3))

    assert [m.id for m in state.queued] == ["u2"]
    assert len(state.messages) == 1
    assert state.turn is not None and state.turn.number == 1
    assert list(ac.effects_at(state)) == ["call-tool:t1"]

    state = fold(state, ac.ToolCallCompleted(timestamp=T0 + 4, tool_call_id="t1", result=ac.ToolSuccess(content="x")))
    state = fold(state, answer(at=T0 + 5))

    assert state.last_outcome == ac.TurnOutcome(kind="completed", turn=1, at=T0 + 5)
    assert state.queued == ()
    assert state.turn is not None
    assert (state.turn.number, state.turn.started_at) == (2, T0 + 5)
    assert state.messages[1] == ac.Message(id="u2", role="user", content="And my invoice?", seq=state.step, at=T0 + 3)
    assert llm_keys(state) == ["call-llm:2:0:0"]


def test_queued_ids_count_as_used() -> None:
    state = fold(in_turn(user_message_policy="queue"), user("u2", at=T0 + 2))
    rejection = rejected(state, user("u2", at=T0 + 3))
    assert (rejection.code, rejection.guard) == ("duplicate-id", "message-id-unique")
    assert rejection.message == "message id 'u2' is already used in this session; expected a new id"


def test_interrupt_cancels_the_turn_and_opens_a_new_one_with_the_message() -> None:
    state = fold(in_turn(user_message_policy="interrupt"), ask(at=T0 + 2, t1="search", t2="refund"))
    state = fold(state, ac.ToolCallStarted(timestamp=T0 + 3, tool_call_id="t1"))
    state = fold(state, user("u2", "Never mind, cancel the order.", at=T0 + 4))

    assert state.last_outcome == ac.TurnOutcome(
        kind="cancelled", reason="interrupted", detail="interrupted by a new user message", turn=1, at=T0 + 4
    )
    assert result_of(state, "t1") == ac.ToolFailure(
        error="interrupted: the turn was cancelled (interrupted by a new user message) while the tool was running; "
        "its outcome is unknown"
    )
    assert result_of(state, "t2") == ac.ToolFailure(
        error="not run: the turn was cancelled (interrupted by a new user message) before anyone approved the call"
    )
    assert state.turn is not None
    assert (state.turn.number, state.turn.tool_call_ids) == (2, ())
    assert ac.effects_at(state) == {"call-llm:2:0:0": ac.CallLlm(turn=2, context_rev=0)}


def test_an_empty_message_id_is_rejected() -> None:
    rejection = rejected(started(), user("", at=T0 + 1))
    assert (rejection.code, rejection.guard) == ("empty-id", "message-id-present")
    assert rejection.message == "expected a non-empty message_id, got an empty string"


def test_a_repeated_message_id_is_rejected_with_the_inputs_valid_now() -> None:
    rejection = rejected(in_turn(), user("u1", at=T0 + 2))
    assert rejection == ac.Rejection(
        code="duplicate-id",
        guard="message-id-unique",
        message="message id 'u1' is already used in this session; expected a new id",
        input_type="user-message-received",
        valid_now=THINKING_INPUTS,
    )


def test_an_assistant_message_id_cannot_be_reused_for_a_user_message() -> None:
    state = fold(in_turn(), ac.LlmMessageStarted(timestamp=T0 + 2, message_id="a1"))
    rejection = rejected(state, user("a1", at=T0 + 3))
    assert rejection.message == "message id 'a1' is already used in this session; expected a new id"


def test_time_going_backwards_is_rejected() -> None:
    rejection = rejected(in_turn(), user("u2", at=T0))
    assert (rejection.code, rejection.guard) == ("time-went-backwards", "monotonic-time")
    assert rejection.message == "timestamp 1000 is earlier than the state's 1001; expected a timestamp at or after it"


def test_two_inputs_may_share_a_millisecond() -> None:
    state = fold(started(), user("u1", at=T0), answer(at=T0), user("u2", at=T0))
    assert state.turn is not None
    assert state.turn.number == 2
    assert [m.seq for m in state.messages] == [2, 4]
