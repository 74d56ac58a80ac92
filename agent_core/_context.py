"""``llm_context``: the pure projection of the state onto what a model call sends."""

from __future__ import annotations

from typing import Literal, Union

import msgspec

from ._compaction._policy import PROVIDER, SUMMARIZE
from ._config import ToolDefinition
from ._handoff import active_prompt, active_tools, transfer_tools
from ._inputs import ProviderItem, ToolSuccess
from ._state import PAST_TOOL_CALLS_LISTED, AgentState, PastToolCall, ToolCallRecord

SUMMARY_HEADER = "[Summary of the earlier part of this conversation, which it replaces here]"
"""The first line of the context entry that stands for what a summary covers."""


class ContextMessage(
    msgspec.Struct, frozen=True, kw_only=True, gc=False, tag_field="kind", tag="message", omit_defaults=True
):
    """A user or assistant message. ``items``: an assistant message's provider items (its model call's), in order."""

    role: Literal["user", "assistant"]
    content: str
    items: tuple[ProviderItem, ...] = ()


class ContextToolCall(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One call inside an assistant tool-call message."""

    id: str
    name: str
    parameters: str


class ContextToolCalls(
    msgspec.Struct, frozen=True, kw_only=True, gc=False, tag_field="kind", tag="tool-calls", omit_defaults=True
):
    """An assistant message asking for the calls the model requested together.

    ``items``: the provider items of the model call that asked for them, in
    order; its ``text`` markers name the assistant message said with the calls
    (the entry right before this one, when it is in the context).
    """

    calls: tuple[ContextToolCall, ...]
    items: tuple[ProviderItem, ...] = ()


class ContextToolResult(msgspec.Struct, frozen=True, kw_only=True, gc=False, tag_field="kind", tag="tool-result"):
    """The result of one call, right after the assistant message that asked for it."""

    tool_call_id: str
    name: str
    content: str
    is_error: bool = False


ContextEntry = Union[ContextMessage, ContextToolCalls, ContextToolResult]
"""One entry of :attr:`LlmContext.entries`: a message, an assistant tool-call message, or a tool result."""


class LlmContext(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What one model call sends.

    ``tools`` are those the current workflow state offers (every declared tool without a workflow).
    ``entries`` interleave the windowed messages and the turn's tool calls on
    one timeline (assistant tool-call message, then each result). ``tools`` is
    empty when tools are disabled (the final answer after a budget is spent).
    ``older_messages`` counts messages before the window and ``past_tool_calls``
    lists recent calls outside the context: what the internal tools can load.
    ``output_schema`` is the session's (empty for free text): adapters ask the
    provider for an answer of that schema where it can.

    Under a compaction policy: ``summarized_messages`` counts the messages a
    summary stands for (the summary is the first entry, a user message starting
    with :data:`SUMMARY_HEADER`); ``cleared_tool_calls`` are the calls whose
    results show as a placeholder (:func:`cleared_result`), loadable again with
    the internal tool; ``compact_threshold`` is the input tokens at which the
    provider should compact (strategy ``provider``; 0: not asked).
    ``task`` is ``"summarize"`` for a summarization call (see
    :func:`summary_context`), else ``"answer"``.
    """

    system_prompt: str
    entries: tuple[ContextEntry, ...]
    tools: tuple[ToolDefinition, ...]
    tools_enabled: bool
    older_messages: int = 0
    past_tool_calls: tuple[PastToolCall, ...] = ()
    output_schema: str = ""
    summarized_messages: int = 0
    cleared_tool_calls: tuple[str, ...] = ()
    compact_threshold: int = 0
    task: Literal["answer", "summarize"] = "answer"


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
    call_ids = turn.tool_call_ids if turn is not None else ()
    compaction = state.compaction
    cleared: tuple[str, ...] = ()
    entries: list[ContextEntry] = []
    if compaction is not None:
        policy = state.config.compaction
        if policy is not None and policy.strategy == SUMMARIZE:
            # The summary, not the window, bounds the conversation: everything after it is sent.
            first = min(first, compaction.summarized_messages)
        if compaction.summary:
            entries.append(ContextMessage(role="user", content=f"{SUMMARY_HEADER}\n\n{compaction.summary}"))
        cleared = compaction.cleared
    # Messages are stored in the order of their `seq`; the turn's call groups are sorted by theirs.
    # Merging the two keeps a group after a message of the same seq, as (seq, kind) ordering would.
    groups = _tool_call_groups(state, call_ids, frozenset(cleared)) if call_ids else []
    pending = len(groups)
    next_group = 0
    for message in messages[first:] if first else messages:
        if message.streaming or (message.role == "assistant" and not message.content):
            continue
        while next_group < pending and groups[next_group][0] < message.seq:
            entries.extend(groups[next_group][1])
            next_group += 1
        entries.append(ContextMessage(role=message.role, content=message.content, items=message.items))
    for _, group in groups[next_group:]:
        entries.extend(group)
    tools_enabled = turn is None or not turn.final_answer
    context = LlmContext(
        system_prompt=active_prompt(state),
        entries=tuple(entries),
        tools=offered_tools(state) if tools_enabled else (),
        tools_enabled=tools_enabled,
        older_messages=first,
        past_tool_calls=_past_calls(state, call_ids) if tools_enabled else (),
        output_schema=state.config.output_schema,
    )
    if compaction is None:
        return context
    return _compacted(state, context, compaction.summarized_messages, cleared, call_ids)


def _compacted(
    state: AgentState, context: LlmContext, summarized: int, cleared: tuple[str, ...], call_ids: tuple[str, ...]
) -> LlmContext:
    """``context`` with what compaction adds: the counts, the cleared calls in it, the provider's threshold."""
    policy = state.config.compaction
    threshold = policy.trigger_tokens if policy is not None and policy.strategy == PROVIDER else 0
    shown = frozenset(call_ids)
    return msgspec.structs.replace(
        context,
        summarized_messages=summarized,
        cleared_tool_calls=tuple(call_id for call_id in cleared if call_id in shown),
        compact_threshold=threshold,
    )


def cleared_result(call_id: str, name: str) -> str:
    """The placeholder a cleared tool result shows: which call it was and how to load it again."""
    return (
        f"[result cleared to save context: tool call {call_id} ({name}); "
        f'call load_tool_call_results with {{"tool_call_ids": ["{call_id}"]}} to see it again]'
    )


def offered_tools(state: AgentState) -> tuple[ToolDefinition, ...]:
    """The tools a model call may be offered now: every declared tool, or those the current workflow state lists;
    with handoffs, the active agent's tools and a transfer tool per agent it may hand over to."""
    workflow = state.config.workflow
    if workflow is None:
        tools = active_tools(state).definitions
        transfers = transfer_tools(state)
        return tools + transfers if transfers else tools
    allowed = workflow.state(state.workflow_state).tools
    return tuple(tool for tool in state.tools.definitions if tool.name in allowed)


def _tool_call_groups(
    state: AgentState, ids: tuple[str, ...], cleared: frozenset[str] = frozenset()
) -> list[tuple[int, list[ContextEntry]]]:
    """Calls requested together (same ``seq``) form one assistant message; their results follow it.

    Returns ``(seq, entries)`` per group, by ``seq`` (calls loaded from history come
    after the turn's own in ``ids`` but were requested before them).
    """
    calls = state.tool_calls
    groups: dict[int, list[ToolCallRecord]] = {}
    for call_id in ids:
        record = calls[call_id]
        group = groups.get(record.seq)
        if group is None:
            groups[record.seq] = [record]
        else:
            group.append(record)
    out: list[tuple[int, list[ContextEntry]]] = []
    for seq in sorted(groups):
        records = groups[seq]
        entries: list[ContextEntry] = [
            ContextToolCalls(
                calls=tuple(ContextToolCall(id=r.id, name=r.name, parameters=r.parameters) for r in records),
                items=records[0].items,  # the batch's first call holds them (see ToolCallRecord)
            )
        ]
        for record in records:
            result = record.result
            if result is None:
                continue
            if cleared and record.id in cleared:
                entries.append(
                    ContextToolResult(
                        tool_call_id=record.id, name=record.name, content=cleared_result(record.id, record.name)
                    )
                )
            elif isinstance(result, ToolSuccess):
                entries.append(ContextToolResult(tool_call_id=record.id, name=record.name, content=result.content))
            else:
                entries.append(
                    ContextToolResult(tool_call_id=record.id, name=record.name, content=result.error, is_error=True)
                )
        out.append((seq, entries))
    return out


def _past_calls(state: AgentState, in_context: tuple[str, ...]) -> tuple[PastToolCall, ...]:
    """The most recent completed calls outside the context, newest first.

    The state keeps the newest calls of the finished turns (every call of the open
    turn is in its context); only when the history tool loaded some of those does
    this scan the log further back, so the list stays the newest
    :data:`PAST_TOOL_CALLS_LISTED`.
    """
    kept = state.past_calls
    if not in_context:
        return kept
    skip = frozenset(in_context)
    listed = tuple([call for call in kept if call.id not in skip])  # a list first: cheaper than a generator
    if len(listed) == len(kept):
        return listed
    return _scan_past_calls(state, in_context)


def _scan_past_calls(state: AgentState, in_context: tuple[str, ...]) -> tuple[PastToolCall, ...]:
    """The most recent completed calls outside the context, newest first."""
    log, calls = state.tool_call_log, state.tool_calls
    skip = frozenset(in_context)
    found: list[PastToolCall] = []
    for position in range(len(log) - 1, -1, -1):
        call_id = log[position]
        if call_id in skip:
            continue  # tested on the id first: the turn's calls are the newest, and a record lookup costs more
        record = calls[call_id]
        if record.status == "completed":
            found.append(PastToolCall(id=call_id, name=record.name, parameters=record.parameters))
            if len(found) == PAST_TOOL_CALLS_LISTED:
                break
    return tuple(found)
