"""An effect that waits again after the deadline of its "last" call passed fails the machine, visibly.

Under trio, a call ``run_until(..., final=True)`` bounds (the agent's model and
tool calls) is bounded through the effect's own cancel scope, which stays cancelled
once the deadline passes. Code that broke that contract would end the effect
without its result and leave the session waiting for it; the machine raises
instead. This is an internal contract of the agent's effect handlers, so the
test reaches the internal ``run_until``: no public path can break it.
"""

from __future__ import annotations

import anyio
import pytest

from effects import SystemClock
from effects._clock import TIMED_OUT, run_until

from ._counter import Dispatch, StartJob, machine

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "trio"  # under asyncio a deadline has a cancellation of its own to swallow: nothing to break


async def test_an_effect_waiting_after_its_final_deadline_passed_stops_the_machine() -> None:
    seen: list[object] = []

    async def overstays(dispatch: Dispatch) -> None:
        clock = SystemClock()
        seen.append(await run_until(clock, clock.now_ms() + 5, anyio.sleep_forever, final=True))
        await anyio.sleep(0)  # the contract broken: the effect's own scope is cancelled by now

    m, _ = machine(jobs={"overstays": overstays})
    with pytest.raises(RuntimeError, match="waited again after the deadline of its last call passed"):
        async with m.running():
            m.dispatch(StartJob("overstays"))
            with anyio.fail_after(10):
                await m.settled()
    assert seen == [TIMED_OUT]


async def test_an_effect_ending_after_its_final_deadline_passed_ends_normally() -> None:
    ended: list[object] = []

    async def keeps_it(dispatch: Dispatch) -> None:
        clock = SystemClock()
        ended.append(await run_until(clock, clock.now_ms() + 5, anyio.sleep_forever, final=True))

    m, _ = machine(jobs={"keeps_it": keeps_it})
    async with m.running():
        m.dispatch(StartJob("keeps_it"))
        with anyio.fail_after(10):
            await m.settled()
    assert ended == [TIMED_OUT]
