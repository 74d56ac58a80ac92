"""Small helpers over anyio: calling into the event loop from another thread, unwrapping task-group errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

import anyio.lowlevel


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
