"""A person's decision on a tool call awaiting approval, written into the log from outside the running session."""

from __future__ import annotations

import time

from agent_core import Decision, check, decision_inputs

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

    ``tool_call_id`` may be the address of a call waiting in a child session
    (``<child session id>/<tool call id>``, see :func:`~agent_core.pending_approvals`):
    the decision is appended to ``session_id``'s log as the answer to the call that
    runs the child, which passes it on once the session runs (or resumes).
    """
    journal = SessionJournal.open(store, session_id)
    state = journal.state
    now = int(time.time() * 1000) if now_ms is None else now_ms
    timestamp = max(now, state.timestamp)
    (inp,) = decision_inputs(state, {tool_call_id: Decision(approve=approve, reason=reason)}, timestamp)
    rejection = check(state, inp)
    if rejection is not None:
        raise DecisionRefused(str(rejection.message))
    journal.append([inp])
    return journal.seq
