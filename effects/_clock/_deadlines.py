"""Deadlines: every bound on time a call runs under, in one place.

* :func:`run_until` runs a call until it returns or a :class:`~effects.Clock`
  reaches a time (:data:`TIMED_OUT`): the model's and the tools' timeouts.
* Under asyncio a deadline is an entry in a table kept per event loop, with
  one loop timer for the earliest entry: entering and leaving a deadline adds
  and removes the entry (:func:`deadline_after`), much cheaper than a cancel
  scope per call. When a deadline passes its task is cancelled and leaving
  the block swallows that cancellation, exactly as a cancel scope does; a
  cancellation from anyone else (the machine cancelling the effect) still
  propagates. An effect stepped inline runs in the task that carries it on if
  it suspends (see ``effects._machine``), so its deadlines hold that task.
* Under trio a deadline is trio's own cancel scope (trio interrupts a block
  only through one), except on an effect's *last* call (``final``):
  the machine already runs each effect in a scope of its own, so that
  deadline is an entry in a table kept per trio run (one system task sleeps
  until the earliest) that cancels the effect's own scope, which then stays
  cancelled; the machine fails an effect that waits again after that.
* :func:`run_until` makes a call's deadline (any of these) only once the
  call first suspends: a call that ends in its first step (an instant tool, a
  model answering at once) cannot outlive a deadline, and costs none.
* The turn's deadline and retry backoffs are ``wait-until`` effects: on the
  system clock each is an :class:`~effects.Alarm`: under asyncio a loop timer
  alone (no coroutine, no task), under trio an entry in the heap of the one
  task that waits for a machine's alarms.
"""

from __future__ import annotations

import asyncio
import enum
import math
import types
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Generator
from contextlib import AbstractContextManager
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio

from .._machine import current_run, reraise_single

if TYPE_CHECKING:
    import trio  # imported where it is used, under trio only: an asyncio program never loads it

T = TypeVar("T")


class Clock(Protocol):
    """What a deadline needs of a clock (as :class:`effects.Clock`, which the clocks module defines)."""

    def now_ms(self) -> int:
        """The current time, ms since the epoch."""
        ...

    async def sleep_until(self, ms: int) -> None:
        """Return once ``now_ms() >= ms``."""
        ...


# -- run_until ---------------------------------------------------------------------------------


class TimedOut(enum.Enum):
    """What :func:`run_until` returns when the deadline came first."""

    TIMED_OUT = "timed out"


TIMED_OUT = TimedOut.TIMED_OUT


async def run_until(
    clock: Clock, deadline: int, call: Callable[..., Awaitable[T]], *args: Any, final: bool = False
) -> T | TimedOut:
    """Run ``call(*args)`` until it returns or ``clock`` reaches ``deadline``: its result, or :data:`TIMED_OUT`.

    The deadline waits without parking: work running against a deadline must
    not look idle to ``settled()``. A clock with ``scope_until`` (both clocks
    here) cancels at the time by itself; any other races a waiting task.
    ``final``: the call is the last wait of an effect's own task (nothing in
    the task waits after it); under trio the deadline may then cancel the
    effect's own scope instead of one of its own: when that deadline passes the scope stays cancelled, so the
    effect must end without waiting again (the machine fails one that does). The agent's model call and the
    toolbox's call of a tool for ``call-tool`` (``Toolbox.run(..., final=True)``) are such last waits; a tool's
    own timed calls never are. The arguments are passed on rather than bound in a closure: every model and tool
    call comes here, and a closure is objects for the collector.
    """
    # A deadline that is an entry in a table (asyncio's, or under trio the one that cancels the effect's own scope)
    # is made only for a call that suspends: the call's first step runs with none. Most calls end there (an
    # instant tool, a model answering at once), and none can outlive a deadline without suspending.
    loop = asyncio._get_running_loop()
    on_loop = getattr(clock, "loop_deadlines", False)
    # Under trio, an effect's last call: its deadline cancels the effect's own scope.
    run = current_run() if on_loop and final and loop is None else None
    if on_loop and (loop is not None or run is not None):
        ended, rest = _first_step(call, args)
        if ended:
            result: T = rest
            return result
        seconds = max(0, deadline - clock.now_ms()) / 1000
        entry: AbstractContextManager[object]
        if run is None:
            assert loop is not None
            entry = _in_table(loop, seconds)  # under asyncio, an entry in the loop's table
        else:
            entry = last_call_deadline(run, seconds)
        with entry:
            result = await rest
            return result
        return TIMED_OUT  # the block swallowed the deadline's cancellation
    scope_until = getattr(clock, "scope_until", None)
    if scope_until is None:
        return await _race(clock, deadline, call, *args)
    with scope_until(deadline):  # a cancel scope: entered before the call, since scopes nest
        return await call(*args)
    return TIMED_OUT


def _first_step(call: Callable[..., Awaitable[T]], args: tuple[Any, ...]) -> tuple[bool, Any]:
    """Start ``call(*args)`` and run it to its first suspension: ``(True, its result)`` when it ended there,
    else ``(False, an awaitable of the rest)``."""
    awaitable = call(*args)
    if type(awaitable) is not types.CoroutineType:
        return False, awaitable
    try:
        yielded = awaitable.send(None)
    except StopIteration as done:
        return True, done.value
    return False, _carry_on(awaitable, yielded)


async def _race(clock: Clock, deadline: int, call: Callable[..., Awaitable[T]], *args: Any) -> T | TimedOut:
    """``run_until`` on a clock that cannot cancel at a time by itself: the call races a task waiting for it.

    (A function of its own: the variables its tasks share are cells, which ``run_until`` would otherwise make
    on every call.)
    """
    wait: Callable[[int], Awaitable[None]] = getattr(clock, "wait_until", clock.sleep_until)
    results: list[T] = []
    try:
        async with anyio.create_task_group() as group:

            async def first() -> None:
                results.append(await call(*args))
                group.cancel_scope.cancel("finished before the deadline")

            async def watch() -> None:
                await wait(deadline)
                group.cancel_scope.cancel("the deadline passed")

            group.start_soon(first)
            group.start_soon(watch)
    except BaseExceptionGroup as group_error:
        reraise_single(group_error)  # the call's own error (a ModelError stays retryable), not a group
    return results[0] if results else TIMED_OUT


@types.coroutine
def _carry_on(coro: Coroutine[Any, Any, T], yielded: Any) -> Generator[Any, Any, T]:
    """The rest of ``coro``, which yielded ``yielded`` at its first step: awaited, it does what ``await coro``
    would have done from there (what the task sends or throws goes to ``coro``, what ``coro`` yields to the task)."""
    while True:
        try:
            sent = yield yielded
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as error:  # a cancellation, thrown in by the task
            try:
                yielded = coro.throw(error)
            except StopIteration as done:
                result: T = done.value
                return result
        else:
            try:
                yielded = coro.send(sent)
            except StopIteration as done:
                result = done.value
                return result


# -- asyncio: a table per loop -------------------------------------------------------------------

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
    return _in_table(loop, seconds)


def _in_table(loop: asyncio.AbstractEventLoop, seconds: float) -> _Deadline:
    """A block cancelled ``seconds`` from now on ``loop``, as an entry in the loop's table."""
    return _Deadline(_table_of(loop), loop, loop.time() + seconds)


_TABLES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopDeadlines] = weakref.WeakKeyDictionary()
_LAST: tuple[weakref.ref[asyncio.AbstractEventLoop] | None, _LoopDeadlines | None] = (None, None)  # the last found


def _table_of(loop: asyncio.AbstractEventLoop) -> _LoopDeadlines:
    global _LAST
    last, table = _LAST
    if table is not None and last is not None and last() is loop:
        return table
    try:
        table = _TABLES.get(loop)
        if table is None:
            table = _TABLES[loop] = _LoopDeadlines()
        _LAST = (weakref.ref(loop), table)
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
        task = asyncio.current_task(self._loop)
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


# -- trio: a table per run, cancelling the effect's own scope ------------------------------------


class Enclosing(Protocol):
    """The effect run a deadline bounds: its own cancel scope, and whether its owner cancelled it."""

    handle: Any
    cancelled: bool


class _TrioTable:
    """The deadlines pending in one trio run, and the sleep of the system task that expires them."""

    __slots__ = ("_at", "_sleep", "live")

    def __init__(self) -> None:
        self.live: set[_LastCallDeadline] = set()
        self._at = math.inf  # what the sleep below waits for: the earliest entry, or earlier
        self._sleep: trio.CancelScope | None = None

    def add(self, deadline: _LastCallDeadline) -> None:
        self.live.add(deadline)
        if deadline.at < self._at:
            self._at = deadline.at
            if self._sleep is not None:
                self._sleep.deadline = deadline.at

    async def expire_due(self) -> None:
        """The system task: sleep until the earliest deadline, expire every one due, again."""
        import trio

        while True:
            with trio.CancelScope(deadline=self._at) as self._sleep:
                await trio.sleep_forever()
            # Entries that left meanwhile make a wake early: it only finds nothing due.
            self._at = expire_due(self.live, trio.current_time())


_TRIO_TABLES: Any = None  # a trio RunVar holding each run's table, made on first use


def _trio_table() -> _TrioTable:
    import trio

    global _TRIO_TABLES
    if _TRIO_TABLES is None:
        _TRIO_TABLES = trio.lowlevel.RunVar("effects_deadlines")
    try:
        table: _TrioTable = _TRIO_TABLES.get()
        return table
    except LookupError:
        table = _TrioTable()
        _TRIO_TABLES.set(table)
        trio.lowlevel.spawn_system_task(table.expire_due, name="effects deadlines")
        return table


class _LastCallDeadline:
    """One block under a deadline that cancels its effect's own scope when it passes."""

    __slots__ = ("_expired", "_run", "_table", "at")

    def __init__(self, run: Enclosing, at: float) -> None:
        self._run, self.at, self._expired = run, at, False
        self._table = _trio_table()

    def __enter__(self) -> _LastCallDeadline:
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
        import trio

        if isinstance(error, trio.Cancelled):
            return True
        if isinstance(error, BaseExceptionGroup):  # a nursery inside the call: keep what is not a cancellation
            rest = error.split(trio.Cancelled)[1]
            if rest is None:
                return True
            raise rest
        return False


def last_call_deadline(run: Enclosing, seconds: float) -> _LastCallDeadline:
    """A block cancelled ``seconds`` from now through ``run``'s own scope; leaving it swallows that cancellation."""
    import trio

    return _LastCallDeadline(run, trio.current_time() + seconds)
