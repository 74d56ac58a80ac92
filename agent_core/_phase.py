"""The derived lifecycle of a session (which input types each phase accepts is in the reducer's table)."""

from __future__ import annotations

import enum

from ._state import AgentState


class Phase(enum.StrEnum):
    """Where a session stands; derived from the state, never stored."""

    NOT_STARTED = "not-started"
    IDLE = "idle"
    THINKING = "thinking"
    ACTING = "acting"
    AWAITING_APPROVAL = "awaiting-approval"
    RETRYING = "retrying"


def phase(state: AgentState) -> Phase:
    """The session's phase: ``not-started``, ``idle``, ``thinking``, ``acting``, ``awaiting-approval`` or ``retrying``.

    ``acting`` wins over ``awaiting-approval`` while some calls still run.
    """
    turn = state.turn
    if turn is None:
        return Phase.IDLE if state.started else Phase.NOT_STARTED
    if turn.retry_at is not None:
        return Phase.RETRYING
    if turn.open_call_ids:
        return Phase.ACTING
    if turn.awaiting_ids:
        return Phase.AWAITING_APPROVAL
    return Phase.THINKING
