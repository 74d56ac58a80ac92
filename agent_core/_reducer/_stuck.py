"""Stuck detection: how often a turn asked for the same tool with the same parameters."""

from __future__ import annotations

from .._inputs import ToolCallRequest
from .._state import Turn

Repeats = tuple[tuple[str, str, int], ...]


def count_repeats(turn: Turn, requests: dict[str, ToolCallRequest], threshold: int) -> tuple[Repeats, str]:
    """The turn's repeat counts with ``requests`` added, and ``""``; or ``()`` and why the
    agent looks stuck, when a (tool, parameters) pair reaches ``threshold`` requests.

    Cost: the number of distinct calls in the turn (bounded by the turn, never by the session).
    """
    counts = {(name, parameters): n for name, parameters, n in turn.repeats}
    for request in requests.values():
        key = (request.name, request.parameters)
        n = counts.get(key, 0) + 1
        counts[key] = n
        if n >= threshold:
            return (), (
                f"tool {request.name!r} was asked {n} times in this turn with the same parameters "
                f"{request.parameters}; the agent looks stuck"
            )
    return tuple((name, parameters, n) for (name, parameters), n in counts.items()), ""
