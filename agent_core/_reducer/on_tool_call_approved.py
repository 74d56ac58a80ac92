"""``tool-call-approved``: a person allowed a call that requires approval."""

from __future__ import annotations

from msgspec.structs import replace

from .._inputs import ToolCallApproved
from .._state import AgentState
from ._common import find_awaiting_call


def on_tool_call_approved(state: AgentState, inp: ToolCallApproved) -> AgentState:
    """The call becomes pending, so its ``call-tool`` effect starts."""
    record, turn = find_awaiting_call(state, inp, inp.tool_call_id)
    call_id = inp.tool_call_id
    return replace(
        state,
        timestamp=inp.timestamp,
        step=state.step + 1,
        tool_calls=state.tool_calls.set(call_id, replace(record, status="pending")),
        turn=replace(
            turn,
            awaiting_ids=tuple(i for i in turn.awaiting_ids if i != call_id),
            open_call_ids=(*turn.open_call_ids, call_id),
        ),
    )
