"""``tool-call-input-provided``: a person answered the questions a tool call asked."""

from __future__ import annotations

from msgspec.structs import replace

from .._inputs import ToolCallInputProvided
from .._state import AgentState
from ._common import find_call, reject, require_text


def on_tool_call_input_provided(state: AgentState, inp: ToolCallInputProvided) -> AgentState:
    """The call becomes pending with the answers, so its ``call-tool`` effect runs it again."""
    call_id = inp.tool_call_id
    record = state.tool_calls.get(call_id) or find_call(state, inp, call_id)
    if record.status != "awaiting-input":
        hint = (
            " (decide it with tool-call-approved or tool-call-denied)" if record.status == "awaiting-approval" else ""
        )
        reject(
            state,
            inp,
            f"call-{record.status}",
            "call-awaits-input",
            f"tool call {call_id!r} ({record.name}) is {record.status}{hint}; expected a call awaiting input",
        )
    require_text(state, inp, "responses", inp.responses, "the answers (a JSON object)")
    turn = state.turn
    assert turn is not None  # waiting calls exist only in an open turn
    answered = replace(record, status="pending", input_requests="", input_responses=inp.responses)
    return replace(
        state,
        timestamp=inp.timestamp,
        step=state.step + 1,
        tool_calls=state.tool_calls.set(call_id, answered),
        turn=replace(
            turn,
            awaiting_ids=tuple(i for i in turn.awaiting_ids if i != call_id),
            open_call_ids=(*turn.open_call_ids, call_id),
        ),
    )
