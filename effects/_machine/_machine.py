"""The async shell around :class:`MachineCore`: runs effects in a task group it owns, under asyncio or trio.

:class:`Machine` holds the public surface and the ``running()`` block; how
inputs are queued lives in ``_feeding``, the loop that applies them in ``_looping``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from typing import TypeVar

import anyio

from ._backlog import DEFAULT_MAX_BACKLOG, Backlog
from ._commits import Commits
from ._core import MachineCore, Rejects
from ._events import MACHINE_STOPPED, MachineEvent
from ._feeding import MachineFeed
from ._host import MachineHost
from ._loop import reraise_single
from ._protocols import Controller, Journal
from ._subscribers import Handler, Subscribers
from ._tasks import EffectTasks
from ._waits import Waits

S = TypeVar("S")
I = TypeVar("I")  # noqa: E741 - the input type
E = TypeVar("E")


class Machine(MachineFeed[S, I, E]):
    """A Moore machine that runs the effects its state derives (README: "Effects and the machine").

    ``transition(state, input) -> state`` and ``effects_at(state) -> {key: effect}``
    are pure; ``run_effect(effect, state, key)`` returns a :class:`Controller`
    (see :func:`effect`). Inside ``async with machine.running():`` the machine
    applies dispatched inputs in batches, publishes the timeline (see
    :class:`MachineEvent`) and starts and cancels effects by key, in its task
    group. An input is refused (``input-rejected``) when ``transition`` raises
    one of the ``rejects`` types or ``check(state, input)`` returns a rejection
    (see :class:`MachineCore`, also for ``follow_up``). ``journal.append`` (or
    ``submit``, on the journal's own thread; see :class:`Journal`) makes each
    batch durable before anyone sees its states or an effect depending on it starts.

    Exceptions always propagate: an error from an effect's code (after
    ``effect-failed``), a subscriber, ``transition`` (other than ``rejects``),
    ``effects_at`` or the journal, or an :class:`EffectInputRefused`, stops the
    machine, cancels every effect and leaves ``running()`` as itself.

    Inputs dispatched while stopped are applied when it starts; on exit the
    queued ones are applied and journaled without starting effects, and running
    effects are cancelled (``machine stopped``). Running again starts the derived
    effects afresh. At most ``max_backlog`` inputs (default 1,000; ``None``: no
    bound) wait to be applied and made durable: over it :meth:`dispatch` raises
    :class:`Backpressure` and :meth:`wait_for_room` waits (inputs effects dispatch are never
    refused; see ``effects._machine._backlog``).
    """

    def __init__(
        self,
        initial: S,
        transition: Callable[[S, I], S],
        effects_at: Callable[[S], Mapping[str, E]],
        run_effect: Callable[[E, S, str], Controller[I]],
        *,
        check: Callable[[S, I], object | None] | None = None,
        rejects: Rejects = (),
        journal: Journal[S, I] | None = None,
        follow_up: Callable[[S, S], Iterable[I]] | None = None,
        max_backlog: int | None = DEFAULT_MAX_BACKLOG,
    ) -> None:
        self._core = MachineCore(initial, transition, effects_at, check, rejects=rejects, follow_up=follow_up)
        self._journal = journal
        self._subscribers = Subscribers()
        self._waits = Waits()
        self._commits = Commits()
        self._tasks = EffectTasks(self._core, run_effect, self._subscribers, self._notify, self._waits.fail)
        self._queue = deque()
        self._backlog = Backlog(max_backlog)
        self._tg = None
        self._schedule = None
        self._loop_thread = None
        self._wake = self._committed = None
        self._inflight = None
        self._broken = False
        self._host = MachineHost(self._enqueue, self._commits, self._subscribers.publish, lambda: self._schedule)

    # -- observing -----------------------------------------------------------------------------

    def current(self) -> S:
        """The state after every input applied so far (queued inputs are not applied yet), including a batch
        whose commit is in flight (it goes back to the state before that batch if the commit fails)."""
        return self._core.current()

    def running_keys(self) -> tuple[str, ...]:
        """Keys of the effects running now (started, not ended, not cancelled), in start order."""
        return self._core.running_keys()

    def subscribe(self, handler: Handler) -> Callable[[], None]:
        """Call ``handler(event)`` for every event from now on; returns the unsubscribe function.

        Handlers run synchronously on the event loop thread. Inputs they dispatch
        are queued and applied after the current batch. A handler that raises is
        a bug: the error stops the machine and leaves ``running()`` (an
        assertion in a test's subscriber fails the test).
        """
        return self._subscribers.add(handler)

    def emit(self, event: MachineEvent) -> None:
        """Publish a custom ``event`` (e.g. streamed text) to the subscribers now; it is never journaled."""
        self._subscribers.publish(event)

    # -- waiting -------------------------------------------------------------------------------

    async def settled(self) -> None:
        """Return when no input is queued and every effect task has finished or is :func:`parked`.

        That is: nothing can progress without outside input or the clock moving.
        The condition must hold across two scheduling passes, so an effect whose
        wait was just satisfied (a clock advanced, an event set) resumes first.
        Raises :class:`MachineStopped` if an error stops the machine meanwhile.
        """
        if self._tg is None:
            raise RuntimeError(
                "Machine.settled() needs a running machine; call it inside `async with machine.running():`"
            )
        await self._waits.settled(self._is_settled, self._is_running)

    async def until(self, predicate: Callable[[S], bool]) -> S:
        """Wait until no input is queued and ``predicate(current())`` holds; return that state.

        It is asked after every batch (not only when the machine is settled), so it
        waits out timers on a real clock. Raises :class:`MachineStopped` if the
        machine stops because of an error meanwhile, ``RuntimeError`` if it stops
        otherwise before the predicate holds.
        """
        core = self._core
        await self._waits.until(lambda: not self._queue and predicate(core.current()), self._is_running)
        return core.current()

    # -- running -------------------------------------------------------------------------------

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Machine[S, I, E]]:
        """Run the machine for the duration of the block; effects are cancelled on exit.

        On entry the queued inputs are applied and the effects the state derives
        start. An error from an effect, ``run_effect``, a subscriber,
        ``transition`` (other than the ``rejects`` types), ``check``,
        ``effects_at`` or the journal stops the machine: the block is cancelled,
        every effect too, and the error propagates out of the block unwrapped.
        """
        if self._tg is not None:
            raise RuntimeError("Machine.running() was entered while the machine is already running; enter it once")
        self._waits.failure = None
        try:
            async with anyio.create_task_group() as tg:
                try:
                    async with self._tasks.group():
                        wake = self._start(tg)
                        try:
                            await self._process()
                            tg.start_soon(self._loop, tg, wake, name="effects.Machine loop")
                            yield self
                        finally:
                            self._stop()
                finally:
                    tg.cancel_scope.cancel(MACHINE_STOPPED)  # the loop task; the effects ended already
        except BaseExceptionGroup as group:
            self._waits.fail(group)
            reraise_single(group)
        except Exception as error:
            self._waits.fail(error)
            raise
