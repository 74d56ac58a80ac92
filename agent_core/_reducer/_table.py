"""The one table of input kinds: for each, its class, its handler, what it may write, when it is valid.

Theory of operation. A session is in one :class:`~agent_core.Phase` (derived
from the state, never stored). An input whose kind does not list the current
phase is refused before its handler runs; one that does goes to its handler,
which may still refuse it with a guard (an unknown id, a timer not yet due).
An accepted input changes only the fields of its write set (a property test
holds every handler to it); ``timestamp`` and ``step`` change on every one.

Every other table keyed by input kind is built from :data:`INPUT_KINDS`: the
dispatcher, ``WRITE_SETS``, ``VALID_INPUTS``, and the testing kit's strategies
and builders (which check at import that they cover every row).
``tests/test_reducer_tables.py`` checks that every tag appears everywhere. A
new input kind is one handler module, one row here, and one test module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import msgspec

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
    tag_of,
)
from .._phase import Phase
from .._state import AgentState
from .on_answer_rejected import on_answer_rejected
from .on_child_spent import on_child_spent
from .on_context_compacted import on_context_compacted
from .on_context_window_expanded import on_context_window_expanded
from .on_handed_off import on_handed_off
from .on_history_tool_calls_added import on_history_tool_calls_added
from .on_llm_call_failed import on_llm_call_failed
from .on_llm_message_completed import on_llm_message_completed
from .on_llm_message_started import on_llm_message_started
from .on_pool_verdict_received import on_pool_verdict_received
from .on_re_act_cancelled import on_re_act_cancelled
from .on_re_act_observed import on_re_act_observed
from .on_session_started import on_session_started
from .on_timer_fired import on_timer_fired
from .on_tool_call_approved import on_tool_call_approved
from .on_tool_call_completed import on_tool_call_completed
from .on_tool_call_denied import on_tool_call_denied
from .on_tool_call_input_provided import on_tool_call_input_provided
from .on_tool_call_input_required import on_tool_call_input_required
from .on_tool_call_started import on_tool_call_started
from .on_tool_call_task_created import on_tool_call_task_created
from .on_user_message_received import on_user_message_received
from .on_workflow_action_taken import on_workflow_action_taken


class InputKind(msgspec.Struct, frozen=True):
    """One row of :data:`INPUT_KINDS`: an input class, its handler, its write set and the phases that accept it."""

    type: type[AgentInput]
    handler: Callable[[AgentState, Any], AgentState]
    writes: frozenset[str]
    phases: frozenset[Phase]

    @property
    def tag(self) -> str:
        """The kind's wire tag, e.g. ``"tool-call-completed"``."""
        return tag_of(self.type)


def _row(
    input_type: type[AgentInput],
    handler: Callable[[AgentState, Any], AgentState],
    writes: Iterable[str],
    phases: Iterable[Phase],
) -> InputKind:
    return InputKind(input_type, handler, _ALWAYS | frozenset(writes), frozenset(phases))


_ALWAYS = frozenset({"timestamp", "step"})
# Ending a turn closes dangling calls and a streaming message, records the
# outcome, and may open the next turn with queued messages.
# Deriving the next model call may compact the context.
_ENDS_TURN = (
    "tool_calls",
    "messages",
    "message_index",
    "turn",
    "turns",
    "last_outcome",
    "queued",
    "past_calls",
    "compaction",
)
_IN_A_TURN = (Phase.THINKING, Phase.ACTING, Phase.AWAITING_APPROVAL, Phase.RETRYING)
_ANY_TIME = (Phase.IDLE, *_IN_A_TURN)
_THINKING = (Phase.THINKING,)
_DECIDING = (Phase.ACTING, Phase.AWAITING_APPROVAL)
_SPENDS = ("input_tokens", "output_tokens", "cost")  # a model call's tokens and cost, counted by the session
_OBSERVED = (*_ENDS_TURN, "tool_call_log", "called_llm_at", *_SPENDS)

INPUT_KINDS: tuple[InputKind, ...] = (
    _row(
        SessionStarted,
        on_session_started,
        ("started", "session_id", "config", "tools", "workflow_state", "compaction"),
        (Phase.NOT_STARTED,),
    ),
    _row(UserMessageReceived, on_user_message_received, _ENDS_TURN, _ANY_TIME),
    _row(LlmMessageStarted, on_llm_message_started, ("messages", "message_index", "turn"), _THINKING),
    _row(LlmMessageCompleted, on_llm_message_completed, ("messages", "turn"), _THINKING),
    _row(ReActObserved, on_re_act_observed, _OBSERVED, _THINKING),
    _row(LlmCallFailed, on_llm_call_failed, (*_ENDS_TURN, "cost"), _THINKING),
    _row(ToolCallStarted, on_tool_call_started, ("tool_calls",), (Phase.ACTING,)),
    _row(ToolCallCompleted, on_tool_call_completed, (*_ENDS_TURN, "workflow_state", "audit"), (Phase.ACTING,)),
    _row(ToolCallApproved, on_tool_call_approved, ("tool_calls", "turn"), _DECIDING),
    _row(ToolCallDenied, on_tool_call_denied, _ENDS_TURN, _DECIDING),
    _row(ContextWindowExpanded, on_context_window_expanded, (*_ENDS_TURN, *_SPENDS), _THINKING),
    _row(HistoryToolCallsAdded, on_history_tool_calls_added, (*_ENDS_TURN, *_SPENDS), _THINKING),
    _row(TimerFired, on_timer_fired, _ENDS_TURN, _IN_A_TURN),
    _row(ReActCancelled, on_re_act_cancelled, _ENDS_TURN, _IN_A_TURN),
    _row(WorkflowActionTaken, on_workflow_action_taken, ("workflow_state", "audit", "turn"), _ANY_TIME),
    _row(ToolCallInputRequired, on_tool_call_input_required, _ENDS_TURN, (Phase.ACTING,)),
    _row(ToolCallInputProvided, on_tool_call_input_provided, ("tool_calls", "turn"), _DECIDING),
    _row(ToolCallTaskCreated, on_tool_call_task_created, ("tool_calls",), (Phase.ACTING,)),
    _row(AnswerRejected, on_answer_rejected, _OBSERVED, _THINKING),
    _row(PoolVerdictReceived, on_pool_verdict_received, _ENDS_TURN, _THINKING),
    _row(ContextCompacted, on_context_compacted, (*_ENDS_TURN, *_SPENDS), _THINKING),
    _row(ChildSpent, on_child_spent, (*_ENDS_TURN, "children_spent"), _DECIDING),
    _row(HandedOff, on_handed_off, (*_ENDS_TURN, *_SPENDS, "agent"), _THINKING),
)
"""Every input kind, in the order of the design's table: the single source of the tables below."""

HANDLERS: dict[type[AgentInput], Callable[[AgentState, Any], AgentState]] = {
    kind.type: kind.handler for kind in INPUT_KINDS
}
"""The dispatcher's table: input class -> handler (one dict lookup instead of a chain of isinstance checks)."""

WRITE_SETS: dict[str, frozenset[str]] = {kind.tag: kind.writes for kind in INPUT_KINDS}
"""For each input tag, the :class:`AgentState` fields its handler may change."""

VALID_INPUTS: dict[Phase, frozenset[str]] = {
    current: frozenset(kind.tag for kind in INPUT_KINDS if current in kind.phases) for current in Phase
}
"""The input types each phase may accept. A listed type can still be refused by a
guard (an unknown id, a timer that is not due); an unlisted one always is."""
