"""``Machine``: the door to the generic machine, running the effects a state derives under asyncio or trio.

Theory of operation. Dispatched inputs wait in a queue; the first one queued
schedules a *flush*, one callback on the event loop (under trio, a task woken
for it), which applies everything queued as one batch through
:class:`MachineCore`: check, transition, ``follow_up``, the journal, and one
reconciliation. When the journal commits on its own thread (``submit``), the
flush hands the batch over and ends; the writer's verdict schedules the rest.
Only a durable batch goes on: stale effects are cancelled, ``dispatch_committed``
waiters get their verdicts, subscribers see the timeline, and the new effects
start (see ``_tasks``: under asyncio inline, until they first suspend). Inputs
those effects dispatched meanwhile are applied next, in the same callback, up to
a few batches, so one session cannot hold the loop. Waiters (``settled``,
``until``, ``wait_for_room``) are asked after each batch and each effect's end.
An error anywhere stops the machine: it cancels the body of ``running()``,
which raises the error as itself.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, Generic, TypeVar

import anyio
import anyio.lowlevel

from ._core import MachineCore, Rejects, StepResult, stuck_effect
from ._events import (
    MACHINE_STOPPED,
    NO_LONGER_DERIVED,
    Backpressure,
    MachineEvent,
    MachineStopped,
)
from ._protocols import Controller, Journal, OnLoop
from ._runs import EffectRun
from ._tasks import AsyncioRuns, call_soon_threadsafe, reraise_single
from ._trio import TrioRuns

S = TypeVar("S")
I = TypeVar("I")  # noqa: E741 - the input type
E = TypeVar("E")

DEFAULT_MAX_BACKLOG = 1_000
"""How many inputs a machine holds, not yet applied and durable, before a dispatch from outside is refused."""

BATCHES_PER_FLUSH = 8
"""Batches one flush applies back to back (inputs inline effects dispatched) before it lets the loop run others."""

Handler = Callable[[MachineEvent], None]
Entry = tuple[Any, EffectRun[Any] | None, Any]  # an input, the run that sent it, the verdict it waits for


class Machine(Generic[S, I, E]):
    """A Moore machine that runs the effects its state derives (README: "Effects and the machine").

    ``transition(state, input) -> state`` and ``effects_at(state) -> {key: effect}``
    are pure; ``run_effect(effect, state, key)`` returns a :class:`Controller`
    (see :func:`effect`). Inside ``async with machine.running():`` the machine
    applies dispatched inputs in batches, publishes the timeline (see
    :class:`MachineEvent`) and starts and cancels effects by key. An input is
    refused (``input-rejected``) when ``transition`` raises one of the
    ``rejects`` types or ``check(state, input)`` returns a rejection (see
    :class:`MachineCore`, also for ``follow_up``). ``journal.append`` (or
    ``submit``, on the journal's own thread; see :class:`Journal`) makes each
    batch durable before anyone sees its states or an effect depending on it starts.

    Exceptions always propagate: an error from an effect's code (after
    ``effect-failed``), a subscriber, ``transition`` (other than ``rejects``),
    ``effects_at`` or the journal, or an :class:`EffectInputRefused`, stops the
    machine, cancels every effect and leaves ``running()`` as itself.

    Inputs dispatched while stopped are applied when it starts; on exit the
    queued ones are applied and journaled without starting effects, and running
    effects are cancelled (``machine stopped``). Running again starts the derived
    effects afresh. At most ``max_backlog`` inputs (default 1,000; ``None``: no
    bound) wait to be applied and made durable (queued, crossing from another
    thread, or committing): over it :meth:`dispatch` raises :class:`Backpressure`
    and :meth:`wait_for_room` waits. Inputs effects dispatch are never refused:
    each effect dispatches a few, and refusing one would lose a result.
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
        if max_backlog is not None and (
            not isinstance(max_backlog, int) or isinstance(max_backlog, bool) or max_backlog <= 0
        ):
            raise ValueError(f"Machine: expected a positive int or None for max_backlog, got {max_backlog!r}")
        self._core = MachineCore(initial, transition, effects_at, check, rejects=rejects, follow_up=follow_up)
        self._run_effect = run_effect
        self._journal = journal
        self._limit = 2**63 if max_backlog is None else max_backlog
        self._handlers: dict[int, Handler] = {}
        self._tokens = itertools.count()
        self._subscribers: tuple[Handler, ...] = ()  # what publish iterates: (un)subscribing mid-publish is safe
        self._queue: deque[Entry] = deque()
        self._crossing = 0  # inputs on their way from other threads
        self._crossing_lock = threading.Lock()
        self._runs: dict[str, EffectRun[I]] = {}  # the current run of each running key
        self._active = 0  # runs neither ended nor parked
        self._waiters: list[tuple[Callable[[], bool], Any]] = []
        self._running = False
        self._runner: AsyncioRuns | TrioRuns | None = None
        self._flush_soon: Callable[[], object] | None = None
        self._threadsafe: Callable[..., object] | None = None
        self._loop_thread: int | None = None
        self._flushing = False  # a flush is scheduled or running
        self._in_flush = False  # waiters are asked once, as the flush ends
        self._inflight: tuple[StepResult[S, I, E], list[Entry], S] | None = None  # a batch being committed
        self._failure: BaseException | None = None
        self._scope: anyio.CancelScope | None = None

    # -- observing -----------------------------------------------------------------------------

    def current(self) -> S:
        """The state after every input applied so far (queued inputs are not applied yet), including a batch
        whose commit is in flight (it goes back to the state before that batch if the commit fails)."""
        return self._core._state  # read in place: asked several times per input (timestamps, waiters)

    @property
    def failure(self) -> BaseException | None:
        """The error that stopped the machine, once one did (``None`` while none has; reset when it runs again)."""
        return self._failure

    @property
    def is_running(self) -> bool:
        """Whether the machine runs now: inside ``running()``, and not stopped by an error."""
        return self._running and self._failure is None

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
        token = next(self._tokens)
        self._handlers[token] = handler
        self._subscribers = tuple(self._handlers.values())

        def unsubscribe() -> None:
            if self._handlers.pop(token, None) is not None:
                self._subscribers = tuple(self._handlers.values())

        return unsubscribe

    def emit(self, event: MachineEvent) -> None:
        """Publish a custom ``event`` (e.g. streamed text) to the subscribers now; it is never journaled."""
        for handler in self._subscribers:
            try:
                handler(event)
            except Exception as error:
                error.add_note(f"raised by subscriber {handler!r} while handling {event.type}")
                raise

    def backlog(self) -> int:
        """Inputs dispatched and not yet applied and durable: queued, on their way from a thread, or committing."""
        inflight = self._inflight
        return len(self._queue) + self._crossing + (len(inflight[1]) if inflight is not None else 0)

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
        self._check_room()
        self.enqueue(inp, None, None)

    def dispatch_threadsafe(self, inp: I) -> None:
        """Queue ``inp`` from any thread; it reaches the queue on the event loop's next turn. Never blocks.

        Raises :class:`Backpressure` as :meth:`dispatch` does (counting the inputs still on their way).
        """
        if self._threadsafe is None:
            raise RuntimeError(
                "Machine.dispatch_threadsafe() needs a running machine, but it is stopped; "
                "call it inside `async with machine.running():`, or use dispatch() to queue inputs before starting"
            )
        with self._crossing_lock:
            self._check_room()
            self._crossing += 1
        self._threadsafe(self._arrive, inp)

    def _arrive(self, inp: I) -> None:
        with self._crossing_lock:
            self._crossing -= 1
        self.enqueue(inp, None, None)

    def _check_room(self) -> None:
        backlog = self.backlog()
        if backlog >= self._limit:
            raise Backpressure(backlog, self._limit)

    def enqueue(self, inp: I, run: EffectRun[I] | None, waiter: Any) -> None:
        """Queue ``inp`` (sent by ``run``, or from outside); schedule a flush unless one is coming."""
        self._queue.append((inp, run, waiter))
        if not self._flushing and self._flush_soon is not None:
            self._flushing = True
            self._flush_soon()

    def verdict(self) -> Any:
        """A future for ``dispatch_committed``: set to whether its input was applied (and made durable)."""
        assert self._runner is not None
        return self._runner.future()

    def schedule(self, callback: Callable[..., object], *args: object) -> None:
        """Run ``callback(*args)`` soon on the loop's thread; callable from any thread."""
        assert self._threadsafe is not None, "an effect run outlived its machine"
        self._threadsafe(callback, *args)

    async def wait_for_room(self) -> None:
        """Return once :meth:`dispatch` accepts an input (at once if it does now).

        A producer that dispatches from outside in a loop awaits it before each
        dispatch, and so goes at the store's pace. Raises
        :class:`MachineStopped` if an error stops the machine meanwhile,
        ``RuntimeError`` if it is stopped with its backlog full.
        """
        await self._until(lambda: self.backlog() < self._limit, "wait_for_room")

    # -- waiting -------------------------------------------------------------------------------

    async def settled(self) -> None:
        """Return when no input is queued and every effect task has finished or is :func:`parked`.

        That is: nothing can progress without outside input or the clock moving.
        The condition must hold across two scheduling passes, so an effect whose
        wait was just satisfied (a clock advanced, an event set) resumes first.
        Raises :class:`MachineStopped` if an error stops the machine meanwhile.
        """
        if not self._running:
            raise RuntimeError(
                "Machine.settled() needs a running machine; call it inside `async with machine.running():`"
            )
        while True:
            while not self._quiet():
                await self._wait(self._quiet)
                if not self._running:
                    self._raise_if_failed("settled")
                    return  # stopped meanwhile: nothing will progress any more
            # trio resumes the tasks woken in one pass in random order: two passes let them all run.
            await anyio.lowlevel.checkpoint()
            await anyio.lowlevel.checkpoint()
            if self._quiet():
                return

    async def until(self, predicate: Callable[[S], bool]) -> S:
        """Wait until no input is queued or committing and ``predicate(current())`` holds; return that state.

        It is asked after every batch (not only when the machine is settled), so it
        waits out timers on a real clock. Raises :class:`MachineStopped` if the
        machine stops because of an error meanwhile, ``RuntimeError`` if it stops
        otherwise before the predicate holds.
        """
        # A partial of a method (two objects), where a closure made a function and three cells: turn_done() waits
        # here every turn.
        await self._until(partial(self._applied_and, predicate), "until")
        return self._core._state

    def _quiet(self) -> bool:
        return not self._queue and not self._active and self._inflight is None

    def _applied_and(self, predicate: Callable[[S], bool]) -> bool:
        return not self._queue and self._inflight is None and predicate(self._core._state)

    async def _until(self, holds: Callable[[], bool], method: str) -> None:
        while not holds():
            if not self._running:
                self._raise_if_failed(method)
                raise RuntimeError(f"Machine.{method}(): the machine is not running, so the state will not change")
            await self._wait(holds)

    async def _wait(self, holds: Callable[[], bool]) -> None:
        assert self._runner is not None
        entry = (holds, self._runner.future())
        self._waiters.append(entry)
        try:
            await entry[1]
        finally:
            if entry in self._waiters:
                self._waiters.remove(entry)

    def _wake_waiters(self) -> None:
        """Wake every waiter whose condition holds now (or all of them, once stopped)."""
        waiters = self._waiters
        for entry in list(waiters):
            if not self._running or entry[0]():
                waiters.remove(entry)
                if not entry[1].done():
                    entry[1].set_result(None)

    def _raise_if_failed(self, method: str) -> None:
        if self._failure is not None:
            raise MachineStopped(
                f"Machine.{method}(): the machine stopped because of an error: {self._failure!r}"
            ) from self._failure

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
        if self._running:
            raise RuntimeError("Machine.running() was entered while the machine is already running; enter it once")
        self._failure, self._loop_thread = None, threading.get_ident()
        self._threadsafe = call_soon_threadsafe()
        loop = asyncio._get_running_loop()
        if loop is not None:
            self._runner, self._flush_soon = AsyncioRuns(), partial(loop.call_soon, self._flush)
            async with self._run_block() as machine:
                yield machine
            return
        import trio  # anyio runs only asyncio and trio

        try:
            async with trio.open_nursery() as nursery:
                self._runner = runs = TrioRuns(nursery)
                self._flush_soon = runs.flush_soon
                nursery.start_soon(runs.flushes, self._flush, name="effect machine flushes")
                try:
                    async with self._run_block() as machine:
                        yield machine
                finally:
                    nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            reraise_single(group)

    @asynccontextmanager
    async def _run_block(self) -> AsyncIterator[Machine[S, I, E]]:
        self._running, self._flushing, self._scope = True, True, anyio.CancelScope()
        try:
            with self._scope:
                self._flush(start=True)
                yield self
        finally:
            with anyio.CancelScope(shield=True):
                await self._stop()
        if self._failure is not None:
            raise self._failure

    def _flush(self, start: bool = False) -> None:
        """Apply the queue, batch after batch (at most :data:`BATCHES_PER_FLUSH`); then wake the waiters.

        ``_flushing`` stays set while it runs: what is queued meanwhile (by the effects it starts inline, by
        subscribers) is applied by its own loop, with no other flush scheduled for it.
        """
        self._flushing = self._in_flush = True
        again = False
        try:
            for _ in range(BATCHES_PER_FLUSH):
                if not self._running or self._failure is not None or self._inflight is not None:
                    break
                if not self._queue and not start:
                    break
                start = False
                self._apply_queue()
            else:
                again = bool(self._queue) and self._flush_soon is not None and self._inflight is None
        except Exception as error:
            self._fail(error)
        self._flushing = again
        self._in_flush = False
        if again:
            assert self._flush_soon is not None
            self._flush_soon()
        if self._waiters:
            self._wake_waiters()

    def _apply_queue(self) -> None:
        batch = list(self._queue)
        self._queue.clear()
        before = self._core._state
        result: StepResult[S, I, E] = self._core.apply(
            [entry[0] for entry in batch], journal=self._journal, events=bool(self._subscribers), hand_over=True
        )
        pending = result.pending
        if pending is not None and not pending.done():
            self._inflight = (result, batch, before)
            assert self._threadsafe is not None
            # A writer settling a group of PendingCommits wakes this event loop once for all of its waiters.
            pending.add_done_callback(OnLoop(self._threadsafe, self._committed))
            return
        self._applied(result, batch, before)

    def _committed(self) -> None:
        """The writer's verdict on the batch in flight is in: go on with it, then with the queue."""
        if self._inflight is None:
            return  # the machine stopped meanwhile, and its stop took the verdict over
        result, batch, before = self._inflight
        self._inflight = None
        try:
            self._applied(result, batch, before)
        except Exception as error:
            self._fail(error)
            self._wake_waiters()
            return
        self._flush()

    def _applied(self, result: StepResult[S, I, E], batch: list[Entry], before: S) -> None:
        """Act on a batch once it is durable: cancel, give verdicts, publish, start."""
        if result.pending is not None:
            try:
                result.pending.result()
            except Exception:
                self._core.revert(before)  # the journal holds none of the batch
                raise
        for key in result.plan.cancel:
            run = self._runs.pop(key, None)
            if run is not None:
                self._cancel(run, NO_LONGER_DERIVED)
        self._settle(result, batch)
        for event in result.events:
            self.emit(event)
        if result.starting:
            state = self._core._state
            for key, eff in result.starting.items():
                self._start(key, eff, state)

    def _settle(self, result: StepResult[S, I, E], batch: list[Entry], stopping: bool = False) -> None:
        """Give ``dispatch_committed`` its verdicts; stop on an effect's input refused while it is still derived."""
        applied: set[int] | None = None
        for inp, _, waiter in batch:  # most batches have no waiter: nothing is built for them
            if waiter is not None and not waiter.done():
                if applied is None:
                    applied = {id(accepted) for accepted, _ in result.accepted}
                waiter.set_result(id(inp) in applied)
        if result.rejected and not stopping:
            self._refused(result, batch)

    def _refused(self, result: StepResult[S, I, E], batch: list[Entry]) -> None:
        """Stop on an input an effect sent that was refused while the state still derives the effect."""
        # An input sent with dispatch_committed is not checked: its effect hears the refusal and decides.
        origins = {id(inp): run for inp, run, waiter in batch if run is not None and waiter is None}

        def origin(inp: I) -> str | None:
            run = origins.get(id(inp))
            return run.key if run is not None and not run.cancelled else None

        derived = {*self._core.running_keys(), *self._core.ended_keys()}
        stuck = stuck_effect(result.rejected, origin, derived)
        if stuck is not None:
            raise stuck

    def _start(self, key: str, eff: E, state: S) -> None:
        """Start ``eff`` under ``key``. ``run_effect`` raising is the effect failing: reported, then raised."""
        try:
            controller = self._run_effect(eff, state, key)
        except Exception as error:
            self._report_end(key, error)
            error.add_note(f"raised by run_effect for effect {key!r}")
            raise
        run: EffectRun[I] = EffectRun(key, eff, self)
        self._runs[key] = run
        self._active += 1
        assert self._runner is not None
        self._runner.start(run, controller)

    def _cancel(self, run: EffectRun[I], reason: str) -> None:
        run.cancelled = True
        assert self._runner is not None
        self._runner.cancel(run, reason)

    def run_parked(self, run: EffectRun[I], parked: bool) -> None:
        """``run`` began or stopped waiting on the outside world."""
        self._active += -1 if parked else 1
        if parked and self._waiters and not self._in_flush:  # a flush asks its waiters as it ends
            self._wake_waiters()

    def run_ended(self, run: EffectRun[I], error: BaseException | None) -> None:
        """``run`` ended: report it (unless cancelled meanwhile); an error stops the machine."""
        if run.done:
            return
        run.done = True
        # Its context and its handle (a timer's arguments) refer back to the run: dropped, the run is freed
        # by reference counting when its last reference goes, instead of waiting for a cyclic collection.
        run.context = run.handle = None
        if not run.parked:
            self._active -= 1
        if not run.cancelled and self._runs.get(run.key) is run:
            del self._runs[run.key]
            if error is not None:
                error.add_note(f"raised by effect {run.key!r} ({run.effect!r})")
            try:
                self._report_end(run.key, error)
            except Exception as failure:  # a subscriber's bug
                error = error or failure
            if error is not None:
                self._fail(error)
        if self._waiters and not self._in_flush:
            self._wake_waiters()

    def _report_end(self, key: str, error: BaseException | None) -> None:
        event = self._core.effect_ended(key, error, events=bool(self._subscribers))
        if event is not None:
            self.emit(event)

    def publish(self, event: Any) -> None:
        """Publish ``event`` to the subscribers now (an effect's ``emit``)."""
        self.emit(event)

    def _fail(self, error: BaseException) -> None:
        """Stop because of ``error`` (the first one counts): cancel the block of ``running()``."""
        if self._failure is None:
            self._failure = error
            if self._scope is not None:
                self._scope.cancel()

    async def _stop(self) -> None:
        inflight, self._inflight = self._inflight, None
        failing = self._failure is not None
        try:
            if inflight is not None and not failing:
                pending = inflight[0].pending
                assert pending is not None
                try:  # stopped while a batch was being committed: durable before running() returns
                    pending.result()
                except Exception:
                    self._core.revert(inflight[2])  # the journal holds none of the batch
                    raise
            if self._queue and not failing:
                # Dispatched inputs are facts: apply and journal them, but start nothing more.
                batch = list(self._queue)
                self._queue.clear()
                result = self._core.apply([entry[0] for entry in batch], journal=self._journal, reconcile=False)
                self._settle(result, batch, stopping=True)
                for event in result.events:
                    self.emit(event)
        except Exception as error:
            self._fail(error)
            failing = True
        finally:
            runs = list(self._runs.values())
            self._runs.clear()
            for run in runs:
                self._cancel(run, MACHINE_STOPPED)
            stopped = self._core.stop(MACHINE_STOPPED)
            for _, _, waiter in self._queue:
                if waiter is not None and not waiter.done():
                    waiter.set_result(False)
            self._running, self._flush_soon, self._threadsafe, self._loop_thread = False, None, None, None
            self._wake_waiters()
            assert self._runner is not None
            await self._runner.stopped()
            self._runner = None
            if not failing:  # a failing machine tells no one more: a subscriber may be what failed
                for event in stopped:
                    self.emit(event)
