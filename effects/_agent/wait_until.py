"""The ``wait-until`` effect: sleep on the session's clock, then ``timer-fired``.

The clock raising is a bug in the clock: it propagates and stops the session.
"""

from __future__ import annotations

from agent_core import AgentInput, TimerFired, WaitUntil

from .._machine import Dispatch, parked
from ._context import EffectContext


async def wait_until(ctx: EffectContext, eff: WaitUntil, dispatch: Dispatch[AgentInput]) -> None:
    """Sleep (parked: the session counts as settled meanwhile) until ``eff.at``, then dispatch ``timer-fired``."""
    async with parked():
        await ctx.clock.sleep_until(eff.at)
    dispatch(TimerFired(timestamp=ctx.stamp(at_least=eff.at)))
