"""Picking up inputs that others append to a running session's log (a person deciding in the viewer).

A running session is the only writer of its log, except for decisions made
elsewhere: ``tool-call-approved`` / ``tool-call-denied`` appended through the
store (with the expected length, so a race is refused, never merged). The
running session polls the store, and dispatches each new record's input; the
journal recognises it and does not write it twice.
"""

from __future__ import annotations

import anyio

from agent_core import AgentInput, AgentState, Effect

from .._machine import Machine
from ._journal import SessionJournal

DEFAULT_FOLLOW_INTERVAL = 0.2
"""Seconds between two looks at the store."""


async def follow_store(
    machine: Machine[AgentState, AgentInput, Effect], journal: SessionJournal, interval: float = DEFAULT_FOLLOW_INTERVAL
) -> None:
    """Poll the store every ``interval`` seconds for records this session did not write; dispatch their inputs.

    Runs until cancelled. A record that cannot be read raises (the session stops with the error).
    """
    store, session_id = journal.store, journal.session_id
    while True:
        await anyio.sleep(interval)
        known = journal.seq + journal.expected
        if store.session(session_id).length <= known:
            continue
        for record in store.read(session_id, known + 1):
            inp = record.decode()
            journal.expect(record)
            machine.dispatch(inp)
