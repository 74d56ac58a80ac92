"""Per-turn budgets, the final answer, and stuck detection: guards that run inside the reducer."""

from __future__ import annotations

import agent_core as ac

from ._build import T0, answer, ask, fold, in_turn, ok, result_of, user

Q = '{"q":"refund policy"}'


def test_the_tool_call_budget_fails_the_turn_and_the_batch_is_not_run() -> None:
    state = fold(in_turn(max_tool_calls=2), ask(at=T0 + 2, t1="search", t2="fetch"))
    state = fold(state, ok("t1", at=T0 + 3), ok("t2", at=T0 + 4), ask(at=T0 + 5, t3=f"search:{Q}"))

    detail = "the turn's budget of 2 tool calls is spent (2 used, 1 asked)"
    assert state.last_outcome == ac.TurnOutcome(
        kind="failed", reason="max-tool-calls", detail=detail, turn=1, at=T0 + 5
    )
    assert result_of(state, "t3") == ac.ToolFailure(error=f"not run: {detail}")
    assert ac.effects_at(state) == {}


def test_a_batch_larger_than_what_is_left_is_refused_whole() -> None:
    state = fold(in_turn(max_tool_calls=2), ask(at=T0 + 2, t1="search", t2="fetch", t3="search:{}"))
    assert state.last_outcome is not None
    assert state.last_outcome.detail == "the turn's budget of 2 tool calls is spent (0 used, 3 asked)"
    assert all(state.tool_calls[i].status == "completed" for i in ("t1", "t2", "t3"))


def test_budgets_count_per_turn() -> None:
    state = fold(in_turn(max_tool_calls=2), ask(at=T0 + 2, t1="search", t2="fetch"))
    state = fold(state, ok("t1", at=T0 + 3), ok("t2", at=T0 + 4), answer(at=T0 + 5))
    state = fold(state, user("u2", "One more thing", at=T0 + 6), ask(at=T0 + 7, t3="search", t4="fetch"))
    assert state.turn is not None
    assert (state.turn.number, state.turn.tool_call_count) == (2, 2)
    assert list(ac.effects_at(state)) == ["call-tool:t3", "call-tool:t4"]


def test_the_model_call_budget_is_checked_when_the_next_call_would_start() -> None:
    state = fold(in_turn(max_model_calls=1), ask(at=T0 + 2, t1="search"))
    assert ac.phase(state) is ac.Phase.ACTING
    state = fold(state, ok("t1", at=T0 + 3))
    assert state.last_outcome == ac.TurnOutcome(
        kind="failed", reason="max-model-calls", detail="the turn used its 1 model calls", turn=1, at=T0 + 3
    )


def test_max_tokens_is_the_turns_total() -> None:
    state = fold(in_turn(max_tokens=300), ask(at=T0 + 2, tokens=(100, 20), t1="search"), ok("t1", at=T0 + 3))
    assert state.turn is not None  # 120 of 300
    state = fold(state, ask(at=T0 + 4, tokens=(150, 30), t2="fetch"), ok("t2", at=T0 + 5))
    assert state.last_outcome == ac.TurnOutcome(
        kind="failed", reason="max-tokens", detail="the turn used 300 tokens of its budget of 300", turn=1, at=T0 + 5
    )


def test_the_final_answer_is_exactly_one_more_tool_less_call() -> None:
    state = in_turn(max_model_calls=1, on_budget_exhausted="final-answer", system_prompt="Be brief.")
    state = fold(state, ask(at=T0 + 2, t1="search"), ok("t1", "Refunds take 5 days.", at=T0 + 3))

    assert state.turn is not None
    assert (state.turn.final_answer, state.turn.exhausted, state.turn.model_calls) == (True, "max-model-calls", 1)
    assert ac.effects_at(state) == {"call-llm:1:2:0": ac.CallLlm(turn=1, context_rev=2, tools_enabled=False)}
    context = ac.llm_context(state)
    assert (context.tools, context.tools_enabled, context.past_tool_calls) == ((), False, ())
    assert context.system_prompt == "Be brief."

    state = fold(state, answer(at=T0 + 4))
    assert state.last_outcome == ac.TurnOutcome(kind="completed", reason="max-model-calls", turn=1, at=T0 + 4)
    assert ac.effects_at(state) == {}


def test_a_final_answer_that_asks_for_tools_fails_the_turn() -> None:
    state = fold(in_turn(max_tool_calls=1, on_budget_exhausted="final-answer"), ask(at=T0 + 2, t1="search"))
    state = fold(state, ok("t1", at=T0 + 3), ask(at=T0 + 4, t2="fetch"))
    assert state.turn is not None and state.turn.final_answer
    assert result_of(state, "t2") == ac.ToolFailure(
        error="not run: the turn's budget of 1 tool calls is spent (1 used, 1 asked)"
    )

    state = fold(state, ask(at=T0 + 5, t3="fetch"))

    assert state.last_outcome == ac.TurnOutcome(
        kind="failed", reason="max-tool-calls", detail="the final answer asked for tools again", turn=1, at=T0 + 5
    )
    assert result_of(state, "t3") == ac.ToolFailure(
        error="not run: tools are disabled: the turn's budget is spent and it must answer now"
    )


def test_exhaustion_while_tools_run_closes_them_before_the_final_answer() -> None:
    state = in_turn(max_turn_ms=5_000, on_budget_exhausted="final-answer")
    state = fold(
        state, ask(at=T0 + 2, t1="search", t2="refund"), ac.ToolCallStarted(timestamp=T0 + 3, tool_call_id="t1")
    )
    state = fold(state, ac.TimerFired(timestamp=T0 + 5_001))

    why = "the turn ran past its deadline of 5000 ms, so the agent must answer now"
    assert result_of(state, "t1") == ac.ToolFailure(
        error=f"interrupted: {why} while the tool was running; its outcome is unknown"
    )
    assert result_of(state, "t2") == ac.ToolFailure(error=f"not run: {why} before anyone approved the call")
    assert ac.effects_at(state) == {"call-llm:1:2:0": ac.CallLlm(turn=1, context_rev=2, tools_enabled=False)}


def test_the_same_call_asked_again_and_again_is_stuck() -> None:
    state = in_turn()  # max_identical_tool_calls defaults to 3
    state = fold(state, ask(at=T0 + 2, t1=f"search:{Q}"), ok("t1", at=T0 + 3))
    state = fold(state, ask(at=T0 + 4, t2=f"search:{Q}"), ok("t2", at=T0 + 5))
    assert state.turn is not None
    state = fold(state, ask(at=T0 + 6, t3=f"search:{Q}"))

    detail = "tool 'search' was asked 3 times in this turn with the same parameters " + Q + "; the agent looks stuck"
    assert state.last_outcome == ac.TurnOutcome(kind="failed", reason="stuck", detail=detail, turn=1, at=T0 + 6)
    assert result_of(state, "t3") == ac.ToolFailure(error=f"not run: {detail}")


def test_other_parameters_are_not_a_repeat() -> None:
    state = fold(in_turn(max_identical_tool_calls=2), ask(at=T0 + 2, t1=f"search:{Q}"), ok("t1", at=T0 + 3))
    state = fold(state, ask(at=T0 + 4, t2='search:{"q":"shipping"}', t3=f"fetch:{Q}"))
    assert state.turn is not None
    assert list(ac.effects_at(state)) == ["call-tool:t2", "call-tool:t3"]


def test_repeats_inside_one_batch_count() -> None:
    state = fold(in_turn(max_identical_tool_calls=2), ask(at=T0 + 2, t1="fetch", t2="fetch"))
    assert state.last_outcome is not None
    assert (state.last_outcome.reason, state.last_outcome.detail) == (
        "stuck",
        "tool 'fetch' was asked 2 times in this turn with the same parameters {}; the agent looks stuck",
    )


def test_repeats_count_per_turn() -> None:
    state = fold(in_turn(max_identical_tool_calls=2), ask(at=T0 + 2, t1="fetch"), ok("t1", at=T0 + 3))
    state = fold(state, answer(at=T0 + 4), user("u2", "Again please", at=T0 + 5), ask(at=T0 + 6, t2="fetch"))
    assert list(ac.effects_at(state)) == ["call-tool:t2"]


def test_stuck_under_final_answer_asks_for_an_answer_without_tools() -> None:
    state = in_turn(max_identical_tool_calls=2, on_budget_exhausted="final-answer")
    state = fold(state, ask(at=T0 + 2, t1="fetch"), ok("t1", at=T0 + 3), ask(at=T0 + 4, t2="fetch"))
    assert state.turn is not None
    assert (state.turn.final_answer, state.turn.exhausted) == (True, "stuck")
    assert ac.effects_at(state) == {"call-llm:1:3:0": ac.CallLlm(turn=1, context_rev=3, tools_enabled=False)}
