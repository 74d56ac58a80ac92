"""Stuck detection: how often a turn asked for the same tool with the same parameters."""

from __future__ import annotations

from .._inputs import ToolCallRequest
from .._state import Turn

Repeats = tuple[tuple[str, str, int], ...]

# The counts behind the last repeats tuple built, so the next batch of the same turn
# starts from them instead of rebuilding a dict of every (tool, parameters) pair the
# turn asked for (a cost that grows with the turn). A one-entry cache keyed by the
# identity of the tuple it made (which it keeps alive): results never depend on it.
_last_counts: tuple[Repeats, dict[tuple[str, str], int]] = ((), {})


def count_repeats(turn: Turn, requests: dict[str, ToolCallRequest], threshold: int) -> tuple[Repeats, str]:
    """The turn's repeat counts with ``requests`` added, and ``""``; or ``()`` and why the
    agent looks stuck, when a (tool, parameters) pair reaches ``threshold`` requests."""
    global _last_counts
    repeats = turn.repeats
    built, cached = _last_counts
    counts = dict(cached) if built is repeats else {(name, parameters): n for name, parameters, n in repeats}
    appended: list[tuple[str, str, int]] = []
    for request in requests.values():
        key = (request.name, request.parameters)
        n = counts.get(key, 0) + 1
        counts[key] = n
        if n >= threshold:
            return (), (
                f"tool {request.name!r} was asked {n} times in this turn with the same parameters "
                f"{request.parameters}; the agent looks stuck"
            )
        appended.append((request.name, request.parameters, n))
    if all(n == 1 for _, _, n in appended):
        result = repeats + tuple(appended)  # only new pairs: they go last, in the order asked
    else:
        result = tuple((name, parameters, n) for (name, parameters), n in counts.items())
    _last_counts = (result, counts)
    return result, ""
