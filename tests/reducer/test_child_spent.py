"""``child-spent``: what the child session of a running call spent so far counts toward the turn's and the
session's budgets, and stops the turn once one is spent."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

import agent_core as ac

from ._build import T0, answer, ask, fold, in_turn, ok, rejected

CALLS = ("t1", "t2", "t3")


def three_running(**config: object) -> ac.AgentState:
    """Three calls of ``fetch`` running (as agent tools' calls would)."""
    asked = ask(at=T0 + 2, t1='fetch:{"id":1}', t2='fetch:{"id":2}', t3='fetch:{"id":3}')
    state = fold(in_turn(**config), replace(asked, cost=0))  # priced (free): a cost budget needs priced calls
    return fold(state, *(ac.ToolCallStarted(timestamp=T0 + 3, tool_call_id=c) for c in CALLS))


def report(call_id: str, at: int = T0 + 4, **spent: int) -> ac.ChildSpent:
    return ac.ChildSpent(timestamp=at, tool_call_id=call_id, spent=ac.Spend(**spent))


def add(a: ac.Spend, b: ac.Spend) -> ac.Spend:
    return ac.Spend(
        model_calls=a.model_calls + b.model_calls,
        tool_calls=a.tool_calls + b.tool_calls,
        tokens=a.tokens + b.tokens,
        cost=a.cost + b.cost,
    )


growth = st.tuples(st.sampled_from(CALLS), st.integers(0, 3), st.integers(0, 3), st.integers(0, 900), st.integers(0, 10**7))


@given(st.lists(growth, max_size=12))
def test_the_roll_up_is_the_sum_of_each_childs_last_report(steps: list[tuple[str, int, int, int, int]]) -> None:
    state = three_running()
    last = {c: ac.Spend() for c in CALLS}
    for n, (call_id, calls, tools, tokens, cost) in enumerate(steps):
        before = last[call_id]
        last[call_id] = add(before, ac.Spend(model_calls=calls, tool_calls=tools, tokens=tokens, cost=cost))
        state = fold(state, ac.ChildSpent(timestamp=T0 + 4 + n, tool_call_id=call_id, spent=last[call_id]))
    total = ac.Spend()
    for spend in last.values():
        total = add(total, spend)
    assert state.turn is not None
    assert (state.turn.children_spent or ac.Spend()) == total == (state.children_spent or ac.Spend())
    done = fold(state, *(ok(c, at=T0 + 20) for c in CALLS), answer(at=T0 + 21))
    assert done.last_outcome is not None
    if state.children_spent is None:  # no child spent anything: the turn keeps no spend, as before
        assert done.last_outcome.spent is None
    else:
        assert done.last_outcome.spent == add(ac.Spend(model_calls=2, tool_calls=3), total)
    assert done.children_spent == state.children_spent  # the session's roll-up outlives the turn


def test_a_child_that_spends_the_turns_cost_budget_stops_the_turn_and_closes_its_calls() -> None:
    state = three_running(max_cost=10_000_000)
    state = fold(state, report("t1", cost=6_000_000), report("t2", cost=2_000_000))
    assert state.turn is not None
    state = fold(state, report("t1", at=T0 + 5, model_calls=2, cost=8_000_000))
    outcome = state.last_outcome
    assert state.turn is None and outcome is not None
    assert (outcome.kind, outcome.reason) == ("failed", "max-cost")
    assert outcome.detail == "the turn's model calls cost 0.01 of its budget of 0.01 (0.01 by its child sessions)"
    assert all(state.tool_calls[c].status == "completed" for c in CALLS)
    assert ac.effects_at(state) == {}  # nothing runs on: the children's calls are cancelled


def test_a_childs_model_calls_count_toward_the_turns_and_the_final_answer_policy_applies() -> None:
    state = three_running(max_model_calls=4, on_budget_exhausted="final-answer")
    state = fold(state, report("t2", model_calls=3))
    assert state.turn is not None and state.turn.final_answer  # calls closed, one last tool-less answer
    assert state.turn.exhausted == "max-model-calls"
    assert all(state.tool_calls[c].status == "completed" for c in CALLS)


def test_a_report_that_goes_down_is_rejected() -> None:
    state = fold(three_running(), report("t1", tokens=50))
    rejection = rejected(state, report("t1", at=T0 + 5, tokens=40))
    assert (rejection.code, rejection.guard) == ("spend-went-down", "spend-cumulative")
    assert rejection.message == (
        "child-spent for tool call 't1': tokens=40 is less than the 50 reported before; "
        "expected what the child session has spent in all so far"
    )


def test_only_a_running_call_reports() -> None:
    state = fold(in_turn(), ask(at=T0 + 2, t1="fetch"))
    rejection = rejected(state, report("t1", at=T0 + 3, cost=1))
    assert (rejection.code, rejection.guard) == ("call-pending", "call-is-running")
