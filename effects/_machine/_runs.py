"""Effect runs: each started effect, the :class:`~effects.Dispatch` it feeds the machine through, what
effect code asks of its run (:func:`parked`, :func:`sleep`, :func:`current_run`), and :class:`Alarm`, an effect
that only waits for a time.

A run is cancelled by key with a reason, and a cancelled run's later
dispatches are dropped. How a run is carried, inline or in a task, under
asyncio or trio, is ``_tasks`` and ``_trio``.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import types
from collections.abc import Callable, Generator
from typing import Any, Generic, Protocol, TypeVar

import anyio

from ._protocols import Dispatch

I = TypeVar("I")  # noqa: E741 - the input type

logger = logging.getLogger("effects.machine")

# The run the current code belongs to: set in each run's context, inherited by the tasks it spawns.
_CURRENT: contextvars.ContextVar[EffectRun[Any] | None] = contextvars.ContextVar("effects_run", default=None)


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
    """One started effect: the :class:`~effects.Dispatch` its controller receives, and its bookkeeping.

    ``local`` is the effect's own: what its code keeps for the code it calls while it runs (found with
    :func:`current_run`, from the run's tasks too); the machine never reads it.
    """

    __slots__ = (
        "cancelled",
        "context",
        "done",
        "effect",
        "handle",
        "host",
        "inline",
        "key",
        "local",
        "loop_thread",
        "parked",
    )

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
        self.local: Any = None

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


class Alarm(Generic[I]):
    """A controller that waits, parked, until :meth:`seconds_left` is no longer positive, then calls
    :meth:`fire`: a timer as an effect (a turn's deadline waits this way through every turn).

    Under asyncio the machine runs it with a loop timer alone: no coroutine,
    no context, no task, so a session in a crowd holds few objects for it
    while it waits. Under trio a machine's alarms wait together in one task.
    ``seconds_left`` is asked again when the time it gave has passed (the
    clock it reads may have been adjusted meanwhile) and is measured on the
    event loop's clock: an alarm is for a clock that follows the loop's (a
    manual clock waits its own way, with an ordinary effect). Anything else
    that runs controllers runs :meth:`start`, the same wait as a coroutine.
    ``fire`` raising is the effect failing, as an effect's code raising is.
    """

    __slots__ = ()

    def seconds_left(self) -> float:
        """How long to wait still; 0 or less once the time has come."""
        raise NotImplementedError

    def fire(self, dispatch: Dispatch[I], /) -> None:
        """The time has come: dispatch what it means (``dispatch`` is the run's :class:`~effects.Dispatch`)."""
        raise NotImplementedError

    async def start(self, dispatch: Dispatch[I], /) -> None:
        """The same wait as a coroutine, for a host that runs controllers itself (a machine does not call it)."""
        left = self.seconds_left()  # asked as the asyncio path asks: at the start, then as each wait ends
        if left > 0:
            async with parked():
                while left > 0:
                    await sleep(left)
                    left = self.seconds_left()
        self.fire(dispatch)


def ring(
    run: EffectRun[Any], alarm: Alarm[Any], starting: bool, wait: Callable[[EffectRun[Any], Alarm[Any], float], None]
) -> None:
    """Ask ``alarm`` the time left: wait it out (``wait(run, alarm, seconds)`` rings again then; the run is parked
    from its start until it fires), or, once the time has come, fire it. Its firing, or raising, is the run's end."""
    try:
        left = alarm.seconds_left()
        if left > 0:
            if starting:
                run.park(1)
            wait(run, alarm, left)
            return
        if not starting:
            run.park(-1)
        alarm.fire(run)
    except Exception as error:
        run.host.run_ended(run, error)
    else:
        run.host.run_ended(run, None)
