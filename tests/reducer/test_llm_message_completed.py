"""``llm-message-completed``: the streaming message is complete."""

from __future__ import annotations

import agent_core as ac

from ._build import T0, answer, ask, fold, in_turn, llm_keys, rejected, started


def began(message_id: str, at: int) -> ac.LlmMessageStarted:
    return ac.LlmMessageStarted(timestamp=at, message_id=message_id)


def completed(message_id: str, content: str, at: int) -> ac.LlmMessageCompleted:
    return ac.LlmMessageCompleted(timestamp=at, message_id=message_id, content=content)


def test_the_streaming_message_is_filled_and_stops_streaming() -> None:
    state = fold(in_turn(), began("a1", T0 + 2), completed("a1", "Let me look that up.", T0 + 3))

    assert state.messages[1] == ac.Message(id="a1", role="assistant", content="Let me look that up.", seq=3, at=T0 + 2)
    assert state.turn is not None
    assert state.turn.streaming_message_id == ""
    assert ac.llm_context(state).entries[-1] == ac.ContextMessage(role="assistant", content="Let me look that up.")


def test_the_call_llm_key_does_not_change() -> None:
    state = in_turn()
    before = llm_keys(state)
    state = fold(state, began("a1", T0 + 2), completed("a1", "Checking.", T0 + 3))
    assert llm_keys(state) == before == ["call-llm:1:0:0"]


def test_the_message_precedes_the_tool_calls_the_same_reply_asked_for() -> None:
    state = fold(in_turn(), began("a1", T0 + 2), completed("a1", "Let me check.", T0 + 3), ask(at=T0 + 4, t1="fetch"))
    entries = ac.llm_context(state).entries
    assert entries[1] == ac.ContextMessage(role="assistant", content="Let me check.")
    assert isinstance(entries[2], ac.ContextToolCalls)


def test_a_completion_without_a_streaming_message_is_rejected() -> None:
    rejection = rejected(in_turn(), completed("a1", "hi", T0 + 2))
    assert (rejection.code, rejection.guard) == ("not-streaming", "message-is-streaming")
    assert rejection.message == "expected no completion (no message is streaming), got a completion of 'a1'"


def test_a_completion_of_another_message_is_rejected() -> None:
    rejection = rejected(fold(in_turn(), began("a1", T0 + 2)), completed("a2", "hi", T0 + 3))
    assert (rejection.code, rejection.guard) == ("not-streaming", "message-is-streaming")
    assert rejection.message == "expected the streaming message 'a1', got a completion of 'a2'"


def test_completing_twice_is_rejected() -> None:
    state = fold(in_turn(), began("a1", T0 + 2), completed("a1", "hi", T0 + 3))
    rejection = rejected(state, completed("a1", "hi again", T0 + 4))
    assert rejection.message == "expected no completion (no message is streaming), got a completion of 'a1'"


def test_it_is_rejected_between_turns() -> None:
    state = fold(in_turn(), began("a1", T0 + 2), completed("a1", "Shipped.", T0 + 3), answer(at=T0 + 4))
    rejection = rejected(state, completed("a1", "Shipped.", T0 + 5))
    assert (rejection.code, rejection.guard) == ("wrong-phase", "phase")
    assert rejection.message == (
        "llm-message-completed is not accepted while the session is idle; expected one of: user-message-received"
    )
    assert rejected(started(), completed("a1", "x", T0 + 1)).code == "wrong-phase"
