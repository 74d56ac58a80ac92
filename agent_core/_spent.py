"""What a session's turn spent, its child sessions' included: what a child reports to its caller."""

from __future__ import annotations

from ._inputs import Spend
from ._reducer._turns import NOTHING_SPENT, spent_by_turn
from ._state import AgentState


def spent(state: AgentState) -> Spend:
    """What the open turn has spent so far, its child sessions' included; between turns, what the last turn
    spent (kept in ``last_outcome.spent`` by a child session and by a turn whose children spent; nothing
    otherwise). A child session runs one turn per call, so this is what the call that runs it cost."""
    if state.turn is not None:
        return spent_by_turn(state.turn)
    outcome = state.last_outcome
    return outcome.spent if outcome is not None and outcome.spent is not None else NOTHING_SPENT
