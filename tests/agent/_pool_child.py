"""A process running sessions that share one budget pool on PostgreSQL, each until the pool refuses it.

Run by ``test_money_pools_postgres.py``: ``python _pool_child.py DSN POOL PROCESS SESSIONS``. Each
session's model calls a tool forever, each call costing 0.012 (its pool reservation is 0.01). Prints
one JSON line per session: its id, the cost its log holds, its last outcome's reason, and its verdicts.
"""

from __future__ import annotations

import json
import sys
from decimal import Decimal

import anyio

from agent_core import AgentConfig, PoolVerdictReceived, Usage, nanos
from effects import Agent, BudgetPools, InputReceived, MachineEvent, tool
from effects.testing import ScriptedModel, call_tools

PER_CALL = nanos("0.01")
CALL_COST = Decimal("0.012")


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


async def run_session(pools: BudgetPools, pool: str, session_id: str, out: list[dict[str, object]]) -> None:
    model = ScriptedModel(lambda context: call_tools(("lookup", {"key": "k"}), usage=Usage(output_tokens=10)))
    agent = Agent(
        model,
        tools=[lookup],
        config=AgentConfig(budget_pool=pool, max_identical_tool_calls=1_000, max_turn_ms=None),
        session_id=session_id,
        pricing=lambda model, usage: CALL_COST,
        pools=pools,
    )
    verdicts: list[bool] = []

    def on_event(event: MachineEvent) -> None:
        if isinstance(event, InputReceived) and isinstance(event.input, PoolVerdictReceived):
            verdicts.append(event.input.granted)

    async with agent.running() as session:
        session.subscribe(on_event)
        session.send("spend")
        state = await session.turn_done()
    reason = state.last_outcome.reason if state.last_outcome is not None else ""
    out.append({"session": session_id, "cost": state.cost, "reason": reason, "verdicts": verdicts})


async def main(dsn: str, pool: str, process: str, sessions: int) -> None:
    pools = BudgetPools.postgres(dsn, per_call=PER_CALL)
    out: list[dict[str, object]] = []
    async with anyio.create_task_group() as group:
        for n in range(sessions):
            group.start_soon(run_session, pools, pool, f"p{process}-s{n}", out)
    pools.close()
    for line in out:
        print(json.dumps(line))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
