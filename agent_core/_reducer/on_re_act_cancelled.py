"""``re-act-cancelled``: the user stopped the current turn."""

from __future__ import annotations

from msgspec.structs import replace

from .._inputs import ReActCancelled
from .._state import AgentState
from ._common import require_turn
from ._turns import end_turn


def on_re_act_cancelled(state: AgentState, inp: ReActCancelled) -> AgentState:
    """End the turn as ``cancelled``; its dangling calls get failure results the model will see."""
    require_turn(state, inp)
    state = replace(state, timestamp=inp.timestamp, step=state.step + 1)
    return end_turn(state, "cancelled", "cancelled", inp.reason or "cancelled by the user")
