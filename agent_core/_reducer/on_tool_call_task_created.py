"""``tool-call-task-created``: a running tool call handed its work to a remote task."""

from __future__ import annotations

from msgspec.structs import replace

from .._inputs import ToolCallTaskCreated
from .._state import AgentState
from ._common import find_running_call, reject, require_text


def on_tool_call_task_created(state: AgentState, inp: ToolCallTaskCreated) -> AgentState:
    """Record the task the call follows (a crash then resumes it by polling the task, never by calling again)."""
    call_id = inp.tool_call_id
    record, _ = find_running_call(state, inp, call_id)
    require_text(state, inp, "task_id", inp.task_id, "the remote task's id")
    if record.task_id:
        reject(
            state,
            inp,
            "task-already-created",
            "one-task-per-call",
            f"tool call {call_id!r} ({record.name}) already follows task {record.task_id!r}; "
            f"expected no second task, got {inp.task_id!r}",
        )
    return replace(
        state,
        timestamp=inp.timestamp,
        step=state.step + 1,
        tool_calls=state.tool_calls.set(call_id, replace(record, task_id=inp.task_id)),
    )
