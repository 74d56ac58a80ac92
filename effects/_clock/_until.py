"""``run_until``: a call bounded by a time on a :class:`~effects.Clock`, its result or :data:`TIMED_OUT`."""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

from .._machine._loop import reraise_single
from ._clocks import Clock
from ._final import last_wait_deadline

T = TypeVar("T")


class TimedOut(enum.Enum):
    """What :func:`run_until` returns when the deadline came first."""

    TIMED_OUT = "timed out"


TIMED_OUT = TimedOut.TIMED_OUT


async def run_until(
    clock: Clock, deadline: int, call: Callable[[], Awaitable[T]], *, final: bool = False
) -> T | TimedOut:
    """Run ``call()`` until it returns or ``clock`` reaches ``deadline``: its result, or :data:`TIMED_OUT`.

    The deadline waits without parking: work running against a deadline must
    not look idle to ``settled()``. A clock with ``scope_until`` (both clocks
    here) cancels at the time by itself; any other races a waiting task.
    ``final``: the call is the last wait of an effect's own task (nothing in
    the task waits after it); under trio the deadline may then cancel the
    effect's own scope instead of one of its own (see :class:`final_wait`).
    """
    scope_until = getattr(clock, "scope_until", None)
    if scope_until is not None:
        with (final and last_wait_deadline(clock, deadline)) or scope_until(deadline):
            return await call()
        return TIMED_OUT  # the block swallowed the deadline's cancellation
    wait = getattr(clock, "wait_until", clock.sleep_until)
    results: list[T] = []
    try:
        async with anyio.create_task_group() as group:

            async def first() -> None:
                results.append(await call())
                group.cancel_scope.cancel("finished before the deadline")

            async def watch() -> None:
                await wait(deadline)
                group.cancel_scope.cancel("the deadline passed")

            group.start_soon(first)
            group.start_soon(watch)
    except BaseExceptionGroup as group_error:
        reraise_single(group_error)  # the call's own error (a ModelError stays retryable), not a group
    return results[0] if results else TIMED_OUT
