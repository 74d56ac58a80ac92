"""The ``wait-until`` effect: sleep on the session's clock, then ``timer-fired``.

On a clock that follows the event loop's (the system clock) it is an
:class:`~effects.Alarm`: under asyncio a loop timer alone, with no
coroutine, so the turn's deadline, waiting through every turn of every
session, costs a session one timer. The clock raising is a bug in the clock:
it propagates and stops the session.
"""

from __future__ import annotations

from agent_core import AgentInput, TimerFired, WaitUntil

from .._machine import Alarm, Dispatch, parked
from ._context import EffectContext


async def wait_until(ctx: EffectContext, eff: WaitUntil, dispatch: Dispatch[AgentInput]) -> None:
    """Sleep (parked: the session counts as settled meanwhile) until ``eff.at``, then dispatch ``timer-fired``."""
    async with parked():
        await ctx.clock.sleep_until(eff.at)
    dispatch(_fired(ctx, eff))


def _fired(ctx: EffectContext, eff: WaitUntil) -> TimerFired:
    """The ``timer-fired`` of ``eff``, stamped no earlier than its time."""
    return TimerFired(timestamp=ctx.stamp(at_least=eff.at))


class WaitUntilAlarm(Alarm[AgentInput]):
    """``wait_until`` as an alarm: for a clock whose time follows the event loop's (``loop_deadlines``)."""

    __slots__ = ("ctx", "eff")

    def __init__(self, ctx: EffectContext, eff: WaitUntil) -> None:
        self.ctx, self.eff = ctx, eff

    def seconds_left(self) -> float:
        return (self.eff.at - self.ctx.clock.now_ms()) / 1000

    def fire(self, dispatch: Dispatch[AgentInput], /) -> None:
        dispatch(_fired(self.ctx, self.eff))

    def __repr__(self) -> str:
        return f"<agent effect {self.eff!r}>"
