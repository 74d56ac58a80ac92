"""Recording a ``re-act-observed`` batch of tool-call requests in the state's tool-call maps and the turn."""

from __future__ import annotations

from immutables import Map
from msgspec.structs import replace

from .._handoff import active_tools
from .._inputs import ProviderItem, ToolCallRequest, ToolFailure
from .._rules import Judgement
from .._state import AgentState, ToolCallRecord, ToolCallStatus, Turn
from .._table import Table, grown
from .._toolset import not_registered
from .._vector import Vector
from ._workflow import gate


def record_requests(
    state: AgentState,
    turn: Turn,
    requests: dict[str, ToolCallRequest],
    refused: str,
    items: tuple[ProviderItem, ...] = (),
) -> AgentState:
    """Record a batch of requests that a guard refused (``refused`` says why) in the turn.

    ``state`` already carries the input's timestamp and step.
    """
    calls, log, opened, awaiting = records(state, turn, requests, state.step, state.timestamp, refused, items)
    turn = replace(
        turn,
        tool_call_ids=turn.tool_call_ids + tuple(requests),
        open_call_ids=opened,
        awaiting_ids=awaiting,
    )
    return replace(state, tool_calls=calls, tool_call_log=log, turn=turn)


def records(
    state: AgentState,
    turn: Turn,
    requests: dict[str, ToolCallRequest],
    step: int,
    at: int,
    judged: str | dict[str, Judgement],
    items: tuple[ProviderItem, ...] = (),
) -> tuple[Map[str, ToolCallRecord] | Table[str, ToolCallRecord], Vector[str], tuple[str, ...], tuple[str, ...]]:
    """The tool-call maps with a batch of requests added, and the turn's open and awaiting ids.

    The batch's first record holds the reply's provider ``items`` (``llm_context``
    puts them back with the batch).

    With a ``judged`` text (a guard tripped: why), every call is recorded completed with a
    failure saying why it was not run. Otherwise a call to an unknown tool is
    completed with a failure naming the registered tools, and :func:`gate`
    places the rest (refused by the workflow or by the rules' judgement in ``judged``,
    awaiting a decision, or pending, to be run).
    """
    added: dict[str, ToolCallRecord] = {}
    opened, awaiting = turn.open_call_ids, turn.awaiting_ids
    tools = active_tools(state)
    for call_id, request in requests.items():
        tool = tools.get(request.name)
        status: ToolCallStatus = "completed"
        result: ToolFailure | None = None
        if isinstance(judged, str):
            result = ToolFailure(error=f"not run: {judged}")
        elif tool is None:
            result = ToolFailure(error=not_registered(request.name, call_id, tools.keys()))
        else:
            status, result = gate(state, tool, call_id, judged.get(call_id))
            if status == "awaiting-approval":
                awaiting += (call_id,)
            elif status == "pending":
                opened += (call_id,)
        added[call_id] = ToolCallRecord(
            id=call_id,
            name=request.name,
            parameters=request.parameters,
            status=status,
            result=result,
            turn=turn.number,
            seq=step,
            requested_at=at,
            completed_at=at if result is not None else 0,
            items=() if added else items,
        )
    # One update per map: the batch shares the path copies a set per call would repeat.
    return grown(state.tool_calls.update(added)), state.tool_call_log.extend(added), opened, awaiting
