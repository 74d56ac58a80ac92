"""The effect tasks under asyncio: how a started effect runs (under trio: ``_trio``).

Under asyncio an effect runs inline, in the callback that applied its batch,
until it first suspends; most effects of an agent (an instant tool, a model
answering with tool calls) end there, with no task at all. Only an effect
that suspends gets a task, and it is the task that was already current
during that first step (a *host*, made ahead and waiting): whatever the step
bound to the current task (a cancel scope, ``asyncio.timeout``, a deadline)
stays valid, because the same task carries on. Each run has a context of its
own, as a task would. A run waiting only for the loop's clock (``_runs.sleep``)
holds a loop timer instead of a task, and is stepped inline again when it fires;
an :class:`~effects.Alarm` is a loop timer alone, with no coroutine.
A host whose run ended waits for the next one (two are kept), so a turn makes
no task of its own once its session has run one.
"""

from __future__ import annotations

import asyncio
import contextvars
import types
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any, NoReturn

from ._protocols import Controller
from ._runs import _CURRENT, Alarm, EffectRun, _Timer, ring


class _Sleeping:
    """A run waiting for its loop timer (see :func:`sleep`): the timer, and the coroutine it resumes."""

    __slots__ = ("coro", "timer")

    def __init__(self, timer: asyncio.TimerHandle, coro: Coroutine[Any, Any, None]) -> None:
        self.timer, self.coro = timer, coro


# asyncio's own bookkeeping of the current task, which its tasks (and 3.12's eager tasks) use around each step.
_enter_task: Callable[[asyncio.AbstractEventLoop, asyncio.Task[Any]], None] = asyncio.tasks._enter_task
_leave_task: Callable[[asyncio.AbstractEventLoop, asyncio.Task[Any]], None] = asyncio.tasks._leave_task


async def _awaiting(awaitable: Awaitable[None]) -> None:
    await awaitable


class _Host(Coroutine[Any, Any, None]):
    """The coroutine of a host task: made ahead, its task is the current task during inline steps; when a
    step suspends, the host adopts that run and steps its coroutine on, each step in the run's context.
    When that run ends the host waits again, for the next run, unless its runner keeps enough.

    A hand-written coroutine rather than an ``async def``: a task cancelled
    before its first step throws into its coroutine at once, and an
    ``async def`` would end there without running; this one hands the
    cancellation to the run it adopted (anyio cancels the current task of a
    scope entered inline, which may be this host before it first ran).
    """

    __slots__ = ("adopted", "runs", "stopping", "task", "wake")

    def __init__(self, runs: AsyncioRuns) -> None:
        self.runs = runs
        self.task: asyncio.Task[None] | None = None
        self.adopted: tuple[EffectRun[Any], Coroutine[Any, Any, None], Any] | None = None
        self.wake: asyncio.Future[None] | None = None  # what a spare waits on until it adopts a run
        self.stopping = False  # a spare the machine no longer needs

    def send(self, value: Any) -> Any:
        adopted = self.adopted
        if adopted is None:
            return self._wait()
        run, coro, yielded = adopted
        if yielded is not _STEPPED:  # first step since adopting: hand the task what the inline step yielded
            self.adopted = (run, coro, _STEPPED)
            return yielded
        return self._step(run, coro.send, value)

    def throw(self, typ: Any, value: Any = None, traceback: Any = None) -> Any:
        error = value if isinstance(value, BaseException) else typ() if isinstance(typ, type) else typ
        adopted = self.adopted
        if adopted is None:
            if self.stopping:
                raise error
            assert self.task is not None
            self.task.uncancel()  # a cancellation aimed at a step that ended inline: none of this task's business
            return self._wait()
        run, coro, _ = adopted
        self.adopted = (run, coro, _STEPPED)
        return self._step(run, coro.throw, error)

    def close(self) -> None:
        if self.adopted is not None:
            self.adopted[1].close()

    def __await__(self) -> Generator[Any, None, None]:
        raise TypeError("a host is run by its task")

    def _wait(self) -> asyncio.Future[None]:
        wake = self.wake
        if wake is None or wake.done():
            wake = self.wake = self.runs.loop.create_future()
        wake._asyncio_future_blocking = True  # what a task checks on a future it was handed
        return wake

    def _step(self, run: EffectRun[Any], method: Callable[[Any], Any], arg: Any) -> Any:
        assert run.context is not None
        try:
            return run.context.run(method, arg)
        except StopIteration:
            run.host.run_ended(run, None)
        except asyncio.CancelledError:
            failure = None if run.cancelled else RuntimeError(f"effect {run.key!r} was cancelled, not by its machine")
            run.host.run_ended(run, failure)
        except Exception as error:
            run.host.run_ended(run, error)
        self.adopted = None
        if self.stopping or not self.runs.take_back(self):
            raise StopIteration
        task = self.task
        assert task is not None
        while task.cancelling():  # the cancellation was the ended run's: the next run starts with none
            task.uncancel()
        return self._wait()


_STEPPED: Any = object()  # the adopted run's first yield was handed to the task already

_KEPT_HOSTS = 2
"""Hosts kept waiting for a run: a turn's model call holds one while its tool calls step inline on the other."""


class AsyncioRuns:
    """Runs effects on the running asyncio loop: inline first, a host task once one suspends."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self._free: list[_Host] = []  # hosts waiting for a run, the last one current during inline steps
        self._live: set[asyncio.Task[None]] = set()
        self._stopping = False

    def start(self, run: EffectRun[Any], controller: Controller[Any]) -> None:
        """Run ``controller.start(run)`` inline until it ends or first suspends; an :class:`Alarm` on a loop timer."""
        if isinstance(controller, Alarm):
            ring(run, controller, True, self._wait_alarm)
            return
        coro = controller.start(run)
        if type(coro) is not types.CoroutineType and not isinstance(coro, Coroutine):  # an ABC check costs more
            coro = _awaiting(coro)
        run.context = context = contextvars.copy_context()
        context.run(_CURRENT.set, run)
        self._step(run, coro)

    def _step(self, run: EffectRun[Any], coro: Coroutine[Any, Any, None]) -> None:
        free = self._free
        loop, host = self.loop, free[-1] if free else self._new_host()
        assert host.task is not None and run.context is not None
        outer = asyncio.current_task(loop)  # running()'s entry and exit apply batches from a task
        if outer is not None:
            _leave_task(loop, outer)
        _enter_task(loop, host.task)
        run.inline, run.handle, ended = True, None, True
        failure: BaseException | None = None
        try:
            yielded = run.context.run(coro.send, None)
            ended = False
        except StopIteration:
            pass
        except asyncio.CancelledError:
            failure = None if run.cancelled else RuntimeError(f"effect {run.key!r} was cancelled, not by its machine")
        except Exception as raised:
            failure = raised
        finally:
            run.inline = False
            _leave_task(loop, host.task)
            if outer is not None:
                _enter_task(loop, outer)
        if ended:
            run.host.run_ended(run, failure)
        elif type(yielded) is _Timer:
            run.handle = _Sleeping(loop.call_later(yielded.seconds, self._step, run, coro), coro)
        else:
            free.pop()
            host.adopted, run.handle = (run, coro, yielded), host
            if host.wake is not None and not host.wake.done():
                host.wake.set_result(None)

    def _wait_alarm(self, run: EffectRun[Any], alarm: Alarm[Any], seconds: float) -> None:
        run.handle = self.loop.call_later(seconds, ring, run, alarm, False, self._wait_alarm)

    def _new_host(self) -> _Host:
        host = _Host(self)
        host.task = task = self.loop.create_task(host)
        self._free.append(host)
        self._live.add(task)
        task.add_done_callback(self._live.discard)
        return host

    def take_back(self, host: _Host) -> bool:
        """``host``'s run ended: keep it for the next run (``True``), unless two hosts wait already."""
        if self._stopping or len(self._free) >= _KEPT_HOSTS:
            return False
        self._free.insert(0, host)  # behind the one inline steps use now
        return True

    def future(self) -> asyncio.Future[Any]:
        """A future of this loop: what waiters and ``dispatch_committed`` await."""
        return self.loop.create_future()

    def cancel(self, run: EffectRun[Any], reason: str) -> None:
        """Cancel ``run``: its host task with ``reason``, or its timer (closing its coroutine at once)."""
        handle = run.handle
        if isinstance(handle, _Host):
            assert handle.task is not None
            handle.task.cancel(reason)
        elif isinstance(handle, asyncio.TimerHandle):  # an alarm waiting
            handle.cancel()
            run.host.run_ended(run, None)
        elif isinstance(handle, _Sleeping):
            handle.timer.cancel()
            assert run.context is not None
            try:
                run.context.run(handle.coro.close)  # its finally blocks run now: nothing else would run them
            except Exception as error:
                run.host.run_ended(run, error)
            else:
                run.host.run_ended(run, None)

    async def stopped(self) -> None:
        """Cancel the hosts waiting for a run and wait until every host task has ended."""
        self._stopping = True  # a host whose run ends from now on ends with it
        for host in self._free:
            assert host.task is not None
            host.stopping = True
            host.task.cancel()
        self._free.clear()
        while self._live:
            await asyncio.wait(list(self._live))


def reraise_single(group: BaseExceptionGroup[BaseException]) -> NoReturn:
    """Re-raise the only exception of a task group's error group as itself; re-raise the group otherwise.

    Task groups wrap even a single error; callers of ``Machine.running()``
    expect the error their own code or the journal raised.
    """
    if len(group.exceptions) != 1:
        raise group
    error = group.exceptions[0]
    context, suppress = error.__context__, error.__suppress_context__
    try:
        raise error
    finally:
        # Raising inside the handler chained the group as context; restore the error's own.
        error.__context__, error.__suppress_context__ = context, suppress


def call_soon_threadsafe() -> Callable[..., object]:
    """A function ``schedule(callback, *args)`` that runs ``callback(*args)`` soon on the current event loop.

    Callable from any thread and never blocks. Must be created on the event loop's thread.
    """
    loop = asyncio._get_running_loop()
    if loop is not None:
        return loop.call_soon_threadsafe
    import trio  # anyio runs only asyncio and trio

    schedule: Callable[..., object] = trio.lowlevel.current_trio_token().run_sync_soon
    return schedule
