"""``context-window-expanded``: internal tool, the model asked to see older messages."""

from __future__ import annotations

import agent_core as ac

from ._build import T0, answer, ask, fold, in_turn, llm_keys, rejected, started, user


def expanded(at: int) -> ac.ContextWindowExpanded:
    return ac.ContextWindowExpanded(timestamp=at)


def long_session() -> ac.AgentState:
    """Six finished turns, then a seventh open with a window of 2 of the 7 messages (step 3)."""
    state = started(initial_context_window=2, context_window_step=3)
    for i in range(6):
        state = fold(state, user(f"u{i}", f"message {i}", at=T0 + 1 + 2 * i), answer(at=T0 + 2 + 2 * i))
    return fold(state, user("u6", "message 6", at=T0 + 13))


def test_the_window_widens_by_the_step_and_the_model_is_asked_again() -> None:
    state = long_session()
    assert state.turn is not None
    assert state.turn.context_window_size == 2
    assert ac.llm_context(state).older_messages == 5

    state = fold(state, expanded(T0 + 14))

    assert state.turn is not None
    assert (state.turn.context_window_size, state.turn.model_calls) == (5, 1)
    assert llm_keys(state) == ["call-llm:7:1:0"]
    context = ac.llm_context(state)
    assert context.older_messages == 2
    assert [e.content for e in context.entries if isinstance(e, ac.ContextMessage)] == [
        "message 2",
        "message 3",
        "message 4",
        "message 5",
        "message 6",
    ]


def test_the_window_is_capped_at_the_message_count() -> None:
    state = fold(long_session(), expanded(T0 + 14), expanded(T0 + 15))
    assert state.turn is not None
    assert state.turn.context_window_size == 7
    state = fold(state, expanded(T0 + 16))
    assert state.turn is not None
    assert state.turn.context_window_size == 7
    assert ac.llm_context(state).older_messages == 0


def test_it_counts_as_a_model_call_so_the_budget_bounds_it() -> None:
    state = fold(in_turn(max_model_calls=2), expanded(T0 + 2))
    assert state.turn is not None
    state = fold(state, expanded(T0 + 3))
    assert state.turn is None
    assert state.last_outcome == ac.TurnOutcome(
        kind="failed", reason="max-model-calls", detail="the turn used its 2 model calls", turn=1, at=T0 + 3
    )


def test_the_call_s_tokens_and_cost_count_toward_the_budgets_and_are_checked() -> None:
    usage = ac.Usage(input_tokens=30, output_tokens=20)
    state = fold(in_turn(max_tokens=100), ac.ContextWindowExpanded(timestamp=T0 + 2, usage=usage, cost=7))
    assert state.turn is not None
    assert (state.turn.tokens, state.turn.cost, state.cost, state.input_tokens) == (50, 7, 7, 30)
    state = fold(state, ac.ContextWindowExpanded(timestamp=T0 + 3, usage=usage))
    assert state.turn is None and state.last_outcome is not None
    assert (state.last_outcome.reason, state.last_outcome.detail) == (
        "max-tokens",
        "the turn used 100 tokens of its budget of 100",
    )
    bad = ac.Usage(input_tokens=-1)
    assert rejected(in_turn(), ac.ContextWindowExpanded(timestamp=T0 + 2, usage=bad)).code == "negative-usage"
    assert rejected(in_turn(), ac.ContextWindowExpanded(timestamp=T0 + 2, cost=-1)).code == "negative-cost"


def test_a_call_that_reported_nothing_leaves_the_turn_priced_one_with_tokens_and_no_cost_does_not() -> None:
    # As every such input logged before they carried usage and cost: nothing to price, so not unpriced.
    state = fold(in_turn(max_cost=1_000), ac.ContextWindowExpanded(timestamp=T0 + 2))
    assert state.turn is not None and not state.turn.unpriced
    usage = ac.Usage(input_tokens=30, output_tokens=20)
    state = fold(state, ac.ContextWindowExpanded(timestamp=T0 + 3, usage=usage))
    assert state.last_outcome is not None and state.last_outcome.reason == "unpriced"


def test_it_is_rejected_between_turns() -> None:
    rejection = rejected(started(), expanded(T0 + 1))
    assert (rejection.code, rejection.guard) == ("wrong-phase", "phase")
    assert rejection.message == (
        "context-window-expanded is not accepted while the session is idle; expected one of: user-message-received"
    )


def test_it_is_rejected_while_tools_run() -> None:
    state = fold(in_turn(), ask(at=T0 + 2, t1="search"))
    rejection = rejected(state, expanded(T0 + 3))
    assert (rejection.code, rejection.guard) == ("wrong-phase", "phase")
    assert rejection.message == (
        "context-window-expanded is not accepted while the session is acting; expected one of: child-spent, re-act-cancelled, "
        "timer-fired, tool-call-approved, tool-call-completed, tool-call-denied, tool-call-input-provided, "
        "tool-call-input-required, tool-call-started, tool-call-task-created, user-message-received"
    )


def test_it_is_rejected_while_a_message_streams() -> None:
    # Accepting it would cancel the streaming call and leave its message streaming forever.
    state = fold(in_turn(), ac.LlmMessageStarted(timestamp=T0 + 2, message_id="a1"))
    rejection = rejected(state, expanded(T0 + 3))
    assert (rejection.code, rejection.guard) == ("still-streaming", "message-completed-first")
    assert rejection.message == (
        "message 'a1' is still streaming; expected llm-message-completed before context-window-expanded"
    )


def test_during_the_final_answer_it_fails_the_turn_instead_of_asking_again() -> None:
    # Tools are disabled for the final answer, internal ones included: no second extra call.
    state = in_turn(max_model_calls=1, on_budget_exhausted="final-answer")
    state = fold(state, expanded(T0 + 2))
    assert state.turn is not None and state.turn.final_answer
    assert ac.effects_at(state) == {"call-llm:1:2:0": ac.CallLlm(turn=1, context_rev=2, tools_enabled=False)}

    state = fold(state, expanded(T0 + 3))

    assert ac.effects_at(state) == {}
    assert state.last_outcome == ac.TurnOutcome(
        kind="failed", reason="max-model-calls", detail="the final answer asked for tools again", turn=1, at=T0 + 3
    )
