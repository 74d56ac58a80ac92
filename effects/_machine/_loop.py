"""Small helpers over anyio: waking the loop task, calling into the event loop from another thread,
unwrapping task-group errors."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, NoReturn

import anyio
import anyio.lowlevel


def on_asyncio() -> bool:
    """Whether the current event loop is asyncio's (else trio, through anyio)."""
    return isinstance(anyio.lowlevel.current_token().native_token, asyncio.AbstractEventLoop)


class Waker:
    """Lets one task wait until :meth:`wake` is called; a wake while nobody waits does nothing.

    The machine's loop task waits on it whenever its queue is empty, so it is
    made cheap: under asyncio one bare future per wait, under trio the task
    parks itself (no Event object). Use it from the event loop's thread only.
    """

    __slots__ = ("_future", "_loop", "_lowlevel", "_task")

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop() if on_asyncio() else None
        self._future: asyncio.Future[None] | None = None
        self._task: Any = None  # the parked trio task
        self._lowlevel: Any = None
        if self._loop is None:
            import trio.lowlevel  # anyio runs trio only when it is installed

            self._lowlevel = trio.lowlevel

    def wake(self) -> None:
        """Wake the waiting task, if one waits."""
        if self._future is not None:
            if not self._future.done():
                self._future.set_result(None)
        elif self._task is not None:
            self._lowlevel.reschedule(self._task)
            self._task = None

    async def wait(self) -> None:
        """Wait until the next :meth:`wake`."""
        if self._loop is not None:
            self._future = self._loop.create_future()
            try:
                await self._future
            finally:
                self._future = None
            return
        lowlevel = self._lowlevel

        def abort(_: object) -> Any:
            # Cancelling the wait is always allowed. Forget the task at once: trio reschedules it
            # with the cancellation, and a wake() before it runs must not reschedule it again.
            self._task = None
            return lowlevel.Abort.SUCCEEDED

        self._task = lowlevel.current_task()
        try:
            await lowlevel.wait_task_rescheduled(abort)
        finally:
            self._task = None


def threadsafe_scheduler() -> Callable[..., object]:
    """A function ``schedule(callback, *args)`` that runs ``callback(*args)`` soon on the current event loop.

    Callable from any thread and never blocks (unlike ``anyio.from_thread.run_sync``,
    which waits for the result). Must be created on the event loop's thread.
    """
    native = anyio.lowlevel.current_token().native_token
    # asyncio's token is the running loop; trio's is a TrioToken. Both offer a non-blocking call-soon.
    schedule = getattr(native, "call_soon_threadsafe", None) or getattr(native, "run_sync_soon", None)
    if schedule is None:  # pragma: no cover - a backend anyio adds later
        raise RuntimeError(f"cannot schedule callbacks on event loop token {native!r} from another thread")
    result: Callable[..., object] = schedule
    return result


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
