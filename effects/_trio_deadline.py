"""Under trio, a deadline on an effect's last call that costs no cancel scope of its own.

Trio interrupts a block only through a cancel scope, and entering and leaving
one per call cost a ReAct round under trio 11% (``benchmarks/runner.py``: a
model call and three tool calls, each with its timeout). An effect run by the
machine under trio already runs inside a scope of its own, which the machine
cancels by key. When the timed call is the effect's last wait (nothing in its
task waits after it: the agent's model and tool calls, marked through
``run_until(..., final=True)``), the deadline can cancel that scope instead:
it is an entry in a table kept per trio run, one system task sleeps until the
earliest entry, and leaving the block swallows the deadline's cancellation, as
a cancel scope of its own would. The effect's scope stays cancelled, so the
effect must not wait again; the machine fails an effect whose deadline's
cancellation reaches its scope, rather than let it end without its result.
"""

from __future__ import annotations

import math
from types import TracebackType
from typing import Any, Protocol

import trio

from ._deadline import DEADLINE_PASSED, expire_due


class Enclosing(Protocol):
    """The effect run a deadline bounds: its own cancel scope, and whether its owner cancelled it."""

    handle: Any
    cancelled: bool


class _Table:
    """The deadlines pending in one trio run, and the sleep of the system task that expires them."""

    __slots__ = ("_at", "_sleep", "live")

    def __init__(self) -> None:
        self.live: set[_Deadline] = set()
        self._at = math.inf  # what the sleep below waits for: the earliest entry, or earlier
        self._sleep: trio.CancelScope | None = None

    def add(self, deadline: _Deadline) -> None:
        self.live.add(deadline)
        if deadline.at < self._at:
            self._at = deadline.at
            if self._sleep is not None:
                self._sleep.deadline = deadline.at

    async def expire_due(self) -> None:
        """The system task: sleep until the earliest deadline, expire every one due, again."""
        while True:
            with trio.CancelScope(deadline=self._at) as self._sleep:
                await trio.sleep_forever()
            # Entries that left meanwhile make a wake early: it only finds nothing due.
            self._at = expire_due(self.live, trio.current_time())


_TABLES: trio.lowlevel.RunVar[_Table] = trio.lowlevel.RunVar("effects_deadlines")


def _table() -> _Table:
    try:
        return _TABLES.get()
    except LookupError:
        table = _Table()
        _TABLES.set(table)
        trio.lowlevel.spawn_system_task(table.expire_due, name="effects deadlines")
        return table


class _Deadline:
    """One block under a deadline that cancels its effect's own scope when it passes."""

    __slots__ = ("_expired", "_run", "_table", "at")

    def __init__(self, run: Enclosing, at: float) -> None:
        self._run, self.at, self._expired = run, at, False
        self._table = _table()

    def __enter__(self) -> _Deadline:
        self._table.add(self)
        return self

    def expire(self) -> None:
        self._expired = True
        self._run.handle.cancel(DEADLINE_PASSED)

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> bool:
        if not self._expired:
            self._table.live.discard(self)
            return False
        if error is None or self._run.cancelled:  # finished first, or its owner's cancellation: not ours to end
            return False
        if isinstance(error, trio.Cancelled):
            return True
        if isinstance(error, BaseExceptionGroup):  # a nursery inside the call: keep what is not a cancellation
            rest = error.split(trio.Cancelled)[1]
            if rest is None:
                return True
            raise rest
        return False


def last_call_deadline(run: Enclosing, seconds: float) -> _Deadline:
    """A block cancelled ``seconds`` from now through ``run``'s own scope; leaving it swallows that cancellation."""
    return _Deadline(run, trio.current_time() + seconds)
