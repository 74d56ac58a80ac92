"""``history-tool-calls-added``: internal tool, the model asked to see past tool calls."""

from __future__ import annotations

import agent_core as ac

from ._build import T0, answer, ask, fold, in_turn, llm_keys, ok, rejected, started, user


def added(at: int, *ids: str) -> ac.HistoryToolCallsAdded:
    return ac.HistoryToolCallsAdded(timestamp=at, tool_call_ids=ids)


def second_turn() -> ac.AgentState:
    """Turn 1 ran ``t1`` (search) and ``t2`` (fetch); turn 2 is open and thinking."""
    state = fold(in_turn(), ask(at=T0 + 2, t1='search:{"q":"shipping"}', t2='fetch:{"id":42}'))
    state = fold(state, ok("t1", "Ships in 2 days.", at=T0 + 3), ok("t2", "Order 42: shipped", at=T0 + 4))
    return fold(state, answer(at=T0 + 5), user("u2", "And the refund?", at=T0 + 6))


def test_past_calls_join_the_turn_with_their_results_and_the_model_is_asked_again() -> None:
    state = second_turn()
    assert [c.id for c in ac.llm_context(state).past_tool_calls] == ["t2", "t1"]

    state = fold(state, added(T0 + 7, "t2"))

    assert state.turn is not None
    assert (state.turn.tool_call_ids, state.turn.model_calls) == (("t2",), 1)
    assert llm_keys(state) == ["call-llm:2:1:0"]
    context = ac.llm_context(state)
    assert context.entries == (
        ac.ContextMessage(role="user", content="Where is my order?"),
        ac.ContextToolCalls(calls=(ac.ContextToolCall(id="t2", name="fetch", parameters='{"id":42}'),)),
        ac.ContextToolResult(tool_call_id="t2", name="fetch", content="Order 42: shipped"),
        ac.ContextMessage(role="user", content="And the refund?"),
    )
    assert context.past_tool_calls == (ac.PastToolCall(id="t1", name="search", parameters='{"q":"shipping"}'),)


def test_repeated_ids_and_calls_already_in_the_turn_are_deduplicated() -> None:
    state = fold(second_turn(), added(T0 + 7, "t1", "t2", "t1"), added(T0 + 8, "t2", "t1"))
    assert state.turn is not None
    assert state.turn.tool_call_ids == ("t1", "t2")
    assert state.turn.model_calls == 2
    assert ac.llm_context(state).past_tool_calls == ()


def test_unknown_ids_are_rejected_and_listed() -> None:
    rejection = rejected(second_turn(), added(T0 + 7, "t1", "t9", "x"))
    assert (rejection.code, rejection.guard) == ("unknown-tool-call", "tool-call-exists")
    assert rejection.message == "expected ids of tool calls recorded in this session, got unknown ids: 't9', 'x'"


def test_it_is_rejected_between_turns() -> None:
    rejection = rejected(started(), added(T0 + 1, "t1"))
    assert (rejection.code, rejection.guard) == ("wrong-phase", "phase")
    assert rejection.message == (
        "history-tool-calls-added is not accepted while the session is idle; expected one of: user-message-received"
    )


def test_it_is_rejected_while_tools_run() -> None:
    state = fold(in_turn(), ask(at=T0 + 2, t1="search"))
    rejection = rejected(state, added(T0 + 3, "t1"))
    assert (rejection.code, rejection.valid_now) == (
        "wrong-phase",
        (
            "child-spent",
            "re-act-cancelled",
            "timer-fired",
            "tool-call-approved",
            "tool-call-completed",
            "tool-call-denied",
            "tool-call-input-provided",
            "tool-call-input-required",
            "tool-call-started",
            "tool-call-task-created",
            "user-message-received",
        ),
    )


def test_it_is_rejected_while_a_message_streams() -> None:
    state = fold(second_turn(), ac.LlmMessageStarted(timestamp=T0 + 7, message_id="a1"))
    rejection = rejected(state, added(T0 + 8, "t1"))
    assert (rejection.code, rejection.guard) == ("still-streaming", "message-completed-first")
    assert rejection.message == (
        "message 'a1' is still streaming; expected llm-message-completed before history-tool-calls-added"
    )


def test_during_the_final_answer_it_fails_the_turn_instead_of_asking_again() -> None:
    state = fold(started(max_model_calls=1, on_budget_exhausted="final-answer"), user("u1", at=T0 + 1))
    state = fold(state, ask(at=T0 + 2, t1="search"), ok("t1", at=T0 + 3))
    assert state.turn is not None and state.turn.final_answer

    state = fold(state, added(T0 + 4, "t1"))

    assert ac.effects_at(state) == {}
    assert state.last_outcome == ac.TurnOutcome(
        kind="failed", reason="max-model-calls", detail="the final answer asked for tools again", turn=1, at=T0 + 4
    )
