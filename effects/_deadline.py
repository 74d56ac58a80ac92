"""Deadlines on the event loop's clock for work running in the current task, at almost no cost per call.

Every tool call and model call runs against a timeout that almost never
passes. anyio's ``CancelScope(deadline=...)`` costs about as much as an
instant tool call itself, so under asyncio a deadline is an entry in a table
kept per event loop, with one loop timer for the earliest entry of the
table: entering and leaving a deadline adds and removes the entry. When a
deadline passes, its task is cancelled (``Task.cancel``) and leaving the block
swallows that cancellation, exactly as a cancel scope does; a cancellation
from anyone else (the machine cancelling the effect) still propagates. Under
trio a deadline is trio's own cancel scope: trio interrupts a block only
through one, and anyio's wrapper around it would only add work (the deadline
of an effect's last call uses the effect's own scope: ``effects._trio_deadline``).
"""

from __future__ import annotations

import asyncio
import math
import weakref
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any, Protocol, TypeVar

DEADLINE_PASSED = "the deadline passed"
"""The cancellation message of a block whose deadline passed."""


def deadline_after(seconds: float) -> AbstractContextManager[object]:
    """A context manager that cancels its block ``seconds`` from now (at once when <= 0) and swallows that
    cancellation: code after the block runs, whether the block finished or was cut short.

    Enter it in the task whose work it bounds, on the event loop's thread.
    """
    loop = asyncio._get_running_loop()
    if loop is None:  # trio (anyio runs only asyncio and trio)
        import trio

        return trio.CancelScope(deadline=trio.current_time() + seconds)
    return _Deadline(_table_of(loop), loop, loop.time() + seconds)


_TABLES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopDeadlines] = weakref.WeakKeyDictionary()


def _table_of(loop: asyncio.AbstractEventLoop) -> _LoopDeadlines:
    try:
        table = _TABLES.get(loop)
        if table is None:
            table = _TABLES[loop] = _LoopDeadlines()
    except TypeError:  # a loop type that takes no weak references: a table (and timer) per deadline
        table = _LoopDeadlines()
    return table


class _LoopDeadlines:
    """The deadlines pending on one loop, and a loop timer set for the earliest of them (or earlier).

    It holds no reference to its loop (the table of tables holds loops weakly):
    timers are never cancelled, a timer that finds nothing due only sets the
    next one.
    """

    __slots__ = ("_at", "live")

    def __init__(self) -> None:
        self.live: set[_Deadline] = set()
        self._at = math.inf  # the earliest time a timer is set for

    def add(self, deadline: _Deadline, loop: asyncio.AbstractEventLoop) -> None:
        self.live.add(deadline)
        if deadline.at < self._at:
            self._at = deadline.at
            loop.call_at(deadline.at, self._fire)

    def _fire(self) -> None:
        """Cancel every block whose deadline passed; set a timer for the next one."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        earliest = expire_due(self.live, now)
        if self._at <= now:  # this was the earliest timer: none is set for what remains
            self._at = math.inf
        if earliest < self._at:
            self._at = earliest
            loop.call_at(earliest, self._fire)


class Expiring(Protocol):
    """A deadline in a table: when it passes (``at``), ``expire()`` cancels what it bounds."""

    at: float

    def expire(self) -> None:
        """Cancel the block."""
        ...


X = TypeVar("X", bound=Expiring)


def expire_due(live: set[X], now: float) -> float:
    """Expire and remove every deadline of ``live`` due at ``now``; the earliest of the others (``inf``: none)."""
    earliest = math.inf
    for deadline in list(live):
        if deadline.at <= now:
            live.discard(deadline)
            deadline.expire()
        elif deadline.at < earliest:
            earliest = deadline.at
    return earliest


class _Deadline:
    """One block under a deadline, in the task that entered it."""

    __slots__ = ("_cancelling", "_expired", "_loop", "_table", "_task", "at")

    def __init__(self, table: _LoopDeadlines, loop: asyncio.AbstractEventLoop, at: float) -> None:
        self._table = table
        self._loop = loop
        self.at = at
        self._task: Any = None
        self._cancelling = 0
        self._expired = False

    def __enter__(self) -> _Deadline:
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a deadline must be entered inside a task")
        self._task, self._cancelling = task, task.cancelling()
        self._table.add(self, self._loop)
        return self

    def expire(self) -> None:
        self._expired = True
        self._task.cancel(DEADLINE_PASSED)

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> bool:
        if not self._expired:
            self._table.live.discard(self)
            return False
        # Ours only when no one else asked for a cancellation meanwhile (as asyncio.timeout decides).
        return self._task.uncancel() <= self._cancelling and kind is asyncio.CancelledError
