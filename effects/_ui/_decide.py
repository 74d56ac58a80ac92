"""A person's decision on a tool call awaiting approval, written into the log from outside the running session."""

from __future__ import annotations

import time

from agent_core import AgentInput, ToolCallApproved, ToolCallDenied, check

from .._store import EventStore, SessionJournal


class DecisionRefused(Exception):
    """The decision does not fit the session now (already decided, no such call, no longer awaiting)."""


def decide(
    store: EventStore, session_id: str, tool_call_id: str, *, approve: bool, reason: str = "", now_ms: int | None = None
) -> int:
    """Append ``tool-call-approved`` or ``tool-call-denied`` to a stored session; returns its record number.

    The input is checked against the session's current state first
    (:class:`DecisionRefused` with the reducer's explanation), then appended
    with the expected length: if the session wrote in between, the store
    refuses (:class:`~effects.ConcurrencyError`) and nothing is written. The
    input is stamped ``now_ms`` (default: the wall clock), never before the
    session's last input. A
    session that follows its store (:func:`~effects.follow_store`) picks it up.
    """
    journal = SessionJournal.open(store, session_id)
    state = journal.state
    now = int(time.time() * 1000) if now_ms is None else now_ms
    timestamp = max(now, state.timestamp)
    inp: AgentInput = (
        ToolCallApproved(timestamp=timestamp, tool_call_id=tool_call_id)
        if approve
        else ToolCallDenied(timestamp=timestamp, tool_call_id=tool_call_id, reason=reason)
    )
    rejection = check(state, inp)
    if rejection is not None:
        raise DecisionRefused(str(rejection.message))
    journal.append([inp])
    return journal.seq
