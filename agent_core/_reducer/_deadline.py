"""The turn's deadline counts running time: it waits while the turn only waits for a person.

A turn whose every remaining call awaits approval (phase ``awaiting-approval``)
runs nothing and costs nothing; how long a person takes to decide is not the
agent being slow or stuck. So the deadline pauses there and moves on by the
length of the wait when the turn runs again. The times come from the inputs'
timestamps, as everywhere in the reducer.
"""

from __future__ import annotations

from msgspec.structs import replace

from .._phase import Phase, phase
from .._state import AgentState


def pause_or_resume(state: AgentState) -> AgentState:
    """``state`` with its turn's deadline paused, if the turn has just begun to wait only for approvals, or
    moved on by the wait, if it has just stopped waiting. Applied after every accepted input."""
    turn = state.turn
    if turn is None or (turn.paused_at is None and not turn.awaiting_ids):
        return state  # the common case, kept cheap: nobody is asked for anything
    if turn.deadline is None:  # no deadline (or none left: a final answer is being asked for), nothing paused
        return state
    # A deadline that has already passed is not paused: its timer is due, and the turn ends when it fires.
    waiting = phase(state) is Phase.AWAITING_APPROVAL and (
        turn.paused_at is not None or state.timestamp < turn.deadline
    )
    if waiting == (turn.paused_at is not None):
        return state
    if waiting:
        return replace(state, turn=replace(turn, paused_at=state.timestamp))
    assert turn.paused_at is not None
    moved = turn.deadline + (state.timestamp - turn.paused_at)
    return replace(state, turn=replace(turn, deadline=moved, paused_at=None))
