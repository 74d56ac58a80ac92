"""The context's timeline regrouped for providers' pairing rules.

Both APIs want an assistant message that asks for tool calls to be followed
by exactly one result per call. :func:`regroup` folds the text the model said
with its calls (one assistant message), puts the results in call order right
after, and fills a result for a call that has none yet, so a request is never
refused for a missing pair.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from agent_core import ContextEntry, ContextMessage, ContextToolCall, ContextToolCalls, ContextToolResult

from .._arguments import arguments_object as parsed_arguments

MISSING_RESULT = "No result: the call did not finish."


class AssistantCalls(NamedTuple):
    """An assistant message with tool calls (and the text said with them), then one result per call."""

    text: str
    calls: tuple[ContextToolCall, ...]
    results: tuple[ContextToolResult, ...]


def regroup(entries: tuple[ContextEntry, ...]) -> list[ContextMessage | AssistantCalls]:
    """Messages and assistant tool-call groups in timeline order (see the module docstring)."""
    items: list[ContextMessage | AssistantCalls] = []
    results: dict[str, ContextToolResult] = {}
    for entry in entries:
        if isinstance(entry, ContextMessage):
            items.append(entry)
        elif isinstance(entry, ContextToolCalls):
            text = ""
            last = items[-1] if items else None
            if isinstance(last, ContextMessage) and last.role == "assistant":
                text = last.content
                items.pop()
            items.append(AssistantCalls(text, entry.calls, ()))
        else:
            results[entry.tool_call_id] = entry
    return [_with_results(item, results) if isinstance(item, AssistantCalls) else item for item in items]


def _with_results(group: AssistantCalls, results: dict[str, ContextToolResult]) -> AssistantCalls:
    ordered = tuple(
        results.get(call.id)
        or ContextToolResult(tool_call_id=call.id, name=call.name, content=MISSING_RESULT, is_error=True)
        for call in group.calls
    )
    return group._replace(results=ordered)


def arguments_object(parameters: str) -> dict[str, object]:
    """A call's JSON arguments as an object (APIs that want an object get ``{}`` for anything else: text that
    is not JSON, or nested too deeply to be sent, so that a request stays buildable)."""
    value = parsed_arguments(parameters)
    return value if isinstance(value, dict) else {}


def schema_object(parameters: str, tool: str) -> dict[str, object]:
    """A tool's JSON-schema string as an object; a broken schema is a developer error, said loudly."""
    try:
        value = json.loads(parameters)
    except ValueError as error:
        raise ValueError(
            f"tool {tool!r} has a parameters schema that is not valid JSON ({error}): {parameters!r}"
        ) from None
    if not isinstance(value, dict):
        raise ValueError(f"tool {tool!r} has a parameters schema that is not a JSON object: {parameters!r}")
    return value
