"""Which state fields each input kind may change (its write set).

``timestamp`` and ``step`` change on every accepted input. A property test
checks that every accepted transition changes only the fields its input kind
declares here, so an unintended write is a test failure, not a surprise.
"""

from __future__ import annotations

_ALWAYS = frozenset({"timestamp", "step"})
# Ending a turn closes dangling calls and a streaming message, records the
# outcome, and may open the next turn with queued messages.
_ENDS_TURN = frozenset({"tool_calls", "messages", "message_index", "turn", "turns", "last_outcome", "queued"})

WRITE_SETS: dict[str, frozenset[str]] = {
    "session-started": _ALWAYS | {"started", "session_id", "config", "tools"},
    "user-message-received": _ALWAYS | _ENDS_TURN,
    "llm-message-started": _ALWAYS | {"messages", "message_index", "turn"},
    "llm-message-completed": _ALWAYS | {"messages", "turn"},
    "re-act-observed": _ALWAYS | _ENDS_TURN | {"tool_call_log", "called_llm_at", "input_tokens", "output_tokens"},
    "llm-call-failed": _ALWAYS | _ENDS_TURN,
    "tool-call-started": _ALWAYS | {"tool_calls"},
    "tool-call-completed": _ALWAYS | _ENDS_TURN,
    "tool-call-approved": _ALWAYS | {"tool_calls", "turn"},
    "tool-call-denied": _ALWAYS | _ENDS_TURN,
    "context-window-expanded": _ALWAYS | _ENDS_TURN,
    "history-tool-calls-added": _ALWAYS | _ENDS_TURN,
    "timer-fired": _ALWAYS | _ENDS_TURN,
    "re-act-cancelled": _ALWAYS | _ENDS_TURN,
}
"""For each input tag, the :class:`AgentState` fields its handler may change."""
