"""Clocks: where the runner reads the time it stamps on inputs, and how effects wait for a time.

The runner never calls ``time`` directly: it asks the session's :class:`Clock`,
so tests inject a :class:`ManualClock` and nothing ever sleeps for real.

``sleep_until`` waits inside :func:`effects.parked`: a machine's ``settled()``
treats an effect waiting only for the clock as unable to progress. The
clocks shipped here also offer ``wait_until``, the same wait without parking,
for deadlines that run *alongside* work (a tool's timeout must not make the
running tool look idle).
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import ClassVar, Protocol, runtime_checkable

import anyio

from .._machine import parked, sleep
from ._deadlines import deadline_after


@runtime_checkable
class Clock(Protocol):
    """A source of time in integer milliseconds since the epoch, and a way to wait for a time."""

    def now_ms(self) -> int:
        """The current time, ms since the epoch."""
        ...

    async def sleep_until(self, ms: int) -> None:
        """Return once ``now_ms() >= ms`` (at once if it already is), waiting inside ``parked()``."""
        ...


class SystemClock:
    """The wall clock (``time.time_ns``), waiting with the event loop's own sleep."""

    loop_deadlines: ClassVar[bool] = True
    """Its deadlines run on the event loop's clock, so under trio an effect's last call may use its own scope."""

    def now_ms(self) -> int:
        """The wall-clock time, ms since the epoch."""
        return time.time_ns() // 1_000_000

    async def wait_until(self, ms: int) -> None:
        """Return once the wall clock reaches ``ms``, without parking."""
        # Loop: the loop's sleep runs on a monotonic clock and the wall clock may be adjusted meanwhile.
        while (remaining := ms - self.now_ms()) > 0:
            await anyio.sleep(remaining / 1000)

    def scope_until(self, ms: int) -> AbstractContextManager[object]:
        """A block cancelled when the wall clock reaches ``ms`` (the cancellation ends the block only).

        Measured on the event loop's monotonic clock from now, with one loop
        timer for all such deadlines (see ``effects._clock._deadlines``): much cheaper
        than a task waiting alongside the work, or a cancel scope per call.
        """
        return deadline_after(max(0, ms - self.now_ms()) / 1000)

    async def sleep_until(self, ms: int) -> None:
        """Return once the wall clock reaches ``ms``; the wait is parked.

        In an effect run by a machine under asyncio it holds a plain loop
        timer, not a task (``effects._machine.sleep``). (A session's own
        ``wait-until`` effects on this clock are alarms: see :class:`~effects.Alarm`.)
        """
        if ms <= self.now_ms():
            return
        async with parked():
            while (remaining := ms - self.now_ms()) > 0:  # the wall clock may be adjusted meanwhile
                await sleep(remaining / 1000)


class ManualClock:
    """A clock that moves only when told: ``advance(ms)`` or ``set(ms)``. For tests, without real sleeping.

    Sleepers wake, in order of their times, as soon as the clock reaches them.
    Time never goes backwards (``set`` to an earlier time raises), because the
    reducer refuses inputs whose timestamps go backwards.
    """

    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        if start_ms < 0:
            raise ValueError(f"expected a start time >= 0 (ms since the epoch), got {start_ms}")
        self._now = start_ms
        self._sleepers: list[tuple[int, int, anyio.Event | _Canceller]] = []
        self._order = itertools.count()

    def now_ms(self) -> int:
        """The clock's current time, ms since the epoch."""
        return self._now

    def advance(self, ms: int) -> None:
        """Move the clock forward by ``ms`` (>= 0) and wake every sleeper whose time came."""
        if ms < 0:
            raise ValueError(f"expected ms >= 0 to advance by, got {ms}; a clock never goes backwards")
        self.set(self._now + ms)

    def set(self, ms: int) -> None:
        """Move the clock to ``ms`` (not earlier than now) and wake every sleeper whose time came."""
        if ms < self._now:
            raise ValueError(f"expected a time at or after {self._now}, got {ms}; a clock never goes backwards")
        self._now = ms
        while self._sleepers and self._sleepers[0][0] <= ms:
            heapq.heappop(self._sleepers)[2].set()

    def sleepers(self) -> list[int]:
        """The times sleepers wait for, earliest first (what a test may advance to next)."""
        return sorted(at for at, _, event in self._sleepers if not event.is_set())

    async def wait_until(self, ms: int) -> None:
        """Return once the clock reaches ``ms``, without parking."""
        if ms <= self._now:
            return
        event = anyio.Event()
        entry = (ms, next(self._order), event)
        heapq.heappush(self._sleepers, entry)
        try:
            await event.wait()
        finally:
            if not event.is_set():
                # Cancelled: forget the sleeper so the heap does not grow with dead entries.
                self._sleepers.remove(entry)
                heapq.heapify(self._sleepers)

    @contextmanager
    def scope_until(self, ms: int) -> Iterator[anyio.CancelScope]:
        """A cancel scope that cancels its block when the clock reaches ``ms`` (a deadline with no task)."""
        with anyio.CancelScope() as scope:
            canceller = _Canceller(scope)
            entry = (ms, next(self._order), canceller)
            if ms <= self._now:
                canceller.set()
            else:
                heapq.heappush(self._sleepers, entry)
            try:
                yield scope
            finally:
                if not canceller.is_set():  # the block ended first: forget the deadline
                    self._sleepers.remove(entry)
                    heapq.heapify(self._sleepers)

    async def sleep_until(self, ms: int) -> None:
        """Return once the clock reaches ``ms``; the wait is parked, so ``settled()`` does not wait for it."""
        if ms <= self._now:
            return
        async with parked():
            await self.wait_until(ms)


class _Canceller:
    """A deadline in :class:`ManualClock`'s sleepers: reaching it cancels a scope (the ``Event`` interface)."""

    __slots__ = ("scope",)

    def __init__(self, scope: anyio.CancelScope) -> None:
        self.scope = scope

    def set(self) -> None:
        self.scope.cancel("the deadline passed")

    def is_set(self) -> bool:
        return self.scope.cancel_called
