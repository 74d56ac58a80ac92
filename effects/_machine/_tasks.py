"""The machine's effect tasks: one per started key, each owned by a task group the machine holds open.

Under asyncio an effect is a native task in an ``asyncio.TaskGroup`` and is
cancelled with ``task.cancel(reason)``: starting one costs a fraction of an
anyio task, which needs a cancel scope of its own. Under trio it is a task of
a trio nursery, in a trio cancel scope of its own (anyio's task group would
add a cancel scope, an event and a wrapper coroutine per task). Either way no
task outlives the group and every cancellation carries a reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager, asynccontextmanager
from typing import Any, Generic, Protocol, TypeVar

import anyio

from ._core import MachineCore
from ._loop import on_asyncio, reraise_single
from ._protocols import Controller
from ._run import Cancellable, EffectRun, RunHost, enter_run, leave_run
from ._subscribers import Subscribers

S = TypeVar("S")
I = TypeVar("I")  # noqa: E741 - the input type
E = TypeVar("E")


class ScopeLike(Cancellable, AbstractContextManager[object], Protocol):
    """A cancel scope: anyio's or trio's."""

    @property
    def cancelled_caught(self) -> bool:
        """Whether the scope stopped a cancellation when it was left."""
        ...


DEADLINE_ESCAPED = (
    "the effect waited again after the deadline of its last call passed (under trio that deadline cancels the "
    "effect's own scope: see effects._clock.final_wait), so it ended without its result"
)


class EffectTasks(Generic[S, I, E]):
    """Starts effects as tasks, cancels them by key, reports their ends, counts those that can progress.

    A cancelled run's later dispatches are dropped and its end is no news. An
    effect that returns or raises is reported to the core, which yields the
    ``effect-completed`` / ``effect-failed`` event for the subscribers.
    ``active`` counts tasks not yet exited (cancelled ones included) and not
    parked; ``on_quiet`` is called whenever a task exits or parks.
    """

    def __init__(
        self,
        core: MachineCore[S, I, E],
        run_effect: Callable[[E, S, str], Controller[I]],
        subscribers: Subscribers,
        on_quiet: Callable[[], None],
        on_failure: Callable[[BaseException], None],
    ) -> None:
        self._core = core
        self._run_effect = run_effect
        self._subscribers = subscribers
        self._on_quiet = on_quiet
        self._on_failure = on_failure
        self._runs: dict[str, EffectRun[I]] = {}  # the current run of each running key
        self._native: asyncio.TaskGroup | None = None
        self._nursery: Any = None  # a trio nursery (trio is an optional dependency)
        self._new_scope: Callable[[], ScopeLike] = anyio.CancelScope
        self.active = 0

    @asynccontextmanager
    async def group(self) -> AsyncIterator[None]:
        """Hold the task group effects start in for the block; on exit, wait until every effect task ended.

        A native one: an ``asyncio.TaskGroup``, or a trio nursery. Cancel the
        runs (:meth:`cancel_all`) before the block ends, or the exit waits for
        them to finish on their own.
        """
        if not on_asyncio():
            import trio  # only reached under trio, which anyio runs only when it is installed

            try:
                async with trio.open_nursery() as nursery:
                    self._nursery, self._new_scope = nursery, trio.CancelScope
                    try:
                        yield
                    finally:
                        self._nursery = None
            except BaseExceptionGroup as group:
                reraise_single(group)  # as under asyncio below
            return
        try:
            async with asyncio.TaskGroup() as native:
                self._native = native
                try:
                    yield
                finally:
                    self._native = None
        except BaseExceptionGroup as group:
            reraise_single(group)  # the anyio group around wraps it again; one level is unwrapped at a time

    def launch(self, host: RunHost[I], key: str, eff: E, state: S) -> None:
        """Start ``eff`` under ``key``. ``run_effect`` raising is the effect failing: reported, then raised."""
        try:
            controller = self._run_effect(eff, state, key)
        except Exception as error:
            self._report_end(key, error)
            error.add_note(f"raised by run_effect for effect {key!r}")
            raise
        run: EffectRun[I] = EffectRun(key, eff, host, self._parked)
        if self._native is not None:
            run.handle = self._native.create_task(self._run_native(run, controller), name=f"effect {key}")
        else:
            assert self._nursery is not None, "EffectTasks.launch() outside EffectTasks.group()"
            run.handle = scope = self._new_scope()
            run.started = True  # a trio task always enters its body, even when cancelled first
            self._nursery.start_soon(self._run_scoped, run, controller, scope, name=f"effect {key}")
        self._runs[key] = run
        self.active += 1

    def cancel(self, key: str, reason: str) -> None:
        """Cancel the run under ``key`` with ``reason`` (if it has not ended meanwhile: while a batch is being
        committed, an effect the batch no longer derives may still finish on its own)."""
        run = self._runs.pop(key, None)
        if run is not None:
            self._cancel(run, reason)

    def cancel_all(self, reason: str) -> None:
        """Cancel every run with ``reason``."""
        runs = list(self._runs.values())
        self._runs.clear()
        for run in runs:
            self._cancel(run, reason)

    def _cancel(self, run: EffectRun[I], reason: str) -> None:
        run.cancel(reason)
        if not run.started:
            # A native task cancelled before its first step never runs its body (nor its `finally`).
            self._exited(run)

    async def _run_native(self, run: EffectRun[I], controller: Controller[I]) -> None:
        run.started = True
        token = enter_run(run)
        try:
            await controller.start(run)
        except Exception as error:
            self._failed(run, error)
            raise
        else:
            self._ended(run, None)
        finally:
            leave_run(token)
            self._exited(run)

    async def _run_scoped(self, run: EffectRun[I], controller: Controller[I], scope: ScopeLike) -> None:
        token = enter_run(run)
        try:
            with scope:
                await controller.start(run)
            if scope.cancelled_caught and not run.cancelled:
                raise RuntimeError(DEADLINE_ESCAPED)
        except Exception as error:
            self._failed(run, error)
            raise
        else:
            self._ended(run, None)
        finally:
            leave_run(token)
            self._exited(run)

    def _exited(self, run: EffectRun[I]) -> None:
        if not run.parked:
            self.active -= 1
        run.done = True
        self._on_quiet()

    def _parked(self, parked: bool) -> None:
        self.active += -1 if parked else 1
        if parked:
            self._on_quiet()

    def _ended(self, run: EffectRun[I], error: Exception | None) -> None:
        if run.cancelled or self._runs.get(run.key) is not run:
            return  # cancelled meanwhile: its end is no news
        del self._runs[run.key]
        self._report_end(run.key, error)

    def _failed(self, run: EffectRun[I], error: Exception) -> None:
        """An effect raised: a bug. Report ``effect-failed``; the caller re-raises, which stops the machine."""
        error.add_note(f"raised by effect {run.key!r} ({run.effect!r})")
        self._on_failure(error)
        self._ended(run, error)

    def _report_end(self, key: str, error: Exception | None) -> None:
        event = self._core.effect_ended(key, error, events=bool(self._subscribers))
        if event is not None:
            try:
                self._subscribers.publish(event)
            except Exception as failure:  # a subscriber's bug: it stops the machine, from this task
                self._on_failure(failure)
                raise
