"""A page of a session as the viewer draws it: some records, and the state the page ends in.

The page never holds the whole session. It is the records after a given one
(``after``: following a live session, the page asks for the records after
the last it has), the records before a given one (``before``: "load
earlier"), or, without either, the newest. Each record comes with its
conversation entries and the lanes (spans) it ended; the page ends with the
phase, the approvals waiting, the budgets and the lanes still open after its
last record. Sizes are bounded (see ``_bounds``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from agent_core import AgentState, format_nanos, pending_approvals, phase

from .._store import EventStore, LogDamaged
from ._bounds import PAGE_BYTES, RECORD_BYTES, RECORDS_PER_PAGE, SUMMARY_BYTES, clip, size
from ._cursor import Cursor, Cursors, Folded, shown_cost


def session_view(
    store: EventStore,
    session_id: str,
    *,
    after: int | None = None,
    before: int | None = None,
    limit: int = RECORDS_PER_PAGE,
) -> dict[str, Any]:
    """A page of at most ``limit`` records of the session (at most :data:`RECORDS_PER_PAGE`), and the state
    after the page's last record: the newest records, those after record ``after``, or those before ``before``.

    Keys: ``session`` (as the store lists it), ``from``/``to`` (the records in
    the page; ``from == to + 1`` when it holds none), ``records`` (timeline
    entries), ``conversation``, ``lanes`` (the spans the page's records
    ended), and, after record ``to``: ``phase``, ``approvals``, ``budgets``,
    ``open`` (the lanes still running). A page of records ``after`` another
    ends early, at the record that takes it past :data:`PAGE_BYTES`; a page
    ``before`` one drops its first records to stay within it.
    """
    return Views(store).page(session_id, after=after, before=before, limit=limit)


class Views:
    """Pages of the sessions of one store, folding on from the cursors earlier pages left."""

    def __init__(self, store: EventStore, cursors: Cursors | None = None) -> None:
        self.store = store
        self.cursors = cursors if cursors is not None else Cursors()

    def page(
        self, session_id: str, *, after: int | None = None, before: int | None = None, limit: int = RECORDS_PER_PAGE
    ) -> dict[str, Any]:
        """See :func:`session_view`."""
        info = self.store.session(session_id)
        length = info.length
        if not 1 <= limit <= RECORDS_PER_PAGE:
            raise ValueError(f"a page holds 1 to {RECORDS_PER_PAGE} records; got limit={limit}")
        if after is not None and before is not None:
            raise ValueError("ask for the records after a record or before one, not both")
        if after is not None and not 0 <= after <= length:
            raise ValueError(f"session {session_id!r} has records 1 to {length}; got after={after}")
        if before is not None and not 1 <= before <= length + 1:
            raise ValueError(f"session {session_id!r} has records 1 to {length}; got before={before}")
        try:
            if after is not None:
                cursor, parts = self._forward(session_id, after, min(after + limit, length))
            else:
                stop = length if before is None else before - 1
                cursor, parts = self._backward(session_id, max(stop - limit, 0), stop)
        except LogDamaged:
            self.cursors.forget(session_id)
            raise
        first = parts[0]["record"]["seq"] if parts else cursor.seq + 1
        page = {
            "session": msgspec.to_builtins(info),
            "from": first,
            "to": cursor.seq,
            "records": [part["record"] for part in parts],
            "conversation": [entry for part in parts for entry in part["conversation"]],
            "lanes": [lane for part in parts for lane in part["lanes"]],
            **summary(cursor),
        }
        self.cursors.put(cursor)
        return page

    def _forward(self, session_id: str, after: int, stop: int) -> tuple[Cursor, list[dict[str, Any]]]:
        """Records ``after + 1 ..`` up to ``stop``, ending with the one that takes the page past its bytes."""
        cursor = self.cursors.take(self.store, session_id, after)
        parts: list[dict[str, Any]] = []
        total = 0

        def take(folded: Folded) -> bool:
            nonlocal total
            part = _clipped(folded, RECORD_BYTES)
            parts.append(part)
            total += size(part)
            return total < PAGE_BYTES

        cursor.advance(self.store, stop, take)
        return cursor, parts

    def _backward(self, session_id: str, start: int, stop: int) -> tuple[Cursor, list[dict[str, Any]]]:
        """Records ``start + 1 .. stop``, without the first ones beyond the page's bytes."""
        cursor = self.cursors.take(self.store, session_id, start)
        parts: list[tuple[dict[str, Any], int]] = []

        def take(folded: Folded) -> bool:
            part = _clipped(folded, RECORD_BYTES)
            parts.append((part, size(part)))
            return True

        cursor.advance(self.store, stop, take)
        total, kept = 0, 0
        for _, bytes_ in reversed(parts):
            if kept and total + bytes_ > PAGE_BYTES:
                break
            total, kept = total + bytes_, kept + 1
        return cursor, [part for part, _ in parts[len(parts) - kept :]]


def _clipped(folded: Folded, budget: int) -> dict[str, Any]:
    """The record's part of a page cut to ``budget``; only its timeline entry if even cut it does not fit."""
    part = clip(folded.part, budget)
    if isinstance(part, dict):
        return part
    record = folded.part["record"]
    kept = {key: record[key] for key in ("seq", "type", "timestamp", "phase_before", "phase_after")}
    return {"record": {**kept, "summary": part}, "conversation": [], "lanes": []}


def summary(cursor: Cursor) -> dict[str, Any]:
    """The state after the cursor's record as a page ends with it: phase, approvals, budgets, open lanes."""
    state = cursor.state
    at = {"phase": phase(state).value, "approvals": _approvals(state), "budgets": _budgets(state)}
    shown = clip({**at, "open": cursor.open_lanes()}, SUMMARY_BYTES)
    return shown if isinstance(shown, dict) else {**at, "approvals": [], "open": [], "note": shown}


def _approvals(state: AgentState) -> list[dict[str, Any]]:
    """The calls waiting for a decision here and in child sessions: a child's is named by its address, which
    ``.../decisions`` takes as its ``tool_call_id``; ``path`` is the sessions down to the one holding it."""
    return [
        {
            "tool_call_id": p.address if p.via else p.tool_call_id,
            "name": p.tool,
            "parameters": p.arguments,
            "path": list(p.path),
        }
        for p in pending_approvals(state)
    ]


def _budgets(state: AgentState) -> dict[str, Any]:
    """The configured per-turn budgets and the open turn's use of them (turns that ran out are lanes)."""
    if not state.started:
        return {}
    config, turn = state.config, state.turn
    return {
        "limits": {
            "model_calls": config.max_model_calls,
            "tool_calls": config.max_tool_calls,
            "tokens": config.max_tokens,
            "turn_ms": config.max_turn_ms,
            "cost": shown_cost(config.max_cost),
            "session_cost": shown_cost(config.max_session_cost),
        },
        "used": None
        if turn is None
        else {
            "turn": turn.number,
            "model_calls": turn.model_calls,
            "tool_calls": turn.tool_call_count,
            "tokens": turn.tokens,
            "turn_ms": state.timestamp - turn.started_at,
            "cost": format_nanos(turn.cost),
            "session_cost": format_nanos(state.cost),
        },
    }
