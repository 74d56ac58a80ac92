"""The machine's running loop: starting, stopping, and applying the queue one batch at a time."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

import anyio
import anyio.abc
import anyio.lowlevel

from ._backlog import Backlog
from ._commits import Commits
from ._core import MachineCore, StepResult
from ._events import MACHINE_STOPPED, NO_LONGER_DERIVED, MachineEvent
from ._host import MachineHost
from ._loop import Waker, threadsafe_scheduler
from ._protocols import Journal, OnLoop, Pending
from ._subscribers import Subscribers
from ._tasks import EffectTasks
from ._waits import Waits

S = TypeVar("S")
I = TypeVar("I")  # noqa: E741 - the input type
E = TypeVar("E")


class MachineLoop(Generic[S, I, E]):
    """The part of :class:`Machine` that runs while it is running; :class:`Machine` sets these attributes."""

    _core: MachineCore[S, I, E]
    _journal: Journal[S, I] | None
    _subscribers: Subscribers
    _waits: Waits
    _commits: Commits[I]
    _tasks: EffectTasks[S, I, E]
    _queue: deque[I]
    _backlog: Backlog
    _tg: anyio.abc.TaskGroup | None
    _schedule: Callable[..., object] | None
    _loop_thread: int | None
    _wake: Waker | None
    _committed: Waker | None  # wakes the loop task when the batch in flight is durable
    _inflight: Pending | None  # the batch whose commit the loop waits for
    _before: S  # the state before that batch: the machine's again if its commit fails
    _broken: bool  # a batch raised: the machine stops without applying anything more
    _host: MachineHost[I]

    def _is_running(self) -> bool:
        return self._tg is not None

    def _is_settled(self) -> bool:
        return not self._queue and not self._tasks.active and self._inflight is None

    def _notify(self) -> None:
        """Wake whoever waits in ``settled()``, when there is something to see."""
        # Checking here, not in the waiter, spares it a wake-up per batch and per effect end.
        if self._waits.waiting_for_quiet() and self._is_settled():
            self._waits.quiet()

    def _start(self, tg: anyio.abc.TaskGroup) -> Waker:
        self._tg = tg
        self._wake = wake = Waker()
        self._committed = Waker()
        self._schedule = threadsafe_scheduler()
        self._loop_thread = threading.get_ident()
        self._broken = False
        return wake

    def _stop(self) -> None:
        inflight, self._inflight = self._inflight, None
        failing = self._broken or self._waits.failure is not None
        try:
            if inflight is not None and self._waits.failure is None:
                self._verdict(inflight)  # stopped while a batch was being committed: durable before running() returns
                self._broken = failing = False
            if self._queue and not failing:
                # Dispatched inputs are facts: apply and journal them, but start nothing more.
                batch = list(self._queue)
                self._queue.clear()
                result = self._core.apply(batch, journal=self._journal, reconcile=False)
                self._commits.settle(result.accepted, result.rejected, None)
                self._publish_all(result.events)
        finally:
            self._tasks.cancel_all(MACHINE_STOPPED)
            stopped = self._core.stop(MACHINE_STOPPED)
            self._tg = self._schedule = self._loop_thread = self._wake = self._committed = None
            self._backlog.committing = 0
            self._commits.stop()
            self._waits.stopped()
            if not failing:  # a failing machine tells no one more: a subscriber may be what failed
                self._publish_all(stopped)

    async def _loop(self, tg: anyio.abc.TaskGroup, wake: Waker) -> None:
        while True:
            if self._queue:
                await anyio.lowlevel.checkpoint()  # let effects run between back-to-back batches
            else:
                self._notify()
                await wake.wait()
            if self._tg is not tg:
                return  # woken, then stopped before this task ran: the stop applied the queue already
            await self._process()

    async def _process(self) -> None:
        """Apply the queued inputs as one batch, publish the timeline, cancel and start effects."""
        try:
            await self._apply_queue()
        except Exception as error:
            self._waits.fail(error)
            raise

    async def _apply_queue(self) -> None:
        batch = list(self._queue)
        self._queue.clear()
        self._broken = True  # until the batch went through: if anything raises, nothing more is applied
        self._before = self._core.current()
        result: StepResult[S, I, E] = self._core.apply(
            batch, journal=self._journal, events=bool(self._subscribers), hand_over=True
        )
        if result.pending is not None:
            self._backlog.committing = len(batch)
            await self._durable(result.pending)
            self._backlog.committing = 0
        self._broken = False
        for key in result.plan.cancel:
            self._tasks.cancel(key, NO_LONGER_DERIVED)
        self._commits.settle(result.accepted, result.rejected, self._core)
        self._publish_all(result.events)
        if result.starting:
            state = self._core.current()
            for key, eff in result.starting.items():
                self._tasks.launch(self._host, key, eff, state)
        self._waits.applied()

    async def _durable(self, pending: Pending) -> None:
        """Wait, without blocking the event loop, until the journal's writer committed the batch."""
        self._inflight = pending
        if not pending.done():
            committed, schedule = self._committed, self._schedule
            assert committed is not None and schedule is not None
            # The wake always comes through `schedule`, so after the wait below began. A writer settling
            # a group of PendingCommits wakes this event loop once for all of its waiters.
            pending.add_done_callback(OnLoop(schedule, committed.wake))
            await committed.wait()
            if self._inflight is not pending:  # the machine stopped meanwhile: its stop took the verdict over
                await anyio.sleep_forever()  # and cancels this task (else its error would be raised twice)
        self._inflight = None
        self._verdict(pending)

    def _verdict(self, pending: Pending) -> None:
        """Raise the writer's error if the commit failed, the state back to before the batch: the journal holds none
        of it (a cancelled wait leaves the commit in flight: the stop asks for its verdict)."""
        try:
            pending.result()
        except Exception:
            self._core.revert(self._before)
            raise

    def _publish_all(self, events: list[MachineEvent]) -> None:
        publish = self._subscribers.publish
        for event in events:
            publish(event)
