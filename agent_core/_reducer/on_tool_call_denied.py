"""``tool-call-denied``: a person refused a call that requires approval."""

from __future__ import annotations

from msgspec.structs import replace

from .._inputs import ToolCallDenied, ToolFailure
from .._state import AgentState
from ._common import find_awaiting_call
from ._turns import settle


def on_tool_call_denied(state: AgentState, inp: ToolCallDenied) -> AgentState:
    """The call completes with a failure the model sees, carrying the person's reason."""
    record, turn = find_awaiting_call(state, inp, inp.tool_call_id)
    call_id = inp.tool_call_id
    error = "denied by the user" + (f": {inp.reason}" if inp.reason else "")
    state = replace(
        state,
        timestamp=inp.timestamp,
        step=state.step + 1,
        tool_calls=state.tool_calls.set(
            call_id,
            replace(record, status="completed", result=ToolFailure(error=error), completed_at=inp.timestamp),
        ),
        turn=replace(turn, awaiting_ids=tuple(i for i in turn.awaiting_ids if i != call_id)),
    )
    return settle(state)
