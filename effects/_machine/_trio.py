"""The effect tasks under trio: each effect a task of the machine's nursery, in a cancel scope of its own
(trio interrupts a block only through a scope); the alarms of a machine wait together in one task.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Generator
from typing import Any

from ._protocols import Controller
from ._runs import _CURRENT, Alarm, EffectRun, ring

DEADLINE_ESCAPED = (
    "the effect waited again after the deadline of its last call passed (under trio that deadline cancels the "
    "effect's own scope: see effects._clock.run_until), so it ended without its result"
)


class TrioRuns:
    """Runs effects as tasks of a trio nursery, each in a cancel scope of its own; alarms in one task for all."""

    def __init__(self, nursery: Any) -> None:
        import trio  # only reached under trio

        self._trio = trio
        self._nursery = nursery
        self._alarms: _TrioAlarms | None = None
        self._flusher: Any = None  # the flushes' task while it is parked, waiting to be woken
        self._wake_pending = False  # woken while it was not parked: it flushes again at once

    def flush_soon(self) -> None:
        """Wake the flushes' task (see :meth:`flushes`)."""
        task, self._flusher = self._flusher, None
        if task is None:
            self._wake_pending = True
        else:
            self._trio.lowlevel.reschedule(task)

    async def flushes(self, flush: Callable[[], None]) -> None:
        """The task that runs the machine's flushes: parked until :meth:`flush_soon` reschedules it (no event is
        made per flush), then ``flush()``."""
        lowlevel = self._trio.lowlevel

        def abort(_: object) -> Any:
            self._flusher = None
            return lowlevel.Abort.SUCCEEDED

        while True:
            if self._wake_pending:
                self._wake_pending = False
                await lowlevel.checkpoint()
            else:
                self._flusher = lowlevel.current_task()
                await lowlevel.wait_task_rescheduled(abort)
            flush()

    def start(self, run: EffectRun[Any], controller: Controller[Any]) -> None:
        """Start ``controller.start(run)`` in a task of its own; an :class:`Alarm` waits in the alarms' task."""
        if isinstance(controller, Alarm):
            if self._alarms is None:
                self._alarms = _TrioAlarms(self._trio, self._nursery)
            ring(run, controller, True, self._alarms.wait)
            return
        run.handle = scope = self._trio.CancelScope()
        self._nursery.start_soon(self._run, run, controller, scope, name=f"effect {run.key}")

    async def _run(self, run: EffectRun[Any], controller: Controller[Any], scope: Any) -> None:
        _CURRENT.set(run)
        try:
            with scope:
                await controller.start(run)
            if scope.cancelled_caught and not run.cancelled:
                raise RuntimeError(DEADLINE_ESCAPED)
        except Exception as error:
            run.host.run_ended(run, error)
        except BaseExceptionGroup as group:
            # The effect's own errors grouped with a cancellation from outside its scope (its task group's tasks
            # raising as the machine's nursery closes): the errors are the effect's, told to the machine as under
            # asyncio (where a cancelled run's are not reported); the cancellation goes on to the nursery.
            errors, cancelled = group.split(Exception)
            if errors is not None:
                run.host.run_ended(run, errors)
            if cancelled is not None:
                raise cancelled from None
        finally:  # returned, or cancelled from outside its scope (the machine's nursery closing)
            run.host.run_ended(run, None)

    def future(self) -> _TrioFuture:
        """A one-shot result that waiters and ``dispatch_committed`` await."""
        return _TrioFuture(self._trio.Event())

    def cancel(self, run: EffectRun[Any], reason: str) -> None:
        """Cancel ``run``'s scope with ``reason``; an alarm's wait is dropped at once."""
        handle = run.handle
        if type(handle) is list:  # an alarm's entry in the alarms' heap
            assert self._alarms is not None
            self._alarms.drop(handle)
            run.host.run_ended(run, None)
        else:
            handle.cancel(reason)

    async def stopped(self) -> None:
        """Nothing to wait for here: the nursery waits for its tasks as it closes."""


class _TrioAlarms:
    """The alarms of one machine under trio: a heap of their times, and one task of the nursery that sleeps
    until the earliest (a cancel scope whose deadline moves when an earlier alarm comes). An alarm costs a
    heap entry, not a task; a cancelled one is dropped from its entry at once and from the heap when it
    reaches the top, or when the dropped entries outnumber the live ones."""

    def __init__(self, trio: Any, nursery: Any) -> None:
        self._trio = trio
        self._heap: list[list[Any]] = []  # [time, order, run or None once dropped, alarm]
        self._order = itertools.count()
        self._dropped = 0
        self._scope: Any = None  # the sleeping task's scope, while it sleeps
        nursery.start_soon(self._sleep, name="effect alarms")

    def wait(self, run: EffectRun[Any], alarm: Alarm[Any], seconds: float) -> None:
        """Ring ``alarm`` again in ``seconds`` (see :func:`ring`)."""
        at = self._trio.current_time() + seconds
        run.handle = entry = [at, next(self._order), run, alarm]
        heapq.heappush(self._heap, entry)
        scope = self._scope
        if scope is not None and at < scope.deadline:
            scope.deadline = at

    def drop(self, entry: list[Any]) -> None:
        """Forget the alarm of ``entry`` (its run was cancelled)."""
        entry[2] = None
        self._dropped += 1
        heap = self._heap
        if self._dropped > 64 and self._dropped * 2 > len(heap):
            heap[:] = [kept for kept in heap if kept[2] is not None]
            heapq.heapify(heap)
            self._dropped = 0

    async def _sleep(self) -> None:
        trio, heap = self._trio, self._heap
        while True:
            now = trio.current_time()
            while heap and (heap[0][2] is None or heap[0][0] <= now):
                _, _, run, alarm = heapq.heappop(heap)
                if run is None:
                    self._dropped -= 1
                else:
                    ring(run, alarm, False, self.wait)
            with trio.CancelScope(deadline=heap[0][0] if heap else math.inf) as scope:
                self._scope = scope
                await trio.sleep_forever()
            self._scope = None


class _TrioFuture:
    """What a future is to asyncio, for trio: set once, awaited for its value."""

    __slots__ = ("_event", "_value")

    def __init__(self, event: Any) -> None:
        self._event, self._value = event, None

    def done(self) -> bool:
        return bool(self._event.is_set())

    def set_result(self, value: Any) -> None:
        self._value = value
        self._event.set()

    def __await__(self) -> Generator[Any, None, Any]:
        yield from self._event.wait().__await__()
        return self._value
