"""``re-act-observed``: a model call finished, asking for tool calls or completing the turn."""

from __future__ import annotations

from immutables import Map
from msgspec.structs import replace

from .._inputs import CompleteReAct, ContinueReAct, ReActObserved, ToolCallRequest, ToolFailure
from .._state import AgentState, ToolCallRecord, ToolCallStatus, Turn
from ._common import end_turn, exhaust, reject, require_thinking, settle
from ._stuck import Repeats, count_repeats


def on_re_act_observed(state: AgentState, inp: ReActObserved) -> AgentState:
    """Count the call and its tokens; record requested tool calls, or close the turn as completed.

    Guards, in order: tools disabled for a final answer, the tool-call budget,
    stuck detection. A guard that trips records the batch as failed (never run)
    and ends the turn, or asks for a final answer.
    """
    turn = require_thinking(state, inp)
    _validate(state, inp, turn)
    observation = inp.observation
    if isinstance(observation, ContinueReAct) and not turn.final_answer:
        requests = observation.tool_calls
        config = state.config
        limit = config.max_tool_calls
        if limit is None or turn.tool_call_count + len(requests) <= limit:
            repeats, stuck = count_repeats(turn, requests, config.max_identical_tool_calls)
            if not stuck:
                return settle(_continue(state, inp, turn, requests, repeats))
    return _complete_or_guarded(state, inp, turn)


def _continue(
    state: AgentState,
    inp: ReActObserved,
    turn: Turn,
    requests: dict[str, ToolCallRequest],
    repeats: Repeats,
) -> AgentState:
    """The common case, no guard tripped: count the call and record its requests in one new turn
    and one new state (each ``replace`` copies every field, so they are not chained)."""
    step = state.step + 1
    usage = inp.usage
    calls, log, opened, awaiting = _records(state, turn, requests, step, inp.timestamp, "")
    turn = replace(
        turn,
        model_calls=turn.model_calls + 1,
        tokens=turn.tokens + usage.input_tokens + usage.output_tokens,
        attempt=0,
        context_rev=turn.context_rev + 1,
        repeats=repeats,
        tool_call_ids=turn.tool_call_ids + tuple(requests),
        open_call_ids=opened,
        awaiting_ids=awaiting,
        tool_call_count=turn.tool_call_count + len(requests),
    )
    return replace(
        state,
        timestamp=inp.timestamp,
        step=step,
        turn=turn,
        called_llm_at=inp.called_llm_at,
        input_tokens=state.input_tokens + usage.input_tokens,
        output_tokens=state.output_tokens + usage.output_tokens,
        tool_calls=calls,
        tool_call_log=log,
    )


def _complete_or_guarded(state: AgentState, inp: ReActObserved, turn: Turn) -> AgentState:
    """Count the call, then close the turn as completed, or apply the guard that tripped."""
    step = state.step + 1
    usage = inp.usage
    if isinstance(inp.observation, CompleteReAct):
        # The turn closes, so its counters are not kept: only the session's are.
        state = replace(
            state,
            timestamp=inp.timestamp,
            step=step,
            called_llm_at=inp.called_llm_at,
            input_tokens=state.input_tokens + usage.input_tokens,
            output_tokens=state.output_tokens + usage.output_tokens,
        )
        return end_turn(state, "completed", turn.exhausted)
    spent = usage.input_tokens + usage.output_tokens
    turn = replace(
        turn,
        model_calls=turn.model_calls + 1,
        tokens=turn.tokens + spent,
        attempt=0,
        context_rev=turn.context_rev + 1,
    )
    state = replace(
        state,
        timestamp=inp.timestamp,
        step=step,
        turn=turn,
        called_llm_at=inp.called_llm_at,
        input_tokens=state.input_tokens + usage.input_tokens,
        output_tokens=state.output_tokens + usage.output_tokens,
    )
    observation = inp.observation
    assert isinstance(observation, ContinueReAct)
    requests = observation.tool_calls
    if turn.final_answer:
        refused = "tools are disabled: the turn's budget is spent and it must answer now"
        state = _record_requests(state, turn, requests, refused)
        return end_turn(state, "failed", turn.exhausted, "the final answer asked for tools again")
    limit = state.config.max_tool_calls
    if limit is not None and turn.tool_call_count + len(requests) > limit:
        detail = (
            f"the turn's budget of {limit} tool calls is spent ({turn.tool_call_count} used, {len(requests)} asked)"
        )
        return exhaust(_record_requests(state, turn, requests, detail), "max-tool-calls", detail)
    _, stuck = count_repeats(turn, requests, state.config.max_identical_tool_calls)
    assert stuck, "on_re_act_observed records unguarded requests itself"
    return exhaust(_record_requests(state, turn, requests, stuck), "stuck", stuck)


def _validate(state: AgentState, inp: ReActObserved, turn: Turn) -> None:
    if turn.streaming_message_id:
        reject(
            state,
            inp,
            "still-streaming",
            "message-completed-first",
            f"message {turn.streaming_message_id!r} is still streaming; expected llm-message-completed before re-act-observed",
        )
    if inp.called_llm_at > inp.timestamp:
        reject(
            state,
            inp,
            "called-after-observed",
            "call-precedes-observation",
            f"called_llm_at ({inp.called_llm_at}) is later than the input's timestamp ({inp.timestamp}); "
            "expected the time the model call started",
        )
    usage = inp.usage
    if usage.input_tokens < 0 or usage.output_tokens < 0:
        # Accepted, it would lower the session's token counters and the turn's spend.
        reject(
            state,
            inp,
            "negative-usage",
            "usage-not-negative",
            f"expected token counts of 0 or more, got input_tokens={usage.input_tokens}, "
            f"output_tokens={usage.output_tokens}",
        )
    if isinstance(inp.observation, CompleteReAct):
        return
    requests = inp.observation.tool_calls
    if not requests:
        reject(
            state,
            inp,
            "no-tool-calls",
            "continue-has-calls",
            "continue-re-act carries no tool calls; expected at least one, or complete-re-act",
        )
    for call_id in requests:
        if not call_id:
            reject(state, inp, "empty-id", "tool-call-id-present", "expected non-empty tool call ids, got an empty one")
        if call_id in state.tool_calls:
            reject(
                state,
                inp,
                "duplicate-id",
                "tool-call-id-unique",
                f"tool call id {call_id!r} is already used in this session; expected new ids",
            )


def _record_requests(state: AgentState, turn: Turn, requests: dict[str, ToolCallRequest], refused: str) -> AgentState:
    """Record a batch of requests that a guard refused (``refused`` says why) in the turn.

    ``state`` already carries the input's timestamp and step.
    """
    calls, log, opened, awaiting = _records(state, turn, requests, state.step, state.timestamp, refused)
    turn = replace(
        turn,
        tool_call_ids=turn.tool_call_ids + tuple(requests),
        open_call_ids=opened,
        awaiting_ids=awaiting,
    )
    return replace(state, tool_calls=calls, tool_call_log=log, turn=turn)


def _records(
    state: AgentState, turn: Turn, requests: dict[str, ToolCallRequest], step: int, at: int, refused: str
) -> tuple[Map[str, ToolCallRecord], Map[int, str], tuple[str, ...], tuple[str, ...]]:
    """The tool-call maps with a batch of requests added, and the turn's open and awaiting ids.

    With ``refused`` (a guard tripped), every call is recorded completed with a
    failure saying why it was not run. Otherwise a call to an unknown tool is
    completed with a failure naming the registered tools, a call needing
    approval awaits a decision, and the rest are pending (to be run).
    """
    added: dict[str, ToolCallRecord] = {}
    opened, awaiting = turn.open_call_ids, turn.awaiting_ids
    tools = state.tools
    for call_id, request in requests.items():
        tool = tools.get(request.name)
        status: ToolCallStatus = "completed"
        result: ToolFailure | None = None
        if refused:
            result = ToolFailure(error=f"not run: {refused}")
        elif tool is None:
            known = ", ".join(sorted(tools.keys())) or "none"
            result = ToolFailure(
                error=f"tool {request.name!r} is not registered (tool call {call_id!r}); registered tools: {known}"
            )
        elif tool.requires_approval:
            status = "awaiting-approval"
            awaiting += (call_id,)
        else:
            status = "pending"
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
        )
    # One update per map: the batch shares the path copies a set per call would repeat.
    log = state.tool_call_log
    calls = state.tool_calls.update(added)
    log = log.update(dict(enumerate(added, start=len(log))))
    return calls, log, opened, awaiting
