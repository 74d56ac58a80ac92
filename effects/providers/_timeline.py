"""The context's timeline regrouped for providers' pairing rules.

Both APIs want an assistant message that asks for tool calls to be followed
by exactly one result per call. :func:`regroup` folds the text the model said
with its calls (one assistant message), puts the results in call order right
after, and fills a result for a call that has none yet, so a request is never
refused for a missing pair. :func:`layout` puts an assistant turn's text and
calls back among the provider items it was said with.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import NamedTuple

from agent_core import (
    TEXT_MARKER,
    TOOL_CALL_MARKER,
    ContextEntry,
    ContextMessage,
    ContextToolCall,
    ContextToolCalls,
    ContextToolResult,
    ProviderItem,
    replace_surrogates,
)

from .._arguments import arguments_object as parsed_arguments

MISSING_RESULT = "No result: the call did not finish."


class AssistantCalls(NamedTuple):
    """An assistant message with tool calls (and the text said with them), then one result per call;
    ``items`` are the provider items of the model call that asked for them."""

    text: str
    calls: tuple[ContextToolCall, ...]
    results: tuple[ContextToolResult, ...]
    items: tuple[ProviderItem, ...] = ()


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
            items.append(AssistantCalls(text, entry.calls, (), entry.items))
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


class Said(NamedTuple):
    """A part of an assistant turn's text, and the ``text`` marker that stood there (``None``: no marker)."""

    text: str
    marker: ProviderItem | None = None


class Asked(NamedTuple):
    """A tool call of an assistant turn, and the ``tool-call`` marker that stood there (``None``: no marker)."""

    call: ContextToolCall
    marker: ProviderItem | None = None


Part = ProviderItem | Said | Asked
"""One part of an assistant turn, in order: an opaque provider item, a part of its text, or a tool call."""


def layout(
    text: str, calls: tuple[ContextToolCall, ...], items: tuple[ProviderItem, ...], mine: Callable[[ProviderItem], bool]
) -> list[Part]:
    """An assistant turn's parts in the order its model call gave them.

    Only the items ``mine`` accepts (an adapter's own provider, and model where
    it matters) are used; without an opaque one among them the turn is its text,
    then its calls. Otherwise each opaque item stands where it came, each
    ``text`` marker takes its count of characters of ``text``, each ``tool-call``
    marker the call it names. What no marker placed (text past the counts, a call
    not named) follows, in order: nothing is dropped.
    """
    kept = [item for item in items if mine(item)]
    if all(item.kind in (TEXT_MARKER, TOOL_CALL_MARKER) for item in kept):
        plain: list[Part] = [Said(text)] if text else []
        return plain + [Asked(call) for call in calls]
    by_id = {call.id: call for call in calls}
    parts: list[Part] = []
    at = 0
    for item in kept:
        if item.kind == TEXT_MARKER:
            piece = text[at : at + item.chars]
            at += len(piece)
            if piece:
                parts.append(Said(piece, item))
        elif item.kind == TOOL_CALL_MARKER:
            call = by_id.pop(item.ref, None)
            if call is not None:
                parts.append(Asked(call, item))
        else:
            parts.append(item)
    if at < len(text):
        parts.append(Said(text[at:]))
    parts.extend(Asked(call) for call in calls if call.id in by_id)
    return parts


def item_object(item: ProviderItem) -> dict[str, object]:
    """An item's ``data`` as the JSON object to send back; a log that holds anything else (text that is not a
    JSON object, nested deeper than a request can carry) is said loudly: the call fails, not retryable."""
    value = parsed_arguments(item.data)
    if isinstance(value, str):
        problem = value.replace("the arguments are", "it is").replace("expected the arguments as", "expected")
        raise ValueError(f"a {item.kind} item of the conversation cannot be sent back: {problem}")
    return value


def item_json(value: Mapping[str, object]) -> str:
    """An item's JSON object as the ``data`` the log keeps: compact, its text as it is, except that a lone
    surrogate (a JSON escape of half a pair) stays escaped, so every codec can write it and the provider gets
    back the very escape it sent."""
    data = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return data if replace_surrogates(data) == data else json.dumps(value, separators=(",", ":"))
