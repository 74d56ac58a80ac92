"""The model protocol: one async method that answers an ``LlmContext``.

Adapters (the scripted model, OpenAI-compatible, Anthropic) implement
:class:`Model`. The runner turns a :class:`ModelReply` into the core's inputs:
``llm-message-started``/``-completed`` for text, then ``re-act-observed`` with
the tool calls or ``complete-re-act``; a :class:`ModelError` becomes
``llm-call-failed``. Calls to the internal tools become
``context-window-expanded`` / ``history-tool-calls-added`` instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import msgspec

from agent_core import LlmContext, ProviderItem, ToolDefinition, Usage

LOAD_OLDER_MESSAGES = "load_older_messages"
"""Internal tool: show the model older messages of the conversation."""

LOAD_TOOL_CALL_RESULTS = "load_tool_call_results"
"""Internal tool: bring past tool calls (by id) and their results into the context."""

INTERNAL_TOOLS: dict[str, ToolDefinition] = {
    LOAD_OLDER_MESSAGES: ToolDefinition(
        name=LOAD_OLDER_MESSAGES,
        description="Load older messages of this conversation into your context. "
        "Call it when the answer may depend on something said earlier than what you see.",
        parameters='{"type":"object","properties":{}}',
    ),
    LOAD_TOOL_CALL_RESULTS: ToolDefinition(
        name=LOAD_TOOL_CALL_RESULTS,
        description="Load the results of earlier tool calls into your context, by their ids "
        "(the ids of recent past calls are listed in this tool's description).",
        parameters='{"type":"object","properties":{"tool_call_ids":{"type":"array","items":{"type":"string"}}},'
        '"required":["tool_call_ids"]}',
    ),
}
"""The internal tools by name: the runner turns their calls into core inputs, never runs them as tools."""


def offered_tools(context: LlmContext) -> tuple[ToolDefinition, ...]:
    """The tools a model call offers: the session's tools, plus each internal tool that can help now.

    ``load_older_messages`` is offered while messages exist before the window;
    ``load_tool_call_results`` while past calls exist outside the context (their
    ids, names and parameters are listed in its description), or results in it were cleared. None when tools
    are disabled (the final answer after a budget is spent).
    """
    if not context.tools_enabled:
        return ()
    tools = list(context.tools)
    if context.older_messages > 0:
        tools.append(INTERNAL_TOOLS[LOAD_OLDER_MESSAGES])
    if context.past_tool_calls:
        listed = "; ".join(f"{c.id}: {c.name}({c.parameters})" for c in context.past_tool_calls)
        base = INTERNAL_TOOLS[LOAD_TOOL_CALL_RESULTS]
        tools.append(msgspec.structs.replace(base, description=f"{base.description} Recent past calls: {listed}"))
    elif context.cleared_tool_calls:  # the placeholders in the context name the ids
        tools.append(INTERNAL_TOOLS[LOAD_TOOL_CALL_RESULTS])
    return tuple(tools)


class ModelToolCall(msgspec.Struct, frozen=True, kw_only=True):
    """A tool call in a model's reply: provider id, tool name, JSON-encoded arguments."""

    id: str
    name: str
    arguments: str = "{}"


class ModelReply(msgspec.Struct, frozen=True, kw_only=True):
    """What one model call produced: user-visible text (may be empty), tool calls (may be empty), usage.

    ``items`` are the reply's provider items in the order the provider sent
    them (see :class:`~agent_core.ProviderItem`), or empty: given only when the
    reply has at least one opaque item, with a ``tool-call`` marker per tool call
    (in the order of ``tool_calls``; ``ref`` the provider's id) and ``text``
    markers whose ``chars`` cover ``text`` in order. The runner sets the markers'
    ``ref`` to the ids it logs.
    """

    text: str = ""
    tool_calls: tuple[ModelToolCall, ...] = ()
    usage: Usage = Usage()
    finish_reason: str = ""
    items: tuple[ProviderItem, ...] = ()


class ModelError(Exception):
    """A model call failed. ``retryable`` for rate limits, 5xx, timeouts and connection errors.

    ``body`` keeps the provider's error body (never an API key); ``retry_after_ms``
    carries the server's hint when it sent one; ``context_too_long`` says the
    provider refused the request as longer than the model's context (under a
    compaction policy the context is compacted once before the turn fails).
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        retry_after_ms: int | None = None,
        status: int | None = None,
        body: str = "",
        context_too_long: bool = False,
    ) -> None:
        super().__init__(message)
        self.context_too_long = context_too_long
        self.retryable = retryable
        self.retry_after_ms = retry_after_ms
        self.status = status
        self.body = body


TextSink = Callable[[str], None]
"""Receives each text delta as it streams; the runner shows it to subscribers without logging it."""


class Model(Protocol):
    """Anything that can answer an ``LlmContext``. One required method."""

    async def complete(self, context: LlmContext, on_text: TextSink) -> ModelReply:
        """Answer ``context``: stream text deltas to ``on_text`` and return the whole reply.

        Offer the tools :func:`offered_tools` gives. Raise :class:`ModelError`
        for a failed call; any other exception is treated as not retryable.
        """
        ...
