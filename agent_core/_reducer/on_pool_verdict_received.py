"""``pool-verdict-received``: a budget pool answered the reservation a model call asked for before it started."""

from __future__ import annotations

from msgspec.structs import replace

from .._encodable import MAX_COUNT
from .._inputs import PoolVerdictReceived
from .._state import AgentState
from ._common import reject, require_thinking
from ._turns import end_turn


def on_pool_verdict_received(state: AgentState, inp: PoolVerdictReceived) -> AgentState:
    """A grant lets the model call (the answer's or a summarization's) go on (nothing else changes); a refusal
    fails the turn, reason ``budget-pool`` (which gives up a summarization under way)."""
    require_thinking(state, inp)
    pool = state.config.budget_pool
    if not pool or inp.pool != pool:
        expected = f"a verdict of the session's pool {pool!r}" if pool else "none: the session has no budget_pool"
        reject(state, inp, "unknown-pool", "session-pool", f"pool {inp.pool!r} answered; expected {expected}")
    if not inp.reservation_id:
        reject(state, inp, "empty-id", "reservation-id-present", "expected a non-empty reservation_id, got ''")
    if not 0 <= inp.amount <= MAX_COUNT:
        reject(
            state, inp, "amount-range", "amount-in-range", f"expected an amount from 0 to {MAX_COUNT}, got {inp.amount}"
        )
    state = replace(state, timestamp=inp.timestamp, step=state.step + 1)
    if inp.granted:
        return state
    return end_turn(state, "failed", "budget-pool", inp.detail or f"budget pool {pool!r} is spent")
