"""``tool-call-started``: the runner is about to execute a pending call."""

from __future__ import annotations

from msgspec.structs import replace

from .._inputs import ToolCallStarted
from .._state import AgentState
from ._common import find_call, reject


def on_tool_call_started(state: AgentState, inp: ToolCallStarted) -> AgentState:
    """Mark a pending call running."""
    # A record is always truthy, so `or` reaches find_call (which rejects) only for an unknown id.
    record = state.tool_calls.get(inp.tool_call_id) or find_call(state, inp, inp.tool_call_id)
    if record.status != "pending":
        reject(
            state,
            inp,
            f"call-{record.status}",
            "call-is-pending",
            f"tool call {inp.tool_call_id!r} ({record.name}) is {record.status}; expected a pending call",
        )
    if record.retry_at is not None:
        reject(
            state,
            inp,
            "call-backing-off",
            "call-is-pending",
            f"tool call {inp.tool_call_id!r} ({record.name}) is waiting until {record.retry_at} to be tried "
            "again; expected it to start after its timer fired",
        )
    return replace(
        state,
        timestamp=inp.timestamp,
        step=state.step + 1,
        tool_calls=state.tool_calls.set(inp.tool_call_id, replace(record, status="running")),
    )
