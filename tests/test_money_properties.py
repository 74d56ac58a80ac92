"""Money in the reducer, property-tested: a cost budget is never exceeded by more than one model call's cost,
replay equals live, and a budget pool's total equals the sum of its settled calls."""

from __future__ import annotations

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

import agent_core as ac
from agent_core.testing import agent_configs, sessions
from effects import BudgetPools

MONEY = agent_configs(
    max_cost=st.sampled_from((None, 0, 10_000_000, 30_000_000)),
    max_session_cost=st.sampled_from((None, 0, 20_000_000, 60_000_000)),
    budget_pool=st.sampled_from(("", "acme:2026-11-27")),
    max_model_calls=st.none(),
    max_tokens=st.none(),
)


@settings(max_examples=50)
@given(sessions(config=MONEY, max_steps=40))
def test_no_model_call_is_derived_once_a_cost_budget_is_spent(inputs: list[ac.AgentInput]) -> None:
    # So a budget is exceeded by at most the cost of the call that crossed it (and, under
    # on_budget_exhausted="final-answer", of the one tool-less answer it allows).
    state = ac.initial_state()
    for inp in inputs:
        state = ac.transition(state, inp)
        turn, config = state.turn, state.config
        calling = any(isinstance(e, ac.CallLlm) for e in ac.effects_at(state).values())
        if turn is None or not calling or turn.final_answer:
            continue
        theirs = state.children_spent.cost if state.children_spent else 0  # child sessions' spend counts too
        assert config.max_cost is None or ac.spent(state).cost < config.max_cost
        assert config.max_session_cost is None or state.cost + theirs < config.max_session_cost
        assert not turn.unpriced


@given(sessions(config=MONEY, max_steps=40))
def test_the_session_cost_is_the_sum_of_the_logged_costs_and_replays(inputs: list[ac.AgentInput]) -> None:
    final = ac.replay(inputs)
    costed = (  # every model call's end
        ac.ReActObserved,
        ac.AnswerRejected,
        ac.ContextCompacted,
        ac.LlmCallFailed,
        ac.ContextWindowExpanded,
        ac.HistoryToolCallsAdded,
        ac.HandedOff,
    )
    logged = sum(i.cost or 0 for i in inputs if isinstance(i, costed))
    assert final.cost == logged
    reported = {i.tool_call_id: i.spent.cost for i in inputs if isinstance(i, ac.ChildSpent)}  # cumulative
    assert (final.children_spent.cost if final.children_spent else 0) == sum(reported.values())
    for fmt in ("json", "msgpack"):
        decoded = [ac.decode_input(ac.encode_input(i, format=fmt), format=fmt) for i in inputs]
        assert ac.state_hash(ac.replay(decoded)) == ac.state_hash(final)


OPERATIONS = st.lists(
    st.tuples(st.sampled_from(("reserve", "reserve", "settle", "reserve", "release", "expire")), st.integers(0, 25)),
    max_size=40,
)


@settings(max_examples=40, deadline=None)
@given(OPERATIONS)
def test_a_pools_spent_total_is_the_sum_of_its_settled_calls_and_never_passes_its_cap_by_more(
    operations: list[tuple[str, int]],
) -> None:
    pools = BudgetPools.sqlite(":memory:", per_call=10, hold_ms=1_000)  # the same SQL as a file, without fsyncs
    pools.set_cap("p", 55)
    try:
        anyio.run(_exercise, pools, operations)
    finally:
        pools.close()


async def _exercise(pools: BudgetPools, operations: list[tuple[str, int]]) -> None:
    now, n, overrun = 0, 0, 0
    held: list[str] = []
    settled: list[int] = []
    for operation, value in operations:
        if operation == "reserve":
            n += 1
            before = pools.totals("p", now)
            answer = await pools.reserve("p", f"r{n}", now)
            assert answer.granted == (before.spent + before.held + pools.per_call <= before.cap)
            if answer.granted:
                held.append(f"r{n}")
        elif operation == "settle" and held:
            await pools.settle("p", held.pop(0), value)
            settled.append(value)
            overrun += max(0, value - pools.per_call)
        elif operation == "release" and held:
            await pools.release("p", held.pop())
        elif operation == "expire":
            now += 1_000  # every hold expires: as if their processes died
            held.clear()
        totals = pools.totals("p", now)
        assert totals.spent == sum(settled)
        assert totals.held == pools.per_call * len(held)
        assert totals.spent + totals.held <= totals.cap + overrun

