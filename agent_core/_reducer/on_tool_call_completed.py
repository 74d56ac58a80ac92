"""``tool-call-completed``: an external tool finished."""

from __future__ import annotations

from msgspec.structs import replace

from .._inputs import ToolCallCompleted, ToolFailure, ToolSuccess
from .._state import AgentState
from ._common import find_call, reject
from ._tool_retry import retried, with_note
from ._turns import settle
from ._workflow import advance


def on_tool_call_completed(state: AgentState, inp: ToolCallCompleted) -> AgentState:
    """Attach the result to a pending or running call. A failure its tool's retry policy
    retries leaves the call open, backing off (see ``_tool_retry``). When the last open call of the turn
    completes, the next model call is derived (or a budget guard ends the turn).
    A success may move the workflow to another state (or, when a guard raises, fail the turn)."""
    call_id = inp.tool_call_id
    record = state.tool_calls.get(call_id) or find_call(state, inp, call_id)
    status = record.status
    if status != "running" and status != "pending":
        reject(
            state,
            inp,
            f"call-{status}",
            "call-is-open",
            f"tool call {call_id!r} ({record.name}) is {status}; expected a pending or running call",
        )
    if record.retry_at is not None:
        reject(
            state,
            inp,
            "call-backing-off",
            "call-is-open",
            f"tool call {call_id!r} ({record.name}) is waiting until {record.retry_at} to be tried again; "
            "expected a call that has started",
        )
    turn = state.turn
    assert turn is not None  # open calls exist only in an open turn
    result = inp.result
    if isinstance(result, ToolFailure):
        again = retried(state, record, result, inp.timestamp)
        if not isinstance(again, str):
            # Another attempt: the call stays open, backing off; the attempt counts as a tool call.
            return replace(
                state,
                timestamp=inp.timestamp,
                step=state.step + 1,
                tool_calls=state.tool_calls.set(call_id, again),
                turn=replace(turn, tool_call_count=turn.tool_call_count + 1),
            )
        result = with_note(result, again)
    # An open call is listed once in open_call_ids (an invariant); slicing it out
    # costs a fraction of filtering the tuple through a generator.
    open_ids = turn.open_call_ids
    position = open_ids.index(call_id)
    opened = open_ids[:position] + open_ids[position + 1 :]
    state = replace(
        state,
        timestamp=inp.timestamp,
        step=state.step + 1,
        tool_calls=state.tool_calls.set(
            call_id, replace(record, status="completed", result=result, completed_at=inp.timestamp)
        ),
        turn=replace(turn, open_call_ids=opened),
    )
    if state.config.workflow is not None and isinstance(inp.result, ToolSuccess):
        state, ended = advance(state, inp, record.name)
        if ended:  # a guard raised: the turn failed
            return state
    return state if opened else settle(state)
