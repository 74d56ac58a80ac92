"""``llm_context``: the pure projection of the state onto what a model call sends."""

from __future__ import annotations

from typing import Literal, Union

import msgspec

from ._config import ToolDefinition
from ._inputs import ToolSuccess
from ._state import AgentState, ToolCallRecord


class ContextMessage(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind", tag="message"):
    """A user or assistant message."""

    role: Literal["user", "assistant"]
    content: str


class ContextToolCall(msgspec.Struct, frozen=True, kw_only=True):
    """One call inside an assistant tool-call message."""

    id: str
    name: str
    parameters: str


class ContextToolCalls(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind", tag="tool-calls"):
    """An assistant message asking for the calls the model requested together."""

    calls: tuple[ContextToolCall, ...]


class ContextToolResult(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind", tag="tool-result"):
    """The result of one call, right after the assistant message that asked for it."""

    tool_call_id: str
    name: str
    content: str
    is_error: bool = False


ContextEntry = Union[ContextMessage, ContextToolCalls, ContextToolResult]
"""One entry of :attr:`LlmContext.entries`: a message, an assistant tool-call message, or a tool result."""


class PastToolCall(msgspec.Struct, frozen=True, kw_only=True):
    """A completed tool call outside the context that the model may load with the history tool."""

    id: str
    name: str
    parameters: str


class LlmContext(msgspec.Struct, frozen=True, kw_only=True):
    """What one model call sends.

    ``entries`` interleave the windowed messages and the turn's tool calls on
    one timeline (assistant tool-call message, then each result). ``tools`` is
    empty when tools are disabled (the final answer after a budget is spent).
    ``older_messages`` counts messages before the window and ``past_tool_calls``
    lists recent calls outside the context: what the internal tools can load.
    """

    system_prompt: str
    entries: tuple[ContextEntry, ...]
    tools: tuple[ToolDefinition, ...]
    tools_enabled: bool
    older_messages: int = 0
    past_tool_calls: tuple[PastToolCall, ...] = ()


PAST_TOOL_CALLS_LISTED = 20
"""How many recent past tool calls :func:`llm_context` lists for the history tool."""


def llm_context(state: AgentState) -> LlmContext:
    """The request a model call sends in ``state``: system prompt, the last
    ``context_window_size`` messages and the turn's tool calls, ordered by time.

    Between turns it shows the last ``initial_context_window`` messages.
    Streaming messages and messages abandoned empty are left out. Cost:
    O(window + the turn's calls), independent of the session's length.
    """
    turn = state.turn
    messages = state.messages
    count = len(messages)
    window = turn.context_window_size if turn is not None else min(state.config.initial_context_window, count)
    first = count - window
    timeline: list[tuple[int, int, ContextEntry]] = []
    for position in range(first, count):
        message = messages[position]
        if message.streaming or (message.role == "assistant" and not message.content):
            continue
        timeline.append((message.seq, 0, ContextMessage(role=message.role, content=message.content)))
    in_context: set[str] = set()
    if turn is not None and turn.tool_call_ids:
        in_context.update(turn.tool_call_ids)
        timeline.extend(_tool_call_entries(state, turn.tool_call_ids))
    timeline.sort(key=lambda item: (item[0], item[1]))
    tools_enabled = turn is None or not turn.final_answer
    return LlmContext(
        system_prompt=state.config.system_prompt,
        entries=tuple(entry for _, _, entry in timeline),
        tools=tuple(state.tools.values()) if tools_enabled else (),
        tools_enabled=tools_enabled,
        older_messages=first,
        past_tool_calls=_past_calls(state, in_context) if tools_enabled else (),
    )


def _tool_call_entries(state: AgentState, ids: tuple[str, ...]) -> list[tuple[int, int, ContextEntry]]:
    """Calls requested together (same ``seq``) form one assistant message; results follow it."""
    groups: dict[int, list[ToolCallRecord]] = {}
    for call_id in ids:
        record = state.tool_calls[call_id]
        groups.setdefault(record.seq, []).append(record)
    out: list[tuple[int, int, ContextEntry]] = []
    for seq, records in groups.items():
        out.append(
            (
                seq,
                1,
                ContextToolCalls(
                    calls=tuple(ContextToolCall(id=r.id, name=r.name, parameters=r.parameters) for r in records)
                ),
            )
        )
        for index, record in enumerate(records, start=2):
            result = record.result
            if result is None:
                continue
            if isinstance(result, ToolSuccess):
                entry = ContextToolResult(tool_call_id=record.id, name=record.name, content=result.content)
            else:
                entry = ContextToolResult(tool_call_id=record.id, name=record.name, content=result.error, is_error=True)
            out.append((seq, index, entry))
    return out


def _past_calls(state: AgentState, in_context: set[str]) -> tuple[PastToolCall, ...]:
    log, calls = state.tool_call_log, state.tool_calls
    found: list[PastToolCall] = []
    position = len(log) - 1
    while position >= 0 and len(found) < PAST_TOOL_CALLS_LISTED:
        record = calls[log[position]]
        position -= 1
        if record.id in in_context or record.status != "completed":
            continue
        found.append(PastToolCall(id=record.id, name=record.name, parameters=record.parameters))
    return tuple(found)
