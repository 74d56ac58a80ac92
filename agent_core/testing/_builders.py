"""One builder per input kind: draw an input that a given state accepts.

Each builder assumes its kind is in ``next_input_kinds(state)`` (something to act on).
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st

from .._compaction._tokens import CHARS_PER_TOKEN
from .._handoff import active_agent, active_tools, handoff_targets
from .._inputs import (
    TEXT_MARKER,
    TOOL_CALL_MARKER,
    AgentInput,
    AnswerRejected,
    ChildSpent,
    CompleteReAct,
    ContextCompacted,
    ContextWindowExpanded,
    ContinueReAct,
    HandedOff,
    HistoryToolCallsAdded,
    LlmCallFailed,
    LlmMessageCompleted,
    LlmMessageStarted,
    PoolVerdictReceived,
    ProviderItem,
    ReActCancelled,
    ReActObserved,
    SessionStarted,
    Spend,
    TimerFired,
    ToolCallApproved,
    ToolCallCompleted,
    ToolCallDenied,
    ToolCallInputProvided,
    ToolCallInputRequired,
    ToolCallRequest,
    ToolCallStarted,
    ToolCallTaskCreated,
    UserMessageReceived,
    WorkflowActionTaken,
)
from .._state import AgentState, Message
from ._draw import actions_now, due_at, fresh_id, later, message_taken, pick, recent_calls
from ._kinds import session_started
from ._per_kind import per_kind
from ._values import (
    EPOCH_MS,
    OUTPUTS,
    PARAMETERS,
    VERDICT_PARAMETERS,
    input_objects,
    opaque_items,
    output_problems,
    texts,
    tool_results,
    usages,
)


def _user_message(draw: st.DrawFn, state: AgentState) -> AgentInput:
    at = later(draw, state)
    message_id = fresh_id(draw, state, "m", message_taken(state))
    return UserMessageReceived(timestamp=at, message_id=message_id, content=draw(_TEXTS))


def _message_started(draw: st.DrawFn, state: AgentState) -> AgentInput:
    at = later(draw, state)
    return LlmMessageStarted(timestamp=at, message_id=fresh_id(draw, state, "m", message_taken(state)))


def _message_completed(draw: st.DrawFn, state: AgentState) -> AgentInput:
    assert state.turn is not None
    at = later(draw, state)
    return LlmMessageCompleted(timestamp=at, message_id=state.turn.streaming_message_id, content=draw(_TEXTS))


def _observed(draw: st.DrawFn, state: AgentState) -> AgentInput:
    at = later(draw, state)
    called = at - draw(st.integers(0, min(at, 30_000)))
    usage = draw(_USAGES)
    cost = draw(_COSTS)
    opaque = draw(_ITEMS)
    answer = _answer(state)
    if draw(st.integers(0, 4)) == 4:
        items = _with_text(opaque, answer) if opaque and answer is not None and not answer.items else ()
        output = pick(draw, OUTPUTS) if state.config.output_schema else ""
        return ReActObserved(
            timestamp=at,
            called_llm_at=called,
            observation=CompleteReAct(),
            usage=usage,
            items=items,
            output=output,
            cost=cost,
        )
    requests: dict[str, ToolCallRequest] = {}
    arguments = PARAMETERS + VERDICT_PARAMETERS if state.config.rules else PARAMETERS
    for _ in range(draw(st.integers(1, 3))):
        call_id = fresh_id(draw, state, "t", lambda i: i in state.tool_calls or i in requests)
        # Mostly registered tools, now and then a name the session does not know.
        tools = active_tools(state)
        unknown = not tools or draw(st.integers(0, 7)) == 7
        name = "no_such_tool" if unknown else pick(draw, list(tools))
        requests[call_id] = ToolCallRequest(name=name, parameters=pick(draw, arguments))
    markers = tuple(ProviderItem(kind=TOOL_CALL_MARKER, provider="anthropic", ref=call_id) for call_id in requests)
    return ReActObserved(
        timestamp=at,
        called_llm_at=called,
        observation=ContinueReAct(tool_calls=requests),
        usage=usage,
        items=opaque + markers if opaque else (),
        cost=cost,
    )


def _answer(state: AgentState) -> Message | None:
    """The newest message when it is a completed assistant message (a model call's answer to mark)."""
    messages = state.messages
    last = messages[-1] if len(messages) else None
    return last if last is not None and last.role == "assistant" and not last.streaming else None


def _with_text(opaque: tuple[ProviderItem, ...], answer: Message) -> tuple[ProviderItem, ...]:
    text = ProviderItem(kind=TEXT_MARKER, provider="anthropic", ref=answer.id, chars=len(answer.content))
    return (*opaque, text)


def _failed(draw: st.DrawFn, state: AgentState) -> AgentInput:
    return LlmCallFailed(
        timestamp=later(draw, state),
        error=draw(_TEXTS),
        retryable=draw(_RETRYABLE),
        retry_after_ms=draw(_RETRY_AFTER),
        cost=draw(_COSTS),
    )


def _open_id(draw: st.DrawFn, state: AgentState, status: str | None = None) -> str:
    assert state.turn is not None
    calls = state.tool_calls
    return pick(
        draw,
        [
            i
            for i in state.turn.open_call_ids
            if (status is None or calls[i].status == status) and calls[i].retry_at is None  # not backing off
        ],
    )


def _started(draw: st.DrawFn, state: AgentState) -> AgentInput:
    return ToolCallStarted(timestamp=later(draw, state), tool_call_id=_open_id(draw, state, "pending"))


def _completed(draw: st.DrawFn, state: AgentState) -> AgentInput:
    at = later(draw, state)
    return ToolCallCompleted(timestamp=at, tool_call_id=_open_id(draw, state), result=draw(_RESULTS))


def _awaiting_id(draw: st.DrawFn, state: AgentState, status: str) -> str:
    assert state.turn is not None
    calls = state.tool_calls
    return pick(draw, [i for i in state.turn.awaiting_ids if calls[i].status == status])


def _approved(draw: st.DrawFn, state: AgentState) -> AgentInput:
    return ToolCallApproved(timestamp=later(draw, state), tool_call_id=_awaiting_id(draw, state, "awaiting-approval"))


def _denied(draw: st.DrawFn, state: AgentState) -> AgentInput:
    at = later(draw, state)
    call_id = _awaiting_id(draw, state, "awaiting-approval")
    return ToolCallDenied(timestamp=at, tool_call_id=call_id, reason=draw(_TEXTS))


def _input_required(draw: st.DrawFn, state: AgentState) -> AgentInput:
    at = later(draw, state)
    call_id = _open_id(draw, state, "running")
    return ToolCallInputRequired(
        timestamp=at, tool_call_id=call_id, requests=draw(_INPUT_OBJECTS), request_state=draw(_REQUEST_STATES)
    )


def _input_provided(draw: st.DrawFn, state: AgentState) -> AgentInput:
    at = later(draw, state)
    call_id = _awaiting_id(draw, state, "awaiting-input")
    return ToolCallInputProvided(timestamp=at, tool_call_id=call_id, responses=draw(_INPUT_OBJECTS))


def _task_created(draw: st.DrawFn, state: AgentState) -> AgentInput:
    assert state.turn is not None
    calls = state.tool_calls
    call_id = pick(draw, [i for i in state.turn.open_call_ids if calls[i].status == "running" and not calls[i].task_id])
    return ToolCallTaskCreated(timestamp=later(draw, state), tool_call_id=call_id, task_id=f"task-{call_id}")


def _child_spent(draw: st.DrawFn, state: AgentState) -> AgentInput:
    # A running call's child reports what it spent in all: at least its last report, now and then the same.
    assert state.turn is not None
    calls = state.tool_calls
    call_id = pick(draw, [i for i in state.turn.open_call_ids if calls[i].status == "running"])
    before = calls[call_id].child_spent or Spend()
    more = draw(st.integers(0, 3))
    spent = Spend(
        model_calls=before.model_calls + more,
        tool_calls=before.tool_calls + draw(st.integers(0, 3)),
        tokens=before.tokens + draw(st.integers(0, 500)) * more,
        cost=before.cost + draw(st.integers(0, 5_000_000)) * more,
        unpriced=before.unpriced or (more > 0 and draw(st.booleans())),
    )
    return ChildSpent(timestamp=later(draw, state), tool_call_id=call_id, spent=spent)


def _expanded(draw: st.DrawFn, state: AgentState) -> AgentInput:
    return ContextWindowExpanded(timestamp=later(draw, state), usage=draw(_USAGES), cost=draw(_COSTS))


def _handed_off(draw: st.DrawFn, state: AgentState) -> AgentInput:
    to_agent = pick(draw, list(handoff_targets(state)))
    reason = draw(st.sampled_from(("", "billing question")))
    return HandedOff(
        timestamp=later(draw, state),
        from_agent=active_agent(state),
        to_agent=to_agent,
        reason=reason,
        usage=draw(_USAGES),
        cost=draw(_COSTS),
    )


def _history(draw: st.DrawFn, state: AgentState) -> AgentInput:
    # Recent calls of the session (any turn), with repeats; the empty request is valid too.
    at = later(draw, state)
    recent = recent_calls(state)
    chosen = tuple(pick(draw, recent) for _ in range(draw(st.integers(0, 4)))) if recent else ()
    return HistoryToolCallsAdded(timestamp=at, tool_call_ids=chosen, usage=draw(_USAGES), cost=draw(_COSTS))


def _timer(draw: st.DrawFn, state: AgentState) -> AgentInput:
    assert state.turn is not None
    due = due_at(state.turn, state.tool_calls)
    assert due is not None
    # A timer at exactly its time is due; the runner may also fire it a little late.
    return TimerFired(timestamp=max(state.timestamp, due) + draw(st.one_of(st.just(0), st.integers(1, 1_000))))


def _cancelled(draw: st.DrawFn, state: AgentState) -> AgentInput:
    return ReActCancelled(timestamp=later(draw, state), reason=draw(_TEXTS))


def _action(draw: st.DrawFn, state: AgentState) -> AgentInput:
    at = later(draw, state)
    actions = actions_now(state, at)
    if not actions:  # a guard on the time refused the later time; the state's own time passed it
        at, actions = state.timestamp, actions_now(state, state.timestamp)
    return WorkflowActionTaken(timestamp=at, action=pick(draw, actions))


def _rejected(draw: st.DrawFn, state: AgentState) -> AgentInput:
    at = later(draw, state)
    invalid = bool(state.config.output_schema) and draw(st.booleans())
    return AnswerRejected(
        timestamp=at,
        called_llm_at=at - draw(st.integers(0, min(at, 30_000))),
        reason="invalid-output" if invalid else "empty-answer",
        message_id=fresh_id(draw, state, "n", message_taken(state)),
        problems=draw(_PROBLEMS) if invalid else (),
        usage=draw(_USAGES),
        cost=draw(_COSTS),
    )


def _verdict(draw: st.DrawFn, state: AgentState) -> AgentInput:
    granted = draw(st.sampled_from((True, True, True, False)))
    return PoolVerdictReceived(
        timestamp=later(draw, state),
        pool=state.config.budget_pool,
        reservation_id=f"r{state.step}",
        amount=draw(st.integers(0, 50_000_000)),
        granted=granted,
        detail="" if granted else "the pool is spent",
    )


def _compacted(draw: st.DrawFn, state: AgentState) -> AgentInput:
    compaction = state.compaction
    assert compaction is not None and compaction.request is not None
    request = compaction.request
    at = later(draw, state)
    policy = state.config.compaction
    assert policy is not None
    summary = ("summary " + draw(_TEXTS))[: policy.summary_max_tokens * CHARS_PER_TOKEN]  # what summary_problem allows
    return ContextCompacted(
        timestamp=at,
        called_llm_at=state.timestamp,
        summary=summary,
        messages=request.messages,
        tool_call_ids=request.tool_call_ids,
        usage=draw(_USAGES),
        cost=draw(_COSTS),
    )


def _session(draw: st.DrawFn, state: AgentState) -> AgentInput:
    return draw(session_started(timestamp=st.integers(EPOCH_MS, EPOCH_MS + 10**9)))


_TEXTS = texts()
_USAGES = usages()
# Mostly priced (now and then a call no price table knows), a few cents at most.
_COSTS = st.sampled_from((None, 0)) | st.integers(0, 20_000_000) | st.integers(0, 20_000_000)
_ITEMS = opaque_items()
_RESULTS = tool_results()
_INPUT_OBJECTS = input_objects()
_REQUEST_STATES = st.sampled_from(("", "state-1"))
_PROBLEMS = output_problems()
_RETRY_AFTER = st.none() | st.integers(0, 60_000)
_RETRYABLE = st.sampled_from((True, True, False))  # outages and rate limits are the usual failure

BUILDERS: dict[str, Callable[[st.DrawFn, AgentState], AgentInput]] = per_kind(
    {
        SessionStarted: _session,
        UserMessageReceived: _user_message,
        LlmMessageStarted: _message_started,
        LlmMessageCompleted: _message_completed,
        ReActObserved: _observed,
        LlmCallFailed: _failed,
        ToolCallStarted: _started,
        ToolCallCompleted: _completed,
        ToolCallApproved: _approved,
        ToolCallDenied: _denied,
        ContextWindowExpanded: _expanded,
        HistoryToolCallsAdded: _history,
        TimerFired: _timer,
        ReActCancelled: _cancelled,
        WorkflowActionTaken: _action,
        ToolCallInputRequired: _input_required,
        ToolCallInputProvided: _input_provided,
        ToolCallTaskCreated: _task_created,
        AnswerRejected: _rejected,
        PoolVerdictReceived: _verdict,
        ContextCompacted: _compacted,
        ChildSpent: _child_spent,
        HandedOff: _handed_off,
    },
    "builders",
)
