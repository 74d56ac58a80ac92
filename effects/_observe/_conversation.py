"""A session's conversation as a person reads it: messages, tool calls with arguments and results, outcomes."""

from __future__ import annotations

import json
from typing import Literal

import msgspec

from agent_core import (
    AgentInput,
    AgentState,
    ContinueReAct,
    HandedOff,
    LlmCallFailed,
    LlmMessageCompleted,
    ReActCancelled,
    ReActObserved,
    SessionStarted,
    ToolCallApproved,
    ToolCallCompleted,
    ToolCallDenied,
    ToolSuccess,
    UserMessageReceived,
)

from .._arguments import arguments_object
from .._store import EventStore, StoredInput
from ._replayed import fold_steps

EntryKind = Literal[
    "session", "user", "assistant", "tool-call", "tool-result", "decision", "error", "outcome", "handoff"
]


class ConversationEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One thing said or done. ``title`` names it (``user``, ``lookup (c1)``...), ``text`` is in full, ``ok`` is
    false for failures."""

    seq: int
    timestamp: int
    kind: EntryKind
    title: str
    text: str
    ok: bool = True


def conversation(store: EventStore, session_id: str) -> list[ConversationEntry]:
    """Every entry of a stored session, in log order (the log is folded once; nothing is cut short)."""
    entries: list[ConversationEntry] = []

    def on_step(record: StoredInput, inp: AgentInput, before: AgentState, after: AgentState) -> None:
        entries.extend(entries_of(record.seq, inp, before, after))

    fold_steps(store, session_id, on_step)
    return entries


def entries_of(seq: int, inp: AgentInput, before: AgentState, after: AgentState) -> list[ConversationEntry]:
    """What input ``seq`` adds to the conversation."""

    def entry(kind: EntryKind, title: str, text: str, ok: bool = True) -> ConversationEntry:
        return ConversationEntry(seq=seq, timestamp=inp.timestamp, kind=kind, title=title, text=text, ok=ok)

    out: list[ConversationEntry] = []
    if isinstance(inp, SessionStarted):
        tools = ", ".join(t.name + (" (needs approval)" if t.requires_approval else "") for t in inp.tools)
        prompt, lineage = inp.config.system_prompt, inp.config.lineage
        text = f"tools: {tools or 'none'}\nsystem: {prompt}"
        if lineage is not None:
            text += (
                f"\nchild of session {lineage.parent_session_id} (tool call {lineage.parent_tool_call_id}), "
                f"root {lineage.root_session_id}"
            )
        if inp.config.agent_name:
            agents = ", ".join(p.name for p in inp.config.agents)
            text += (
                f"\nagent: {inp.config.agent_name} (hands off to {', '.join(inp.config.handoffs)}; agents: {agents})"
            )
        out.append(entry("session", f"session {inp.session_id}", text))
    elif isinstance(inp, UserMessageReceived):
        out.append(entry("user", "user", inp.content))
    elif isinstance(inp, LlmMessageCompleted):
        out.append(entry("assistant", "assistant", inp.content))
    elif isinstance(inp, ReActObserved) and isinstance(inp.observation, ContinueReAct):
        for call_id, request in inp.observation.tool_calls.items():
            out.append(entry("tool-call", f"{request.name} ({call_id})", _pretty(request.parameters)))
    elif isinstance(inp, ToolCallCompleted):
        record = after.tool_calls.get(inp.tool_call_id)
        name = f"{record.name if record else '?'} ({inp.tool_call_id})"
        result = inp.result
        if isinstance(result, ToolSuccess):
            out.append(entry("tool-result", name, result.content))
        else:
            out.append(entry("tool-result", name, result.error, ok=False))
    elif isinstance(inp, ToolCallApproved):
        out.append(entry("decision", f"approved {inp.tool_call_id}", ""))
    elif isinstance(inp, ToolCallDenied):
        out.append(entry("decision", f"denied {inp.tool_call_id}", inp.reason, ok=False))
    elif isinstance(inp, LlmCallFailed):
        retry = "retryable" if inp.retryable else "not retryable"
        out.append(entry("error", f"model call failed ({retry})", inp.error, ok=False))
    elif isinstance(inp, ReActCancelled):
        out.append(entry("decision", "turn cancelled", inp.reason, ok=False))
    elif isinstance(inp, HandedOff):
        out.append(entry("handoff", f"handed off: {inp.from_agent} -> {inp.to_agent}", inp.reason))
    outcome = after.last_outcome
    if outcome is not None and outcome is not before.last_outcome:
        reason = f" ({outcome.reason})" if outcome.reason else ""
        text = outcome.detail
        out.append(entry("outcome", f"turn {outcome.turn} {outcome.kind}{reason}", text, ok=outcome.kind != "failed"))
    return out


def _pretty(parameters: str) -> str:
    """Arguments indented, when they are a JSON object nested no deeper than arguments may be; else as they came
    (text nested 50,000 deep is shown, not parsed into a ``RecursionError``)."""
    value = arguments_object(parameters) if parameters else parameters
    return parameters if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
