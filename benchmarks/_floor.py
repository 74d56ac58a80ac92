"""The floor under ``runner.py``: the generic machine alone, doing the tasks and inputs of agent rounds.

State ``(round, tools completed)``; inputs ``"observed"``, ``"started"``,
``"completed"``. Each round starts one "model" effect, then three "tool"
effects that dispatch two inputs each: the effect tasks and inputs of an agent
round (4 effects, 7 inputs), without the agent's reducer, contexts or tools.
"""

from __future__ import annotations

import time
from typing import Any

from effects import Controller, Machine, effect

Floor = tuple[int, int]


def floor_transition(state: Floor, inp: str) -> Floor:
    number, done = state
    if inp == "observed":
        return number + 1, 0
    return (number, done + 1) if inp == "completed" else state


def floor_effects(limit: int) -> Any:
    def effects_at(state: Floor) -> dict[str, str]:
        number, done = state
        if number and done < 3:
            return {f"tool:{number}:{i}": "tool" for i in range(3)}
        return {f"model:{number}": "model"} if number < limit else {}

    return effects_at


def floor_run_effect(kind: str, state: Floor, key: str) -> Controller[str]:
    async def model(dispatch: Any) -> None:
        dispatch("observed")

    async def tool_call(dispatch: Any) -> None:
        dispatch("started")
        dispatch("completed")

    return effect(model if kind == "model" else tool_call)


async def machine_floor(rounds: int) -> dict[str, Any]:
    """The generic machine running the tasks and inputs of ``rounds`` agent rounds, with no agent."""
    machine: Machine[Floor, str, str] = Machine((0, 3), floor_transition, floor_effects(rounds), floor_run_effect)
    cpu, start = time.process_time(), time.perf_counter_ns()
    async with machine.running():
        await machine.settled()
    wall, cpu = time.perf_counter_ns() - start, time.process_time() - cpu
    return {"rounds": rounds, "us_per_round": wall / 1000 / rounds, "cpu_us_per_round": cpu * 1e6 / rounds}
