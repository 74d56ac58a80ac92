"""One running effect task, and :func:`parked`, which effect code uses to say it waits on the outside world."""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar, Token
from typing import Any, Generic, Protocol, TypeVar

I = TypeVar("I")  # noqa: E741 - the input type

logger = logging.getLogger("effects.machine")

# The effect run the current task belongs to. Set inside each effect's task, so
# tasks the effect spawns inherit it and `parked()` knows whom it parks.
_CURRENT: ContextVar[EffectRun[Any] | None] = ContextVar("effects_machine_current_run", default=None)


class Cancellable(Protocol):
    """What stops a run: its native task or its cancel scope (both take the reason)."""

    def cancel(self, msg: str | None = None, /) -> object:
        """Cancel, with ``msg`` as the reason."""
        ...


class RunHost(Protocol[I]):
    """What an effect run needs from its machine."""

    def enqueue(self, inp: I, origin: EffectRun[I] | None, /) -> None:
        """Queue ``inp`` (from the loop's thread); ``origin`` is the run that dispatched it."""
        ...

    async def committed(self, inp: I, /) -> bool:
        """Queue ``inp`` and wait until it was applied (``True``) or refused (``False``)."""
        ...

    def publish(self, event: Any, /) -> None:
        """Publish ``event`` to the subscribers now."""
        ...

    def schedule(self, callback: Callable[..., object], /, *args: object) -> object:
        """Run ``callback(*args)`` soon on the loop's thread; callable from any thread."""
        ...


class EffectRun(Generic[I]):
    """One started effect: the :class:`~effects.Dispatch` its controller receives, and its bookkeeping
    (what cancels it, whether it was cancelled, whether it is parked)."""

    __slots__ = (
        "cancelled",
        "done",
        "effect",
        "handle",
        "host",
        "key",
        "loop_thread",
        "on_parked",
        "parked",
        "started",
    )

    def __init__(self, key: str, effect: object, host: RunHost[I], on_parked: Callable[[bool], None]) -> None:
        self.key = key
        self.effect = effect
        self.host = host
        self.on_parked = on_parked  # called with True when the run parks, False when it resumes
        self.loop_thread = threading.get_ident()
        self.handle: Cancellable | None = None  # set by whoever starts the run's task
        self.started = False  # the task entered its body (a native task cancelled before that never does)
        self.cancelled = False
        self.done = False  # the task exited: parking reports from tasks that outlive it are ignored
        self.parked = 0

    def __call__(self, inp: I, /) -> None:
        """Feed ``inp`` to the machine, unless this run was cancelled (then it is dropped)."""
        if threading.get_ident() != self.loop_thread:
            self.host.schedule(self, inp)  # decide on the loop thread, where `cancelled` is written
            return
        if self.cancelled:
            logger.debug("dropped %r from cancelled effect %r", inp, self.key)
            return
        self.host.enqueue(inp, self)

    async def dispatch_committed(self, inp: I, /) -> bool:
        """Feed ``inp`` and wait for the machine's verdict: ``True`` once applied (and journaled)."""
        if threading.get_ident() != self.loop_thread:
            raise RuntimeError(
                f"dispatch_committed() was called from another thread (effect {self.key!r}); "
                "await it in the effect's own task, on the event loop's thread"
            )
        if self.cancelled:
            return False
        return await self.host.committed(inp)

    def emit(self, event: Any, /) -> None:
        """Publish ``event`` to the subscribers now, unless this run was cancelled."""
        if not self.cancelled:
            self.host.publish(event)

    def cancel(self, reason: str) -> None:
        """Cancel the run's task; from now on its dispatches are dropped."""
        self.cancelled = True
        if self.handle is not None:
            self.handle.cancel(reason)

    def park(self, delta: int) -> None:
        """Enter (``+1``) or leave (``-1``) a :func:`parked` block; reports the transitions to the machine."""
        if self.done:
            return
        self.parked += delta
        if self.parked == (1 if delta > 0 else 0):
            self.on_parked(delta > 0)

    def __repr__(self) -> str:
        state = "cancelled" if self.cancelled else "parked" if self.parked else "active"
        return f"<EffectRun {self.key!r} {state}>"


@asynccontextmanager
async def parked() -> AsyncIterator[None]:
    """Mark the current effect as waiting on something outside the machine while the block runs.

    ``Machine.settled()`` counts a parked effect as unable to progress, so a
    test or host can wait for quiescence while a timer waits on its clock or a
    step waits for a person::

        async with parked():
            await clock_event.wait()

    Blocks nest. Outside an effect run by a machine it does nothing, so effect
    code also runs unchanged on its own.
    """
    run = _CURRENT.get()
    if run is None:
        yield
        return
    run.park(1)
    try:
        yield
    finally:
        run.park(-1)


def current_run() -> EffectRun[Any] | None:
    """The effect run the current task belongs to (its own task, or one it started), or ``None``."""
    return _CURRENT.get()


def enter_run(run: EffectRun[Any]) -> Token[EffectRun[Any] | None]:
    """Make ``run`` the current run of this task; returns the token for :func:`leave_run`."""
    return _CURRENT.set(run)


def leave_run(token: Token[EffectRun[Any] | None]) -> None:
    """Undo :func:`enter_run`."""
    _CURRENT.reset(token)
