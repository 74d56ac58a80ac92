"""The floors under ``runner.py``: what parts of an agent round cost on their own, in CPU time per round.

* the machine alone (:func:`machine_floor`): the generic machine doing the
  tasks and inputs of agent rounds without the agent. State ``(round, tools
  completed)``; inputs ``"observed"``, ``"started"``, ``"completed"``. Each round
  starts one "model" effect, then three "tool" effects that dispatch two inputs
  each: 4 effects, 7 inputs, without the agent's reducer, contexts or tools;
* the event loop alone (:func:`loop_floor`): the same four tasks a round
  started in a native task group (asyncio's, or a trio nursery), each appending
  its inputs to a list and waking the waiting task: no machine at all;
* the pure core alone (:func:`core_floor`): the inputs an agent session of the
  runner's workload logged, folded with ``transition`` one by one, and
  ``llm_context`` built for each model call; no event loop, no effects.

The event loop's and the pure core's costs are each paid by every round of a
runner that starts a task per effect, so their sum is a floor under it.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import anyio
from _workload import ROUNDS_PER_TURN, instant_model, lookup

from agent_core import AgentConfig, CallLlm, effects_at, initial_state, llm_context, transition
from effects import Controller, Machine, MemoryStore, effect, open_session

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


async def loop_floor(rounds: int) -> dict[str, Any]:
    """The four tasks of ``rounds`` agent rounds in the running loop's native task group, and nothing else."""
    cpu = time.process_time()
    inputs = await (_asyncio_rounds(rounds) if _on_asyncio() else _trio_rounds(rounds))
    return {"rounds": rounds, "inputs": inputs, "cpu_us_per_round": (time.process_time() - cpu) * 1e6 / rounds}


def _on_asyncio() -> bool:
    return asyncio._get_running_loop() is not None  # anyio runs asyncio or trio


async def _asyncio_rounds(rounds: int) -> int:
    loop, inputs, seen = asyncio.get_running_loop(), [], [0]
    waiter: list[asyncio.Future[None]] = []

    def dispatch(inp: str) -> None:
        inputs.append(inp)
        if waiter and not waiter[0].done():
            waiter[0].set_result(None)

    async def wait_for(count: int) -> None:
        while len(inputs) < count:
            waiter[:] = [loop.create_future()]
            await waiter[0]
        seen[0] += len(inputs)
        inputs.clear()

    async with asyncio.TaskGroup() as group:
        for _ in range(rounds):
            group.create_task(_model(dispatch))
            await wait_for(1)
            for _ in range(3):
                group.create_task(_tool(dispatch))
            await wait_for(6)
    return seen[0]


async def _trio_rounds(rounds: int) -> int:
    import trio  # only reached under trio

    inputs, event, seen = [], [trio.Event()], [0]

    def dispatch(inp: str) -> None:
        inputs.append(inp)
        event[0].set()

    async def wait_for(count: int) -> None:
        while len(inputs) < count:
            await event[0].wait()
            event[0] = trio.Event()
        seen[0] += len(inputs)
        inputs.clear()

    async with trio.open_nursery() as nursery:
        for _ in range(rounds):
            nursery.start_soon(_model, dispatch)
            await wait_for(1)
            for _ in range(3):
                nursery.start_soon(_tool, dispatch)
            await wait_for(6)
    return seen[0]


async def _model(dispatch: Any) -> None:
    dispatch("observed")


async def _tool(dispatch: Any) -> None:
    dispatch("started")
    dispatch("completed")


def core_floor(rounds: int) -> dict[str, Any]:
    """Fold the inputs of a ``rounds``-round session of the runner's workload and build each model call's
    context: the pure core's part of those rounds (``effects_at`` left out, so this is a lower bound)."""
    inputs = anyio.run(_logged_inputs, rounds)
    calls, state, seen = set(), initial_state(), set()  # the positions after which the model is called
    for position, inp in enumerate(inputs):
        state = transition(state, inp)
        for key, eff in effects_at(state).items():
            if isinstance(eff, CallLlm) and key not in seen:
                seen.add(key)
                calls.add(position)
    best = min(_fold(inputs, calls) for _ in range(5))
    return {"rounds": rounds, "model_calls": len(calls), "cpu_us_per_round": best * 1e6 / rounds}


def _fold(inputs: list[Any], calls: set[int]) -> float:
    cpu, state = time.process_time(), initial_state()
    for position, inp in enumerate(inputs):
        state = transition(state, inp)
        if position in calls:
            llm_context(state)
    return time.process_time() - cpu


async def _logged_inputs(rounds: int) -> list[Any]:
    store, config = MemoryStore(), AgentConfig(max_identical_tool_calls=1_000_000, stuck_window=0)
    async with open_session(store, "floor", instant_model(), tools=[lookup], config=config) as session:
        for turn in range(rounds // ROUNDS_PER_TURN):
            session.send(f"question {turn}")
            await session.settled()
    records = store.read("floor")
    return [record.decode() for record in records]


FLOOR_HEADERS = (
    "backend",
    "event loop alone",
    "pure core",
    "sum (floor)",
    "machine alone",
    "no timeouts",
    "whole round",
)


def floor_rows(long_runs: dict[str, dict[str, Any]], floors: dict[str, dict[str, Any]]) -> list[tuple[str, ...]]:
    """A row per backend: the floors beside the whole round."""
    rows = []
    for backend, floor in floors.items():
        loop, core = floor["loop"]["cpu_us_per_round"], floor["core"]["cpu_us_per_round"]
        untimed = floor["no_timeouts"]["cpu_us_per_round"]
        parts = (loop, core, loop + core, floor["machine"]["cpu_us_per_round"], untimed)
        rows.append((backend, *(f"{us:.1f}" for us in parts), f"{long_runs[backend]['cpu_us_per_round']:.1f}"))
    return rows
