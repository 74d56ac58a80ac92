"""``llm-message-started``: the model began a user-visible message (appended empty and streaming)."""

from __future__ import annotations

import agent_core as ac

from ._build import T0, ask, fold, in_turn, llm_keys, rejected, started, user


def began(message_id: str, at: int) -> ac.LlmMessageStarted:
    return ac.LlmMessageStarted(timestamp=at, message_id=message_id)


def test_an_empty_streaming_assistant_message_is_appended() -> None:
    state = fold(in_turn(), began("a1", T0 + 2))

    assert state.messages[1] == ac.Message(id="a1", role="assistant", content="", streaming=True, seq=3, at=T0 + 2)
    assert state.turn is not None
    assert (state.turn.streaming_message_id, state.turn.context_window_size) == ("a1", 2)
    assert ac.phase(state) is ac.Phase.THINKING
    # A streaming message is not part of what a model call sends.
    assert ac.llm_context(state).entries == (ac.ContextMessage(role="user", content="Where is my order?"),)


def test_the_call_llm_key_does_not_change() -> None:
    # The call that is answering must not be cancelled by its own message.
    state = in_turn()
    before = llm_keys(state)
    assert llm_keys(fold(state, began("a1", T0 + 2))) == before == ["call-llm:1:0:0"]


def test_a_second_message_while_one_streams_is_rejected() -> None:
    rejection = rejected(fold(in_turn(), began("a1", T0 + 2)), began("a2", T0 + 3))
    assert (rejection.code, rejection.guard) == ("already-streaming", "one-streaming-message")
    assert rejection.message == "message 'a1' is still streaming; expected llm-message-completed for it first"


def test_a_used_message_id_is_rejected() -> None:
    rejection = rejected(in_turn(), began("u1", T0 + 2))
    assert (rejection.code, rejection.guard) == ("duplicate-id", "message-id-unique")
    assert rejection.message == "message id 'u1' is already used in this session; expected a new id"


def test_an_empty_message_id_is_rejected() -> None:
    rejection = rejected(in_turn(), began("", T0 + 2))
    assert (rejection.code, rejection.guard) == ("empty-id", "message-id-present")
    assert rejection.message == "expected a non-empty message_id, got an empty string"


def test_it_is_rejected_between_turns() -> None:
    rejection = rejected(
        fold(started(), user("u1", at=T0 + 1), ac.ReActCancelled(timestamp=T0 + 2)), began("a1", T0 + 3)
    )
    assert (rejection.code, rejection.guard) == ("wrong-phase", "phase")
    assert rejection.message == (
        "llm-message-started is not accepted while the session is idle; expected one of: user-message-received"
    )


def test_it_is_rejected_while_tools_run() -> None:
    rejection = rejected(fold(in_turn(), ask(at=T0 + 2, t1="search")), began("a1", T0 + 3))
    assert (rejection.code, rejection.guard) == ("wrong-phase", "phase")
    assert rejection.message == (
        "llm-message-started is not accepted while the session is acting; expected one of: child-spent, re-act-cancelled, "
        "timer-fired, tool-call-approved, tool-call-completed, tool-call-denied, tool-call-input-provided, "
        "tool-call-input-required, tool-call-started, tool-call-task-created, user-message-received"
    )
