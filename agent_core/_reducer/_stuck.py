"""Stuck detection: a turn asking for the same call again and again, or going round a short cycle of calls.

Calls are compared on their tool's name and their canonical arguments
(:func:`~agent_core.canonical_arguments`), never on the text the model wrote.
Two rules, both counted per turn in request order (a batch's calls in the
order the model listed them):

* the same call asked ``max_identical_tool_calls`` times in the turn;
* a cycle of two or more calls, not all the same, asked twice back to back
  (``A, B, A, B`` or ``A, B, C, A, B, C``), within the turn's last
  ``stuck_window`` calls (0 turns this rule off).
"""

from __future__ import annotations

from collections.abc import Mapping

from .._canonical import canonical_arguments
from .._inputs import ToolCallRequest
from .._state import ToolCallRecord, Turn

Repeats = tuple[tuple[str, str, int], ...]
Recent = list[tuple[str, str, str]]
"""The turn's newest calls, oldest first: (tool call id, tool name, canonical arguments)."""

_SHOWN = 120
"""The most characters of one call's arguments a cycle's verdict shows."""


def count_repeats(
    turn: Turn, calls: Mapping[str, ToolCallRecord], requests: dict[str, ToolCallRequest], threshold: int, window: int
) -> tuple[Repeats, str]:
    """The turn's repeat counts with ``requests`` added, and ``""``; or ``()`` and why the agent looks stuck,
    naming the calls, when a rule trips.

    The turn keeps its counts per spelling of the arguments, as it always has (so the state, and its hash,
    is the one an earlier release computed); the rules add the spellings of one canonical form up, and read
    the newest calls from the turn's own records.

    Cost: the number of distinct calls in the turn plus ``window`` squared per request (both bounded by
    the turn, never by the session).
    """
    counts = {(name, parameters): n for name, parameters, n in turn.repeats}
    same: dict[tuple[str, str], int] = {}
    for (name, parameters), n in counts.items():
        key = (name, canonical_arguments(parameters))
        same[key] = same.get(key, 0) + n
    recent = _recent(turn, calls, window)
    for call_id, request in requests.items():
        canonical = canonical_arguments(request.parameters)
        spelled = (request.name, request.parameters)
        counts[spelled] = counts.get(spelled, 0) + 1
        key = (request.name, canonical)
        n = same.get(key, 0) + 1
        same[key] = n
        if n >= threshold:
            return (), (
                f"tool {request.name!r} was asked {n} times in this turn with the same parameters "
                f"{canonical}; the agent looks stuck"
            )
        if window:
            recent = [*recent[-(window - 1) :], (call_id, request.name, canonical)]
            cycle = _cycle(recent)
            if cycle:
                return (), cycle
    return tuple((name, parameters, n) for (name, parameters), n in counts.items()), ""


def _recent(turn: Turn, calls: Mapping[str, ToolCallRecord], window: int) -> Recent:
    """The newest calls the turn asked for (not the past ones the history tool brought in), at most ``window``."""
    found: Recent = []
    for call_id in reversed(turn.tool_call_ids):
        if len(found) >= window:
            break
        record = calls[call_id]
        if record.turn == turn.number:
            found.append((call_id, record.name, canonical_arguments(record.parameters)))
    found.reverse()
    return found


def _cycle(recent: Recent) -> str:
    """Why the newest calls of ``recent`` look stuck in a cycle, or ``""``: the shortest period of two or more
    calls, not all the same, that the last calls repeat twice in a row."""
    keys = [(name, canonical) for _, name, canonical in recent]
    for period in range(2, len(keys) // 2 + 1):
        newest = keys[-period:]
        if newest == keys[-2 * period : -period] and len(set(newest)) > 1:
            calls = ", ".join(
                f"{call_id} ({name} {_cut(canonical)})" for call_id, name, canonical in recent[-2 * period :]
            )
            return (
                f"the tool calls {calls} go round a cycle of the same {period} calls twice in this turn; "
                "the agent looks stuck"
            )
    return ""


def _cut(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."
