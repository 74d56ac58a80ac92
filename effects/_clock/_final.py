"""``final_wait``: an effect declares that a timed call is its last wait, so that under trio the call's deadline
costs no cancel scope of its own (see ``effects._trio_deadline``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractContextManager
from contextvars import ContextVar, Token
from types import TracebackType
from typing import Any

from .._machine import current_run
from ._clocks import Clock, SystemClock

_FINAL: ContextVar[bool] = ContextVar("effects_final_wait", default=False)
_last_call_deadline: Callable[[Any, float], AbstractContextManager[object]] | None = (
    None  # trio is optional: on first use
)


class final_wait:  # lower case: used as ``with final_wait():``
    """``with final_wait():`` around the last wait of an effect's own task: nothing in the task waits after it.

    The one :func:`run_until` on :class:`SystemClock` inside it (not those its
    call makes) may then, under trio, bound the call with the effect's own
    cancel scope. When that deadline passes the scope stays cancelled, so the
    effect must end without waiting again; the machine fails one that does.
    Outside an effect run, under asyncio or on another clock it changes nothing.
    """

    __slots__ = ("_token",)

    def __enter__(self) -> None:
        self._token: Token[bool] = _FINAL.set(True)

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        _FINAL.reset(self._token)


def final_deadline(clock: Clock, deadline: int) -> AbstractContextManager[object] | None:
    """The deadline block for :func:`run_until` in a :class:`final_wait` under trio; ``None``: use the clock's own."""
    global _last_call_deadline
    if not _FINAL.get() or type(clock) is not SystemClock or asyncio._get_running_loop() is not None:
        return None
    run = current_run()
    if run is None:
        return None
    _FINAL.set(False)  # the waits of the call itself are not the effect's last; final_wait's exit restores it
    if _last_call_deadline is None:
        from .._trio_deadline import last_call_deadline

        _last_call_deadline = last_call_deadline
    return _last_call_deadline(run, max(0, deadline - clock.now_ms()) / 1000)
