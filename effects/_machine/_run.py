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


class EffectRun(Generic[I]):
    """The bookkeeping of one started effect: what cancels it, whether it was cancelled, whether it is parked."""

    __slots__ = (
        "cancelled",
        "dispatch_to",
        "done",
        "effect",
        "handle",
        "key",
        "loop_thread",
        "on_parked",
        "parked",
        "schedule",
        "started",
    )

    def __init__(
        self,
        key: str,
        effect: object,
        dispatch_to: Callable[[I], None],
        schedule: Callable[..., object],
        on_parked: Callable[[bool], None],
    ) -> None:
        self.key = key
        self.effect = effect
        self.dispatch_to = dispatch_to
        self.schedule = schedule  # runs a callback on the loop thread, from any thread
        self.on_parked = on_parked  # called with True when the run parks, False when it resumes
        self.loop_thread = threading.get_ident()
        self.handle: Cancellable | None = None  # set by whoever starts the run's task
        self.started = False  # the task entered its body (a native task cancelled before that never does)
        self.cancelled = False
        self.done = False  # the task exited: parking reports from tasks that outlive it are ignored
        self.parked = 0

    def dispatch(self, inp: I) -> None:
        """Feed ``inp`` to the machine, unless this run was cancelled (then it is dropped)."""
        if threading.get_ident() != self.loop_thread:
            self.schedule(self.dispatch, inp)  # decide on the loop thread, where `cancelled` is written
            return
        if self.cancelled:
            logger.debug("dropped %r from cancelled effect %r", inp, self.key)
            return
        self.dispatch_to(inp)

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


def enter_run(run: EffectRun[Any]) -> Token[EffectRun[Any] | None]:
    """Make ``run`` the current run of this task; returns the token for :func:`leave_run`."""
    return _CURRENT.set(run)


def leave_run(token: Token[EffectRun[Any] | None]) -> None:
    """Undo :func:`enter_run`."""
    _CURRENT.reset(token)
