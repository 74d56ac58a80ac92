"""Tool-call arguments from a model: a JSON object, nested at most :data:`MAX_ARGUMENT_NESTING` levels.

A model's arguments are text, logged as it came. Whatever reads them as JSON
(an MCP server's call, the internal history tool, a provider request that
wants an object) goes through :func:`arguments_object`, so text nested deeper
than the interpreter can recurse (50,000 brackets) is a failure the model reads,
never a ``RecursionError`` that stops the session. ``@tool`` functions get the
same bound from pydantic's parser.
"""

from __future__ import annotations

import msgspec

MAX_ARGUMENT_NESTING = 100
"""The deepest nesting of arrays and objects accepted in a tool call's arguments."""

_decode = msgspec.json.Decoder()


def arguments_object(text: str) -> dict[str, object] | str:
    """``text`` (``""`` counts as ``{}``) as a JSON object, or a sentence saying what it is instead."""
    try:
        value = _decode.decode(text or "{}")
    except RecursionError:
        return f"the arguments are nested deeper than {MAX_ARGUMENT_NESTING} levels"
    except msgspec.DecodeError as error:
        return f"the arguments are not valid JSON ({error})"
    if not isinstance(value, dict):
        return f"expected the arguments as a JSON object, got a JSON {type(value).__name__}"
    if _depth(value) > MAX_ARGUMENT_NESTING:
        return f"the arguments are nested deeper than {MAX_ARGUMENT_NESTING} levels"
    return value


def _depth(value: object) -> int:
    """How deeply arrays and objects nest in ``value`` (a walk with its own stack: no recursion)."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: list[object] = list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if level > MAX_ARGUMENT_NESTING:
            return level
        stack.extend((child, level + 1) for child in children)
    return deepest
