"""The async shell around :class:`MachineCore`: runs effects in a task group it owns, under asyncio or trio."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from concurrent.futures import Future
from contextlib import asynccontextmanager
from typing import Generic, TypeVar

import anyio
import anyio.abc
import anyio.lowlevel

from ._backlog import DEFAULT_MAX_BACKLOG, Backlog
from ._batch import Rejects, StepResult
from ._commits import Commits
from ._core import MACHINE_STOPPED, NO_LONGER_DERIVED, MachineCore
from ._events import MachineEvent
from ._host import MachineHost
from ._loop import Waker, reraise_single, threadsafe_scheduler
from ._protocols import Controller, Journal
from ._subscribers import Handler, Subscribers
from ._tasks import EffectTasks
from ._waits import Waits

S = TypeVar("S")
I = TypeVar("I")  # noqa: E741 - the input type
E = TypeVar("E")


class Machine(Generic[S, I, E]):
    """A Moore machine that runs the effects its state derives.

    ``transition(state, input) -> state`` and ``effects_at(state) -> {key: effect}``
    are pure; ``run_effect(effect, state, key)`` returns a :class:`Controller`
    (see :func:`effect`). Inside ``async with machine.running():`` the machine
    applies dispatched inputs in batches, publishes the timeline (see
    :class:`MachineEvent`) and starts and cancels effects by key; every effect
    runs in the machine's task group. An input is refused (``input-rejected``,
    nothing changes) when ``transition`` raises one of the ``rejects`` exception
    types, or when ``check(state, input)`` returns a rejection (see
    :class:`MachineCore`, which also describes ``follow_up``: inputs applied
    at the end of a batch, in it). ``journal.append`` makes each batch durable
    before anyone sees its states or an effect depending on it starts; a journal with
    ``submit`` (see :class:`Journal`) commits on its own thread while the
    event loop runs other sessions, and this one goes on once the batch is durable.

    Exceptions always propagate. An error raised by an effect's own code
    (``effect-failed`` is published first), by a subscriber, by ``transition``
    (other than the ``rejects`` types), ``effects_at`` or the journal stops the
    machine: every effect is cancelled and the error leaves ``running()`` as
    itself. So does an input an effect dispatched that the state refused while
    still deriving that effect (:class:`EffectInputRefused`): the session would
    otherwise wait forever for an effect that has given up.

    Inputs dispatched while the machine is stopped wait in its queue: they are
    applied when it starts. On exit, inputs still queued are applied (and
    journaled) without starting effects, and every running effect is cancelled
    with the reason ``machine stopped``. Running again resumes: the effects the
    state derives are started afresh.

    At most ``max_backlog`` inputs (default 1,000; ``None``: no bound) wait to
    be applied and made durable: over it, :meth:`dispatch` raises
    :class:`Backpressure` and :meth:`wait_for_room` waits (inputs effects
    dispatch are never refused; see ``effects._machine._backlog``).
    """

    def __init__(
        self,
        initial: S,
        transition: Callable[[S, I], S],
        effects_at: Callable[[S], Mapping[str, E]],
        run_effect: Callable[[E, S, str], Controller[I]],
        *,
        check: Callable[[S, I], object | None] | None = None,
        rejects: Rejects = (),
        journal: Journal[S, I] | None = None,
        follow_up: Callable[[S, S], Iterable[I]] | None = None,
        max_backlog: int | None = DEFAULT_MAX_BACKLOG,
    ) -> None:
        self._core: MachineCore[S, I, E] = MachineCore(
            initial, transition, effects_at, check, rejects=rejects, follow_up=follow_up
        )
        self._journal = journal
        self._subscribers = Subscribers()
        self._waits = Waits()
        self._commits: Commits[I] = Commits()
        self._tasks = EffectTasks(self._core, run_effect, self._subscribers, self._notify, self._waits.fail)
        self._queue: deque[I] = deque()
        self._backlog = Backlog(max_backlog)
        self._tg: anyio.abc.TaskGroup | None = None
        self._schedule: Callable[..., object] | None = None
        self._loop_thread: int | None = None
        self._wake: Waker | None = None
        self._inflight: Future[None] | None = None  # the batch whose commit the loop waits for
        self._broken = False  # a batch raised: the machine stops without applying anything more
        self._host = MachineHost(self._enqueue, self._commits, self._subscribers.publish, lambda: self._schedule)

    # -- observing -----------------------------------------------------------------------------

    def current(self) -> S:
        """The state after every input applied so far (queued inputs are not applied yet)."""
        return self._core.current()

    def running_keys(self) -> tuple[str, ...]:
        """Keys of the effects running now (started, not ended, not cancelled), in start order."""
        return self._core.running_keys()

    def subscribe(self, handler: Handler) -> Callable[[], None]:
        """Call ``handler(event)`` for every event from now on; returns the unsubscribe function.

        Handlers run synchronously on the event loop thread. Inputs they dispatch
        are queued and applied after the current batch. A handler that raises is
        a bug: the error stops the machine and leaves ``running()`` (an
        assertion in a test's subscriber fails the test).
        """
        return self._subscribers.add(handler)

    def emit(self, event: MachineEvent) -> None:
        """Publish a custom ``event`` (e.g. streamed text) to the subscribers now; it is never journaled."""
        self._subscribers.publish(event)

    # -- feeding -------------------------------------------------------------------------------

    def dispatch(self, inp: I) -> None:
        """Queue ``inp``; inputs queued in the same loop turn are applied together, in order. Never blocks.

        Call it from the event loop's thread (host code, effect code, subscribers);
        from another thread it hands over to :meth:`dispatch_threadsafe`. Raises
        :class:`Backpressure` (and queues nothing) when :meth:`backlog` is at
        ``max_backlog``: await :meth:`wait_for_room` first.
        """
        if self._loop_thread is not None and threading.get_ident() != self._loop_thread:
            self.dispatch_threadsafe(inp)
            return
        self._backlog.check(len(self._queue))
        self._enqueue(inp)

    def backlog(self) -> int:
        """Inputs dispatched and not yet applied and durable: queued, on their way from a thread, or committing."""
        return self._backlog.size(len(self._queue))

    async def wait_for_room(self) -> None:
        """Return once :meth:`dispatch` accepts an input (at once if it does now).

        A producer that dispatches from outside in a loop awaits it before each
        dispatch, and so goes at the store's pace. Raises
        :class:`MachineStopped` if an error stops the machine meanwhile,
        ``RuntimeError`` if it is stopped with its backlog full.
        """
        backlog = self._backlog
        await self._waits.until(
            lambda: backlog.size(len(self._queue)) < backlog.limit, self._is_running, "wait_for_room"
        )

    def _enqueue(self, inp: I) -> None:
        self._queue.append(inp)
        if self._wake is not None:
            self._wake.wake()

    def dispatch_threadsafe(self, inp: I) -> None:
        """Queue ``inp`` from any thread; it reaches the queue on the event loop's next turn. Never blocks.

        Raises :class:`Backpressure` as :meth:`dispatch` does (counting the inputs still on their way).
        """
        if self._schedule is None:
            raise RuntimeError(
                "Machine.dispatch_threadsafe() needs a running machine, but it is stopped; "
                "call it inside `async with machine.running():`, or use dispatch() to queue inputs before starting"
            )
        self._backlog.set_out(len(self._queue))
        self._schedule(self._arrive, inp)

    def _arrive(self, inp: I) -> None:
        self._backlog.arrived()
        self._enqueue(inp)

    # -- waiting -------------------------------------------------------------------------------

    async def settled(self) -> None:
        """Return when no input is queued and every effect task has finished or is :func:`parked`.

        That is: nothing can progress without outside input or the clock moving.
        The condition must hold across two scheduling passes, so an effect whose
        wait was just satisfied (a clock advanced, an event set) resumes first.
        Raises :class:`MachineStopped` if an error stops the machine meanwhile.
        """
        if self._tg is None:
            raise RuntimeError(
                "Machine.settled() needs a running machine; call it inside `async with machine.running():`"
            )
        await self._waits.settled(self._is_settled, self._is_running)

    async def until(self, predicate: Callable[[S], bool]) -> S:
        """Wait until no input is queued and ``predicate(current())`` holds; return that state.

        It is asked after every batch (not only when the machine is settled), so it
        waits out timers on a real clock. Raises :class:`MachineStopped` if the
        machine stops because of an error meanwhile, ``RuntimeError`` if it stops
        otherwise before the predicate holds.
        """
        core = self._core
        await self._waits.until(lambda: not self._queue and predicate(core.current()), self._is_running)
        return core.current()

    def _is_running(self) -> bool:
        return self._tg is not None

    def _is_settled(self) -> bool:
        return not self._queue and not self._tasks.active and self._inflight is None

    def _notify(self) -> None:
        """Wake whoever waits in :meth:`settled`, when there is something to see."""
        # Checking here, not in the waiter, spares it a wake-up per batch and per effect end.
        if self._waits.waiting_for_quiet() and self._is_settled():
            self._waits.quiet()

    # -- running -------------------------------------------------------------------------------

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Machine[S, I, E]]:
        """Run the machine for the duration of the block; effects are cancelled on exit.

        On entry the queued inputs are applied and the effects the state derives
        start. An error from an effect, ``run_effect``, a subscriber,
        ``transition`` (other than the ``rejects`` types), ``check``,
        ``effects_at`` or the journal stops the machine: the block is cancelled,
        every effect too, and the error propagates out of the block unwrapped.
        """
        if self._tg is not None:
            raise RuntimeError("Machine.running() was entered while the machine is already running; enter it once")
        self._waits.failure = None
        try:
            async with anyio.create_task_group() as tg:
                try:
                    async with self._tasks.group():
                        wake = self._start(tg)
                        try:
                            await self._process()
                            tg.start_soon(self._loop, tg, wake, name="effects.Machine loop")
                            yield self
                        finally:
                            self._stop()
                finally:
                    tg.cancel_scope.cancel(MACHINE_STOPPED)  # the loop task; the effects ended already
        except BaseExceptionGroup as group:
            self._waits.fail(group)
            reraise_single(group)
        except Exception as error:
            self._waits.fail(error)
            raise

    def _start(self, tg: anyio.abc.TaskGroup) -> Waker:
        self._tg = tg
        self._wake = wake = Waker()
        self._schedule = threadsafe_scheduler()
        self._loop_thread = threading.get_ident()
        self._broken = False
        return wake

    def _stop(self) -> None:
        inflight, self._inflight = self._inflight, None
        failing = self._broken or self._waits.failure is not None
        try:
            if inflight is not None and self._waits.failure is None:
                inflight.result()  # stopped while a batch was being committed: durable before running() returns
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
            self._tg = self._schedule = self._loop_thread = self._wake = None
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

    async def _durable(self, pending: Future[None]) -> None:
        """Wait, without blocking the event loop, until the journal's writer committed the batch."""
        self._inflight = pending
        if not pending.done():
            done, schedule = anyio.Event(), self._schedule
            assert schedule is not None
            pending.add_done_callback(lambda _: schedule(done.set))
            await done.wait()
        self._inflight = None
        pending.result()  # the writer's error, if the commit failed

    def _publish_all(self, events: list[MachineEvent]) -> None:
        publish = self._subscribers.publish
        for event in events:
            publish(event)
