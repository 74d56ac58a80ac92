"""A model call's cost: checked where it enters, then added to the turn's and the session's spend, which the
cost budgets read (``_turns.settle``). Shared by every input that ends a model call."""

from __future__ import annotations

from .._encodable import MAX_COUNT
from .._inputs import AnswerRejected, ContextCompacted, LlmCallFailed, ReActObserved
from .._state import AgentState, Turn
from ._common import reject
from ._turns import counts_cost


def check_cost(state: AgentState, inp: ReActObserved | AnswerRejected | ContextCompacted | LlmCallFailed) -> None:
    """A call's cost, when priced, is 0 or more and keeps the session's cost in range."""
    cost = inp.cost
    if cost is None:
        return
    if cost < 0:
        # Accepted, it would lower the session's and the turn's spend below what was paid.
        reject(state, inp, "negative-cost", "cost-not-negative", f"expected a cost of 0 or more nano-units, got {cost}")
    if state.cost + cost > MAX_COUNT:
        reject(
            state,
            inp,
            "cost-overflow",
            "cost-in-range",
            f"cost={cost} would take the session's cost past {MAX_COUNT} nano-units; "
            "expected what one model call cost, in nano-units",
        )


def turn_spend(state: AgentState, turn: Turn, cost: int | None) -> tuple[int, bool]:
    """The turn's cost with the call's ``cost`` added, and whether a call of the turn could not be priced while
    the session counts money (a cost budget or a pool is set)."""
    return turn.cost + (cost or 0), turn.unpriced or (cost is None and counts_cost(state.config))


def session_spend(state: AgentState, cost: int | None) -> int:
    """The session's cost with the call's ``cost`` added."""
    return state.cost + (cost or 0)
