"""``re-act-observed``: a model call finished, asking for tool calls or completing the turn."""

from __future__ import annotations

from msgspec.structs import replace

from .._inputs import CompleteReAct, ReActObserved, ToolCallRequest, ToolFailure
from .._state import AgentState, ToolCallRecord, ToolCallStatus, Turn
from ._common import end_turn, exhaust, reject, require_thinking, settle


def on_re_act_observed(state: AgentState, inp: ReActObserved) -> AgentState:
    """Count the call and its tokens; record requested tool calls, or close the turn as completed.

    Guards, in order: tools disabled for a final answer, the tool-call budget,
    stuck detection. A guard that trips records the batch as failed (never run)
    and ends the turn, or asks for a final answer.
    """
    turn = require_thinking(state, inp)
    _validate(state, inp, turn)
    step = state.step + 1
    usage = inp.usage
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
    if isinstance(observation, CompleteReAct):
        return end_turn(state, "completed", turn.exhausted)
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
    repeats, stuck = _count_repeats(turn, requests, state.config.max_identical_tool_calls)
    if stuck:
        return exhaust(_record_requests(state, turn, requests, stuck), "stuck", stuck)
    return settle(_record_requests(state, replace(turn, repeats=repeats), requests))


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


def _count_repeats(
    turn: Turn, requests: dict[str, ToolCallRequest], threshold: int
) -> tuple[tuple[tuple[str, str, int], ...], str]:
    counts = {(name, parameters): n for name, parameters, n in turn.repeats}
    for request in requests.values():
        key = (request.name, request.parameters)
        counts[key] = counts.get(key, 0) + 1
        if counts[key] >= threshold:
            return (), (
                f"tool {request.name!r} was asked {counts[key]} times in this turn with the same parameters "
                f"{request.parameters}; the agent looks stuck"
            )
    return tuple((name, parameters, n) for (name, parameters), n in counts.items()), ""


def _record_requests(
    state: AgentState, turn: Turn, requests: dict[str, ToolCallRequest], refused: str = ""
) -> AgentState:
    """Record a batch of requested calls in the turn.

    With ``refused`` (a guard tripped), every call is recorded completed with a
    failure saying why it was not run. Otherwise a call to an unknown tool is
    completed with a failure naming the registered tools, a call needing
    approval awaits a decision, and the rest are pending (to be run).
    """
    calls, log = state.tool_calls, state.tool_call_log
    position = len(log)
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
        calls = calls.set(
            call_id,
            ToolCallRecord(
                id=call_id,
                name=request.name,
                parameters=request.parameters,
                status=status,
                result=result,
                turn=turn.number,
                seq=state.step,
                requested_at=state.timestamp,
                completed_at=state.timestamp if result is not None else 0,
            ),
        )
        log = log.set(position, call_id)
        position += 1
    turn = replace(
        turn,
        tool_call_ids=turn.tool_call_ids + tuple(requests),
        open_call_ids=opened,
        awaiting_ids=awaiting,
        tool_call_count=turn.tool_call_count + (0 if refused else len(requests)),
    )
    return replace(state, tool_calls=calls, tool_call_log=log, turn=turn)
