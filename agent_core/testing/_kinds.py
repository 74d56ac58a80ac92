"""One strategy per input kind, and :func:`inputs` for any of them.

Each draws a structurally valid input with arbitrary ids and values; a
keyword fixes a field to a value or draws it from a strategy.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from .._config import AgentConfig, ToolDefinition
from .._inputs import (
    AgentInput,
    AnswerRejected,
    ChildSpent,
    ContextCompacted,
    ContextWindowExpanded,
    HandedOff,
    HistoryToolCallsAdded,
    LlmCallFailed,
    LlmMessageCompleted,
    LlmMessageStarted,
    Observation,
    PoolVerdictReceived,
    ReActCancelled,
    ReActObserved,
    SessionStarted,
    TimerFired,
    ToolCallApproved,
    ToolCallCompleted,
    ToolCallDenied,
    ToolCallInputProvided,
    ToolCallInputRequired,
    ToolCallStarted,
    ToolCallTaskCreated,
    UserMessageReceived,
    WorkflowActionTaken,
)
from ._per_kind import per_kind
from ._values import (
    agent_configs,
    field,
    ids,
    input_objects,
    observations,
    output_problems,
    spends,
    texts,
    timestamps,
    tool_lists,
    tool_results,
    usages,
)


def _at(timestamp: int | SearchStrategy[int] | None) -> SearchStrategy[int]:
    return field(timestamp, timestamps())


Ts = int | SearchStrategy[int] | None
Str = str | SearchStrategy[str] | None


def session_started(
    *,
    timestamp: Ts = None,
    session_id: Str = None,
    config: AgentConfig | SearchStrategy[AgentConfig] | None = None,
    tools: tuple[ToolDefinition, ...] | SearchStrategy[tuple[ToolDefinition, ...]] | None = None,
) -> SearchStrategy[SessionStarted]:
    """``session-started`` with a drawn configuration and tools (current schema version)."""
    return st.builds(
        SessionStarted,
        timestamp=_at(timestamp),
        session_id=field(session_id, ids()),
        config=field(config, agent_configs()),
        tools=field(tools, tool_lists()),
    )


def user_message_received(*, timestamp: Ts = None, message_id: Str = None) -> SearchStrategy[UserMessageReceived]:
    """``user-message-received``."""
    return st.builds(
        UserMessageReceived, timestamp=_at(timestamp), message_id=field(message_id, ids()), content=texts()
    )


def llm_message_started(*, timestamp: Ts = None, message_id: Str = None) -> SearchStrategy[LlmMessageStarted]:
    """``llm-message-started``."""
    return st.builds(LlmMessageStarted, timestamp=_at(timestamp), message_id=field(message_id, ids()))


def llm_message_completed(*, timestamp: Ts = None, message_id: Str = None) -> SearchStrategy[LlmMessageCompleted]:
    """``llm-message-completed``."""
    return st.builds(
        LlmMessageCompleted, timestamp=_at(timestamp), message_id=field(message_id, ids()), content=texts()
    )


def re_act_observed(
    *,
    timestamp: Ts = None,
    called_llm_at: Ts = None,
    observation: Observation | SearchStrategy[Observation] | None = None,
) -> SearchStrategy[ReActObserved]:
    """``re-act-observed``; ``called_llm_at`` defaults to a time at or before ``timestamp``."""

    @st.composite
    def build(draw: st.DrawFn) -> ReActObserved:
        at = draw(_at(timestamp))
        return ReActObserved(
            timestamp=at,
            called_llm_at=draw(field(called_llm_at, st.integers(max(0, at - 60_000), at))),
            observation=draw(field(observation, observations())),
            usage=draw(usages()),
            cost=draw(st.none() | st.integers(0, 50_000_000)),
        )

    return build()


def llm_call_failed(*, timestamp: Ts = None, retryable: bool | None = None) -> SearchStrategy[LlmCallFailed]:
    """``llm-call-failed``, retryable or not, with or without a server's ``retry_after_ms``."""
    return st.builds(
        LlmCallFailed,
        timestamp=_at(timestamp),
        error=texts(),
        retryable=field(retryable, st.booleans()),
        retry_after_ms=st.none() | st.integers(0, 60_000),
        cost=st.none() | st.integers(0, 50_000_000),
    )


def tool_call_started(*, timestamp: Ts = None, tool_call_id: Str = None) -> SearchStrategy[ToolCallStarted]:
    """``tool-call-started``."""
    return st.builds(ToolCallStarted, timestamp=_at(timestamp), tool_call_id=field(tool_call_id, ids()))


def tool_call_completed(*, timestamp: Ts = None, tool_call_id: Str = None) -> SearchStrategy[ToolCallCompleted]:
    """``tool-call-completed`` with a success or a failure."""
    return st.builds(
        ToolCallCompleted, timestamp=_at(timestamp), tool_call_id=field(tool_call_id, ids()), result=tool_results()
    )


def tool_call_approved(*, timestamp: Ts = None, tool_call_id: Str = None) -> SearchStrategy[ToolCallApproved]:
    """``tool-call-approved``."""
    return st.builds(ToolCallApproved, timestamp=_at(timestamp), tool_call_id=field(tool_call_id, ids()))


def tool_call_denied(*, timestamp: Ts = None, tool_call_id: Str = None) -> SearchStrategy[ToolCallDenied]:
    """``tool-call-denied``, with or without a reason."""
    return st.builds(ToolCallDenied, timestamp=_at(timestamp), tool_call_id=field(tool_call_id, ids()), reason=texts())


def context_window_expanded(*, timestamp: Ts = None) -> SearchStrategy[ContextWindowExpanded]:
    """``context-window-expanded`` (internal tool)."""
    return st.builds(ContextWindowExpanded, timestamp=_at(timestamp))


def handed_off(*, timestamp: Ts = None) -> SearchStrategy[HandedOff]:
    """``handed-off`` between agents of arbitrary names, with or without a reason and a tool call id."""
    names = st.sampled_from(("front", "desk", "back", "nobody"))
    return st.builds(
        HandedOff, timestamp=_at(timestamp), from_agent=names, to_agent=names, reason=texts(), tool_call_id=ids()
    )


def history_tool_calls_added(
    *, timestamp: Ts = None, tool_call_ids: tuple[str, ...] | SearchStrategy[tuple[str, ...]] | None = None
) -> SearchStrategy[HistoryToolCallsAdded]:
    """``history-tool-calls-added`` (internal tool); drawn ids may repeat."""
    return st.builds(
        HistoryToolCallsAdded,
        timestamp=_at(timestamp),
        tool_call_ids=field(tool_call_ids, st.lists(ids(), max_size=4).map(tuple)),
    )


def timer_fired(*, timestamp: Ts = None) -> SearchStrategy[TimerFired]:
    """``timer-fired``."""
    return st.builds(TimerFired, timestamp=_at(timestamp))


def re_act_cancelled(*, timestamp: Ts = None) -> SearchStrategy[ReActCancelled]:
    """``re-act-cancelled``, with or without a reason."""
    return st.builds(ReActCancelled, timestamp=_at(timestamp), reason=texts())


def workflow_action_taken(*, timestamp: Ts = None, action: Str = None) -> SearchStrategy[WorkflowActionTaken]:
    """``workflow-action-taken``, naming an arbitrary action."""
    return st.builds(WorkflowActionTaken, timestamp=_at(timestamp), action=field(action, ids()))


def tool_call_input_required(
    *, timestamp: Ts = None, tool_call_id: Str = None
) -> SearchStrategy[ToolCallInputRequired]:
    """``tool-call-input-required`` with a JSON object of questions and, or not, the tool's state."""
    return st.builds(
        ToolCallInputRequired,
        timestamp=_at(timestamp),
        tool_call_id=field(tool_call_id, ids()),
        requests=input_objects(),
        request_state=st.just("") | ids(),
    )


def tool_call_input_provided(
    *, timestamp: Ts = None, tool_call_id: Str = None
) -> SearchStrategy[ToolCallInputProvided]:
    """``tool-call-input-provided`` with a JSON object of answers."""
    return st.builds(
        ToolCallInputProvided,
        timestamp=_at(timestamp),
        tool_call_id=field(tool_call_id, ids()),
        responses=input_objects(),
    )


def tool_call_task_created(
    *, timestamp: Ts = None, tool_call_id: Str = None, task_id: Str = None
) -> SearchStrategy[ToolCallTaskCreated]:
    """``tool-call-task-created``."""
    return st.builds(
        ToolCallTaskCreated,
        timestamp=_at(timestamp),
        tool_call_id=field(tool_call_id, ids()),
        task_id=field(task_id, ids()),
    )


def answer_rejected(*, timestamp: Ts = None, message_id: Str = None) -> SearchStrategy[AnswerRejected]:
    """``answer-rejected``: an output that did not validate (with problems) or an empty reply."""

    @st.composite
    def build(draw: st.DrawFn) -> AnswerRejected:
        at = draw(_at(timestamp))
        invalid = draw(st.booleans())
        return AnswerRejected(
            timestamp=at,
            called_llm_at=draw(st.integers(max(0, at - 60_000), at)),
            reason="invalid-output" if invalid else "empty-answer",
            message_id=draw(field(message_id, ids())),
            problems=draw(output_problems()) if invalid else (),
            usage=draw(usages()),
            cost=draw(st.none() | st.integers(0, 50_000_000)),
        )

    return build()


def pool_verdict_received(*, timestamp: Ts = None, pool: Str = None) -> SearchStrategy[PoolVerdictReceived]:
    """``pool-verdict-received``, granted or refused, for an arbitrary pool."""
    return st.builds(
        PoolVerdictReceived,
        timestamp=_at(timestamp),
        pool=field(pool, ids()),
        reservation_id=ids(),
        amount=st.integers(0, 10**9),
        granted=st.booleans(),
        detail=texts(),
    )


def context_compacted(
    *, timestamp: Ts = None, messages: int | SearchStrategy[int] | None = None
) -> SearchStrategy[ContextCompacted]:
    """``context-compacted``, with an arbitrary summary and range."""
    return st.builds(
        ContextCompacted,
        timestamp=_at(timestamp),
        called_llm_at=_at(None),
        summary=texts(),
        messages=field(messages, st.integers(0, 8)),
        tool_call_ids=st.lists(ids(), max_size=3).map(tuple),
        usage=usages(),
        cost=st.none() | st.integers(0, 50_000_000),
    )


def child_spent(*, timestamp: Ts = None, tool_call_id: Str = None) -> SearchStrategy[ChildSpent]:
    """``child-spent``: what the child session of a call has spent so far."""
    return st.builds(ChildSpent, timestamp=_at(timestamp), tool_call_id=field(tool_call_id, ids()), spent=spends())


BY_TAG: dict[str, Any] = per_kind(
    {
        SessionStarted: session_started,
        UserMessageReceived: user_message_received,
        LlmMessageStarted: llm_message_started,
        LlmMessageCompleted: llm_message_completed,
        ReActObserved: re_act_observed,
        LlmCallFailed: llm_call_failed,
        ToolCallStarted: tool_call_started,
        ToolCallCompleted: tool_call_completed,
        ToolCallApproved: tool_call_approved,
        ToolCallDenied: tool_call_denied,
        ContextWindowExpanded: context_window_expanded,
        HistoryToolCallsAdded: history_tool_calls_added,
        TimerFired: timer_fired,
        ReActCancelled: re_act_cancelled,
        WorkflowActionTaken: workflow_action_taken,
        ToolCallInputRequired: tool_call_input_required,
        ToolCallInputProvided: tool_call_input_provided,
        ToolCallTaskCreated: tool_call_task_created,
        AnswerRejected: answer_rejected,
        PoolVerdictReceived: pool_verdict_received,
        ContextCompacted: context_compacted,
        ChildSpent: child_spent,
        HandedOff: handed_off,
    },
    "input strategies",
)
"""The input strategy of each tag; each accepts at least ``timestamp=``."""


def inputs(*, timestamp: Ts = None) -> SearchStrategy[AgentInput]:
    """Any input of any kind, with arbitrary ids and values (most are rejected by most states)."""
    return st.one_of(*(strategy(timestamp=timestamp) for strategy in BY_TAG.values()))
