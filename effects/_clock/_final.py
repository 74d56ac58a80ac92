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
# Imported on first use under trio (an optional dependency).
_last_call_deadline: Callable[[Any, float], AbstractContextManager[object]] | None = None


class final_wait:  # lower case: used as ``with final_wait():``
    """``with final_wait():`` around the last wait of an effect's own task, a call to :meth:`Toolbox.run`.

    Nothing in the task waits after it. :func:`take_final` hands that to the
    one ``run_until`` the call makes (never to the tool's own code): under trio
    its deadline may then cancel the effect's own scope instead of a scope of
    its own. When that deadline passes the scope stays cancelled, so the
    effect must end without waiting again; the machine fails one that does.
    """

    __slots__ = ("_token",)

    def __enter__(self) -> None:
        self._token: Token[bool] = _FINAL.set(True)

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        _FINAL.reset(self._token)


def take_final() -> bool:
    """Whether the caller runs inside :class:`final_wait`; clears it, so the waits of what it calls are not final."""
    if not _FINAL.get():
        return False
    _FINAL.set(False)  # final_wait's exit restores what was there before it
    return True


def last_wait_deadline(clock: Clock, deadline: int) -> AbstractContextManager[object] | None:
    """The deadline block of an effect's last wait under trio on :class:`SystemClock`; ``None``: use the clock's own
    (under asyncio, on another clock, outside an effect run)."""
    global _last_call_deadline
    run = current_run()
    if run is None or type(clock) is not SystemClock or asyncio._get_running_loop() is not None:
        return None
    if _last_call_deadline is None:
        from .._trio_deadline import last_call_deadline

        _last_call_deadline = last_call_deadline
    return _last_call_deadline(run, max(0, deadline - clock.now_ms()) / 1000)
