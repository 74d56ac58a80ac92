"""The ``call-tool`` and ``wait-until`` effects."""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from agent_core import AgentInput, AgentState, CallTool, TimerFired, ToolCallCompleted, ToolCallStarted, WaitUntil

from .._machine import InputRejected, MachineEvent, StateUpdated, parked
from .._machine._protocols import Dispatch

if TYPE_CHECKING:
    from ._runtime import AgentRuntime


async def call_tool(rt: AgentRuntime, eff: CallTool, state: AgentState, dispatch: Dispatch[AgentInput]) -> None:
    """Dispatch ``tool-call-started``, run the tool, dispatch ``tool-call-completed`` with its result.

    A call already ``running`` in ``state`` (started before a crash, now
    resumed) is not started again: it runs and completes. With a journal, the
    tool runs only once ``tool-call-started`` is durable.
    """
    call_id = eff.tool_call_id
    record = state.tool_calls.get(call_id)
    if record is not None and record.status == "pending":
        started = ToolCallStarted(timestamp=rt.stamp(), tool_call_id=call_id)
        if rt.started_tracker is None:
            dispatch(started)
        elif not await rt.started_tracker.dispatch_and_wait(started, dispatch):
            return  # refused: the call is no longer pending, so it must not run
    result = await rt.toolbox.run(eff.name, eff.parameters, call_id, rt.clock)
    dispatch(ToolCallCompleted(timestamp=rt.stamp(), tool_call_id=call_id, result=result))


async def wait_until(rt: AgentRuntime, eff: WaitUntil, dispatch: Dispatch[AgentInput]) -> None:
    """Sleep on the session's clock until ``eff.at``, then dispatch ``timer-fired``."""
    async with parked():
        await rt.clock.sleep_until(eff.at)
    dispatch(TimerFired(timestamp=rt.stamp(at_least=eff.at)))


class StartedTracker:
    """Lets a tool wait until its ``tool-call-started`` went through the journal (or was refused).

    Subscribed to the machine when the session has a journal: the machine
    publishes a state only after journaling the input that made it.
    """

    def __init__(self) -> None:
        self._waiting: dict[str, tuple[anyio.Event, list[bool]]] = {}

    def handle(self, event: MachineEvent) -> None:
        """Machine subscriber: wake the tool whose ``tool-call-started`` was applied or refused."""
        if isinstance(event, (StateUpdated, InputRejected)) and isinstance(event.input, ToolCallStarted):
            waiter = self._waiting.pop(event.input.tool_call_id, None)
            if waiter is not None:
                waiter[1].append(isinstance(event, StateUpdated))
                waiter[0].set()

    async def dispatch_and_wait(self, started: ToolCallStarted, dispatch: Dispatch[AgentInput]) -> bool:
        """Dispatch ``started`` and wait for the machine's verdict: ``True`` once applied (and journaled)."""
        event, verdict = anyio.Event(), list[bool]()
        self._waiting[started.tool_call_id] = (event, verdict)
        try:
            dispatch(started)
            await event.wait()
        finally:
            self._waiting.pop(started.tool_call_id, None)
        return verdict == [True]
