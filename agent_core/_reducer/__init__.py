"""The reducer: one handler per input kind, a dispatcher, and what each handler may write."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._errors import InvalidInput, Rejection
from .._inputs import (
    AgentInput,
    ContextWindowExpanded,
    HistoryToolCallsAdded,
    LlmCallFailed,
    LlmMessageCompleted,
    LlmMessageStarted,
    ReActCancelled,
    ReActObserved,
    SessionStarted,
    TimerFired,
    ToolCallApproved,
    ToolCallCompleted,
    ToolCallDenied,
    ToolCallStarted,
    UserMessageReceived,
)
from .._state import AgentState
from ._common import reject, reject_phase
from .on_context_window_expanded import on_context_window_expanded
from .on_history_tool_calls_added import on_history_tool_calls_added
from .on_llm_call_failed import on_llm_call_failed
from .on_llm_message_completed import on_llm_message_completed
from .on_llm_message_started import on_llm_message_started
from .on_re_act_cancelled import on_re_act_cancelled
from .on_re_act_observed import on_re_act_observed
from .on_session_started import on_session_started
from .on_timer_fired import on_timer_fired
from .on_tool_call_approved import on_tool_call_approved
from .on_tool_call_completed import on_tool_call_completed
from .on_tool_call_denied import on_tool_call_denied
from .on_tool_call_started import on_tool_call_started
from .on_user_message_received import on_user_message_received
from .write_sets import WRITE_SETS

# A dict keyed by the input's class: one lookup (~70 ns) instead of a chain of
# isinstance checks. tests/test_reducer_tables.py checks it covers every input.
_HANDLERS: dict[type, Callable[[AgentState, Any], AgentState]] = {
    SessionStarted: on_session_started,
    UserMessageReceived: on_user_message_received,
    LlmMessageStarted: on_llm_message_started,
    LlmMessageCompleted: on_llm_message_completed,
    ReActObserved: on_re_act_observed,
    LlmCallFailed: on_llm_call_failed,
    ToolCallStarted: on_tool_call_started,
    ToolCallCompleted: on_tool_call_completed,
    ToolCallApproved: on_tool_call_approved,
    ToolCallDenied: on_tool_call_denied,
    ContextWindowExpanded: on_context_window_expanded,
    HistoryToolCallsAdded: on_history_tool_calls_added,
    TimerFired: on_timer_fired,
    ReActCancelled: on_re_act_cancelled,
}


def transition(state: AgentState, inp: AgentInput) -> AgentState:
    """Apply one input: pure, deterministic, total over valid inputs.

    Raises :class:`InvalidInput` (with a :class:`Rejection`) for an input the
    state cannot accept: wrong phase, unknown or repeated ids, time going
    backwards, a decision on a call that needs none... Nothing is ignored.
    """
    handler = _HANDLERS.get(type(inp))
    if handler is None:
        raise TypeError(f"expected an agent_core input (one of the AgentInput classes), got {type(inp).__name__}")
    if inp.timestamp < state.timestamp:
        reject(
            state,
            inp,
            "time-went-backwards",
            "monotonic-time",
            f"timestamp {inp.timestamp} is earlier than the state's {state.timestamp}; "
            "expected a timestamp at or after it",
        )
    if not state.started and handler is not on_session_started:
        reject_phase(state, inp)
    return handler(state, inp)


def check(state: AgentState, inp: AgentInput) -> Rejection | None:
    """``None`` if ``transition(state, inp)`` would succeed, else the :class:`Rejection` it would raise."""
    try:
        transition(state, inp)
    except InvalidInput as error:
        return error.rejection
    return None


def handled_tags() -> frozenset[str]:
    """The input tags the dispatcher has a handler for (every tag, checked by a test)."""
    return frozenset(tag_of_type(t) for t in _HANDLERS)


def tag_of_type(input_type: type) -> str:
    """The wire tag of an input class."""
    return input_type.__struct_config__.tag  # type: ignore[attr-defined, no-any-return]


__all__ = ["WRITE_SETS", "check", "handled_tags", "transition"]
