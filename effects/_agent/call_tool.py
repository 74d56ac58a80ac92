"""The ``call-tool`` effect: ``tool-call-started`` (durable first), the tool, ``tool-call-completed``.

A tool's own failures (bad arguments, exceptions, timeouts, an unknown name)
are results the model reads, made by the toolbox; anything else raised here is
a bug and propagates.
"""

from __future__ import annotations

from agent_core import AgentInput, AgentState, CallTool, ToolCallCompleted, ToolCallStarted

from .._clock import final_wait
from .._machine import Dispatch
from ._context import EffectContext


async def call_tool(ctx: EffectContext, eff: CallTool, state: AgentState, dispatch: Dispatch[AgentInput]) -> None:
    """Run the call ``eff`` names and dispatch its result.

    A pending call is started first: the tool runs only once
    ``tool-call-started`` is applied (and durable, with a journal), so after a
    crash the log tells whether it may have run. It then waits for a place
    within ``ToolLimits.max_concurrent_per_session`` and the process's
    :class:`~effects.ProcessLimits`. A call already ``running`` in
    ``state`` (resumed after a crash) is not started again: it runs and completes.
    """
    call_id = eff.tool_call_id
    record = state.tool_calls.get(call_id)
    if record is not None and record.status == "pending":
        started = ToolCallStarted(timestamp=ctx.stamp(state.timestamp), tool_call_id=call_id)
        if not await dispatch.dispatch_committed(started):
            return  # refused: the call is no longer pending (the turn ended meanwhile), so it must not run
    async with ctx.tool_slot():  # over a bound, the call waits here, `running` in the state
        with final_wait():  # nothing below waits (under trio the timeout may cancel this effect's own scope)
            result = await ctx.toolbox.run(eff.name, eff.parameters, call_id, ctx.clock)
    dispatch(ToolCallCompleted(timestamp=ctx.stamp(), tool_call_id=call_id, result=result))
