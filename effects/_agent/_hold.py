"""A model call's reservation in the session's budget pool: asked before the call, settled or released after."""

from __future__ import annotations

from agent_core import AgentInput, AgentState, PoolVerdictReceived

from .._machine import Dispatch
from .._money import BudgetPools
from ._context import EffectContext


class Hold:
    """A granted reservation: :meth:`settle` at the call's cost, or :meth:`release`; ``settled`` once either ran."""

    __slots__ = ("pool", "pools", "reservation_id", "settled")

    def __init__(self, pools: BudgetPools, pool: str, reservation_id: str) -> None:
        self.pools, self.pool, self.reservation_id = pools, pool, reservation_id
        self.settled = False

    async def settle(self, cost: int | None) -> None:
        """Add the call's cost to the pool (the reservation itself when the call was not priced)."""
        await self.pools.settle(self.pool, self.reservation_id, self.pools.per_call if cost is None else cost)
        self.settled = True

    async def release(self) -> None:
        """Drop the hold: the call failed or was cancelled."""
        await self.pools.release(self.pool, self.reservation_id)
        self.settled = True


async def reserve(ctx: EffectContext, state: AgentState, dispatch: Dispatch[AgentInput]) -> Hold | None:
    """Reserve for the call ``state`` derives and log the verdict; the hold, or ``None`` when refused."""
    pools, pool = ctx.budget_pools, state.config.budget_pool
    if pools is None:
        raise RuntimeError(
            f"the session's config names budget pool {pool!r}, but its runtime has no BudgetPools; "
            "expected Agent(pools=BudgetPools.sqlite(...) or .postgres(...))"
        )
    # Unique across the sessions sharing the pool, whatever id source each uses.
    reservation_id = f"{state.session_id}/{ctx.new_reservation_id()}"
    answer = await pools.reserve(pool, reservation_id, ctx.clock.now_ms())
    verdict = PoolVerdictReceived(
        timestamp=ctx.stamp(state.timestamp),
        pool=pool,
        reservation_id=reservation_id,
        amount=pools.per_call,
        granted=answer.granted,
        detail=answer.detail,
    )
    hold = Hold(pools, pool, reservation_id) if answer.granted else None
    try:
        applied = await dispatch.dispatch_committed(verdict)
    except BaseException:
        if hold is not None:
            await hold.release()
        raise
    if hold is not None and not applied:
        await hold.release()
        return None
    return hold
