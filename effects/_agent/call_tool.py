"""The ``call-tool`` effect: ``tool-call-started`` (durable first), the tool, ``tool-call-completed``.

A tool's own failures (bad arguments, exceptions, timeouts, an unknown name)
are results the model reads, made by the toolbox; anything else raised here is
a bug and propagates. A tool may suspend the call instead of answering: a
question for a person becomes ``tool-call-input-required`` (the call waits;
the answers come back in the record, and the call is attempted again with
them), and a remote task becomes ``tool-call-task-created``, durable before the
call follows the task (after a crash the call follows it; it is never sent again).
"""

from __future__ import annotations

from agent_core import (
    AgentInput,
    AgentState,
    CallTool,
    ToolCallCompleted,
    ToolCallInputRequired,
    ToolCallRecord,
    ToolCallStarted,
    ToolCallTaskCreated,
    ToolFailure,
)

from .._machine import Dispatch
from .._tools import InputRequired, Resumption, TaskCreated, ToolOutcome
from ._caller import CallingSession
from ._context import EffectContext


async def call_tool(ctx: EffectContext, eff: CallTool, state: AgentState, dispatch: Dispatch[AgentInput]) -> None:
    """Run the call ``eff`` names and dispatch its result.

    A pending call is started first: the tool runs only once
    ``tool-call-started`` is applied (and durable, with a journal), so after a
    crash the log tells whether it may have run. It then waits for a place
    within ``ToolLimits.max_concurrent_per_session`` and the process's
    :class:`~effects.ProcessLimits`. A call already ``running`` in
    ``state`` (resumed after a crash) is not started again: it runs and completes,
    or follows its remote task.
    """
    call_id = eff.tool_call_id
    record = state.tool_calls.get(call_id)
    if record is not None and record.status == "pending":
        started = ToolCallStarted(timestamp=ctx.stamp(state.timestamp), tool_call_id=call_id)
        if not await dispatch.dispatch_committed(started):
            return  # refused: the call is no longer pending (the turn ended meanwhile), so it must not run
    resumption = _resumption(record)
    following = resumption is not None and bool(resumption.task_id)
    async with ctx.tool_slot():  # over a bound, the call waits here, `running` in the state
        # The toolbox's call is this effect's last wait (under trio its timeout may cancel the effect's own scope).
        with CallingSession(ctx, dispatch, state, call_id):
            outcome = await ctx.toolbox.run(eff.name, eff.parameters, call_id, ctx.clock, resumption, final=True)
            if isinstance(outcome, TaskCreated) and not following:
                created = ToolCallTaskCreated(timestamp=ctx.stamp(), tool_call_id=call_id, task_id=outcome.task_id)
                if not await dispatch.dispatch_committed(created):
                    return  # refused: the turn ended meanwhile (its task is left to the remote side)
                outcome = await ctx.toolbox.run(
                    eff.name, eff.parameters, call_id, ctx.clock, Resumption(task_id=outcome.task_id), final=True
                )
    dispatch(_reported(ctx, eff.name, call_id, outcome))


def _resumption(record: ToolCallRecord | None) -> Resumption | None:
    """How to attempt a call again: the task it follows and the answers it was given; ``None`` for a first attempt."""
    if record is None or not (record.task_id or record.input_responses):
        return None
    return Resumption(
        task_id=record.task_id, input_responses=record.input_responses, request_state=record.request_state
    )


def _reported(ctx: EffectContext, tool: str, call_id: str, outcome: ToolOutcome) -> AgentInput:
    """The input that reports an attempt's end: a question for a person, or the call's result."""
    if isinstance(outcome, InputRequired):
        return ToolCallInputRequired(
            timestamp=ctx.stamp(),
            tool_call_id=call_id,
            requests=outcome.requests,
            request_state=outcome.request_state,
        )
    if isinstance(outcome, TaskCreated):  # a call that follows its task was handed another one
        outcome = ToolFailure(
            error=f"tool {tool!r} created a second task {outcome.task_id!r} while following its first "
            f"(tool call {call_id!r}); expected the first task's result"
        )
    return ToolCallCompleted(timestamp=ctx.stamp(), tool_call_id=call_id, result=outcome)
