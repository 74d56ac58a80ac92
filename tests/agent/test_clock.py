"""Clocks: a manual clock wakes sleepers in order without real sleeping; time never goes backwards."""

from __future__ import annotations

import anyio
import pytest

from effects import Clock, SystemClock
from effects.testing import ManualClock


@pytest.mark.anyio
async def test_sleepers_wake_in_order_when_the_clock_reaches_them() -> None:
    clock = ManualClock(start_ms=1000)
    woke: list[int] = []

    async def sleeper(at: int) -> None:
        await clock.sleep_until(at)
        woke.append(at)

    async with anyio.create_task_group() as group:
        for at in (1300, 1100, 1200):
            group.start_soon(sleeper, at)
        await anyio.wait_all_tasks_blocked()
        assert clock.sleepers() == [1100, 1200, 1300]
        clock.advance(150)
        await anyio.wait_all_tasks_blocked()
        assert woke == [1100]
        clock.set(1300)
    assert sorted(woke) == [1100, 1200, 1300]
    assert clock.now_ms() == 1300


@pytest.mark.anyio
async def test_a_time_already_reached_returns_at_once() -> None:
    clock = ManualClock(start_ms=50)
    await clock.sleep_until(50)
    await clock.sleep_until(10)
    assert clock.sleepers() == []


@pytest.mark.anyio
async def test_a_cancelled_sleeper_is_forgotten() -> None:
    clock = ManualClock(start_ms=0)
    with anyio.move_on_after(0):
        await clock.sleep_until(10)
    assert clock.sleepers() == []


def test_time_never_goes_backwards() -> None:
    clock = ManualClock(start_ms=100)
    with pytest.raises(ValueError, match=r"expected a time at or after 100, got 99; a clock never goes backwards"):
        clock.set(99)
    with pytest.raises(ValueError, match=r"expected ms >= 0 to advance by, got -1"):
        clock.advance(-1)


@pytest.mark.anyio
async def test_the_system_clock_reads_and_waits_for_wall_time() -> None:
    clock = SystemClock()
    assert isinstance(clock, Clock)
    now = clock.now_ms()
    assert now > 1_600_000_000_000
    await clock.sleep_until(now)  # already reached: returns at once
    await clock.sleep_until(now + 2)
    assert clock.now_ms() >= now + 2


@pytest.mark.anyio
async def test_a_wall_clock_deadline_ends_only_its_own_block() -> None:
    clock = SystemClock()
    after: list[str] = []
    with clock.scope_until(clock.now_ms() + 60_000):
        with clock.scope_until(clock.now_ms() + 10):
            await anyio.sleep(30)
            after.append("not reached")
        after.append("inner ended")  # the inner deadline passed: its cancellation ends the inner block only
        await anyio.sleep(0)
        after.append("outer ran on")
    assert after == ["inner ended", "outer ran on"]

    with clock.scope_until(clock.now_ms() + 10):
        with clock.scope_until(clock.now_ms() + 60_000):
            await anyio.sleep(30)
        after.append("not reached either")  # the outer deadline's cancellation passes through the inner block
    assert after == ["inner ended", "outer ran on"]


@pytest.mark.anyio
async def test_a_cancellation_from_outside_passes_through_a_wall_clock_deadline() -> None:
    clock = SystemClock()
    with anyio.move_on_after(0.01) as outer:
        with clock.scope_until(clock.now_ms() + 60_000):
            await anyio.sleep(30)
        pytest.fail("the block swallowed a cancellation that was not its own")
    assert outer.cancelled_caught
    with clock.scope_until(clock.now_ms() + 5):
        await anyio.sleep(0)
    await anyio.sleep(0.03)  # past that deadline: a block that ended before it leaves the task alone
