"""One line of text per input, for timelines people read."""

from __future__ import annotations

from agent_core import (
    AgentInput,
    ContinueReAct,
    HandedOff,
    HistoryToolCallsAdded,
    LlmCallFailed,
    LlmMessageCompleted,
    ReActCancelled,
    ReActObserved,
    SessionStarted,
    ToolCallCompleted,
    ToolCallDenied,
    ToolSuccess,
    UserMessageReceived,
    WorkflowActionTaken,
)

from .._text import clip as clip_text

WIDTH = 60
"""Characters of free text shown before it is cut with an ellipsis."""


def clip(text: str, width: int = WIDTH) -> str:
    """``text`` on one line, at most ``width`` characters."""
    return clip_text(text, width)


def summarize(inp: AgentInput) -> str:
    """What a person needs to recognise ``inp`` in a timeline."""
    if isinstance(inp, SessionStarted):
        tools = ", ".join(tool.name for tool in inp.tools) or "no tools"
        return f"session {inp.session_id} (schema {inp.schema_version}; {tools})"
    if isinstance(inp, UserMessageReceived | LlmMessageCompleted):
        return repr(clip(inp.content))
    if isinstance(inp, ReActObserved):
        observation = inp.observation
        if isinstance(observation, ContinueReAct):
            calls = (f"{call_id}: {r.name}({clip(r.parameters, 30)})" for call_id, r in observation.tool_calls.items())
            return "calls " + "; ".join(calls)
        return "answer complete"
    if isinstance(inp, LlmCallFailed):
        return f"{'retryable' if inp.retryable else 'fatal'}: {clip(inp.error)}"
    if isinstance(inp, ToolCallCompleted):
        result = inp.result
        text = f"ok {clip(result.content)!r}" if isinstance(result, ToolSuccess) else f"failed {clip(result.error)!r}"
        return f"{inp.tool_call_id} {text}"
    if isinstance(inp, ToolCallDenied | ReActCancelled):
        return clip(inp.reason) if inp.reason else ""
    if isinstance(inp, WorkflowActionTaken):
        return f"action {inp.action}"
    if isinstance(inp, HistoryToolCallsAdded):
        return ", ".join(inp.tool_call_ids)
    if isinstance(inp, HandedOff):
        return f"{inp.from_agent} -> {inp.to_agent}" + (f": {clip(inp.reason)}" if inp.reason else "")
    call_id = getattr(inp, "tool_call_id", None) or getattr(inp, "message_id", None)
    return str(call_id) if call_id else ""
