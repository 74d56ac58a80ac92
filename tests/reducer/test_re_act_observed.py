"""``re-act-observed``: a model call finished, asking for tool calls or completing the turn.

The budget and stuck guards it runs are in ``test_budgets.py``.
"""

from __future__ import annotations

import agent_core as ac

from ._build import T0, answer, ask, asked, fold, in_turn, llm_keys, rejected, result_of, started

ACTING_INPUTS = (
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
)


def test_continue_records_the_calls_and_starts_the_runnable_ones() -> None:
    state = fold(
        in_turn(), ask(at=T0 + 5, called_at=T0 + 2, tokens=(120, 30), t1='search:{"q":"late order"}', t2="fetch")
    )

    assert state.turn is not None
    assert state.turn.tool_call_ids == ("t1", "t2")
    assert (state.turn.model_calls, state.turn.tokens, state.turn.tool_call_count) == (1, 150, 2)
    assert state.tool_calls["t1"] == ac.ToolCallRecord(
        id="t1", name="search", parameters='{"q":"late order"}', status="pending", turn=1, seq=3, requested_at=T0 + 5
    )
    assert [state.tool_call_log[i] for i in range(2)] == ["t1", "t2"]
    assert (state.called_llm_at, state.input_tokens, state.output_tokens) == (T0 + 2, 120, 30)
    assert ac.phase(state) is ac.Phase.ACTING
    assert ac.effects_at(state) == {
        "call-tool:t1": ac.CallTool(tool_call_id="t1", name="search", parameters='{"q":"late order"}'),
        "call-tool:t2": ac.CallTool(tool_call_id="t2", name="fetch", parameters="{}"),
    }


def test_a_call_that_requires_approval_waits_for_a_decision() -> None:
    state = fold(in_turn(), ask(at=T0 + 2, t1="refund"))
    assert state.tool_calls["t1"].status == "awaiting-approval"
    assert state.turn is not None
    assert state.turn.awaiting_ids == ("t1",)
    assert ac.phase(state) is ac.Phase.AWAITING_APPROVAL
    assert ac.effects_at(state) == {}


def test_a_call_to_an_unknown_tool_fails_at_once_naming_the_registered_tools() -> None:
    state = fold(in_turn(), ask(at=T0 + 2, t1="serch", t2="search"))
    assert state.tool_calls["t1"].status == "completed"
    assert result_of(state, "t1") == ac.ToolFailure(
        error="tool 'serch' is not registered (tool call 't1'); registered tools: fetch, refund, search"
    )
    assert list(ac.effects_at(state)) == ["call-tool:t2"]


def test_when_every_call_fails_at_once_the_model_is_asked_again() -> None:
    state = fold(started(tools=()), ac.UserMessageReceived(timestamp=T0 + 1, message_id="u1", content="hi"))
    state = fold(state, ask(at=T0 + 2, t1="search"))
    assert result_of(state, "t1") == ac.ToolFailure(
        error="tool 'search' is not registered (tool call 't1'); registered tools: none"
    )
    assert ac.phase(state) is ac.Phase.THINKING
    assert llm_keys(state) == ["call-llm:1:1:0"]


def test_complete_ends_the_turn_as_completed() -> None:
    state = fold(in_turn(), answer(at=T0 + 2, tokens=(50, 10)))
    assert state.turn is None
    assert state.last_outcome == ac.TurnOutcome(kind="completed", turn=1, at=T0 + 2)
    assert ac.phase(state) is ac.Phase.IDLE
    assert ac.effects_at(state) == {}
    assert (state.input_tokens, state.output_tokens) == (50, 10)


def test_session_token_counters_add_up_across_turns() -> None:
    state = fold(in_turn(), answer(at=T0 + 2, tokens=(50, 10)))
    state = fold(state, ac.UserMessageReceived(timestamp=T0 + 3, message_id="u2", content="thanks"))
    state = fold(state, answer(at=T0 + 4, tokens=(70, 5)))
    assert (state.input_tokens, state.output_tokens, state.turns) == (120, 15, 2)


def test_it_is_rejected_while_a_message_streams() -> None:
    state = fold(in_turn(), ac.LlmMessageStarted(timestamp=T0 + 2, message_id="a1"))
    rejection = rejected(state, answer(at=T0 + 3))
    assert (rejection.code, rejection.guard) == ("still-streaming", "message-completed-first")
    assert rejection.message == (
        "message 'a1' is still streaming; expected llm-message-completed before re-act-observed"
    )


def test_a_call_time_after_the_observation_is_rejected() -> None:
    rejection = rejected(in_turn(), ask(at=T0 + 3, called_at=T0 + 4, t1="search"))
    assert (rejection.code, rejection.guard) == ("called-after-observed", "call-precedes-observation")
    assert rejection.message == (
        "called_llm_at (1004) is later than the input's timestamp (1003); expected the time the model call started"
    )


def test_continue_without_calls_is_rejected() -> None:
    inp = ac.ReActObserved(timestamp=T0 + 2, called_llm_at=T0 + 1, observation=ac.ContinueReAct(tool_calls={}))
    rejection = rejected(in_turn(), inp)
    assert (rejection.code, rejection.guard) == ("no-tool-calls", "continue-has-calls")
    assert rejection.message == "continue-re-act carries no tool calls; expected at least one, or complete-re-act"


def test_an_empty_tool_call_id_is_rejected() -> None:
    rejection = rejected(in_turn(), asked({"": "search"}, at=T0 + 2))
    assert (rejection.code, rejection.guard) == ("empty-id", "tool-call-id-present")
    assert rejection.message == "expected non-empty tool call ids, got an empty one"


def test_a_tool_call_id_used_before_in_the_session_is_rejected() -> None:
    state = fold(
        in_turn(),
        ask(at=T0 + 2, t1="search"),
        ac.ToolCallCompleted(timestamp=T0 + 3, tool_call_id="t1", result=ac.ToolSuccess(content="ok")),
    )
    rejection = rejected(state, ask(at=T0 + 4, t2="fetch", t1="search"))
    assert (rejection.code, rejection.guard) == ("duplicate-id", "tool-call-id-unique")
    assert rejection.message == "tool call id 't1' is already used in this session; expected new ids"


def test_it_is_rejected_while_tools_run() -> None:
    rejection = rejected(fold(in_turn(), ask(at=T0 + 2, t1="search")), answer(at=T0 + 3))
    assert rejection == ac.Rejection(
        code="wrong-phase",
        guard="phase",
        message="re-act-observed is not accepted while the session is acting; expected one of: "
        + ", ".join(ACTING_INPUTS),
        input_type="re-act-observed",
        valid_now=ACTING_INPUTS,
    )


def test_it_is_rejected_between_turns() -> None:
    rejection = rejected(started(), answer(at=T0 + 1))
    assert (rejection.code, rejection.guard) == ("wrong-phase", "phase")
    assert rejection.message == (
        "re-act-observed is not accepted while the session is idle; expected one of: user-message-received"
    )


def test_negative_token_counts_are_rejected() -> None:
    inp = ac.ReActObserved(
        timestamp=T0 + 2,
        called_llm_at=T0 + 1,
        observation=ac.CompleteReAct(),
        usage=ac.Usage(input_tokens=-5, output_tokens=2),
    )
    rejection = rejected(in_turn(), inp)
    assert (rejection.code, rejection.guard) == ("negative-usage", "usage-not-negative")
    assert rejection.message == "expected token counts of 0 or more, got input_tokens=-5, output_tokens=2"
