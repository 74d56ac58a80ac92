"""The attributes of each span kind, at its start and at its end, after the GenAI semantic conventions."""

from __future__ import annotations

import json
from typing import Any

from agent_core import (
    AgentInput,
    AgentState,
    AnswerRejected,
    ContextCompacted,
    ContextMessage,
    ContextToolCalls,
    ContextWindowExpanded,
    ContinueReAct,
    HandedOff,
    HistoryToolCallsAdded,
    LlmCallFailed,
    LlmContext,
    ReActObserved,
    ToolCallCompleted,
    ToolSuccess,
    Usage,
    llm_context,
    summary_context,
    tag_of,
    tool_call_id_of,
)

from ._conventions import Conventions, tool_failure_kind
from ._messages import messages_newest_first

Attributes = dict[str, Any]
Start = tuple[str, str, Attributes]
"""A span's name, kind (``client`` or ``internal``) and attributes at its start."""
End = tuple[Attributes, str, int | None]
"""A span's attributes at its end, its error description (empty: none) and a better start time, if known."""

COST_ATTRIBUTE = "agent_core.usage.cost_nanos"
"""The ``chat`` span attribute holding what the call cost, in nano-units (1e-9 of a currency unit; see
:func:`agent_core.nanos`); set only for a priced call."""


def common(session_id: str, conventions: Conventions, operation: str) -> Attributes:
    """What every span carries: the operation, the conversation (session) and the provider."""
    attributes: Attributes = {
        "gen_ai.operation.name": operation,
        "gen_ai.conversation.id": session_id,
        "gen_ai.provider.name": conventions.provider,
    }
    if not conventions.latest_only:
        attributes["gen_ai.system"] = conventions.provider  # the v1.36 name of the provider
    return attributes


def turn_start(state: AgentState, conventions: Conventions) -> Start:
    """An ``invoke_agent`` span for the open turn."""
    attributes = common(state.session_id, conventions, "invoke_agent")
    attributes["gen_ai.agent.name"] = conventions.agent_name
    attributes["agent_core.turn"] = state.turn.number if state.turn is not None else 0
    return f"invoke_agent {conventions.agent_name}", "internal", attributes


def turn_end(after: AgentState, conventions: Conventions) -> End:
    """How the turn ended (from ``last_outcome``); a failed turn is an error with its reason as ``error.type``."""
    outcome = after.last_outcome
    if outcome is None:
        return {}, "", None
    attributes: Attributes = {"agent_core.turn.outcome": outcome.kind}
    if outcome.reason:
        attributes["agent_core.turn.outcome_reason"] = outcome.reason
    if outcome.kind == "failed":
        attributes["error.type"] = outcome.reason or "failed"
        return attributes, outcome.detail or outcome.reason or "failed", None
    return attributes, "", None


def effect_start(key: str, state: AgentState, conventions: Conventions) -> Start:
    """The span of an effect the state started deriving under ``key``."""
    if key.startswith("call-tool:"):
        call_id = tool_call_id_of(key)
        record = state.tool_calls[call_id]
        attributes = common(state.session_id, conventions, "execute_tool")
        attributes.update(
            {"gen_ai.tool.name": record.name, "gen_ai.tool.call.id": call_id, "gen_ai.tool.type": "function"}
        )
        if conventions.capture_content:
            attributes["gen_ai.tool.call.arguments"] = record.parameters
        return f"execute_tool {record.name}", "internal", attributes
    if key.startswith("call-llm:"):
        attributes = common(state.session_id, conventions, "chat")
        attributes["agent_core.llm.attempt"] = int(key.rsplit(":", 1)[1])
        summarizing = key.startswith("call-llm:summary:")
        context = summary_context(state) if summarizing else llm_context(state)
        attributes["agent_core.context.entries"] = len(context.entries)
        attributes.update(compaction_attributes(state, context, summarizing))
        if conventions.model:
            attributes["gen_ai.request.model"] = conventions.model
        if conventions.capture_content:
            attributes["gen_ai.input.messages"] = json.dumps(context_messages(context))
            if state.config.system_prompt:
                attributes["gen_ai.system_instructions"] = json.dumps(
                    [{"type": "text", "content": state.config.system_prompt}]
                )
        name = f"chat {conventions.model}" if conventions.model else "chat"
        return name, "client", attributes
    reason = key.split(":")[1] if ":" in key else key
    return (
        f"wait {reason}",
        "internal",
        {"agent_core.wait.reason": reason, "agent_core.wait.until": int(key.rsplit(":", 1)[1])},
    )


def compaction_attributes(state: AgentState, context: LlmContext, summarizing: bool) -> Attributes:
    """What compaction decided for a model call (nothing without a compaction policy): for a summarization,
    the range it covers; for an answer, the messages a summary stands for and the cleared tool results."""
    compaction = state.compaction
    if compaction is None:
        return {}
    request = compaction.request
    if summarizing and request is not None:
        return {
            "agent_core.compaction.task": "summarize",
            "agent_core.compaction.covers.messages_from": compaction.summarized_messages,
            "agent_core.compaction.covers.messages_to": request.messages,
            "agent_core.compaction.covers.tool_call_ids": list(request.tool_call_ids),
        }
    attributes: Attributes = {
        "agent_core.compaction.summarized_messages": context.summarized_messages,
        "agent_core.compaction.cleared_tool_call_ids": list(context.cleared_tool_calls),
    }
    return attributes


def effect_end(inp: AgentInput, key: str, after: AgentState, answered: bool, conventions: Conventions) -> End:
    """How the effect under ``key`` ended: completed or failed by ``inp``, or cancelled (no longer derived)."""
    if not answered:
        return {"agent_core.effect.outcome": "cancelled", "agent_core.cancelled_by": tag_of(inp)}, "", None
    attributes: Attributes = {"agent_core.effect.outcome": "completed"}
    if isinstance(inp, ToolCallCompleted):
        result = inp.result
        if isinstance(result, ToolSuccess):
            if conventions.capture_content:
                attributes["gen_ai.tool.call.result"] = result.content
            return attributes, "", None
        kind = tool_failure_kind(result.error)
        attributes.update({"agent_core.effect.outcome": "failed", "error.type": kind})
        return attributes, result.error, None
    if isinstance(inp, LlmCallFailed):
        attributes.update(
            {
                "agent_core.effect.outcome": "failed",
                "error.type": "llm_error",
                "agent_core.llm.retryable": inp.retryable,
            }
        )
        if inp.cost is not None:  # the call answered and was paid for; its answer was refused
            attributes[COST_ATTRIBUTE] = inp.cost
        return attributes, inp.error, None
    if isinstance(inp, ReActObserved):
        calls = isinstance(inp.observation, ContinueReAct)
        attributes["gen_ai.response.finish_reasons"] = ("tool_calls" if calls else "stop",)
        _spent(attributes, inp.usage, inp.cost)
        if conventions.capture_content:
            attributes["gen_ai.output.messages"] = json.dumps(_output(inp, after))
        return attributes, "", inp.called_llm_at
    if isinstance(inp, ContextCompacted | AnswerRejected):  # a summarization, a refused answer: paid calls too
        attributes["gen_ai.response.finish_reasons"] = ("stop",)
        if isinstance(inp, AnswerRejected):
            attributes["agent_core.answer.rejected"] = inp.reason
        _spent(attributes, inp.usage, inp.cost)
        return attributes, "", inp.called_llm_at
    if key.startswith("call-llm:"):  # an internal tool (load older messages, load past tool calls), a handoff
        attributes["gen_ai.response.finish_reasons"] = ("tool_calls",)
        attributes["agent_core.internal_tool"] = tag_of(inp)
        if isinstance(inp, ContextWindowExpanded | HistoryToolCallsAdded | HandedOff):
            _spent(attributes, inp.usage, inp.cost)  # paid calls too
    return attributes, "", None


def _spent(attributes: Attributes, usage: Usage, cost: int | None) -> None:
    """A finished model call's usage (GenAI's attributes) and cost (ours) into ``attributes``."""
    attributes["gen_ai.usage.input_tokens"] = usage.input_tokens
    attributes["gen_ai.usage.output_tokens"] = usage.output_tokens
    for name, count in (
        ("gen_ai.usage.cache_read.input_tokens", usage.cache_read_tokens),
        ("gen_ai.usage.cache_creation.input_tokens", usage.cache_write_tokens),
        ("gen_ai.usage.reasoning.output_tokens", usage.reasoning_tokens),
    ):
        if count:  # reported only when the provider broke the totals down
            attributes[name] = count
    if cost is not None:  # GenAI's conventions have no cost attribute: ours, in exact nano-units
        attributes[COST_ATTRIBUTE] = cost


def input_event(seq: int, inp: AgentInput) -> Attributes:
    """The attributes of the span event recording an input."""
    attributes: Attributes = {"agent_core.log.seq": seq}
    for field in ("tool_call_id", "message_id", "reason"):
        value = getattr(inp, field, None)
        if isinstance(value, str) and value:
            attributes[f"agent_core.{field}"] = value
    return attributes


def context_messages(context: LlmContext) -> list[dict[str, Any]]:
    """A model context as GenAI ``gen_ai.input.messages`` (role and parts)."""
    out: list[dict[str, Any]] = []
    for entry in context.entries:
        if isinstance(entry, ContextMessage):
            out.append({"role": entry.role, "parts": [{"type": "text", "content": entry.content}]})
        elif isinstance(entry, ContextToolCalls):
            parts = [{"type": "tool_call", "id": c.id, "name": c.name, "arguments": c.parameters} for c in entry.calls]
            out.append({"role": "assistant", "parts": parts})
        else:
            out.append(
                {
                    "role": "tool",
                    "parts": [{"type": "tool_call_response", "id": entry.tool_call_id, "response": entry.content}],
                }
            )
    return out


def _output(inp: ReActObserved, after: AgentState) -> list[dict[str, Any]]:
    observation = inp.observation
    if isinstance(observation, ContinueReAct):
        parts = [
            {"type": "tool_call", "id": i, "name": r.name, "arguments": r.parameters}
            for i, r in observation.tool_calls.items()
        ]
        return [{"role": "assistant", "parts": parts, "finish_reason": "tool_calls"}]
    last = next((m for m in messages_newest_first(after) if m.role == "assistant"), None)
    parts = [] if last is None else [{"type": "text", "content": last.content}]
    return [{"role": "assistant", "parts": parts, "finish_reason": "stop"}]
