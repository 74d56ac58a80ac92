"""Budget pools through live sessions: reserved before each model call, the verdict logged, settled after."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent_core import AgentConfig, PoolVerdictReceived, ReActObserved, Usage, nanos
from effects import Agent, BudgetPools, tool
from effects.testing import ManualClock, ScriptedModel, SequentialIds, call_tools, say

from ._helpers import START, Recorder

POOL = "acme:2026-11-27"


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def agent(pools: BudgetPools, script: list[Any], session_id: str, clock: ManualClock | None = None) -> Agent:
    return Agent(
        ScriptedModel(script),
        tools=[lookup],
        config=AgentConfig(budget_pool=POOL, max_turn_ms=None),
        clock=clock or ManualClock(START),
        ids=SequentialIds(),
        session_id=session_id,
        pricing=lambda model, usage: Decimal(usage.output_tokens) / 10_000,  # a cent per 100 output tokens
        pools=pools,
    )


def calls(n: int) -> list[Any]:
    return [call_tools(("lookup", {"key": str(i)}), usage=Usage(output_tokens=100)) for i in range(n)]


@pytest.fixture
def pools(tmp_path: Path) -> BudgetPools:
    opened = BudgetPools.sqlite(tmp_path / "pools.db", per_call=nanos("0.01"))
    opened.set_cap(POOL, nanos("0.05"))
    return opened


@pytest.mark.anyio
async def test_sessions_share_a_pool_until_it_is_spent_and_the_refusal_ends_the_turn(pools: BudgetPools) -> None:
    first = agent(pools, [*calls(2), say("done", usage=Usage(output_tokens=100))], "s1")
    async with first.running() as session:
        session.send("go")
        done = await session.turn_done()
    assert done.last_outcome is not None and done.last_outcome.kind == "completed"
    assert done.cost == nanos("0.03")

    second = agent(pools, calls(5), "s2")
    async with second.running() as session:
        recorder = Recorder(session)
        session.send("go")
        spent = await session.turn_done()
    outcome = spent.last_outcome
    assert outcome is not None and (outcome.kind, outcome.reason) == ("failed", "budget-pool")
    assert outcome.detail == (
        "budget pool 'acme:2026-11-27' has 0.00 left of its 0.05 (0.05 spent, 0.00 held by running calls); "
        "a model call reserves 0.01"
    )
    verdicts = [i for i in recorder.inputs if isinstance(i, PoolVerdictReceived)]
    assert [v.granted for v in verdicts] == [True, True, False]
    observed = [i for i in recorder.inputs if isinstance(i, ReActObserved)]
    assert [o.cost for o in observed] == [nanos("0.01")] * 2
    totals = pools.totals(POOL, START)
    assert (totals.spent, totals.held) == (done.cost + spent.cost, 0)  # the pool's total is the logged costs'
    recorder.assert_replays_to(spent)  # with no pool: the verdicts are in the log


@pytest.mark.anyio
async def test_a_hold_left_by_a_process_that_died_expires(pools: BudgetPools) -> None:
    for n in range(5):  # five calls that never ended: the pool is held in full
        assert (await pools.reserve(POOL, f"dead-{n}", START)).granted
    clock = ManualClock(START + pools.hold_ms)
    async with agent(pools, [say("hello", usage=Usage(output_tokens=100))], "s1", clock).running() as session:
        session.send("go")
        state = await session.turn_done()
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    assert pools.totals(POOL, START + pools.hold_ms) == pools.totals(POOL, 0).__class__(
        cap=nanos("0.05"), spent=nanos("0.01"), held=0
    )


@pytest.mark.anyio
async def test_a_failed_call_releases_its_hold(pools: BudgetPools) -> None:
    from effects.testing import fail

    async with agent(pools, [fail("bad request", retryable=False)], "s1").running() as session:
        session.send("go")
        state = await session.turn_done()
    assert state.last_outcome is not None and state.last_outcome.reason == "llm-error"
    assert pools.totals(POOL, START) == pools.totals(POOL, START).__class__(cap=nanos("0.05"), spent=0, held=0)


@pytest.mark.anyio
async def test_a_pool_named_without_pools_is_refused_at_start() -> None:
    unkept = Agent(ScriptedModel([]), config=AgentConfig(budget_pool=POOL))
    with pytest.raises(ValueError) as refused:
        async with unkept.running():
            pass
    assert str(refused.value).startswith("budget_pool 'acme:2026-11-27' needs the pools it is kept in; expected")


class Hanging:
    """A model that never answers: its call is running when the turn is cancelled."""

    async def complete(self, context: object, on_text: object) -> object:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


@pytest.mark.anyio
async def test_a_call_cancelled_with_its_turn_releases_its_hold(pools: BudgetPools) -> None:
    hanging = Agent(
        Hanging(),  # type: ignore[arg-type]
        config=AgentConfig(budget_pool=POOL, max_turn_ms=None),
        clock=ManualClock(START),
        ids=SequentialIds(),
        pricing=None,
        pools=pools,
    )
    async with hanging.running() as session:
        session.send("go")
        await session.machine.until(lambda state: state.step == 3)  # started, the message, the pool's grant
        assert pools.totals(POOL, START).held == pools.per_call
        session.cancel("enough")
        state = await session.turn_done()
    assert state.last_outcome is not None and state.last_outcome.kind == "cancelled"
    assert pools.totals(POOL, START).held == 0
