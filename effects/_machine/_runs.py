"""Effect runs: each started effect, the :class:`~effects.Dispatch` it feeds the machine through, and how it runs.

Under asyncio an effect runs inline, in the callback that applied its batch,
until it first suspends; most effects of an agent (an instant tool, a model
answering with tool calls) end there, with no task at all. Only an effect
that suspends gets a task, and it is the task that was already current
during that first step (a *host*, made ahead and waiting): whatever the step
bound to the current task (a cancel scope, ``asyncio.timeout``, a deadline)
stays valid, because the same task carries on. Each run has a context of its
own, as a task would. A run waiting only for the loop's clock (:func:`sleep`)
holds a loop timer instead of a task, and is stepped inline again when it fires.

Under trio each effect is a task of the machine's nursery, in a cancel scope
of its own (trio interrupts a block only through a scope). Either way a run is
cancelled by key with a reason, and a cancelled run's later dispatches are dropped.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import types
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any, Generic, NoReturn, Protocol, TypeVar

import anyio

from ._protocols import Controller

I = TypeVar("I")  # noqa: E741 - the input type

logger = logging.getLogger("effects.machine")

# The run the current code belongs to: set in each run's context, inherited by the tasks it spawns.
_CURRENT: contextvars.ContextVar[EffectRun[Any] | None] = contextvars.ContextVar("effects_run", default=None)

DEADLINE_ESCAPED = (
    "the effect waited again after the deadline of its last call passed (under trio that deadline cancels the "
    "effect's own scope: see effects._clock.final_wait), so it ended without its result"
)


class Host(Protocol[I]):
    """What a run needs from its machine."""

    def enqueue(self, inp: I, run: EffectRun[I] | None, waiter: Any, /) -> None:
        """Queue ``inp`` sent by ``run``; ``waiter`` (or ``None``) gets the verdict."""
        ...

    def publish(self, event: Any, /) -> None:
        """Publish ``event`` to the subscribers now."""
        ...

    def run_ended(self, run: EffectRun[I], error: BaseException | None, /) -> None:
        """``run`` returned (``error`` None) or raised ``error``; called once, cancelled runs included."""
        ...

    def run_parked(self, run: EffectRun[I], parked: bool, /) -> None:
        """``run`` began (``True``) or stopped (``False``) waiting on the outside world."""
        ...

    def verdict(self) -> Any:
        """A future that ``enqueue`` sets to whether its input was applied."""
        ...

    def schedule(self, callback: Callable[..., object], /, *args: object) -> None:
        """Run ``callback(*args)`` soon on the loop's thread; callable from any thread."""
        ...


class EffectRun(Generic[I]):
    """One started effect: the :class:`~effects.Dispatch` its controller receives, and its bookkeeping."""

    __slots__ = ("cancelled", "context", "done", "effect", "handle", "host", "inline", "key", "loop_thread", "parked")

    def __init__(self, key: str, effect: object, host: Host[I]) -> None:
        self.key = key
        self.effect = effect
        self.host = host
        self.loop_thread = threading.get_ident()
        self.handle: Any = None  # what cancels it: its task, its trio scope, or its loop timer
        self.context: contextvars.Context | None = None
        self.inline = False  # being stepped inline (asyncio): no task of its own yet
        self.cancelled = False
        self.done = False
        self.parked = 0

    def __call__(self, inp: I, /) -> None:
        """Feed ``inp`` to the machine, unless this run was cancelled (then it is dropped)."""
        if threading.get_ident() != self.loop_thread:
            self.host.schedule(self, inp)  # decided on the loop thread, where `cancelled` is written
            return
        if self.cancelled:
            logger.debug("dropped %r from cancelled effect %r", inp, self.key)
            return
        self.host.enqueue(inp, self, None)

    async def dispatch_committed(self, inp: I, /) -> bool:
        """Feed ``inp`` and wait for the machine's verdict: ``True`` once applied (and journaled)."""
        if threading.get_ident() != self.loop_thread:
            raise RuntimeError(
                f"dispatch_committed() was called from another thread (effect {self.key!r}); "
                "await it in the effect's own task, on the event loop's thread"
            )
        if self.cancelled:
            return False
        verdict = self.host.verdict()
        self.host.enqueue(inp, self, verdict)
        return bool(await verdict)

    def emit(self, event: Any, /) -> None:
        """Publish ``event`` to the subscribers now, unless this run was cancelled."""
        if not self.cancelled:
            self.host.publish(event)

    def park(self, delta: int) -> None:
        """Enter (``+1``) or leave (``-1``) a :func:`parked` block; tells the machine when that changes anything."""
        if self.done:
            return
        self.parked += delta
        if self.parked == (1 if delta > 0 else 0):
            self.host.run_parked(self, delta > 0)

    def __repr__(self) -> str:
        state = "cancelled" if self.cancelled else "parked" if self.parked else "active"
        return f"<EffectRun {self.key!r} {state}>"


class parked:  # lower case: used as ``async with parked():``, as the function it replaced
    """Mark the current effect as waiting on something outside the machine while the block runs.

    ``Machine.settled()`` counts a parked effect as unable to progress, so a
    test or host can wait for quiescence while a timer waits on its clock or a
    step waits for a person::

        async with parked():
            await clock_event.wait()

    Blocks nest. Outside an effect run by a machine it does nothing, so effect
    code also runs unchanged on its own. (A class, not ``@asynccontextmanager``:
    every turn's deadline enters one, and this costs a third as much.)
    """

    __slots__ = ("_run",)

    async def __aenter__(self) -> None:
        self._run = run = _CURRENT.get()
        if run is not None:
            run.park(1)

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: types.TracebackType | None
    ) -> None:
        if self._run is not None:
            self._run.park(-1)


def current_run() -> EffectRun[Any] | None:
    """The effect run the current code belongs to (its own, or a task it started), or ``None``."""
    return _CURRENT.get()


class _Timer:
    """What :func:`sleep` yields to the inline stepper: resume me in ``seconds``, no task needed."""

    __slots__ = ("seconds",)

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds


@types.coroutine
def sleep(seconds: float) -> Generator[Any, None, None]:
    """Sleep ``seconds`` on the event loop's clock; a run stepped inline holds a loop timer, not a task.

    Use it only where nothing is bound to the current task across the sleep
    (no cancel scope or timeout around it): the run resumes inline when it fires.
    """
    run = _CURRENT.get()
    if run is not None and run.inline:
        yield _Timer(seconds)
    else:
        yield from anyio.sleep(seconds).__await__()


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

    A hand-written coroutine rather than an ``async def``: a task cancelled
    before its first step throws into its coroutine at once, and an
    ``async def`` would end there without running; this one hands the
    cancellation to the run it adopted (anyio cancels the current task of a
    scope entered inline, which may be this host before it first ran).
    """

    __slots__ = ("adopted", "loop", "stopping", "task", "wake")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
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
            wake = self.wake = self.loop.create_future()
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
        raise StopIteration


_STEPPED: Any = object()  # the adopted run's first yield was handed to the task already


class AsyncioRuns:
    """Runs effects on the running asyncio loop: inline first, a host task once one suspends."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._spare: _Host | None = None
        self._live: set[asyncio.Task[None]] = set()

    def start(self, run: EffectRun[Any], controller: Controller[Any]) -> None:
        """Run ``controller.start(run)`` inline until it ends or first suspends."""
        coro = controller.start(run)
        if type(coro) is not types.CoroutineType and not isinstance(coro, Coroutine):  # an ABC check costs more
            coro = _awaiting(coro)
        run.context = context = contextvars.copy_context()
        context.run(_CURRENT.set, run)
        self._step(run, coro)

    def _step(self, run: EffectRun[Any], coro: Coroutine[Any, Any, None]) -> None:
        loop, host = self._loop, self._spare or self._new_host()
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
            self._spare, host.adopted, run.handle = None, (run, coro, yielded), host
            if host.wake is not None and not host.wake.done():
                host.wake.set_result(None)

    def _new_host(self) -> _Host:
        host = self._spare = _Host(self._loop)
        host.task = task = self._loop.create_task(host)
        self._live.add(task)
        task.add_done_callback(self._live.discard)
        return host

    def future(self) -> asyncio.Future[Any]:
        """A future of this loop: what waiters and ``dispatch_committed`` await."""
        return self._loop.create_future()

    def cancel(self, run: EffectRun[Any], reason: str) -> None:
        """Cancel ``run``: its host task with ``reason``, or its timer (closing its coroutine at once)."""
        handle = run.handle
        if isinstance(handle, _Host):
            assert handle.task is not None
            handle.task.cancel(reason)
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
        """Cancel the spare host and wait until every host task has ended."""
        if self._spare is not None:
            assert self._spare.task is not None
            self._spare.stopping = True
            self._spare.task.cancel()
            self._spare = None
        while self._live:
            await asyncio.wait(list(self._live))


class TrioRuns:
    """Runs effects as tasks of a trio nursery, each in a cancel scope of its own."""

    def __init__(self, nursery: Any) -> None:
        import trio  # only reached under trio

        self._trio = trio
        self._nursery = nursery

    def start(self, run: EffectRun[Any], controller: Controller[Any]) -> None:
        """Start ``controller.start(run)`` in a task of its own."""
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
        """Cancel ``run``'s scope with ``reason``."""
        run.handle.cancel(reason)

    async def stopped(self) -> None:
        """Nothing to wait for here: the nursery waits for its tasks as it closes."""


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
