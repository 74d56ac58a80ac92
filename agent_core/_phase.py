"""The derived lifecycle of a session, and which input types each phase accepts."""

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


_IN_ANY_TURN = ("user-message-received", "timer-fired", "re-act-cancelled")

VALID_INPUTS: dict[Phase, frozenset[str]] = {
    Phase.NOT_STARTED: frozenset({"session-started"}),
    Phase.IDLE: frozenset({"user-message-received"}),
    Phase.THINKING: frozenset(
        {
            *_IN_ANY_TURN,
            "llm-message-started",
            "llm-message-completed",
            "re-act-observed",
            "llm-call-failed",
            "context-window-expanded",
            "history-tool-calls-added",
        }
    ),
    Phase.ACTING: frozenset(
        {*_IN_ANY_TURN, "tool-call-started", "tool-call-completed", "tool-call-approved", "tool-call-denied"}
    ),
    Phase.AWAITING_APPROVAL: frozenset({*_IN_ANY_TURN, "tool-call-approved", "tool-call-denied"}),
    Phase.RETRYING: frozenset(_IN_ANY_TURN),
}
"""The input types each phase may accept. A listed type can still be refused by a
guard (an unknown id, a timer that is not due); an unlisted one always is."""


def valid_inputs(state: AgentState) -> tuple[str, ...]:
    """The input types the state's current phase may accept, sorted."""
    return tuple(sorted(VALID_INPUTS[phase(state)]))
