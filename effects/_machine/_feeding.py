"""How inputs reach a :class:`Machine`: from its loop's thread, from other threads, and within its backlog's bound."""

from __future__ import annotations

import threading
from typing import TypeVar

from ._looping import MachineLoop

S = TypeVar("S")
I = TypeVar("I")  # noqa: E741 - the input type
E = TypeVar("E")


class MachineFeed(MachineLoop[S, I, E]):
    """The part of :class:`Machine` that queues dispatched inputs; :class:`Machine` sets the attributes."""

    def dispatch(self, inp: I) -> None:
        """Queue ``inp``; inputs queued in the same loop turn are applied together, in order. Never blocks.

        Call it from the event loop's thread (host code, effect code, subscribers);
        from another thread it hands over to :meth:`dispatch_threadsafe`. Raises
        :class:`Backpressure` (and queues nothing) when :meth:`backlog` is at
        ``max_backlog``: await :meth:`wait_for_room` first.
        """
        if self._loop_thread is not None and threading.get_ident() != self._loop_thread:
            self.dispatch_threadsafe(inp)
            return
        self._backlog.check(len(self._queue))
        self._enqueue(inp)

    def backlog(self) -> int:
        """Inputs dispatched and not yet applied and durable: queued, on their way from a thread, or committing."""
        return self._backlog.size(len(self._queue))

    async def wait_for_room(self) -> None:
        """Return once :meth:`dispatch` accepts an input (at once if it does now).

        A producer that dispatches from outside in a loop awaits it before each
        dispatch, and so goes at the store's pace. Raises
        :class:`MachineStopped` if an error stops the machine meanwhile,
        ``RuntimeError`` if it is stopped with its backlog full.
        """
        backlog = self._backlog
        await self._waits.until(
            lambda: backlog.size(len(self._queue)) < backlog.limit, self._is_running, "wait_for_room"
        )

    def _enqueue(self, inp: I) -> None:
        self._queue.append(inp)
        if self._wake is not None:
            self._wake.wake()

    def dispatch_threadsafe(self, inp: I) -> None:
        """Queue ``inp`` from any thread; it reaches the queue on the event loop's next turn. Never blocks.

        Raises :class:`Backpressure` as :meth:`dispatch` does (counting the inputs still on their way).
        """
        if self._schedule is None:
            raise RuntimeError(
                "Machine.dispatch_threadsafe() needs a running machine, but it is stopped; "
                "call it inside `async with machine.running():`, or use dispatch() to queue inputs before starting"
            )
        self._backlog.set_out(len(self._queue))
        self._schedule(self._arrive, inp)

    def _arrive(self, inp: I) -> None:
        self._backlog.arrived()
        self._enqueue(inp)
