"""``tool-call-input-required``: a running tool asked a person for input before it can go on."""

from __future__ import annotations

from msgspec.structs import replace

from .._inputs import ToolCallInputRequired, ToolFailure
from .._state import AgentState
from ._common import find_running_call, require_text
from ._turns import settle

MAX_INPUT_ROUNDS = 10
"""How many times one tool call may ask for input; the next question ends the call with a failure."""


def on_tool_call_input_required(state: AgentState, inp: ToolCallInputRequired) -> AgentState:
    """The call waits for a person, holding the questions; past :data:`MAX_INPUT_ROUNDS` it fails instead."""
    call_id = inp.tool_call_id
    record, turn = find_running_call(state, inp, call_id)
    require_text(state, inp, "requests", inp.requests, "the questions (a JSON object)")
    opened = tuple(i for i in turn.open_call_ids if i != call_id)
    rounds = record.input_rounds + 1
    if rounds > MAX_INPUT_ROUNDS:
        error = (
            f"tool {record.name!r} asked for input more than {MAX_INPUT_ROUNDS} times (tool call {call_id!r}); "
            "the call was ended: call it again with arguments that need no more answers"
        )
        failed = replace(
            record,
            status="completed",
            result=ToolFailure(error=error),
            completed_at=inp.timestamp,
            input_requests="",
            input_responses="",
        )
        state = replace(
            state,
            timestamp=inp.timestamp,
            step=state.step + 1,
            tool_calls=state.tool_calls.set(call_id, failed),
            turn=replace(turn, open_call_ids=opened),
        )
        return state if opened else settle(state)
    waiting = replace(
        record,
        status="awaiting-input",
        input_requests=inp.requests,
        request_state=inp.request_state,
        input_responses="",
        input_rounds=rounds,
    )
    return replace(
        state,
        timestamp=inp.timestamp,
        step=state.step + 1,
        tool_calls=state.tool_calls.set(call_id, waiting),
        turn=replace(turn, open_call_ids=opened, awaiting_ids=(*turn.awaiting_ids, call_id)),
    )
